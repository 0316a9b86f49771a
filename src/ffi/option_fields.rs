//! The C option structs read as core values: the struct itself (NULL meaning the core's
//! defaults) and the fields every struct has kinds of, counts and choices coded 0 or 1,
//! each refused with a message naming `options.<field>`.

use super::args::{code, optional_ref};
use crate::error::Result;

/// `read` of the caller's option struct, or the core's defaults when `options` is NULL.
pub(crate) fn or_default<C, O: Default>(
    options: *const C,
    read: impl FnOnce(&C) -> Result<O>,
) -> Result<O> {
    optional_ref(options, "options")?.map_or_else(|| Ok(O::default()), read)
}

/// A count field, ≥ 0.
pub(crate) fn count(v: i32, field: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| crate::invalid!("options.{field} is {v}; expected ≥ 0"))
}

/// A field of two choices, coded 0 and 1.
pub(crate) fn pick<E: Copy>(v: i32, field: &str, zero: E, one: E) -> Result<E> {
    code(
        v,
        &format!("options.{field}"),
        "0 or 1",
        &[(0, zero), (1, one)],
    )
}

/// A yes-or-no field, 0 or 1.
pub(crate) fn flag(v: i32, field: &str) -> Result<bool> {
    pick(v, field, false, true)
}
