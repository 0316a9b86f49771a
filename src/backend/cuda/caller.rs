//! What a device call brings from the application: arrays it allocated (checked here
//! against the driver's record of them) and the stream its work is ordered on.
//!
//! The library queues a device call's kernels on its own streams (each plan has one) and
//! ties them to the caller's stream with two events: the plan's stream first waits for
//! what the caller queued before the call, and the caller's stream then waits for the
//! call's work. Nothing blocks the host; results are ready when the caller's stream says
//! so, and the pair of events is what `cuStreamBeginCapture` needs to take the plan's
//! stream into a graph.

use super::array::CallerArray;
use super::driver_error;
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUmemorytype, CUpointer_attribute};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use std::sync::{Arc, Mutex};

/// The stream device calls are ordered on: the application's, or the legacy default stream
/// (what a CUDA runtime program uses when it names none).
#[derive(Default)]
pub struct CallerStream {
    set: Mutex<Option<Arc<CudaStream>>>,
}

impl CallerStream {
    /// Orders later device calls on `stream` (`CUstream`; 0 for the legacy default stream).
    ///
    /// # Safety
    /// `stream` is 0 or a live stream of `ctx`'s context that stays alive while calls use it.
    ///
    /// A stream of another CUDA context than `ctx` is refused: the library's kernels are
    /// loaded in `ctx` (the device's primary context, or the application's own given to
    /// `sg_context_create_on_cuda_context`) and cannot be queued there.
    pub unsafe fn set(&self, ctx: &Arc<CudaContext>, stream: u64) -> Result<()> {
        let wrapped = match stream {
            0 => None,
            s => {
                // SAFETY: the caller's promise above: a live stream.
                unsafe { check_stream_context(ctx, s)? };
                // SAFETY: as above; the wrapper never destroys the stream.
                Some(unsafe { ctx.wrap_borrowed_stream(s as sys::CUstream) })
            }
        };
        *self.set.lock().unwrap_or_else(|e| e.into_inner()) = wrapped;
        Ok(())
    }

    /// The stream a device call starting now is ordered on.
    pub fn get(&self, ctx: &Arc<CudaContext>) -> Arc<CudaStream> {
        let set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        set.clone().unwrap_or_else(|| ctx.default_stream())
    }
}

