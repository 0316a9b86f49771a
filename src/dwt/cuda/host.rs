//! Host arrays: chunks of traces staged through page-locked buffers on two streams.

use super::device::{op_long_bytes, run_on_device, DevBatch, Op};
use super::kit::{Kit, Sizing};
use super::rows::{whole, whole_mut, Io, Rows, Shape};
use super::tuning::CHUNK_BYTES;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::part_mut;
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::staging::PinnedBuffer;
use crate::backend::cuda::{driver_error, CudaBackend};

use crate::backend::cuda::memory::DeviceBuf;
use crate::dwt::traces::Traces;
use crate::dwt::wavelet::Wavelet;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::CudaStream;
use rayon::prelude::*;
use std::sync::Arc;

/// What a host call computes: `op` over `levels` levels with one wavelet, and the median
/// segments it reports per trace (0: none).
pub(super) struct Work<'w> {
    pub(super) wavelet: &'w Wavelet,
    pub(super) op: Op<'w>,
    pub(super) levels: u32,
    pub(super) seg_levels: usize,
}

/// The sizes of a slot's buffers: chunks of `chunk` traces of `n` samples, an output apart
/// from the input on the long path (which cannot run in place), `seg_levels` medians
/// per trace (0: none), and the long path's work memory (`long_bytes`).
#[derive(Clone, Copy)]
struct SlotSizes {
    chunk: usize,
    n: usize,
    long: bool,
    seg_levels: usize,
    work_bytes: usize,
}

/// One stream's buffers.
pub(super) struct Slot<T: Sample> {
    pub(super) stream: Arc<CudaStream>,
    pub(super) pinned: Option<PinnedBuffer>,
    pub(super) pinned_medians: Option<PinnedBuffer>,
    pub(super) input: DeviceBuf<T>,
    pub(super) output: Option<DeviceBuf<T>>,
    pub(super) medians: Option<DeviceBuf<T>>,
    /// The long path's work memory (None off it).
    pub(super) work: Option<DeviceBuf<u64>>,
    /// (first trace, trace count) of the chunk in flight.
    pub(super) pending: Option<(usize, usize)>,
}

/// Returns the staging buffers to the pool once no copy can touch them any more.
pub(super) struct Slots<'g, T: Sample> {
    pub(super) gpu: &'g CudaBackend,
    pub(super) slots: Vec<Slot<T>>,
}

impl<T: Sample> Drop for Slots<'_, T> {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            let buffers = [slot.pinned.take(), slot.pinned_medians.take()];
            let staging = &self.gpu.staging;
            let _ = staging.put_when_idle(
                &slot.stream,
                buffers.into_iter().flatten(),
                "returning staging buffers",
            );
        }
    }
}

/// Copies trace rows between caller memory (strided) and a dense staging buffer, in parallel.
pub(super) fn gather<T: Sample>(
    cpu: &CpuBackend,
    src: &[T],
    first: usize,
    dst: &mut [T],
    n: usize,
    stride: usize,
) {
    cpu.install(|| {
        dst.par_chunks_mut(n)
            .with_min_len((1 << 14) / n + 1)
            .enumerate()
            .for_each(|(i, row)| copy_row(row, &src[(first + i) * stride..][..n]));
    })
}

pub(super) fn scatter<T: Sample>(
    cpu: &CpuBackend,
    src: &[T],
    dst: &mut [T],
    first: usize,
    n: usize,
    stride: usize,
) {
    cpu.install(|| {
        let rows = src.len() / n;
        let region = &mut dst[first * stride..];
        let len = ((rows - 1) * stride + n).min(region.len());
        region[..len]
            .par_chunks_mut(stride)
            .zip(src.par_chunks(n))
            .with_min_len((1 << 14) / n + 1)
            .for_each(|(row, s)| copy_row(&mut row[..n], s));
    })
}

/// Long rows are copied in parallel pieces too.
pub(super) fn copy_row<T: Sample>(dst: &mut [T], src: &[T]) {
    const PIECE: usize = 1 << 16;
    if dst.len() > 4 * PIECE {
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.copy_from_slice(src);
    }
}

