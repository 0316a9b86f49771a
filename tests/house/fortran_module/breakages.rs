//! The check must fail on a broken module or header: each mutation of the real files
//! must be reported with the expected words. One line of the table per breakage; add
//! one with every new kind of check.

use super::compare::check;
use super::read;

/// The check must fail on a broken module or header: each mutation of the real files
/// must be reported with the expected words.
#[test]
fn checker_catches_broken_modules() {
    let header = read("include/seisgpu.h");
    let module = read("include/seisgpu.f90");
    // (what, file: 'f' the module or 'h' the header, from, to, words expected in an error)
    let cases: &[(&str, char, &str, &str, &str)] = &[
        (
            "a missing interface",
            'f',
            "function sg_version_number() bind(C, name=\"sg_version_number\") result(number)\n      import :: c_int32_t\n      integer(c_int32_t) :: number\n    end function sg_version_number\n",
            "",
            "sg_version_number: in the header, missing",
        ),
        (
            "a wrong bind name",
            'f',
            "bind(C, name=\"sg_version\")",
            "bind(C, name=\"sg_versionx\")",
            "sg_version: in the header, missing",
        ),
        (
            "a constant of another value",
            'f',
            "SG_ERR_INTERNAL = 11",
            "SG_ERR_INTERNAL = 12",
            "SG_ERR_INTERNAL: 11 in the header, 12 in Fortran",
        ),
        (
            "a missing constant",
            'f',
            "  integer(c_int32_t), parameter :: SG_DWT_INVERSE = -1\n",
            "",
            "SG_DWT_INVERSE: in the header, missing",
        ),
        (
            "a constant of another kind",
            'f',
            "integer(c_int32_t), parameter :: SG_OK = 0",
            "integer(c_int64_t), parameter :: SG_OK = 0",
            "SG_OK: declared integer(c_int64_t)",
        ),
        (
            "size_t bound as c_int32_t",
            'f',
            "integer(c_size_t), value, intent(in) :: n_samples",
            "integer(c_int32_t), value, intent(in) :: n_samples",
            "argument `n_samples` is `size_t`",
        ),
        (
            "double bound as c_float",
            'f',
            "real(c_double), intent(in) :: input(*)",
            "real(c_float), intent(in) :: input(*)",
            "argument `input` is `const double *`",
        ),
        (
            "a scalar without value",
            'f',
            "integer(c_int32_t), value, intent(in) :: family",
            "integer(c_int32_t), intent(in) :: family",
            "argument `family` is `int32_t`",
        ),
        (
            "an output array declared intent(in)",
            'f',
            "real(c_float), intent(inout) :: output(*)",
            "real(c_float), intent(in) :: output(*)",
            "not intent(in)",
        ),
        (
            "a missing argument",
            'f',
            "function sg_last_error_copy(buf, len, needed)",
            "function sg_last_error_copy(buf, len)",
            "sg_last_error_copy: 3 argument(s) in C",
        ),
        (
            "swapped arguments",
            'f',
            "function sg_context_create(backend, device_ordinal, out)",
            "function sg_context_create(device_ordinal, backend, out)",
            "argument 1 is `backend` in C",
        ),
        (
            "a handle by reference instead of by value",
            'f',
            "subroutine sg_context_destroy(ctx) bind(C, name=\"sg_context_destroy\")\n      import :: c_ptr\n      type(c_ptr), value, intent(in) :: ctx",
            "subroutine sg_context_destroy(ctx) bind(C, name=\"sg_context_destroy\")\n      import :: c_ptr\n      type(c_ptr), intent(in) :: ctx",
            "argument `ctx` is `sg_context *`",
        ),
        (
            "a wrong result kind",
            'f',
            "      integer(c_int32_t) :: number\n",
            "      integer(c_int64_t) :: number\n",
            "sg_version_number: returns `uint32_t` in C",
        ),
        (
            "a function bound as a subroutine",
            'f',
            "subroutine sg_dwt_plan_destroy(plan) bind(C, name=\"sg_dwt_plan_destroy\")",
            "function sg_dwt_plan_destroy(plan) bind(C, name=\"sg_dwt_plan_destroy\")",
            "sg_dwt_plan_destroy: returns void; must be a subroutine",
        ),
        (
            "struct fields out of order",
            'f',
            "    integer(c_int32_t) :: threshold_rule   ! SG_THRESHOLD_UNIVERSAL or SG_THRESHOLD_FIXED\n    integer(c_int32_t) :: threshold_mode",
            "    integer(c_int32_t) :: threshold_mode   ! swapped\n    integer(c_int32_t) :: threshold_rule",
            "struct sg_dwt_denoise_options: field `threshold_rule` in C where Fortran has `threshold_mode`",
        ),
        (
            "a struct field of another kind",
            'f',
            "integer(c_int64_t) :: level_mask",
            "integer(c_int32_t) :: level_mask",
            "field `level_mask` is `uint64_t`",
        ),
        (
            "a type that is not bind(C)",
            'f',
            "type, bind(C) :: sg_dwt_denoise_options",
            "type :: sg_dwt_denoise_options",
            "must be bind(C)",
        ),
        (
            "a new function in the header",
            'h',
            "uint32_t sg_version_number(void);",
            "uint32_t sg_version_number(void);\n\nsg_status sg_frobnicate(const sg_context *ctx,\n                         size_t n);",
            "sg_frobnicate: in the header, missing",
        ),
        (
            "a new constant in the header",
            'h',
            "#define SG_ERR_INTERNAL 11",
            "#define SG_ERR_INTERNAL 11\n\n#define SG_ERR_NEW 12",
            "SG_ERR_NEW: in the header, missing",
        ),
        (
            "a new argument in the header",
            'h',
            "sg_status sg_last_error_copy(char *buf, size_t len, size_t *needed);",
            "sg_status sg_last_error_copy(char *buf, size_t len, size_t *needed, int32_t flags);",
            "sg_last_error_copy: 4 argument(s) in C",
        ),
    ];
    let mut problems = Vec::new();
    for (what, file, from, to, expected) in cases {
        let (h, f) = match file {
            'h' => (header.replacen(from, to, 1), module.clone()),
            _ => (header.clone(), module.replacen(from, to, 1)),
        };
        let source = if *file == 'h' { &header } else { &module };
        if !source.contains(from) {
            problems.push(format!(
                "{what}: the text to break is no longer in the file: {from:?}"
            ));
            continue;
        }
        let errors = check(&h, &f);
        if !errors.iter().any(|e| e.contains(expected)) {
            problems.push(format!(
                "{what}: expected an error containing {expected:?}, got {errors:#?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
