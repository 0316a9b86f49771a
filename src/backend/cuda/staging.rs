//! Page-locked host buffers for host↔device transfers, reused across calls.
//!
//! Caller arrays are ordinary (pageable) memory; copies from them cannot overlap with
//! compute. Work is staged through these buffers in chunks instead, so the copies of
//! one chunk overlap the kernels of another.

use super::array::{DeviceArray, DeviceArrayMut};
use super::{driver_error, CudaBackend};
use crate::backend::cpu::CpuBackend;
use crate::error::{Error, Result};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Page-locked bytes the library holds now, in every context's pool and in use.
static PINNED: AtomicUsize = AtomicUsize::new(0);

/// Page-locked host bytes the library holds now (pooled or in use), over every context:
/// for memory accounting (the soak attributes the process's RSS with it).
pub fn pinned_bytes() -> usize {
    PINNED.load(Ordering::Relaxed)
}

/// Page-locked host memory. Copies queued from or into it ([`PinnedBuffer::upload_to`],
/// [`PinnedBuffer::download_from`]) leave it *in flight*: the host sees its memory again
/// ([`PinnedBuffer::slice_mut`]), and it is freed or pooled, only after the stream has
/// passed them, so an asynchronous copy can never race the host.
pub struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
    ctx: Arc<CudaContext>,
    /// Events recorded after the copies queued since the host last looked.
    in_flight: Vec<CudaEvent>,
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
        PINNED.fetch_add(bytes.max(1), Ordering::Relaxed);
        Ok(PinnedBuffer {
            ptr: ptr.cast(),
            bytes: bytes.max(1),
            ctx: ctx.clone(),
            in_flight: Vec::new(),
        })
    }

    /// Waits for every copy queued from or into the buffer.
    fn settle(&mut self) -> Result<()> {
        for event in self.in_flight.drain(..) {
            event
                .synchronize()
                .map_err(driver_error("waiting for a staging copy"))?;
        }
        Ok(())
    }

    /// `len` elements of `T` from element `at`, in bounds of the allocation.
    fn span<T>(&self, at: usize, len: usize) -> *mut T {
        let size = std::mem::size_of::<T>();
        let end = at.checked_add(len).and_then(|e| e.checked_mul(size));
        assert!(
            end.is_some_and(|e| e <= self.bytes),
            "staging buffer of {} bytes too small for {len} elements at {at}",
            self.bytes
        );
        // SAFETY: in bounds of the allocation (checked above).
        unsafe { self.ptr.cast::<T>().add(at) }
    }

    /// The first `len` elements as a typed slice, once no copy uses them.
    pub fn slice_mut<T: Copy>(&mut self, len: usize) -> Result<&mut [T]> {
        self.slice_mut_at(0, len)
    }

    /// `len` elements of `T` from element `at`, once no copy uses them.
    pub fn slice_mut_at<T: Copy>(&mut self, at: usize, len: usize) -> Result<&mut [T]> {
        self.settle()?;
        let p = self.span::<T>(at, len);
        // SAFETY: page-aligned allocation spanning the range (checked by span); T is plain
        // data; no queued copy touches it (settled above); the borrow is the buffer's.
        Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// Queues a copy of `len` elements of `T` from element `at` of the buffer into the first
    /// `len` elements of `dst` on `stream`; returns without waiting for it.
    pub fn upload_to<T: Copy>(
        &mut self,
        (at, len): (usize, usize),
        stream: &CudaStream,
        dst: &mut impl DeviceArrayMut<T>,
        what: &'static str,
    ) -> Result<()> {
        fits(len, dst.len(), what)?;
        let p = self.span::<T>(at, len);
        super::bind(stream.context())?;
        // SAFETY: `dst` spans len elements (checked above); the source range lies in the
        // allocation, which the host cannot touch or free until the event recorded below.
        let src = unsafe { std::slice::from_raw_parts(p, len) };
        unsafe { result::memcpy_htod_async(dst.addr(), src, stream.cu_stream()) }
            .map_err(driver_error(what))?;
        self.mark(stream)
    }

    /// Queues a copy of the first `len` elements of `src` into the buffer's first `len`
    /// elements on `stream`; returns without waiting (`slice_mut` waits).
    pub fn download_from<T: Copy>(
        &mut self,
        stream: &CudaStream,
        src: &impl DeviceArray<T>,
        len: usize,
        what: &'static str,
    ) -> Result<()> {
        fits(len, src.len(), what)?;
        let p = self.span::<T>(0, len);
        super::bind(stream.context())?;
        // SAFETY: `src` spans len elements (checked above); the destination lies in the
        // allocation, which the host cannot touch or free until the event recorded below.
        let dst = unsafe { std::slice::from_raw_parts_mut(p, len) };
        unsafe { result::memcpy_dtoh_async(dst, src.addr(), stream.cu_stream()) }
            .map_err(driver_error(what))?;
        self.mark(stream)
    }

    fn mark(&mut self, stream: &CudaStream) -> Result<()> {
        let event = stream
            .record_event(None)
            .map_err(driver_error("recording a staging event"))?;
        self.in_flight.push(event);
        Ok(())
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // Memory a copy may still use is leaked rather than freed under it.
        if self.settle().is_err() {
            return;
        }
        let _ = super::bind(&self.ctx);
        // SAFETY: allocated by malloc_host and not freed before; no copy uses it.
        if unsafe { result::free_host(self.ptr.cast()) }.is_ok() {
            PINNED.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

/// Idle page-locked buffers of one context, by size class.
#[derive(Default)]
pub struct StagingPool {
    free: Mutex<Vec<PinnedBuffer>>,
}

/// How many idle buffers of one size class a context keeps.
const KEEP: usize = 8;
/// The smallest size class.
const MIN_CLASS: usize = 64 << 10;

/// The size a request of `bytes` is allocated at: 64 KiB, or the next 2^k or 1.5·2^k. A
/// buffer is reused only for requests of its own class: a pool that lent a large buffer to
/// a small request would keep the large one and drop small ones, and so fill, over hours,
/// with large buffers only.
fn class_bytes(bytes: usize) -> usize {
    let b = bytes.max(MIN_CLASS);
    let p = b.checked_next_power_of_two().unwrap_or(b);
    if p / 4 * 3 >= b {
        p / 4 * 3
    } else {
        p
    }
}

impl StagingPool {
    /// A buffer of at least `bytes`, reused when one of its class is idle.
    pub fn take(&self, ctx: &Arc<CudaContext>, bytes: usize) -> Result<PinnedBuffer> {
        let class = class_bytes(bytes);
        let mut free = self.free.lock().unwrap();
        if let Some(i) = free.iter().position(|b| b.bytes == class) {
            return Ok(free.swap_remove(i));
        }
        drop(free);
        PinnedBuffer::new(ctx, class)
    }

    /// Keeps `buffer` for reuse once its copies are done, up to [`KEEP`] of its class (else
    /// it is dropped: freed, or leaked if waiting fails).
    pub fn put(&self, mut buffer: PinnedBuffer) {
        if buffer.settle().is_err() {
            return;
        }
        let mut free = self.free.lock().unwrap();
        if free.iter().filter(|b| b.bytes == buffer.bytes).count() < KEEP {
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

/// Bytes per staged piece: large enough for the full PCIe rate and for the host copy of a
/// piece to outweigh waking the CPU pool for it (with 8 MB pieces, 16 threads gathered
/// 256 MB at 26 GB/s, with 32 MB at 29–31; scattered it at 28 and 37–41 GB/s), small
/// enough that the host copy of one piece overlaps the transfer of the one before.
const PIECE: usize = 32 << 20;

/// Host copies of one piece, spread over the CPU pool (one core copies ~10 GB/s, a PCIe 5
/// link moves ~50 GB/s). Slices of 256 KiB give a piece 32 tasks: with 1 MiB ones, 16
/// threads copied a piece with 8 of them (22 GB/s).
fn par_copy(cpu: &CpuBackend, dst: &mut [u8], src: &[u8]) {
    const SLICE: usize = 1 << 18;
    cpu.install(|| {
        dst.par_chunks_mut(SLICE)
            .zip(src.par_chunks(SLICE))
            .for_each(|(d, s)| stream_copy(d, s));
    });
}

/// Elements per run of a strided copy, and so per task of its host side.
pub(crate) const ROW_RUN: usize = 1 << 16;

/// Where a chunk's dense elements lie in a caller's strided rows: dense element `e` is
/// element `e % n` of row `first + e / n`, at `(first + e / n) * stride + e % n`.
#[derive(Clone, Copy)]
pub struct RowMap {
    pub first: usize,
    pub n: usize,
    pub stride: usize,
}

impl RowMap {
    /// Dense elements `at..at + len` as runs within one row of at most [`ROW_RUN`]
    /// elements: (offset in the caller's array, offset from `at`, length), in order.
    pub fn runs(&self, at: usize, len: usize) -> Vec<(usize, usize, usize)> {
        let mut runs = Vec::new();
        let mut e = at;
        while e < at + len {
            let (t, s) = (e / self.n, e % self.n);
            let run = (self.n - s).min(at + len - e).min(ROW_RUN);
            runs.push(((self.first + t) * self.stride + s, e - at, run));
            e += run;
        }
        runs
    }
}

/// Copies a staged `piece` into `dest` on the pool, run by run: `runs` are (offset in
/// `dest`, offset in `piece`, length), in ascending order of both; `min_runs` the fewest
/// runs a pool task takes.
pub fn scatter_runs<T: Copy + Send + Sync>(
    cpu: &CpuBackend,
    piece: &[T],
    dest: &mut [T],
    runs: &[(usize, usize, usize)],
    min_runs: usize,
) {
    let mut parts = Vec::with_capacity(runs.len());
    let (mut rest, mut consumed) = (dest, 0);
    for &(to, from, len) in runs {
        let (_, tail) = rest.split_at_mut(to - consumed);
        let (part, tail) = tail.split_at_mut(len);
        parts.push((part, &piece[from..from + len]));
        (rest, consumed) = (tail, to + len);
    }
    copy_parts(cpu, parts, min_runs);
}

/// Fills a `piece` to stage from `src` on the pool, run by run: `runs` are (offset in
/// `src`, offset in `piece`, length), covering the piece in order.
pub fn gather_runs<T: Copy + Send + Sync>(
    cpu: &CpuBackend,
    src: &[T],
    piece: &mut [T],
    runs: &[(usize, usize, usize)],
) {
    let mut parts = Vec::with_capacity(runs.len());
    let mut rest = piece;
    for &(from, _, len) in runs {
        let (part, tail) = rest.split_at_mut(len);
        parts.push((part, &src[from..from + len]));
        rest = tail;
    }
    copy_parts(cpu, parts, 1);
}

/// Each (destination, source) pair copied on the pool, at least `min_parts` a task.
fn copy_parts<T: Copy + Send + Sync>(
    cpu: &CpuBackend,
    parts: Vec<(&mut [T], &[T])>,
    min_parts: usize,
) {
    cpu.install(|| {
        parts
            .into_par_iter()
            .with_min_len(min_parts)
            .for_each(|(part, from)| stream_copy(part, from));
    })
}

/// Copies shorter than this go through the caches as usual.
const STREAM_MIN: usize = 4096;

/// Copies `src` into `dst` (of equal length) for a transfer: from 4 KiB on with
/// non-temporal stores where the CPU has them (x86-64), which write memory without first
/// reading the lines they replace and leave the caches to data that is read again. On a
/// 16-core host, 16 threads copied 256 MB into page-locked memory at 61 GB/s against
/// 40 GB/s through the caches, and out of it at 59 against 50 GB/s.
pub fn stream_copy<T: Copy>(dst: &mut [T], src: &[T]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "a copy between slices of unequal length"
    );
    let (d, s) = (bytes_of_mut(dst), bytes_of(src));
    if d.len() < STREAM_MIN {
        d.copy_from_slice(s);
        return;
    }
    stream_bytes(d, s);
}

#[cfg(target_arch = "x86_64")]
fn stream_bytes(d: &mut [u8], s: &[u8]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = d.as_ptr().align_offset(16).min(d.len());
    let body = (d.len() - head) / 16 * 16;
    d[..head].copy_from_slice(&s[..head]);
    // SAFETY: SSE2 is part of x86-64. Every access lies in [head, head + body) of both
    // slices (equal lengths), where `d` is 16-byte aligned (align_offset above); the loads
    // are unaligned ones. The fence orders these stores before anything this thread does
    // next (such as queueing the copy that reads them).
    unsafe {
        let (dp, sp) = (d.as_mut_ptr().add(head), s.as_ptr().add(head));
        for i in (0..body).step_by(16) {
            let v = _mm_loadu_si128(sp.add(i).cast::<__m128i>());
            _mm_stream_si128(dp.add(i).cast::<__m128i>(), v);
        }
        _mm_sfence();
    }
    d[head + body..].copy_from_slice(&s[head + body..]);
}

#[cfg(not(target_arch = "x86_64"))]
fn stream_bytes(d: &mut [u8], s: &[u8]) {
    d.copy_from_slice(s);
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
    /// The two pieces of a copy of `total` elements to or from `array` (`what`: checked to
    /// hold them), with the array's address and the elements a piece holds; None for an
    /// empty copy (nothing to stage).
    fn for_array<T>(
        pool: &'a StagingPool,
        ctx: &Arc<CudaContext>,
        array: &impl DeviceArray<T>,
        total: usize,
        what: &str,
    ) -> Result<Option<(Pieces<'a>, u64, usize)>> {
        fits(total, array.len(), what)?;
        let step = piece_len::<T>();
        let addr = array.addr();
        let bytes = total * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(None);
        }
        let piece = PIECE.min(bytes);
        let bufs = (0..2)
            .map(|_| Ok((pool.take(ctx, piece)?, None)))
            .collect::<Result<_>>()?;
        Ok(Some((Pieces { pool, bufs }, addr, step)))
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
    upload_pieces(ctx, pool, stream, dst, src.len(), |at, piece: &mut [T]| {
        let from = &src[at..at + piece.len()];
        par_copy(cpu, bytes_of_mut(piece), bytes_of(from));
        Ok(())
    })
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
    download_pieces(ctx, pool, stream, src, dst.len(), |at, piece: &[T]| {
        par_copy(
            cpu,
            bytes_of_mut(&mut dst[at..at + piece.len()]),
            bytes_of(piece),
        );
        Ok(())
    })
}

/// Elements of `T` per staged piece.
fn piece_len<T>() -> usize {
    PIECE / std::mem::size_of::<T>().max(1)
}

/// Copies `total` elements into the first `total` of `dst` on `stream` through two
/// page-locked pieces: `fill(at, piece)` writes elements `at..at + piece.len()` of the data
/// into a piece (on the calling thread, which may use the CPU pool) while the piece before
/// is in flight. An error from `fill` stops the copy and is returned once the pieces
/// already queued have landed. Returns once every piece has reached the device.
pub fn upload_pieces<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    stream: &CudaStream,
    dst: &mut impl DeviceArrayMut<T>,
    total: usize,
    mut fill: impl FnMut(usize, &mut [T]) -> Result<()>,
) -> Result<()> {
    let Some((mut pieces, dst, step)) = Pieces::for_array(pool, ctx, &*dst, total, "an upload")?
    else {
        return Ok(());
    };
    let run = (|| -> Result<()> {
        for (i, at) in (0..total).step_by(step).enumerate() {
            let buf = pieces.ready(i)?.slice_mut::<T>(step.min(total - at))?;
            fill(at, buf)?;
            let offset = (at * std::mem::size_of::<T>()) as u64;
            // SAFETY: `dst` is writable device memory spanning `total` elements (checked
            // above); the buffer stays alive and unwritten until the event recorded below.
            unsafe { result::memcpy_htod_async(dst + offset, &*buf, stream.cu_stream()) }
                .map_err(driver_error("copying to the device"))?;
            pieces.queued(i, stream)?;
        }
        Ok(())
    })();
    let finished = pieces.finish(stream);
    run.and(finished)
}

/// Copies the first `total` elements of `src` to the host after the work queued on
/// `stream`, through two page-locked pieces: `drain(at, piece)` takes elements
/// `at..at + piece.len()` as each piece lands, while the next is in flight. An error from
/// `drain` stops the copy and is returned once the stream is idle.
pub fn download_pieces<T: Copy>(
    ctx: &Arc<CudaContext>,
    pool: &StagingPool,
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    total: usize,
    mut drain: impl FnMut(usize, &[T]) -> Result<()>,
) -> Result<()> {
    let Some((mut pieces, src, step)) = Pieces::for_array(pool, ctx, src, total, "a download")?
    else {
        return Ok(());
    };
    let n = total.div_ceil(step);
    let queue = |pieces: &mut Pieces, i: usize| -> Result<()> {
        let at = i * step;
        let buf = pieces.ready(i)?.slice_mut::<T>(step.min(total - at))?;
        let offset = (at * std::mem::size_of::<T>()) as u64;
        // SAFETY: `src` is device memory spanning `total` elements (checked above); the
        // buffer is not read by the host until the event recorded below.
        unsafe { result::memcpy_dtoh_async(buf, src + offset, stream.cu_stream()) }
            .map_err(driver_error("copying from the device"))?;
        pieces.queued(i, stream)
    };
    let run = (|| -> Result<()> {
        queue(&mut pieces, 0)?;
        for i in 0..n {
            if i + 1 < n {
                queue(&mut pieces, i + 1)?;
            }
            let at = i * step;
            drain(at, pieces.ready(i)?.slice_mut::<T>(step.min(total - at))?)?;
        }
        Ok(())
    })();
    let finished = pieces.finish(stream);
    run.and(finished)
}

/// Copies the first `len` elements of `src`, dense rows of `rows.n`, into the caller's
/// strided rows `rows` of `dest` after the work queued on `stream`, through two page-locked
/// pieces: the pool's threads scatter one while the next is in flight.
pub fn download_rows<T: Copy + Send + Sync>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    dest: &mut [T],
    rows: RowMap,
    len: usize,
) -> Result<()> {
    let drain = |at, piece: &[T]| {
        let runs = rows.runs(at, piece.len());
        scatter_runs(cpu, piece, dest, &runs, (ROW_RUN / rows.n.max(1)).max(1));
        Ok(())
    };
    download_pieces(&gpu.ctx, &gpu.staging, stream, src, len, drain)
}

fn fits(moved: usize, device: usize, what: &str) -> Result<()> {
    if moved > device {
        return Err(Error::Internal(format!(
            "{what} of {moved} elements through a device array of {device}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{class_bytes, stream_copy, RowMap};

    #[test]
    fn runs_cover_a_piece_row_by_row() {
        let rows = RowMap {
            first: 2,
            n: 5,
            stride: 7,
        };
        // Dense 3..14: the end of row 0, row 1, the start of row 2 (of the chunk).
        assert_eq!(
            rows.runs(3, 11),
            vec![(2 * 7 + 3, 0, 2), (3 * 7, 2, 5), (4 * 7, 7, 4)]
        );
        let long = RowMap {
            first: 0,
            n: 3 << 16,
            stride: 3 << 16,
        };
        let runs = long.runs(5, (2 << 16) + 10);
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[0], (5, 0, 1 << 16));
        assert_eq!(runs[2], (5 + (2 << 16), 2 << 16, 10));
    }

    #[test]
    fn stream_copies_equal_plain_copies_at_every_alignment() {
        let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for (from, to, len) in [(0, 0, 20_000), (3, 5, 9_000), (1, 0, 4_095), (7, 9, 4_113)] {
            let mut dst = vec![0u8; 20_010];
            stream_copy(&mut dst[to..to + len], &src[from..from + len]);
            assert_eq!(
                &dst[to..to + len],
                &src[from..from + len],
                "{from} {to} {len}"
            );
            assert!(dst[..to].iter().chain(&dst[to + len..]).all(|&b| b == 0));
        }
        let f: Vec<f64> = (0..3000).map(|i| i as f64 * 0.5).collect();
        let mut g = vec![0.0; 3000];
        stream_copy(&mut g, &f);
        assert_eq!(f, g);
    }

    #[test]
    fn size_classes_cover_the_request_within_half_again() {
        assert_eq!(class_bytes(1), 64 << 10);
        assert_eq!(class_bytes(64 << 10), 64 << 10);
        assert_eq!(class_bytes((64 << 10) + 1), 96 << 10);
        assert_eq!(class_bytes(5 << 20), 6 << 20);
        assert_eq!(class_bytes(6 << 20), 6 << 20);
        assert_eq!(class_bytes((6 << 20) + 1), 8 << 20);
        for b in [70_000usize, 1 << 20, 3 << 19, 12_345_678, 1 << 30] {
            let c = class_bytes(b);
            assert!(c >= b && (c as f64) < 1.5 * b as f64, "{b} -> {c}");
        }
    }
}
