//! `sg_context`: the backend that plans run on.

use super::status::sg_status;
use super::{arg_ref, copy_string_out, guard, out_ptr};
use crate::backend::{BackendKind, BackendRequest};
use crate::context::Context;
use std::ffi::c_char;
use std::sync::Arc;

/// Choose the GPU when the CUDA driver, NVRTC, cuFFT and a device are present, else the
/// CPU (`sg_context_describe` says why). `SEISGPU_BACKEND=cpu|cuda` overrides it.
pub const SG_BACKEND_AUTO: i32 = 0;
/// All CPU cores (`SEISGPU_NUM_THREADS` sets how many threads).
pub const SG_BACKEND_CPU: i32 = 1;
/// The GPU; fails with `SG_ERR_CUDA_UNAVAILABLE` rather than falling back to the CPU.
pub const SG_BACKEND_CUDA: i32 = 2;

/// A context: a backend (CPU thread pool, or a CUDA device with its compiled kernels).
/// Opaque; create with `sg_context_create`, release with `sg_context_destroy`.
pub struct sg_context(pub(crate) Arc<Context>);

/// Creates a context on `backend` (`SG_BACKEND_AUTO`, `_CPU` or `_CUDA`) and, for CUDA,
/// the GPU `device_ordinal` (0 for the first). On success `*out` receives a new context
/// that the caller owns and releases with `sg_context_destroy`; on failure `*out` is left
/// unchanged. `out` must not be NULL. Thread-safe. A context may be used by several
/// threads at once; plans hold their own reference to it.
#[no_mangle]
pub extern "C" fn sg_context_create(
    backend: i32,
    device_ordinal: i32,
    out: *mut *mut sg_context,
) -> sg_status {
    guard(|| {
        let out = out_ptr(out, "out")?;
        let request = match backend {
            SG_BACKEND_AUTO => BackendRequest::Auto,
            SG_BACKEND_CPU => BackendRequest::Cpu,
            SG_BACKEND_CUDA => BackendRequest::Cuda,
            other => {
                return Err(crate::invalid!(
                    "backend is {other}; expected SG_BACKEND_AUTO (0), SG_BACKEND_CPU (1) or SG_BACKEND_CUDA (2)"
                ))
            }
        };
        let ctx = Context::new(request, device_ordinal)?;
        // SAFETY: checked non-NULL; written only on success.
        unsafe { *out = Box::into_raw(Box::new(sg_context(ctx))) };
        Ok(())
    })
}

/// Writes the backend the context runs on (`SG_BACKEND_CPU` or `SG_BACKEND_CUDA`, never
/// AUTO) to `*backend`. Neither pointer may be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_backend(ctx: *const sg_context, backend: *mut i32) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let backend = out_ptr(backend, "backend")?;
        let kind = match ctx.0.backend() {
            BackendKind::Cpu => SG_BACKEND_CPU,
            BackendKind::Cuda => SG_BACKEND_CUDA,
        };
        // SAFETY: checked non-NULL.
        unsafe { *backend = kind };
        Ok(())
    })
}

/// Writes a human-readable description of the context into `buf` (`len` bytes,
/// NUL-terminated): the backend; for CUDA the device name, compute capability, memory and
/// the path of each CUDA library loaded; for the CPU, why it was chosen and the thread
/// count. `*needed` (may be NULL) receives the size required, NUL included; `buf` may be
/// NULL when `len` is 0. `SG_ERR_BUFFER_TOO_SMALL` when it does not fit. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_describe(
    ctx: *const sg_context,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        copy_string_out(ctx.0.describe(), buf, len, needed)
    })
}

/// Releases the caller's reference to a context. NULL is a no-op. Plans made from it stay
/// valid (they hold their own reference). Must not race with other calls on the same
/// handle.
#[no_mangle]
pub extern "C" fn sg_context_destroy(ctx: *mut sg_context) {
    super::destroy(ctx);
}
