//! `sg_context`: the backend that plans run on.

pub mod memory;

use super::args::{arg_ref, out_ptr};
use super::status::sg_status;
use super::{copy_string_out, guard};
use crate::backend::{BackendKind, BackendRequest};
use crate::context::Context;
use std::ffi::{c_char, c_int, c_void, CString};
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
        out.hand_over(sg_context(Context::new(request, device_ordinal)?));
        Ok(())
    })
}

/// Creates a CUDA context that runs on the application's own CUDA context `cu_context` (a
/// `CUcontext` passed as an integer): the CUDA runtime's primary context (`cuCtxGetCurrent`
/// after `cudaSetDevice` and a first runtime call, or `cuDevicePrimaryCtxRetain`) or one
/// made with `cuCtxCreate`. The library loads its kernels and makes its streams, plans and
/// device memory in that context, so `sg_context_set_stream` accepts the application's
/// streams of it, and device calls take arrays allocated there. The device is the
/// context's. The library never destroys `cu_context`: the application keeps it alive
/// until this context and every plan made on it are destroyed, then destroys it as before.
/// `SEISGPU_BACKEND` does not apply (the call names its CUDA context).
/// `SG_ERR_INVALID_ARGUMENT` for 0 or a context the driver does not know as live;
/// `SG_ERR_CUDA_UNAVAILABLE` without the CUDA libraries. On success `*out` receives a new
/// context that the caller releases with `sg_context_destroy`; on failure `*out` is left
/// unchanged. `out` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_create_on_cuda_context(
    cu_context: u64,
    out: *mut *mut sg_context,
) -> sg_status {
    guard(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: the C contract above: a live CUcontext, kept alive by the application.
        let ctx = unsafe { Context::adopting(cu_context)? };
        out.hand_over(sg_context(ctx));
        Ok(())
    })
}

/// `super::create` for a handle made on a context (a plan): `make` gets the context.
pub(crate) fn create_on<H>(
    ctx: *const sg_context,
    out: *mut *mut H,
    make: impl FnOnce(&Arc<Context>) -> crate::error::Result<H>,
) -> sg_status {
    super::create(ctx, "ctx", out, |ctx| make(&ctx.0))
}

/// Writes the backend the context runs on (`SG_BACKEND_CPU` or `SG_BACKEND_CUDA`, never
/// AUTO) to `*backend`. Neither pointer may be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_backend(ctx: *const sg_context, backend: *mut i32) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let backend = out_ptr(backend, "backend")?;
        backend.set(match ctx.0.backend() {
            BackendKind::Cpu => SG_BACKEND_CPU,
            BackendKind::Cuda => SG_BACKEND_CUDA,
        });
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

/// Orders the device calls (`*_device_*`) made on `ctx` and its plans from now on on
/// `stream`, a `CUstream` (a `cudaStream_t`) of the context's device and CUDA context,
/// passed as an integer; 0 means the legacy default stream, the default. A device call
/// queues its work after what `stream` holds when it is made and returns without waiting:
/// its outputs are ready when `stream` reaches the point where the call left it (a later
/// kernel, copy or event on `stream`, `cudaStreamSynchronize`, or `sg_context_synchronize`).
/// The stream must stay alive while calls use it; set another, or 0, before destroying it.
/// Calls with host arrays are unaffected (they return with their results written).
/// `SG_ERR_UNSUPPORTED` on a CPU context; `SG_ERR_INVALID_ARGUMENT` for a stream of another
/// CUDA context than the library context's (the device's primary one, or the application's
/// own given to `sg_context_create_on_cuda_context`): the library's kernels cannot run
/// there, though device arrays allocated in another context of the device may be passed to
/// device calls. Change it only while no device call runs on `ctx`.
#[no_mangle]
pub extern "C" fn sg_context_set_stream(ctx: *mut sg_context, stream: u64) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx.cast_const(), "ctx")?;
        let gpu = ctx.0.gpu_for("sg_context_set_stream")?;
        // SAFETY: the C contract above: a live stream of the context, or 0.
        unsafe { gpu.caller.set(&gpu.ctx, stream) }
    })
}

/// Device calls look for no non-finite input (the default).
pub const SG_DEVICE_CHECKS_OFF: i32 = 0;
/// Each device call scans its sample inputs on the device (one more read of each) and a
/// non-finite value is reported by the next `sg_context_synchronize`.
pub const SG_DEVICE_CHECKS_FINITE: i32 = 1;

