//! Page-locked host buffers for host↔device transfers, reused across calls.
//!
//! Caller arrays are ordinary (pageable) memory; copies from them cannot overlap with
//! compute. Work is staged through these buffers in chunks instead, so the copies of
//! one chunk overlap the kernels of another.

use super::array::{DeviceArray, DeviceArrayMut};
use super::driver_error;
use crate::backend::cpu::CpuBackend;
use crate::error::{Error, Result};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream};
use rayon::prelude::*;
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
        super::bind(ctx)?;
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

    /// Returns `buffers` to the pool once `stream`, whose copies may use them, is idle; if
    /// waiting fails they are freed instead and the error returned (`what` names the work).
    pub fn put_when_idle(
        &self,
        stream: &CudaStream,
        buffers: impl IntoIterator<Item = PinnedBuffer>,
        what: &'static str,
    ) -> Result<()> {
        let idle = stream.synchronize().map_err(driver_error(what));
        for buffer in buffers {
            if idle.is_ok() {
                self.put(buffer);
            }
        }
        idle
    }
}

/// Bytes per staged piece: large enough for the full PCIe rate, small enough that the host
/// copy of one piece overlaps the transfer of the one before.
const PIECE: usize = 8 << 20;

/// Host copies of one piece, spread over the CPU pool (one core copies ~10 GB/s, a PCIe 5
/// link moves ~50 GB/s).
fn par_copy(cpu: &CpuBackend, dst: &mut [u8], src: &[u8]) {
    const SLICE: usize = 1 << 20;
    cpu.install(|| {
        dst.par_chunks_mut(SLICE)
            .zip(src.par_chunks(SLICE))
            .for_each(|(d, s)| d.copy_from_slice(s));
    });
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain data viewed as its bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn bytes_of_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid T for the plain types staged here.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Two page-locked pieces taken from the pool, each with the event after its last copy.
struct Pieces<'a> {
    pool: &'a StagingPool,
    bufs: Vec<(PinnedBuffer, Option<CudaEvent>)>,
}

impl<'a> Pieces<'a> {
    fn take(pool: &'a StagingPool, ctx: &Arc<CudaContext>, bytes: usize) -> Result<Pieces<'a>> {
        let piece = PIECE.min(bytes.max(1));
        let bufs = (0..2)
            .map(|_| Ok((pool.take(ctx, piece)?, None)))
            .collect::<Result<_>>()?;
        Ok(Pieces { pool, bufs })
    }

    /// Piece `i`'s buffer, once the copies queued from or into it are done.
    fn ready(&mut self, i: usize) -> Result<&mut PinnedBuffer> {
        let (buf, event) = &mut self.bufs[i % 2];
        if let Some(e) = event.take() {
            e.synchronize()
                .map_err(driver_error("waiting for a staging buffer"))?;
        }
        Ok(buf)
    }

    fn queued(&mut self, i: usize, stream: &CudaStream) -> Result<()> {
        self.bufs[i % 2].1 = Some(
            stream
                .record_event(None)
                .map_err(driver_error("recording a staging event"))?,
        );
        Ok(())
    }

    /// Returns the buffers to the pool once no copy can touch them; after a failure the
    /// stream is waited for first (a buffer a copy may still read is never freed).
    fn finish(self, stream: &CudaStream) -> Result<()> {
        let synced = stream
            .synchronize()
            .map_err(driver_error("waiting for staged copies"));
        if synced.is_ok() {
            for (b, _) in self.bufs {
                self.pool.put(b);
            }
        } else {
            std::mem::forget(self.bufs);
        }
        synced
    }
}

/// Copies `src` (ordinary host memory) into the first `src.len()` elements of `dst` on
/// `stream` through two page-locked pieces: the pool's threads fill one while the other is
/// in flight. Returns once every piece has reached the device.
pub fn upload_staged<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    cpu: &CpuBackend,
    stream: &CudaStream,
    dst: &mut impl DeviceArrayMut<T>,
    src: &[T],
) -> Result<()> {
    fits(src.len(), dst.len(), "an upload")?;
    // SAFETY: `dst` is writable device memory spanning src's bytes (checked above).
    unsafe { upload_staged_raw(ctx, pool, cpu, stream, dst.addr(), src) }
}

/// Copies `dst.len()` elements of `src` into `dst` (ordinary host memory) after the work
/// queued on `stream`, through two page-locked pieces: the pool's threads empty one while
/// the next is in flight.
pub fn download_staged<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    cpu: &CpuBackend,
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    dst: &mut [T],
) -> Result<()> {
    fits(dst.len(), src.len(), "a download")?;
    // SAFETY: `src` is device memory spanning dst's bytes (checked above).
    unsafe { download_staged_raw(ctx, pool, cpu, stream, src.addr(), dst) }
}

fn fits(moved: usize, device: usize, what: &str) -> Result<()> {
    if moved > device {
        return Err(Error::Internal(format!(
            "{what} of {moved} elements through a device array of {device}"
        )));
    }
    Ok(())
}

/// `upload_staged` to a raw address.
///
/// # Safety
/// `dst` is device memory of `ctx` the caller may write, spanning `size_of_val(src)` bytes.
unsafe fn upload_staged_raw<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    cpu: &CpuBackend,
    stream: &CudaStream,
    dst: u64,
    src: &[T],
) -> Result<()> {
    let src = bytes_of(src);
    if src.is_empty() {
        return Ok(());
    }
    let mut pieces = Pieces::take(pool, ctx, src.len())?;
    let run = (|| -> Result<()> {
        for (i, piece) in src.chunks(PIECE).enumerate() {
            let buf = pieces.ready(i)?.slice_mut::<u8>(piece.len());
            par_copy(cpu, buf, piece);
            // SAFETY: the buffer stays alive and unwritten until the event recorded below.
            unsafe {
                result::memcpy_htod_async(dst + (i * PIECE) as u64, &*buf, stream.cu_stream())
            }
            .map_err(driver_error("copying to the device"))?;
            pieces.queued(i, stream)?;
        }
        Ok(())
    })();
    let finished = pieces.finish(stream);
    run.and(finished)
}

/// `download_staged` from a raw address.
///
/// # Safety
/// `src` is device memory of `ctx` spanning `size_of_val(dst)` bytes.
unsafe fn download_staged_raw<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    cpu: &CpuBackend,
    stream: &CudaStream,
    src: u64,
    dst: &mut [T],
) -> Result<()> {
    let dst = bytes_of_mut(dst);
    if dst.is_empty() {
        return Ok(());
    }
    let mut pieces = Pieces::take(pool, ctx, dst.len())?;
    let total = dst.len();
    let n = total.div_ceil(PIECE);
    let queue = |pieces: &mut Pieces, i: usize| -> Result<()> {
        let len = PIECE.min(total - i * PIECE);
        let buf = pieces.ready(i)?.slice_mut::<u8>(len);
        // SAFETY: the buffer is not read by the host until the event recorded below.
        unsafe { result::memcpy_dtoh_async(buf, src + (i * PIECE) as u64, stream.cu_stream()) }
            .map_err(driver_error("copying from the device"))?;
        pieces.queued(i, stream)
    };
    let run = (|| -> Result<()> {
        queue(&mut pieces, 0)?;
        for i in 0..n {
            if i + 1 < n {
                queue(&mut pieces, i + 1)?;
            }
            let len = PIECE.min(total - i * PIECE);
            let buf = pieces.ready(i)?.slice_mut::<u8>(len);
            par_copy(cpu, &mut dst[i * PIECE..i * PIECE + len], buf);
        }
        Ok(())
    })();
    let finished = pieces.finish(stream);
    run.and(finished)
}
