//! An application's own CUDA context as a library context's: the runtime's primary context
//! (what `cudaSetDevice` makes current) or one made with `cuCtxCreate`. The library loads
//! its kernels and makes its streams, plans and memory there, so that the application's
//! streams can order its device calls.
//!
//! The library never destroys such a context: it keeps its handle until the process exits,
//! and the application destroys the context after every library context and plan on it.

use super::driver_error;
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUcontext, CUdevice};
use cudarc::driver::{result, CudaContext};
use std::sync::{Arc, Mutex};

/// The device ordinal of `raw`, the context as the library holds it, and whether it is the
/// device's primary context (then the one `primary` gives for the ordinal).
///
/// # Safety
/// `raw` is a live `CUcontext`, not 0 (a destroyed one is refused when the driver still
/// knows it as such; any other value is undefined behaviour, as for the driver).
pub unsafe fn adopt(
    raw: u64,
    primary: impl FnOnce(usize) -> Result<Arc<CudaContext>>,
) -> Result<(usize, Arc<CudaContext>, bool)> {
    let ctx = raw as CUcontext;
    // SAFETY: the caller's promise: a live context.
    let device = unsafe { device_of(ctx) }.map_err(|e| {
        crate::invalid!("cu_context 0x{raw:x} is not a live CUDA context: the driver said {e:?}")
    })?;
    let ordinal = ordinal_of(device)?;
    // SAFETY: `device` is the driver's own, found by ordinal above.
    if unsafe { is_primary(ctx, device) }? {
        return Ok((ordinal, primary(ordinal)?, true));
    }
    Ok((ordinal, kept(ctx, device, ordinal)?, false))
}

/// The device `ctx` runs on (pushed current, asked, popped).
unsafe fn device_of(ctx: CUcontext) -> std::result::Result<CUdevice, sys::CUresult> {
    // SAFETY: the caller's promise; the push is undone below whatever the answer.
    unsafe { sys::cuCtxPushCurrent_v2(ctx) }
        .result()
        .map_err(|e| e.0)?;
    let mut device: CUdevice = 0;
    // SAFETY: `device` receives one value.
    let asked = unsafe { sys::cuCtxGetDevice(&mut device) }.result();
    let mut popped: CUcontext = std::ptr::null_mut();
    // SAFETY: pops the context pushed above.
    let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    asked.map(|()| device).map_err(|e| e.0)
}

/// The ordinal the driver gives `device`.
fn ordinal_of(device: CUdevice) -> Result<usize> {
    let what = "listing the CUDA devices";
    let count = result::device::get_count().map_err(driver_error(what))?;
    for i in 0..count {
        if result::device::get(i).map_err(driver_error(what))? == device {
            return Ok(i as usize);
        }
    }
    Err(Error::CudaUnavailable(format!(
        "the context's device {device} is not among the driver's {count} devices"
    )))
}

/// Whether `ctx` is `device`'s primary context (only an active primary context can be).
unsafe fn is_primary(ctx: CUcontext, device: CUdevice) -> Result<bool> {
    let what = "asking the driver about the device's primary context";
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: a device of the driver; two outputs.
    unsafe { sys::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active) }
        .result()
        .map_err(driver_error(what))?;
    if active == 0 {
        return Ok(false);
    }
    // SAFETY: as above; the retain is released at once (the comparison needs the handle).
    let handle = unsafe { result::primary_ctx::retain(device) }.map_err(driver_error(what))?;
    // SAFETY: releases the retain above.
    unsafe { result::primary_ctx::release(device) }.map_err(driver_error(what))?;
    Ok(handle == ctx)
}

/// The library's hold on a context it did not make: one per handle, kept until exit and
/// never dropped, so that cudarc never destroys the application's context.
fn kept(ctx: CUcontext, device: CUdevice, ordinal: usize) -> Result<Arc<CudaContext>> {
    static KEPT: Mutex<Vec<Arc<CudaContext>>> = Mutex::new(Vec::new());
    let mut held = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = held
        .iter()
        .find(|c| c.cu_ctx() == ctx && c.cu_device() == device)
    {
        return Ok(c.clone());
    }
    // SAFETY: a live context of `device` (checked above); the wrapper is kept in KEPT for
    // good, so its drop, which would destroy the context, never runs.
    let wrapped = unsafe { CudaContext::from_raw_context(ordinal, device, ctx) }
        .map_err(driver_error("taking the application's CUDA context"))?;
    // SAFETY: as for the primary context (`primary_context`): the library orders its
    // streams itself.
    unsafe { wrapped.disable_event_tracking() };
    held.push(wrapped.clone());
    Ok(wrapped)
}
