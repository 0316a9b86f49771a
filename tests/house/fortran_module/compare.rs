//! The comparison of the two parsed files, by the kind rules of the crate's doc comment.

use super::c_header::{parse_header, CType, Header};
use super::fortran::{parse_module, FDecl};

/// The Fortran type of a C scalar type, or None for an opaque type / void.
fn fortran_type_of(base: &str, header: &Header) -> Option<String> {
    let kind = match base {
        "int8_t" | "uint8_t" => "integer(c_int8_t)",
        "int16_t" | "uint16_t" => "integer(c_int16_t)",
        "int32_t" | "uint32_t" => "integer(c_int32_t)",
        "int64_t" | "uint64_t" => "integer(c_int64_t)",
        "size_t" => "integer(c_size_t)",
        "int" | "unsigned int" => "integer(c_int)",
        "float" => "real(c_float)",
        "double" => "real(c_double)",
        "char" => "character(c_char)",
        "bool" => "logical(c_bool)",
        s if header.structs.contains_key(s) => return Some(format!("type({s})")),
        s if header.function_pointers.iter().any(|f| f == s) => "type(c_funptr)",
        _ => return None,
    };
    Some(kind.to_string())
}

fn describe(d: &FDecl) -> String {
    let mut s = d.ty.clone();
    if d.value {
        s.push_str(", value");
    }
    if let Some(i) = &d.intent {
        s.push_str(&format!(", intent({i})"));
    }
    if d.array {
        s.push_str(", array");
    }
    s
}

fn c_type_text(t: &CType) -> String {
    format!(
        "{}{}{}",
        if t.is_const { "const " } else { "" },
        t.base,
        " *".repeat(t.ptr)
    )
}

/// Why the Fortran dummy `f` cannot stand for the C parameter of type `c`, if it cannot.
fn argument_mismatch(c: &CType, f: &FDecl, header: &Header) -> Option<String> {
    let scalar = fortran_type_of(&c.base, header);
    let by_value_ptr = f.ty == "type(c_ptr)" && f.value && !f.array;
    let problem = match c.ptr {
        0 => match scalar {
            Some(t) if f.ty == t && f.value && !f.array => return None,
            Some(t) => format!("expected {t}, value"),
            None => format!("no Fortran type for C `{}`", c.base),
        },
        1 => match scalar {
            None if by_value_ptr => return None,
            None => "expected type(c_ptr), value".to_string(),
            Some(_) if by_value_ptr => return None,
            Some(t) if f.ty == t && !f.value => {
                if c.base == "char" && !f.array {
                    "a char buffer must be an array, e.g. buf(*)".to_string()
                } else if c.is_const && f.intent.as_deref() != Some("in") {
                    "a const pointee must be intent(in)".to_string()
                } else if !c.is_const && f.intent.as_deref() == Some("in") {
                    "a non-const pointee is written: not intent(in)".to_string()
                } else {
                    return None;
                }
            }
            Some(t) => format!("expected {t} by reference (no value), or type(c_ptr), value"),
        },
        // A list of handles the call reads (`const T *const *`): an intent(in) array.
        2 if f.ty == "type(c_ptr)" && f.array => {
            if c.is_const && f.intent.as_deref() == Some("in") {
                return None;
            }
            "an array of type(c_ptr) must be a const list (const T *const *), intent(in)"
                .to_string()
        }
        2 if f.ty == "type(c_ptr)" && !f.array => {
            if by_value_ptr {
                return None;
            } else if f.intent.as_deref() == Some("in") && !c.is_const {
                "the pointer is written: not intent(in)".to_string()
            } else {
                return None;
            }
        }
        _ if by_value_ptr => return None,
        _ => "expected type(c_ptr) (by reference, or value)".to_string(),
    };
    Some(problem)
}

