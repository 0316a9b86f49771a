//! The Fortran module: bind(C) interfaces (with their dummy arguments' declarations),
//! `SG_*` named constants, and derived types. Reads free-form Fortran 2003 as written
//! in include/seisgpu.f90: comments, continuations, `;`-separated statements.

use super::syntax::{parse_int, split_top};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct FDecl {
    /// Normalised type: `integer(c_int32_t)`, `real(c_double)`, `character(c_char)`,
    /// `type(c_ptr)`, `type(sg_dwt_denoise_options)`.
    pub ty: String,
    pub value: bool,
    pub intent: Option<String>,
    pub array: bool,
}

#[derive(Debug)]
pub struct FProc {
    /// The Fortran name, lower case.
    pub name: String,
    pub is_function: bool,
    pub args: Vec<String>,
    pub decls: BTreeMap<String, FDecl>,
    /// The name of the result variable (the function's own name without `result`).
    pub result: String,
    /// A type given before `function`, if any.
    pub prefix_type: Option<String>,
}

#[derive(Debug, Default)]
pub struct Module {
    /// By bind(C) name (case kept).
    pub procs: BTreeMap<String, FProc>,
    /// By upper-case name: (type, value).
    pub constants: BTreeMap<String, (String, i64)>,
    /// By lower-case name: (bind(C)?, fields in order).
    pub types: BTreeMap<String, (bool, Vec<(String, FDecl)>)>,
}

/// Fortran statements: comments removed, continuation lines joined.
fn fortran_statements(text: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut pending = String::new();
    for raw in text.lines() {
        let mut quote: Option<char> = None;
        let mut line = String::new();
        for c in raw.chars() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '!' => break,
                None => {}
            }
            line.push(c);
        }
        let mut line = line.trim();
        if !pending.is_empty() {
            line = line.strip_prefix('&').unwrap_or(line).trim_start();
        }
        if let Some(cont) = line.strip_suffix('&') {
            pending.push_str(cont);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let statement = pending.trim().to_string();
        pending.clear();
        for part in statement.split(';') {
            if !part.trim().is_empty() {
                statements.push(part.trim().to_string());
            }
        }
    }
    statements
}

/// `integer(kind=c_int32_t)` → `integer(c_int32_t)`; `character(kind=c_char, len=1)` →
/// `character(c_char)`; `type(c_ptr)` unchanged. Input in lower case.
fn normalise_type(spec: &str) -> String {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = spec.find('(') else {
        return spec;
    };
    let head = &spec[..open];
    let inner = spec[open + 1..].trim_end_matches(')');
    let kind = inner
        .split(',')
        .filter(|item| !item.starts_with("len="))
        .map(|item| item.strip_prefix("kind=").unwrap_or(item))
        .collect::<Vec<_>>()
        .join(",");
    format!("{head}({kind})")
}

/// Reads `type-spec [, attr]... :: entity [, entity]...` (lower case).
fn parse_fortran_decl(statement: &str) -> Option<(FDecl, Vec<(String, bool, Option<String>)>)> {
    let (left, right) = statement.split_once("::")?;
    let parts = split_top(left, ',', '(', ')');
    let mut decl = FDecl {
        ty: normalise_type(parts[0].trim()),
        ..FDecl::default()
    };
    for attr in &parts[1..] {
        let attr: String = attr.chars().filter(|c| !c.is_whitespace()).collect();
        if attr == "value" {
            decl.value = true;
        } else if let Some(intent) = attr.strip_prefix("intent(") {
            decl.intent = Some(intent.trim_end_matches(')').to_string());
        } else if attr.starts_with("dimension") {
            decl.array = true;
        }
    }
    let mut entities = Vec::new();
    for entity in split_top(right, ',', '(', ')') {
        let (entity, init) = match entity.split_once('=') {
            Some((e, v)) => (e.trim().to_string(), Some(v.trim().to_string())),
            None => (entity.trim().to_string(), None),
        };
        let (name, dims) = match entity.find('(') {
            Some(i) => (entity[..i].trim().to_string(), true),
            None => (entity.clone(), false),
        };
        entities.push((name, dims, init));
    }
    Some((decl, entities))
}

/// `function f(a, b) bind(C, name="f") result(r)`, with an optional type before
/// `function`. Takes the lower-case statement and the original (for the bind name).
fn parse_proc_header(lower: &str, original: &str) -> Option<(FProc, Option<String>)> {
    let (keyword_at, is_function) = ["function", "subroutine"].iter().find_map(|kw| {
        let mut from = 0;
        while let Some(i) = lower[from..].find(kw) {
            let at = from + i;
            let before_ok = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
            let after = lower[at + kw.len()..].trim_start();
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if before_ok
                && lower.as_bytes().get(at + kw.len()) == Some(&b' ')
                && name_len > 0
                && after[name_len..].trim_start().starts_with('(')
            {
                return Some((at, *kw == "function"));
            }
            from = at + kw.len();
        }
        None
    })?;
    let prefix = lower[..keyword_at].trim();
    let kw_len = if is_function { 8 } else { 10 };
    let after = lower[keyword_at + kw_len..].trim_start();
    let name_len = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = after[..name_len].to_string();
    let rest = after[name_len..].trim_start();
    let close = rest.find(')')?;
    let args: Vec<String> = rest[1..close]
        .split(',')
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    let suffix = &rest[close + 1..];
    // The bind name, read from the original text at the same place (ASCII lowering keeps
    // byte offsets).
    let suffix_at = lower.len() - suffix.len();
    let original_suffix = &original[suffix_at..];
    let bind_name = suffix.find("bind").and_then(|b| {
        let name_at = suffix[b..].find("name")? + b;
        let quote_at = suffix[name_at..].find(['"', '\''])? + name_at;
        let q = suffix.as_bytes()[quote_at] as char;
        let end = suffix[quote_at + 1..].find(q)? + quote_at + 1;
        Some(original_suffix[quote_at + 1..end].to_string())
    });
    let result = suffix
        .find("result")
        .and_then(|r| {
            let open = suffix[r..].find('(')? + r;
            let close = suffix[open..].find(')')? + open;
            Some(suffix[open + 1..close].trim().to_string())
        })
        .unwrap_or_else(|| name.clone());
    let prefix_type = prefix
        .split_whitespace()
        .filter(|w| !matches!(*w, "pure" | "elemental" | "recursive" | "impure"))
        .collect::<Vec<_>>()
        .join(" ");
    let proc = FProc {
        name,
        is_function,
        args,
        decls: BTreeMap::new(),
        result,
        prefix_type: (!prefix_type.is_empty()).then(|| normalise_type(&prefix_type)),
    };
    Some((proc, bind_name))
}