/// Sets the checks device calls made on `ctx` from now on run on their inputs:
/// `SG_DEVICE_CHECKS_OFF` (the default) or `SG_DEVICE_CHECKS_FINITE`. With the latter each
/// device call queues, before its own work and on the context's stream, a scan of the
/// samples it reads (traces, volumes, strengths or modes, coefficients, spectra, data); it
/// still returns without waiting, and the call goes on with what it was given. The first
/// call whose input held a NaN or an infinity since the last report is named by the next
/// `sg_context_synchronize`, which then returns `SG_ERR_NON_FINITE`. A scan is a kernel like
/// the call's own: it can be captured into a CUDA graph, and a replay reports as the direct
/// calls do. `SG_ERR_UNSUPPORTED` on a CPU context (host calls always check their inputs).
#[no_mangle]
pub extern "C" fn sg_context_set_device_checks(ctx: *mut sg_context, checks: i32) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx.cast_const(), "ctx")?;
        let on = match checks {
            SG_DEVICE_CHECKS_OFF => false,
            SG_DEVICE_CHECKS_FINITE => true,
            other => {
                return Err(crate::invalid!(
                    "checks is {other}; expected SG_DEVICE_CHECKS_OFF (0) or SG_DEVICE_CHECKS_FINITE (1)"
                ))
            }
        };
        ctx.0
            .gpu_for("sg_context_set_device_checks")?
            .set_device_checks(on)
    })
}

/// Waits until the work of the device calls made on `ctx` so far has run (the stream set by
/// `sg_context_set_stream`). A kernel fault in that work is reported here as
/// `SG_ERR_CUDA_DRIVER`; with device checks on (`sg_context_set_device_checks`), a non-finite
/// input of a device call since the last report as `SG_ERR_NON_FINITE`, the message naming
/// the call and the array. On a CPU context there is nothing to wait for: `SG_OK`.
#[no_mangle]
pub extern "C" fn sg_context_synchronize(ctx: *const sg_context) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let Some(gpu) = ctx.0.cuda() else {
            return Ok(());
        };
        gpu.caller_stream()
            .synchronize()
            .map_err(crate::backend::cuda::driver_error(
                "waiting for the device calls' stream",
            ))?;
        gpu.take_device_finding()
    })
}

/// Releases the caller's reference to a context. NULL is a no-op. Plans made from it stay
/// valid (they hold their own reference). Must not race with other calls on the same
/// handle.
#[no_mangle]
pub extern "C" fn sg_context_destroy(ctx: *mut sg_context) {
    super::destroy(ctx);
}

/// A progress callback: `user` as given to `sg_context_set_progress`, `stage` a short
/// static name of the work in progress ("fx windows", "correlate", …), `fraction` the
/// share of the call done, in [0, 1]. Return 0 to go on, non-zero to stop the call.
pub type sg_progress_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, stage: *const c_char, fraction: f64) -> c_int>;

/// The caller's user pointer, handed back to its callback untouched.
struct UserPointer(*mut c_void);
// SAFETY: seisgpu never dereferences it; the caller, who set it for calls made from any
// thread, answers for its use from those threads.
unsafe impl Send for UserPointer {}
unsafe impl Sync for UserPointer {}

/// Sets the progress callback of the long calls (F-X/F-XY decon, xcorr preprocessing and
/// correlation, DWT batches, the EM-logging search, USFFT, wave-packet forward, adjoint,
/// inverse and POCS, tiled wave-packet volumes) made from now on with `ctx` or any plan
/// created from it; `callback`
/// NULL removes it. Each such call runs `callback(user, stage, fraction)` on the thread
/// that made the call, between chunks of its work (after the first chunk, then at most
/// every 100 ms), with fractions that only grow, and a last time with exactly 1 once its
/// work is complete (that answer is ignored). A non-zero return stops
/// the call after the chunk in progress (chunks aim at 50 ms of work on the CPU; on a CUDA
/// context, one slab of F-X decon, one chunk of stations or one tile's row batch of xcorr,
/// one group of EM launches, one whole USFFT before its download) with `SG_ERR_CANCELLED`,
/// and the plan stays usable. After a cancel the outputs hold what they held before the
/// call, except for an F-XY volume large enough to be filtered in several slabs along the
/// crossline axis (over 512 MB of working memory on the CPU, 64 MB of input on the GPU):
/// there the lines before the one named in the error message may hold partly filtered
/// traces. With a callback set, a DWT batch (and a USFFT type 2 on the CPU) is computed
/// into a temporary copy of its output (memory for one output more) and copied out at the
/// end. The callback must not call seisgpu on the same plan; change it only while no call
/// runs on `ctx`. `ctx` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_set_progress(
    ctx: *mut sg_context,
    callback: sg_progress_fn,
    user: *mut c_void,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx.cast_const(), "ctx")?;
        let hook = callback.map(|f| {
            let user = UserPointer(user);
            Arc::new(move |stage: &str, fraction: f64| {
                let user = &user;
                // Stage names are seisgpu's own static words, without NUL bytes.
                let stage = CString::new(stage).unwrap_or_default();
                // SAFETY: the caller's callback, called as its contract says.
                unsafe { f(user.0, stage.as_ptr(), fraction) != 0 }
            }) as crate::progress::ProgressFn
        });
        ctx.0.set_progress(hook);
        Ok(())
    })
}