/// `InvalidArgument` unless `stream` belongs to `ctx`'s CUDA context.
///
/// # Safety
/// `stream` is a live stream.
unsafe fn check_stream_context(ctx: &CudaContext, stream: u64) -> Result<()> {
    super::bind(ctx)?;
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a live stream (the caller's promise); `owner` receives one handle.
    unsafe { sys::cuStreamGetCtx(stream as sys::CUstream, &mut owner) }
        .result()
        .map_err(driver_error("asking the driver about a stream"))?;
    if owner == ctx.cu_ctx() {
        return Ok(());
    }
    Err(crate::invalid!(
        "stream 0x{stream:x} belongs to CUDA context {owner:?}, not to the library context's CUDA context {:?}, where its kernels run; queue device calls on a stream of that context (its memory may come from any context of the device), or create the library context on the stream's CUDA context (sg_context_create_on_cuda_context)",
        ctx.cu_ctx()
    ))
}

/// Queues `enqueue`'s work on `work` after what `caller` holds, and makes `caller` wait
/// for it. The host does not wait for either stream.
pub fn ordered_on<R>(
    caller: &CudaStream,
    work: &CudaStream,
    enqueue: impl FnOnce() -> Result<R>,
) -> Result<R> {
    if caller.cu_stream() == work.cu_stream() {
        return enqueue();
    }
    join(
        work,
        caller,
        "ordering a device call after the caller's stream",
    )?;
    // Joined back even when the call fails part way: the caller's stream then waits for
    // what was queued, and a capture it is in keeps the plan's stream joined.
    let r = enqueue();
    join(
        caller,
        work,
        "ordering the caller's stream after a device call",
    )?;
    r
}

thread_local! {
    /// One event per thread and context, recorded and waited on again at every join: a
    /// wait takes the event's state when it is queued, so recording it anew later is safe,
    /// and a call saves creating and destroying two events.
    static FENCE: std::cell::RefCell<Vec<CudaEvent>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Makes `waiter` wait for what `on` holds now (one reused event: no event is created or
/// destroyed per call).
pub fn join(waiter: &CudaStream, on: &CudaStream, what: &'static str) -> Result<()> {
    FENCE.with(|fences| {
        let mut fences = fences.borrow_mut();
        let ctx = on.context();
        let at = match fences.iter().position(|e| e.context() == ctx) {
            Some(at) => at,
            None => {
                fences.push(ctx.new_event(None).map_err(driver_error(what))?);
                fences.len() - 1
            }
        };
        let fence = &fences[at];
        fence.record(on).map_err(driver_error(what))?;
        waiter.wait(fence).map_err(driver_error(what))
    })
}

/// What the driver records of the allocation holding an address.
#[derive(Default)]
struct Record {
    /// A `CUmemorytype`; 0 where the driver knows no allocation (a host pointer, freed memory).
    kind: u32,
    managed: u32,
    ordinal: i32,
    start: u64,
    size: usize,
}

/// The driver's record of `addr`, in one query: `cuPointerGetAttributes` answers an address
/// it does not know with zeros rather than an error (which compute-sanitizer would report).
fn record(addr: u64) -> Result<Record> {
    use CUpointer_attribute::*;
    let mut r = Record::default();
    let mut attrs = [
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut std::ffi::c_void; 5] = [
        (&mut r.kind as *mut u32).cast(),
        (&mut r.managed as *mut u32).cast(),
        (&mut r.ordinal as *mut i32).cast(),
        (&mut r.start as *mut u64).cast(),
        (&mut r.size as *mut usize).cast(),
    ];
    // SAFETY: each data slot points at a field of the attribute's documented type and size;
    // `addr` is only looked up, never accessed.
    unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            addr,
        )
    }
    .result()
    .map_err(driver_error("asking the driver about a device address"))?;
    Ok(r)
}

/// `Ok` when `bytes` from `addr` lie in one allocation of device (or managed) memory that
/// `ctx`'s device can use; else an invalid-argument error naming `name`, the address, the
/// bytes needed and what the driver reports there.
pub fn check_range(ctx: &CudaContext, addr: u64, bytes: usize, name: &str) -> Result<()> {
    super::bind(ctx)?;
    let bad = |found: String| {
        crate::invalid!(
            "`{name}` (0x{addr:x}) must be device memory of the context's device holding {bytes} bytes; {found}"
        )
    };
    let r = record(addr)?;
    if r.kind == 0 {
        return Err(bad(
            "the driver knows no allocation there: a host pointer, or freed memory".into(),
        ));
    }
    if r.kind != CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 && r.managed == 0 {
        return Err(bad(format!(
            "it is page-locked host memory (memory type {})",
            r.kind
        )));
    }
    if r.managed == 0 && r.ordinal != ctx.ordinal() as i32 {
        return Err(bad(format!(
            "it belongs to device {}, the context is on device {}",
            r.ordinal,
            ctx.ordinal()
        )));
    }
    let (start, size) = if r.size == 0 {
        (addr, usize::MAX)
    } else {
        (r.start, r.size)
    };
    let left = size.saturating_sub(addr.saturating_sub(start) as usize);
    if left < bytes {
        return Err(bad(format!(
            "its allocation (0x{start:x}, {size} bytes) has {left} bytes from there"
        )));
    }
    Ok(())
}

/// `len` elements of `T` at `addr` in the caller's device memory, checked with
/// [`check_range`] (and for NULL and alignment) before they are wrapped. An empty array may
/// be NULL.
///
/// # Safety
/// As [`CallerArray::new`]: the memory stays allocated, and an array the call writes is
/// the caller's to let it write, for the lifetime chosen.
pub unsafe fn caller_array<'a, T>(
    ctx: &CudaContext,
    addr: u64,
    len: usize,
    name: &str,
) -> Result<CallerArray<'a, T>> {
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| crate::invalid!("`{name}` of {len} elements exceeds the address space"))?;
    if len > 0 {
        if addr == 0 {
            return Err(Error::NullPointer(format!("`{name}` is NULL")));
        }
        if addr % std::mem::align_of::<T>() as u64 != 0 {
            return Err(crate::invalid!(
                "`{name}` (0x{addr:x}) is not aligned to {} bytes",
                std::mem::align_of::<T>()
            ));
        }
        check_range(ctx, addr, bytes, name)?;
    }
    // SAFETY: the caller's promise above; the range was found in one allocation.
    Ok(unsafe { CallerArray::new(addr, len) })
}
