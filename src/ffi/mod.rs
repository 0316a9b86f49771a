//! The C ABI, and nothing else: argument checks, handle ownership, status codes.
//!
//! Conventions (also in the README): every fallible call returns `sg_status`, writes
//! its outputs only on success, and records a message for `sg_last_error_message()`;
//! no panic crosses the boundary; NULL handles passed to `*_destroy` are ignored.
//!
//! One file per C object; what they share: `guard`, `create` and `destroy` here, `args` (handles,
//! option structs and outputs), `option_fields` (the option structs' fields), `arrays` (caller arrays made slices, checked), `device_arrays` (the same for
//! device memory) and
//! `precision` (an object's f32 or f64 plan).

mod args;
mod arrays;
pub mod context;
mod device_arrays;
pub mod dwt;
pub mod emlog;
pub mod fxdecon;
pub mod last_error;
mod option_fields;
mod precision;
pub mod status;
pub mod usfft;
pub mod version;
pub mod wavepacket;
pub mod wavepacket_volume;
pub mod wavepacket_volume_device;
pub mod wavepacket_volume_tiles;
pub mod xcorr;

use crate::error::{Error, Result};
use status::{sg_status, SG_OK};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an export: clears the last error, catches panics, and turns
/// the outcome into a status code.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> sg_status {
    last_error::clear();
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".into());
        Err(Error::Internal(format!(
            "internal error (a bug in seisgpu, please report it): {what}"
        )))
    });
    match outcome {
        Ok(()) => SG_OK,
        Err(e) => {
            last_error::set(&e.to_string());
            e.status()
        }
    }
}

/// Runs the body of a `sg_<object>_workspace_bytes` call: `*bytes` receives what `held`
/// says of the object (argument `name`), which must not be NULL, nor `bytes`.
pub(crate) fn workspace_bytes<H>(
    handle: *const H,
    name: &str,
    bytes: *mut usize,
    held: impl FnOnce(&H) -> usize,
) -> sg_status {
    guard(|| {
        let handle = args::arg_ref(handle, name)?;
        args::out_ptr(bytes, "bytes")?.set(held(handle));
        Ok(())
    })
}

/// Drops a boxed handle made by a `*_create` call; NULL is a no-op and a panic in a
/// destructor is contained.
pub(crate) fn destroy<T>(handle: *mut T) {
    if !handle.is_null() {
        // SAFETY: the C contract: made by Box::into_raw in `*_create`, not destroyed before.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(handle) })));
    }
}

/// Runs the body of a call that makes a new handle from `parent` (a context, a plan): the
/// parent (argument `name`) and `out` are checked first, so a call refused for them does no
/// work; then `make` builds the handle that `*out` receives.
pub(crate) fn create<P, H>(
    parent: *const P,
    name: &str,
    out: *mut *mut H,
    make: impl FnOnce(&P) -> Result<H>,
) -> sg_status {
    guard(|| {
        let parent = args::arg_ref(parent, name)?;
        let out = args::out_ptr(out, "out")?;
        out.hand_over(make(parent)?);
        Ok(())
    })
}

/// Copies `text` into a caller buffer of `len` bytes as a NUL-terminated string,
/// setting `*needed` (if not NULL) to the bytes required including the NUL.
/// `buf` may be NULL when `len` is 0 (a size query).
pub(crate) fn copy_string_out(
    text: &str,
    buf: *mut std::ffi::c_char,
    len: usize,
    needed: *mut usize,
) -> Result<()> {
    let bytes = text.as_bytes();
    let required = bytes.len() + 1;
    args::optional_out(needed, "needed")?.set(required);
    if len < required {
        return Err(Error::BufferTooSmall(format!(
            "buffer of {len} bytes is too small: {required} bytes needed (see `needed`)"
        )));
    }
    if buf.is_null() {
        return Err(Error::NullPointer(
            "`buf` is NULL but `len` is not 0".into(),
        ));
    }
    let out = arrays::slice_mut(buf.cast::<u8>(), required, "buf")?;
    out[..bytes.len()].copy_from_slice(bytes);
    out[bytes.len()] = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use status::*;

    #[test]
    fn panic_inside_the_boundary_becomes_internal_error() {
        let status = guard(|| panic!("planted panic"));
        assert_eq!(status, SG_ERR_INTERNAL);
        let msg = last_error::current();
        assert!(msg.contains("planted panic"), "message was {msg:?}");
        // The thread, and the boundary, go on working.
        assert_eq!(guard(|| Ok(())), SG_OK);
        assert_eq!(last_error::current(), "");
    }

    #[test]
    fn string_copy_reports_needed_size_and_writes_nothing_when_short() {
        let mut buf = [b'x' as std::ffi::c_char; 4];
        let mut needed = 0usize;
        let e = copy_string_out("hello", buf.as_mut_ptr(), buf.len(), &mut needed).unwrap_err();
        assert_eq!(e.status(), SG_ERR_BUFFER_TOO_SMALL);
        assert_eq!(needed, 6);
        assert!(buf.iter().all(|&c| c == b'x' as std::ffi::c_char));
    }
}
