//! The C header (cbindgen's output): functions, `#define SG_*` constants, structs and
//! opaque types, with typedef aliases resolved. A small reader for that style of C, not
//! a general C parser.

use super::syntax::{parse_int, split_top};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct CType {
    /// The base type with typedef aliases resolved, e.g. `int32_t`, `char`, `sg_context`.
    pub base: String,
    /// Levels of `*`.
    pub ptr: usize,
    /// `const` on the pointee (on the type itself when `ptr == 0`).
    pub is_const: bool,
}

#[derive(Clone, Debug)]
pub struct CDecl {
    pub name: String,
    pub ty: CType,
}

#[derive(Debug)]
pub struct CFunc {
    pub ret: CType,
    pub params: Vec<CDecl>,
}

#[derive(Debug, Default)]
pub struct Header {
    pub functions: BTreeMap<String, CFunc>,
    pub constants: BTreeMap<String, i64>,
    pub structs: BTreeMap<String, Vec<CDecl>>,
    pub opaque: Vec<String>,
    /// Function-pointer typedefs (`typedef int (*name)(…)`): type(c_funptr), value.
    pub function_pointers: Vec<String>,
}

pub fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").map(|i| i + 2).unwrap_or(after.len());
            // Keep the line structure: #define lines are read line by line.
            out.extend(after[..end].chars().filter(|&c| c == '\n'));
            out.push(' ');
            rest = &after[end..];
        } else if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            rest = &rest[end..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `const sg_context *ctx` → name `ctx`, type {sg_context, 1, const}.
fn parse_c_decl(text: &str, aliases: &BTreeMap<String, String>) -> Result<CDecl, String> {
    let spaced = text.replace('*', " * ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let (name, type_tokens) = tokens
        .split_last()
        .ok_or_else(|| format!("empty declaration in `{text}`"))?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || *name == "*" {
        return Err(format!("cannot find the name in `{text}`"));
    }
    let ptr = type_tokens.iter().filter(|t| **t == "*").count();
    let is_const = type_tokens
        .iter()
        .take_while(|t| **t != "*")
        .any(|t| *t == "const");
    let base: Vec<&str> = type_tokens
        .iter()
        .copied()
        .filter(|t| *t != "*" && *t != "const" && *t != "struct")
        .collect();
    if base.is_empty() {
        return Err(format!("no type in `{text}`"));
    }
    let mut base = base.join(" ");
    while let Some(target) = aliases.get(&base) {
        base = target.clone();
    }
    Ok(CDecl {
        name: name.to_string(),
        ty: CType {
            base,
            ptr,
            is_const,
        },
    })
}

pub fn parse_header(text: &str) -> (Header, Vec<String>) {
    let mut errors = Vec::new();
    let mut header = Header::default();
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();

    // A small preprocessor: C++-only blocks are dropped, #define SG_* collected.
    let mut active: Vec<bool> = Vec::new();
    let mut body = String::new();
    for line in strip_c_comments(text).lines() {
        let trimmed = line.trim();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let mut words = directive.split_whitespace();
            let keyword = words.next().unwrap_or("");
            match keyword {
                "ifdef" => active.push(words.next() != Some("__cplusplus")),
                "ifndef" | "if" => active.push(true),
                "else" => {
                    if let Some(top) = active.last_mut() {
                        *top = !*top
                    }
                }
                "endif" => {
                    active.pop();
                }
                "define" if active.iter().all(|&a| a) => {
                    let name = words.next().unwrap_or("");
                    let value: Vec<&str> = words.collect();
                    if name.starts_with("SG_") {
                        match parse_int(&value.join(" ")) {
                            Some(v) => {
                                if header.constants.insert(name.to_string(), v).is_some() {
                                    errors.push(format!("header: {name} is defined twice"));
                                }
                            }
                            None => errors.push(format!(
                                "header: cannot read the value of #define {name} {}",
                                value.join(" ")
                            )),
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        if active.iter().all(|&a| a) {
            body.push_str(line);
            body.push('\n');
        }
    }

    for statement in split_top(&body, ';', '{', '}') {
        let s = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.is_empty() {
            continue;
        }
        if let Some(rest) = s.strip_prefix("typedef ") {
            if let (Some(open), Some(close)) = (rest.find('{'), rest.rfind('}')) {
                let name = rest[close + 1..].trim().to_string();
                let mut fields = Vec::new();
                for field in rest[open + 1..close].split(';') {
                    if field.trim().is_empty() {
                        continue;
                    }
                    match parse_c_decl(field, &aliases) {
                        Ok(d) => fields.push(d),
                        Err(e) => errors.push(format!("header: struct {name}: {e}")),
                    }
                }
                header.structs.insert(name, fields);
            } else if let Some(name) = rest
                .split_once("(*")
                .and_then(|(_, after)| after.split_once(')'))
                .map(|(name, _)| name.trim().to_string())
            {
                header.function_pointers.push(name);
            } else {
                let tokens: Vec<&str> = rest.split_whitespace().collect();
                match tokens.as_slice() {
                    ["struct", _tag, name] => header.opaque.push(name.to_string()),
                    [base @ .., name] if !base.is_empty() => {
                        aliases.insert(name.to_string(), base.join(" "));
                    }
                    _ => errors.push(format!("header: cannot read `{s}`")),
                }
            }
            continue;
        }
        let (Some(open), Some(close)) = (s.find('('), s.rfind(')')) else {
            errors.push(format!("header: cannot read `{s}`"));
            continue;
        };
        let signature = match parse_c_decl(&s[..open], &aliases) {
            Ok(d) => d,
            Err(e) => {
                errors.push(format!("header: {e}"));
                continue;
            }
        };
        let inside = s[open + 1..close].trim();
        let mut params = Vec::new();
        if !(inside.is_empty() || inside == "void") {
            for p in split_top(inside, ',', '(', ')') {
                match parse_c_decl(&p, &aliases) {
                    Ok(d) => params.push(d),
                    Err(e) => errors.push(format!("header: {}: {e}", signature.name)),
                }
            }
        }
        let func = CFunc {
            ret: signature.ty,
            params,
        };
        if header
            .functions
            .insert(signature.name.clone(), func)
            .is_some()
        {
            errors.push(format!("header: {} is declared twice", signature.name));
        }
    }
    (header, errors)
}
