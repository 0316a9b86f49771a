//! Peer access between the contexts of one host: where the driver lets each device reach
//! the others' memory, a kernel on one device may read and write another's arrays through
//! their addresses (unified addressing), over NVLink or PCIe.

use super::{bind, driver_error};
use crate::error::Result;
use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// Lets every context of `contexts` address every other's memory; `Ok(false)` where the
/// driver cannot (devices without a peer path, or two CUDA contexts of one device), and
/// nothing changed that matters. Contexts sharing one CUDA context need nothing.
pub fn link_all(contexts: &[&Arc<CudaContext>]) -> Result<bool> {
    for (i, a) in contexts.iter().enumerate() {
        for b in &contexts[i + 1..] {
            if a.cu_ctx() == b.cu_ctx() {
                continue;
            }
            if a.cu_device() == b.cu_device() || !can_reach(a, b)? || !can_reach(b, a)? {
                return Ok(false);
            }
        }
    }
    for a in contexts {
        for b in contexts {
            if a.cu_ctx() != b.cu_ctx() {
                enable(a, b)?;
            }
        }
    }
    Ok(true)
}

/// Whether `a`'s device can address `b`'s memory.
fn can_reach(a: &CudaContext, b: &CudaContext) -> Result<bool> {
    let mut can = 0;
    // SAFETY: two device handles the driver gave; `can` receives one int.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, a.cu_device(), b.cu_device()) }
        .result()
        .map_err(driver_error("asking whether two devices reach each other"))?;
    Ok(can != 0)
}

/// Lets `a`'s kernels address `b`'s memory (once per pair and process: later calls find it
/// enabled).
fn enable(a: &CudaContext, b: &CudaContext) -> Result<()> {
    bind(a)?;
    // SAFETY: `b` is a live context (its wrapper is borrowed); flags must be 0.
    let r = unsafe { sys::cuCtxEnablePeerAccess(b.cu_ctx(), 0) };
    if r == CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
        return Ok(());
    }
    r.result()
        .map_err(driver_error("letting one device address another's memory"))
}
