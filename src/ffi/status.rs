//! Status codes returned by every fallible `sg_*` call (defined in the core,
//! `crate::status`), and their names.

pub use crate::status::*;
use std::ffi::c_char;

/// A static, NUL-terminated name for `status` ("SG_OK", "SG_ERR_NULL_POINTER", …;
/// "unknown status" for values not listed). Never NULL; thread-safe.
#[no_mangle]
pub extern "C" fn sg_status_string(status: sg_status) -> *const c_char {
    let s: &'static [u8] = match status {
        SG_OK => b"SG_OK\0",
        SG_ERR_INVALID_ARGUMENT => b"SG_ERR_INVALID_ARGUMENT\0",
        SG_ERR_NULL_POINTER => b"SG_ERR_NULL_POINTER\0",
        SG_ERR_UNSUPPORTED => b"SG_ERR_UNSUPPORTED\0",
        SG_ERR_OUT_OF_MEMORY => b"SG_ERR_OUT_OF_MEMORY\0",
        SG_ERR_DEVICE_OUT_OF_MEMORY => b"SG_ERR_DEVICE_OUT_OF_MEMORY\0",
        SG_ERR_CUDA_UNAVAILABLE => b"SG_ERR_CUDA_UNAVAILABLE\0",
        SG_ERR_CUDA_DRIVER => b"SG_ERR_CUDA_DRIVER\0",
        SG_ERR_KERNEL_COMPILE => b"SG_ERR_KERNEL_COMPILE\0",
        SG_ERR_NON_FINITE => b"SG_ERR_NON_FINITE\0",
        SG_ERR_BUFFER_TOO_SMALL => b"SG_ERR_BUFFER_TOO_SMALL\0",
        SG_ERR_INTERNAL => b"SG_ERR_INTERNAL\0",
        SG_ERR_CANCELLED => b"SG_ERR_CANCELLED\0",
        _ => b"unknown status\0",
    };
    s.as_ptr().cast()
}
