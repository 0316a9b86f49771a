//! Single C arguments made Rust values: the handles and option structs a call reads
//! (NULL refused, or NULL meaning the defaults) and the variables it writes its results to.
//!
//! The C contract answers for what cannot be checked: a non-NULL pointer points to a live
//! object of its type, not used by another call where the call changes it.

use crate::error::{Error, Result};

/// `Err` naming `name` when `p` is not aligned for `T` (dereferencing it would be undefined).
pub(crate) fn aligned<T>(p: *const T, name: &str) -> Result<()> {
    if p.is_aligned() {
        Ok(())
    } else {
        Err(crate::invalid!(
            "`{name}` is not aligned to {} bytes",
            std::mem::align_of::<T>()
        ))
    }
}

/// A shared reference from a pointer the caller promises is valid or NULL.
pub(crate) fn arg_ref<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    if !p.is_null() {
        aligned(p, name)?;
    }
    // SAFETY: the C contract: a non-NULL pointer points to a live object of type T.
    unsafe { p.as_ref() }.ok_or_else(|| Error::NullPointer(format!("`{name}` is NULL")))
}

/// `arg_ref`, where NULL is allowed (`None`: e.g. options that default).
pub(crate) fn optional_ref<'a, T>(p: *const T, name: &str) -> Result<Option<&'a T>> {
    match p.is_null() {
        true => Ok(None),
        false => arg_ref(p, name).map(Some),
    }
}

/// A unique reference to a handle the call changes.
pub(crate) fn arg_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T> {
    arg_ref(p.cast_const(), name)?;
    // SAFETY: checked non-NULL and aligned; the C contract: a live object that no other
    // call uses at the same time.
    Ok(unsafe { &mut *p })
}

/// The option struct behind `options`, or `default` when it is NULL.
pub(crate) fn options_or<T: Copy>(options: *const T, default: T) -> Result<T> {
    Ok(optional_ref(options, "options")?
        .copied()
        .unwrap_or(default))
}

/// What the C code `v` of argument `name` means by `table`, or an error naming it and the
/// `expected` codes.
pub(crate) fn code<E: Copy>(v: i32, name: &str, expected: &str, table: &[(i32, E)]) -> Result<E> {
    match table.iter().find(|&&(c, _)| c == v) {
        Some(&(_, e)) => Ok(e),
        None => Err(crate::invalid!("{name} is {v}; expected {expected}")),
    }
}

/// A variable the call writes on success, checked non-NULL before any work is done, so
/// that a call refused for another argument writes nothing.
pub(crate) struct Out<T>(std::ptr::NonNull<T>);

impl<T> Out<T> {
    pub(crate) fn set(self, v: T) {
        // SAFETY: checked non-NULL and aligned in `out_ptr`; the C contract: writable.
        unsafe { self.0.as_ptr().write(v) }
    }
}

impl<H> Out<*mut H> {
    /// Hands the caller a new handle, which it owns and releases with its `*_destroy`.
    pub(crate) fn hand_over(self, handle: H) {
        self.set(Box::into_raw(Box::new(handle)));
    }
}

/// A pointer that must not be NULL, for an output written only on success.
pub(crate) fn out_ptr<T>(p: *mut T, name: &str) -> Result<Out<T>> {
    let p = std::ptr::NonNull::new(p)
        .ok_or_else(|| Error::NullPointer(format!("output argument `{name}` is NULL")))?;
    aligned(p.as_ptr().cast_const(), name)?;
    Ok(Out(p))
}

/// An output the caller may leave NULL, checked before any work is done.
pub(crate) struct MaybeOut<T>(Option<Out<T>>);

impl<T> MaybeOut<T> {
    /// Writes `v` where the caller asked for it.
    pub(crate) fn set(self, v: T) {
        if let Some(out) = self.0 {
            out.set(v);
        }
    }
}

/// An output the caller may leave NULL (then nothing is written to it).
pub(crate) fn optional_out<T>(p: *mut T, name: &str) -> Result<MaybeOut<T>> {
    match p.is_null() {
        true => Ok(MaybeOut(None)),
        false => out_ptr(p, name).map(|o| MaybeOut(Some(o))),
    }
}
