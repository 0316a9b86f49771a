//! The status codes of the C ABI, owned by the core: each `Error` variant maps to one
//! (`Error::status`), and `ffi` returns them. cbindgen writes them into the header from here.

/// Result of a fallible call: `SG_OK` (0) or one of the `SG_ERR_*` codes.
/// `sg_last_error_message()` gives the details of the last failure on this thread.
#[allow(non_camel_case_types)]
pub type sg_status = i32;

/// Success.
pub const SG_OK: sg_status = 0;
/// An argument has a value outside what the call accepts (a size, a stride, an enum value).
pub const SG_ERR_INVALID_ARGUMENT: sg_status = 1;
/// A pointer argument that must not be NULL was NULL.
pub const SG_ERR_NULL_POINTER: sg_status = 2;
/// Valid in general but not for this plan (e.g. a length the chosen wavelet does not allow).
pub const SG_ERR_UNSUPPORTED: sg_status = 3;
/// Host memory could not be allocated.
pub const SG_ERR_OUT_OF_MEMORY: sg_status = 4;
/// Device memory could not be allocated; the context stays usable.
pub const SG_ERR_DEVICE_OUT_OF_MEMORY: sg_status = 5;
/// No CUDA device, or a CUDA library (driver, NVRTC, cuFFT) could not be found.
pub const SG_ERR_CUDA_UNAVAILABLE: sg_status = 6;
/// The CUDA driver reported an error.
pub const SG_ERR_CUDA_DRIVER: sg_status = 7;
/// NVRTC could not compile a kernel; the message holds its log.
pub const SG_ERR_KERNEL_COMPILE: sg_status = 8;
/// The input holds NaN or infinity; nothing was written.
pub const SG_ERR_NON_FINITE: sg_status = 9;
/// A caller-supplied buffer is too small; `*needed` says how large it must be.
pub const SG_ERR_BUFFER_TOO_SMALL: sg_status = 10;
/// A bug in seisgpu (a caught panic); the process may go on.
pub const SG_ERR_INTERNAL: sg_status = 11;
/// The progress callback asked to stop (`sg_context_set_progress`); the call wrote
/// nothing and its plan stays usable.
pub const SG_ERR_CANCELLED: sg_status = 12;