pub fn check(header_text: &str, module_text: &str) -> Vec<String> {
    // Parse errors are reported along with the comparison's.
    let (header, mut errors) = parse_header(header_text);
    let (module, module_errors) = parse_module(module_text);
    errors.extend(module_errors);
    if header.functions.is_empty() || header.constants.is_empty() {
        errors.push("header: no functions or no constants found; is the parser broken?".into());
    }

    // Functions.
    for (name, func) in &header.functions {
        let Some(proc) = module.procs.get(name) else {
            errors.push(format!(
                "{name}: in the header, missing from include/seisgpu.f90"
            ));
            continue;
        };
        if proc.name != name.to_ascii_lowercase() {
            errors.push(format!(
                "{name}: the Fortran interface is named {} (must be the C name)",
                proc.name
            ));
        }
        let returns_void = func.ret.base == "void" && func.ret.ptr == 0;
        if returns_void == proc.is_function {
            errors.push(format!(
                "{name}: returns {}; must be a {}",
                c_type_text(&func.ret),
                if returns_void {
                    "subroutine"
                } else {
                    "function"
                }
            ));
        }
        if proc.args.len() != func.params.len() {
            errors.push(format!(
                "{name}: {} argument(s) in C ({}), {} in Fortran ({})",
                func.params.len(),
                func.params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                proc.args.len(),
                proc.args.join(", ")
            ));
        } else {
            for (i, (c, f)) in func.params.iter().zip(&proc.args).enumerate() {
                if c.name.to_ascii_lowercase() != *f {
                    errors.push(format!(
                        "{name}: argument {} is `{}` in C, `{f}` in Fortran",
                        i + 1,
                        c.name
                    ));
                }
                let Some(decl) = proc.decls.get(f) else {
                    errors.push(format!("{name}: argument `{f}` has no declaration"));
                    continue;
                };
                if let Some(why) = argument_mismatch(&c.ty, decl, &header) {
                    errors.push(format!(
                        "{name}: argument `{}` is `{}` in C but `{}` in Fortran: {why}",
                        c.name,
                        c_type_text(&c.ty),
                        describe(decl)
                    ));
                }
            }
        }
        if proc.is_function && !returns_void {
            let result = proc
                .decls
                .get(&proc.result)
                .map(|d| d.ty.clone())
                .or_else(|| proc.prefix_type.clone());
            let expected = if func.ret.ptr > 0 {
                Some("type(c_ptr)".to_string())
            } else {
                fortran_type_of(&func.ret.base, &header)
            };
            if result.is_none() || result != expected {
                errors.push(format!(
                    "{name}: returns `{}` in C, `{}` in Fortran (expected {})",
                    c_type_text(&func.ret),
                    result.as_deref().unwrap_or("an undeclared type"),
                    expected.as_deref().unwrap_or("?")
                ));
            }
        }
    }
    for (bind, proc) in &module.procs {
        if !header.functions.contains_key(bind) {
            errors.push(format!(
                "{bind}: bound in include/seisgpu.f90 ({}), not in the header",
                proc.name
            ));
        }
    }

    // Constants.
    for (name, value) in &header.constants {
        match module.constants.get(name) {
            None => errors.push(format!(
                "{name}: in the header, missing from include/seisgpu.f90"
            )),
            Some((ty, v)) => {
                if v != value {
                    errors.push(format!("{name}: {value} in the header, {v} in Fortran"));
                }
                if ty != "integer(c_int32_t)" {
                    errors.push(format!(
                        "{name}: declared {ty}; expected integer(c_int32_t)"
                    ));
                }
            }
        }
    }
    for name in module.constants.keys() {
        if !header.constants.contains_key(name) {
            errors.push(format!("{name}: in include/seisgpu.f90, not in the header"));
        }
    }

    // Structs.
    for (name, fields) in &header.structs {
        let Some((bind, ffields)) = module.types.get(&name.to_ascii_lowercase()) else {
            errors.push(format!("struct {name}: missing from include/seisgpu.f90"));
            continue;
        };
        if !bind {
            errors.push(format!("type {name}: must be bind(C)"));
        }
        if fields.len() != ffields.len() {
            errors.push(format!(
                "struct {name}: {} field(s) in C, {} in Fortran",
                fields.len(),
                ffields.len()
            ));
            continue;
        }
        for (c, (fname, f)) in fields.iter().zip(ffields) {
            if c.name.to_ascii_lowercase() != *fname {
                errors.push(format!(
                    "struct {name}: field `{}` in C where Fortran has `{fname}`",
                    c.name
                ));
            }
            let expected = if c.ty.ptr > 0 {
                Some("type(c_ptr)".to_string())
            } else {
                fortran_type_of(&c.ty.base, &header)
            };
            if expected.as_deref() != Some(f.ty.as_str()) || f.array {
                errors.push(format!(
                    "struct {name}: field `{}` is `{}` in C, `{}` in Fortran",
                    c.name,
                    c_type_text(&c.ty),
                    describe(f)
                ));
            }
        }
    }
    errors
}