pub fn parse_module(text: &str) -> (Module, Vec<String>) {
    let mut errors = Vec::new();
    let mut module = Module::default();
    let mut in_interface = false;
    let mut current: Option<(FProc, Option<String>)> = None;
    let mut current_type: Option<(String, bool, Vec<(String, FDecl)>)> = None;

    for statement in fortran_statements(text) {
        let lower = statement.to_ascii_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");

        if let Some((proc, bind)) = current.as_mut() {
            if first == "end" {
                let (proc, bind) = current.take().unwrap();
                match bind {
                    Some(bind) => {
                        if module.procs.contains_key(&bind) {
                            errors.push(format!("module: two interfaces bind to {bind}"));
                        }
                        module.procs.insert(bind, proc);
                    }
                    None => errors.push(format!(
                        "module: interface {} has no bind(C, name=\"...\")",
                        proc.name
                    )),
                }
            } else if matches!(first, "import" | "implicit" | "use") || lower.starts_with("import,")
            {
            } else if let Some((decl, entities)) = parse_fortran_decl(&lower) {
                for (name, dims, _) in entities {
                    let mut d = decl.clone();
                    d.array |= dims;
                    if !(proc.args.contains(&name) || name == proc.result) {
                        errors.push(format!(
                            "module: {}: declares `{name}`, which is neither an argument nor the result",
                            bind.as_deref().unwrap_or(&proc.name)
                        ));
                    }
                    proc.decls.insert(name, d);
                }
            } else {
                errors.push(format!("module: {}: cannot read `{statement}`", proc.name));
            }
            continue;
        }

        if let Some((name, _, fields)) = current_type.as_mut() {
            if first == "end" {
                let (name, bind, fields) = current_type.take().unwrap();
                module.types.insert(name, (bind, fields));
            } else if let Some((decl, entities)) = parse_fortran_decl(&lower) {
                for (field, dims, _) in entities {
                    let mut d = decl.clone();
                    d.array |= dims;
                    fields.push((field, d));
                }
            } else {
                errors.push(format!("module: type {name}: cannot read `{statement}`"));
            }
            continue;
        }

        if lower == "contains" {
            break; // module procedures (helpers) follow; their locals are not bindings
        }
        if first == "interface" || lower.starts_with("abstract interface") {
            in_interface = true;
            continue;
        }
        if lower.starts_with("end interface") || lower == "endinterface" {
            in_interface = false;
            continue;
        }
        if in_interface {
            match parse_proc_header(&lower, &statement) {
                Some(p) => current = Some(p),
                None => errors.push(format!("module: cannot read `{statement}` in an interface")),
            }
            continue;
        }
        // `type, bind(C) :: name` (but not `type(c_ptr) :: x`, a declaration).
        if first.starts_with("type") && !lower.starts_with("type(") && !lower.starts_with("type (")
        {
            if let Some((left, right)) = lower.split_once("::") {
                let bind = left.replace(' ', "").contains("bind(c)");
                current_type = Some((right.trim().to_string(), bind, Vec::new()));
                continue;
            }
        }
        if let Some((decl, entities)) = parse_fortran_decl(&lower) {
            if !lower.split_once("::").unwrap().0.contains("parameter") {
                continue;
            }
            for (name, _, init) in entities {
                let upper = name.to_ascii_uppercase();
                if !upper.starts_with("SG_") {
                    continue;
                }
                let value = init.as_deref().and_then(|v| {
                    // 11, -1, 11_c_int32_t
                    let v = v.trim();
                    let v = match v.find('_') {
                        Some(i) if i > 0 => &v[..i],
                        _ => v,
                    };
                    parse_int(v)
                });
                match value {
                    Some(v) => {
                        if module
                            .constants
                            .insert(upper.clone(), (decl.ty.clone(), v))
                            .is_some()
                        {
                            errors.push(format!("module: {upper} is defined twice"));
                        }
                    }
                    None => errors.push(format!(
                        "module: cannot read the value of {upper} (`{statement}`)"
                    )),
                }
            }
        }
    }
    if current.is_some() || current_type.is_some() {
        errors.push("module: an interface or a type is not closed".into());
    }
    (module, errors)
}
