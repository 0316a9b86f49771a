//! The thread-local message of the last failed call.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

pub(crate) fn set(message: &str) {
    // Interior NULs would truncate the C string; replace them.
    let clean = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = clean);
}

pub(crate) fn clear() {
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::default());
}

#[cfg(test)]
pub(crate) fn current() -> String {
    LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned())
}

/// The message of the last `sg_*` call made on this thread: empty ("") when that call
/// succeeded. Never NULL. The pointer stays valid until the next `sg_*` call on the
/// same thread; copy it (or use `sg_last_error_copy`) to keep it. Thread-safe: each
/// thread has its own message.
#[no_mangle]
pub extern "C" fn sg_last_error_message() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Copies the last error message of this thread into `buf` (`len` bytes, NUL-terminated),
/// for callers such as Fortran that need their own copy. `*needed` (may be NULL) receives
/// the size required, NUL included. `buf` may be NULL when `len` is 0, to query the size.
/// Returns `SG_ERR_BUFFER_TOO_SMALL` and writes nothing into `buf` when it is too short.
/// Unlike other calls, this one leaves the last error message unchanged.
#[no_mangle]
pub extern "C" fn sg_last_error_copy(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> super::status::sg_status {
    let message = LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned());
    match std::panic::catch_unwind(|| super::copy_string_out(&message, buf, len, needed)) {
        Ok(Ok(())) => super::status::SG_OK,
        Ok(Err(e)) => e.status(),
        Err(_) => super::status::SG_ERR_INTERNAL,
    }
}
