//! `sg_context`'s device memory: the application's allocator and what the library holds.

use super::sg_context;
use crate::backend::cuda::memory::Hooks;
use crate::ffi::args::{arg_ref, out_ptr};
use crate::ffi::guard;
use crate::ffi::status::sg_status;
use std::ffi::{c_int, c_void};

/// An application's device allocation for `sg_context_set_device_allocator`: writes into
/// `*ptr` the address (a `CUdeviceptr`) of at least `bytes` bytes of device memory of the
/// context's device, aligned to 256 bytes, and returns 0; any other return (or a zero
/// address) refuses, and the library call that asked fails with
/// `SG_ERR_DEVICE_OUT_OF_MEMORY`. `stream` is the `CUstream` (0: the legacy default stream)
/// the library will use the memory on first: memory from a stream-ordered pool may be
/// handed out for that stream. `user` is the pointer given with the hooks.
pub type sg_device_alloc_fn = Option<
    unsafe extern "C" fn(user: *mut c_void, bytes: usize, stream: u64, ptr: *mut u64) -> c_int,
>;

/// Gives back memory that `sg_device_alloc_fn` gave: `ptr` and `bytes` as allocated, `stream`
/// the `CUstream` the library last used it on. Work the library queued on `stream` may still
/// read or write the memory when this is called (frees are stream-ordered, as
/// `cuMemFreeAsync`'s): the allocator may reuse it for work queued on `stream` after this
/// call at once, and for other streams once `stream` has reached this point.
pub type sg_device_free_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, ptr: u64, bytes: usize, stream: u64)>;

/// Makes `alloc` and `free` the source of the device memory the library allocates on `ctx`
/// from now on: plans' workspaces and tables, cuFFT's work areas, and any buffer a call
/// makes. Buffers made before keep the allocator that made them and go back to it (the hooks
/// and `user` must stay valid until every plan made while they were set is destroyed).
/// Both NULL restore the default (`cuMemAllocAsync` on the buffer's stream); one NULL is
/// `SG_ERR_INVALID_ARGUMENT`. The hooks are called from whichever thread makes or destroys a
/// plan or makes a call, possibly several at once: they must be thread-safe, and must not
/// call seisgpu. cuFFT's and cuBLAS's own set-up data (the tables they upload when a plan or
/// handle is made) and the kernels' modules stay outside the hooks. `SG_ERR_UNSUPPORTED` on a
/// CPU context, which holds no device memory. Thread-safe; best set before plans are made.
#[no_mangle]
pub extern "C" fn sg_context_set_device_allocator(
    ctx: *mut sg_context,
    alloc: sg_device_alloc_fn,
    free: sg_device_free_fn,
    user: *mut c_void,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx.cast_const(), "ctx")?;
        let hooks = match (alloc, free) {
            (Some(alloc), Some(free)) => Some(Hooks { alloc, free, user }),
            (None, None) => None,
            _ => {
                return Err(crate::invalid!(
                    "one of `alloc` and `free` is NULL; give both, or both NULL for the default allocator"
                ))
            }
        };
        let gpu = ctx.0.gpu_for("sg_context_set_device_allocator")?;
        gpu.memory.set_hooks(hooks);
        Ok(())
    })
}

/// Device memory the library holds for `ctx` and its plans, in bytes: `*in_use` now,
/// `*peak` the most at once since the context was made (buffers, workspaces, tables, cuFFT
/// work areas; not cuFFT's or cuBLAS's own set-up data, nor the kernels' modules). Both 0
/// on a CPU context. `ctx`, `in_use` and `peak` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_context_device_memory(
    ctx: *const sg_context,
    in_use: *mut usize,
    peak: *mut usize,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let in_use = out_ptr(in_use, "in_use")?;
        let peak = out_ptr(peak, "peak")?;
        let (now, most) = ctx.0.cuda().map_or((0, 0), |gpu| gpu.memory.usage());
        in_use.set(now);
        peak.set(most);
        Ok(())
    })
}
