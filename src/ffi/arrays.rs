//! Caller arrays: the one place where a pointer and an element count from C become a
//! slice. What can be checked is (NULL, alignment, a size the address space can hold);
//! the C contract answers for the rest (the memory holds that many elements, and an array
//! the call writes is not read or written by anyone else meanwhile).

use super::args::{aligned, out_ptr};
use crate::error::{Error, Result};

/// `Ok` when `len` elements of `T` at `p` can be a slice: `p` not NULL (else an error naming
/// `name`), aligned for `T`, and their bytes within the address space.
pub(crate) fn check<T>(p: *const T, len: usize, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("`{name}` is NULL")));
    }
    aligned(p, name)?;
    let fits = len
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .and_then(|bytes| (p as usize).checked_add(bytes))
        .is_some();
    if !fits {
        return Err(crate::invalid!(
            "`{name}` of {len} elements of {} bytes exceeds the address space",
            std::mem::size_of::<T>()
        ));
    }
    Ok(())
}

/// `Ok` when the array at `p` is not NULL (and aligned), for a call that checks it before it
/// knows its length.
pub(crate) fn not_null<T>(p: *const T, name: &str) -> Result<()> {
    check(p, 0, name)
}

/// The `len` elements at `p` that a call reads; NULL is refused, naming `name`.
pub(crate) fn slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    check(p, len, name)?;
    // SAFETY: checked above (non-NULL, aligned, fits); the C contract: `len` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The `len` elements at `p` that a call writes; NULL is refused, naming `name`.
pub(crate) fn slice_mut<'a, T>(p: *mut T, len: usize, name: &str) -> Result<&'a mut [T]> {
    check(p, len, name)?;
    // SAFETY: as in `slice`; the C contract: writable and used by nothing else meanwhile.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// `slice_mut` for an output array, whose NULL is refused as that of any output.
pub(crate) fn out_slice<'a, T>(p: *mut T, len: usize, name: &str) -> Result<&'a mut [T]> {
    out_ptr(p, name)?;
    slice_mut(p, len, name)
}

/// `slice`, where an empty array may be NULL.
pub(crate) fn slice_or_empty<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    match len {
        0 => Ok(&[]),
        _ => slice(p, len, name),
    }
}

/// `slice_mut`, where an empty array may be NULL.
pub(crate) fn slice_mut_or_empty<'a, T>(p: *mut T, len: usize, name: &str) -> Result<&'a mut [T]> {
    match len {
        0 => Ok(&mut []),
        _ => slice_mut(p, len, name),
    }
}

/// `slice`, where NULL means the caller passes no such array.
pub(crate) fn optional<'a, T>(p: *const T, len: usize, name: &str) -> Result<Option<&'a [T]>> {
    match p.is_null() {
        true => Ok(None),
        false => slice(p, len, name).map(Some),
    }
}

/// `slice_mut`, where NULL means the caller wants no such output.
pub(crate) fn optional_mut<'a, T>(
    p: *mut T,
    len: usize,
    name: &str,
) -> Result<Option<&'a mut [T]>> {
    match p.is_null() {
        true => Ok(None),
        false => slice_mut(p, len, name).map(Some),
    }
}

/// Whether the `na` elements at `a` and the `nb` elements at `b` share a byte (before they
/// become slices: a slice that is written must not alias another). Empty arrays share none.
pub(crate) fn overlap<A, B>(a: *const A, na: usize, b: *const B, nb: usize) -> bool {
    let bytes = |n: usize, size: usize| n.saturating_mul(size);
    let (a0, b0) = (a as usize, b as usize);
    let (a1, b1) = (
        a0.saturating_add(bytes(na, std::mem::size_of::<A>())),
        b0.saturating_add(bytes(nb, std::mem::size_of::<B>())),
    );
    a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::*;

    #[test]
    fn null_misaligned_and_oversized_arrays_are_refused_by_name() {
        let e = slice::<f32>(std::ptr::null(), 4, "data").unwrap_err();
        assert_eq!(e.status(), SG_ERR_NULL_POINTER);
        assert!(e.to_string().contains("`data`"), "{e}");
        let v = [0f64; 4];
        let odd = unsafe { v.as_ptr().cast::<u8>().add(1) }.cast::<f64>();
        let e = slice(odd, 2, "coeffs").unwrap_err();
        assert_eq!(e.status(), SG_ERR_INVALID_ARGUMENT);
        assert!(e.to_string().contains("`coeffs`"), "{e}");
        let e = slice(v.as_ptr(), usize::MAX / 4, "x").unwrap_err();
        assert_eq!(e.status(), SG_ERR_INVALID_ARGUMENT);
        assert!(e.to_string().contains("`x`"), "{e}");
        assert_eq!(slice(v.as_ptr(), 4, "v").unwrap(), &v);
        assert!(slice_or_empty::<f32>(std::ptr::null(), 0, "y")
            .unwrap()
            .is_empty());
        assert!(optional::<f32>(std::ptr::null(), 9, "z").unwrap().is_none());
    }

    #[test]
    fn overlap_is_by_bytes_and_empty_arrays_overlap_nothing() {
        let v = [0f32; 8];
        let p = v.as_ptr();
        let q = unsafe { p.add(4) };
        assert!(!overlap(p, 4, q, 4));
        assert!(overlap(p, 5, q, 4));
        assert!(overlap(q, 1, p.cast::<f64>(), 3));
        assert!(!overlap(p, 0, p, 8));
    }
}