/// A slot's staging buffer.
fn pinned(buffer: &mut Option<PinnedBuffer>) -> &mut PinnedBuffer {
    buffer
        .as_mut()
        .expect("a slot keeps its staging buffers until it is dropped")
}

/// The first `len` elements of a slot's staging buffer, once no copy uses them.
fn staged<T: Copy>(buffer: &mut Option<PinnedBuffer>, len: usize) -> Result<&mut [T]> {
    pinned(buffer).slice_mut::<T>(len)
}

/// Queues the download of the first `len` elements of `src` into a slot's staging buffer.
fn download_chunk<T: Copy>(
    stream: &CudaStream,
    src: &DeviceBuf<T>,
    buffer: &mut Option<PinnedBuffer>,
    len: usize,
    what: &'static str,
) -> Result<()> {
    pinned(buffer).download_from(stream, src, len, what)
}

/// The caller's side of a host call: where traces come from and go to, and the medians.
struct HostSide<'h, T> {
    cpu: &'h CpuBackend,
    /// None: the traces are transformed in place in `dest`.
    source: Option<&'h [T]>,
    dest: &'h mut [T],
    medians: Vec<T>,
    n: usize,
    stride: usize,
    seg_levels: usize,
}

/// Runs the operation over a host batch. Chunk results are written to caller memory as each
/// chunk completes: after validation the only failures left are driver errors (device memory
/// exhausted, a broken context), so a failed call may leave earlier chunks done and later ones
/// untouched; a batch of one chunk is written only once all its GPU work succeeded.
pub(super) fn run_host<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    work: &Work,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<Vec<T>> {
    gpu.bind()?;
    let n = batch.n_samples;
    let first_stream = gpu.stream()?;
    let kit0 = Kit::<T>::new(gpu, work.wavelet, &first_stream)?;
    let long = kit0.long_plan(n, work.levels, work.op.kind()).is_long();
    let chunk = chunk_traces::<T>(gpu, &batch, long)?;
    let chunks = batch.n_traces.div_ceil(chunk);
    let sizing = Sizing::of(&kit0);
    let work_bytes = op_long_bytes::<T>(&sizing, work.op, work.levels, n, chunk);
    let mut slots = Slots::<T> {
        gpu,
        slots: Vec::new(),
    };
    for i in 0..chunks.min(2) {
        let stream = match i {
            0 => first_stream.clone(),
            _ => gpu.stream()?,
        };
        let sizes = SlotSizes {
            chunk,
            n,
            long,
            seg_levels: work.seg_levels,
            work_bytes,
        };
        slots.slots.push(Slot::new(gpu, stream, sizes)?);
    }
    let (source, dest) = match traces {
        Traces::InPlace(d) => (None, d),
        Traces::Separate { input, output } => (Some(input), output),
    };
    let mut host = HostSide {
        cpu,
        source,
        dest,
        medians: vec![T::zero(); batch.n_traces * work.seg_levels],
        n,
        stride: batch.trace_stride,
        seg_levels: work.seg_levels,
    };
    let n_slots = slots.slots.len();
    for c in 0..chunks {
        let slot = &mut slots.slots[c % n_slots];
        slot.finish(&mut host)?;
        let first = c * chunk;
        let count = chunk.min(batch.n_traces - first);
        slot.gather_from(&host, first, count)?;
        slot.queue(gpu, work, n, (first, count))?;
    }
    for slot in &mut slots.slots {
        slot.finish(&mut host)?;
    }
    Ok(host.medians)
}

/// Traces per chunk: about `CHUNK_BYTES` of samples, within a quarter of the free device
/// memory.
fn chunk_traces<T>(gpu: &CudaBackend, batch: &TraceBatch, long: bool) -> Result<usize> {
    let (n, size) = (batch.n_samples, std::mem::size_of::<T>());
    let (free, _) = gpu
        .ctx
        .mem_get_info()
        .map_err(driver_error("reading free device memory"))?;
    // Device bytes per trace: input, output (long path), coefficients (long denoise).
    let per_trace = n * size * if long { 3 } else { 1 } + 64;
    let budget = (free / 4).max(per_trace);
    Ok((CHUNK_BYTES / (n * size))
        .clamp(1, batch.n_traces)
        .min(budget / per_trace)
        .max(1))
}

