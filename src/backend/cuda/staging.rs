//! Page-locked host buffers for host↔device transfers, reused across calls.
//!
//! Caller arrays are ordinary (pageable) memory; copies from them cannot overlap with
//! compute. Work is staged through these buffers in chunks instead, so the copies of
//! one chunk overlap the kernels of another.

use super::driver_error;
use crate::error::Result;
use cudarc::driver::{result, CudaContext};
use std::sync::{Arc, Mutex};

pub struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer is plain host memory owned by this value.
unsafe impl Send for PinnedBuffer {}
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    fn new(ctx: &Arc<CudaContext>, bytes: usize) -> Result<PinnedBuffer> {
        ctx.bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        // Flags 0: cached, readable by the host at full speed (not write-combined).
        // SAFETY: a plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(driver_error("allocating page-locked host memory"))?;
        Ok(PinnedBuffer {
            ptr: ptr.cast(),
            bytes: bytes.max(1),
            ctx: ctx.clone(),
        })
    }

    /// The first `len` elements as a typed slice.
    pub fn slice_mut<T: Copy>(&mut self, len: usize) -> &mut [T] {
        assert!(
            len * std::mem::size_of::<T>() <= self.bytes,
            "staging buffer too small"
        );
        // SAFETY: page-aligned allocation of at least len*size_of::<T>() bytes; T is plain data.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<T>(), len) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by malloc_host and not freed before.
        let _ = unsafe { result::free_host(self.ptr.cast()) };
    }
}

#[derive(Default)]
pub struct StagingPool {
    free: Mutex<Vec<PinnedBuffer>>,
}

/// How many idle buffers a context keeps.
const KEEP: usize = 8;

impl StagingPool {
    /// A buffer of at least `bytes`, reused when one is idle.
    pub fn take(&self, ctx: &Arc<CudaContext>, bytes: usize) -> Result<PinnedBuffer> {
        let mut free = self.free.lock().unwrap();
        if let Some(i) = free.iter().position(|b| b.bytes >= bytes) {
            return Ok(free.swap_remove(i));
        }
        drop(free);
        PinnedBuffer::new(ctx, bytes)
    }

    pub fn put(&self, buffer: PinnedBuffer) {
        let mut free = self.free.lock().unwrap();
        if free.len() < KEEP {
            free.push(buffer);
        }
    }
}