impl<T: Sample> Slot<T> {
    fn new(gpu: &CudaBackend, stream: Arc<CudaStream>, sizes: SlotSizes) -> Result<Slot<T>> {
        let SlotSizes {
            chunk,
            n,
            long,
            seg_levels,
            work_bytes,
        } = sizes;
        let size = std::mem::size_of::<T>();
        let traces = "allocating device memory for a chunk of traces";
        let input = alloc(&stream, chunk * n, traces)?;
        let output = if long {
            Some(alloc(&stream, chunk * n, traces)?)
        } else {
            None
        };
        let medians = match seg_levels {
            0 => None,
            _ => Some(alloc(
                &stream,
                chunk * seg_levels,
                "allocating device memory for medians",
            )?),
        };
        let work = match work_bytes {
            0 => None,
            b => Some(alloc(&stream, b.div_ceil(8), "allocating DWT work memory")?),
        };
        let pinned = gpu.staging.take(&gpu.ctx, chunk * n * size)?;
        let pinned_medians = match seg_levels {
            0 => None,
            _ => Some(gpu.staging.take(&gpu.ctx, chunk * seg_levels * size)?),
        };
        Ok(Slot {
            stream,
            pinned: Some(pinned),
            pinned_medians,
            input,
            output,
            medians,
            work,
            pending: None,
        })
    }

    /// Writes a finished chunk's samples and medians out of the slot.
    fn finish(&mut self, host: &mut HostSide<T>) -> Result<()> {
        let Some((first, count)) = self.pending.take() else {
            return Ok(());
        };
        self.stream
            .synchronize()
            .map_err(driver_error("running the DWT"))?;
        let (n, segs) = (host.n, host.seg_levels);
        let pinned = staged(&mut self.pinned, count * n)?;
        scatter(host.cpu, pinned, host.dest, first, n, host.stride);
        if segs > 0 {
            let m = staged(&mut self.pinned_medians, count * segs)?;
            host.medians[first * segs..(first + count) * segs].copy_from_slice(m);
        }
        Ok(())
    }

    /// Gathers traces `first..first + count` of the caller's input into the staging buffer.
    fn gather_from(&mut self, host: &HostSide<T>, first: usize, count: usize) -> Result<()> {
        let src: &[T] = host.source.unwrap_or(&*host.dest);
        let pinned = staged(&mut self.pinned, count * host.n)?;
        gather(host.cpu, src, first, pinned, host.n, host.stride);
        Ok(())
    }

    /// Queues the staged chunk's upload, its work and the downloads of its results.
    fn queue(
        &mut self,
        gpu: &CudaBackend,
        work: &Work,
        n: usize,
        (first, count): (usize, usize),
    ) -> Result<()> {
        let kit = Kit::<T>::new(gpu, work.wavelet, &self.stream)?;
        let len = count * n;
        let what = "copying traces to the device";
        let input = &mut part_mut(&mut self.input, 0, len);
        pinned(&mut self.pinned).upload_to((0, len), &self.stream, input, what)?;
        let shape = Shape { n, traces: count };
        let io = match self.output.as_mut() {
            Some(output) => Io::Apart(
                Rows {
                    data: whole(&self.input),
                    stride: n,
                },
                Rows {
                    data: whole_mut(output),
                    stride: n,
                },
            ),
            None => Io::InPlace(Rows {
                data: whole_mut(&mut self.input),
                stride: n,
            }),
        };
        let medians = self.medians.as_mut().map(whole_mut);
        let area = self.work.as_mut().map(whole_mut);
        let batch = DevBatch { shape, io };
        run_on_device(&kit, work.op, work.levels, batch, medians, area)?;
        let result = self.output.as_ref().unwrap_or(&self.input);
        let what = "copying traces from the device";
        download_chunk(&self.stream, result, &mut self.pinned, len, what)?;
        if let Some(medians) = &self.medians {
            let len = count * work.seg_levels;
            let what = "copying medians from the device";
            download_chunk(&self.stream, medians, &mut self.pinned_medians, len, what)?;
        }
        self.pending = Some((first, count));
        Ok(())
    }
}
