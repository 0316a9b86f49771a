//! Host arrays: the batch on the device in one chunk when it fits (else in chunks), moved
//! through page-locked pieces so that the host's gather and scatter overlap the copies.

use super::device::{op_long_bytes, run_on_device, DevBatch, Op};
use super::kit::{Kit, Sizing};
use super::rows::{whole, whole_mut, Io, Rows, Shape};
use super::tuning::HOST_CHUNK_LIMIT;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::part_mut;
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::{
    download_pieces, download_rows, stream_copy, upload_pieces, RowMap, ROW_RUN,
};
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::dwt::traces::Traces;
use crate::dwt::wavelet::Wavelet;
use crate::error::Result;
use crate::layout::{first_non_finite, non_finite_at, TraceBatch};
use crate::sample::Sample;
use cudarc::driver::CudaStream;
use rayon::prelude::*;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a host call computes: `op` over `levels` levels with one wavelet, and the median
/// segments it reports per trace (0: none).
pub(super) struct Work<'w> {
    pub(super) wavelet: &'w Wavelet,
    pub(super) op: Op<'w>,
    pub(super) levels: u32,
    pub(super) seg_levels: usize,
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

/// A chunk's device buffers.
struct Chunk<T: Sample> {
    stream: Arc<CudaStream>,
    input: DeviceBuf<T>,
    /// The long path's output (it cannot run in place).
    output: Option<DeviceBuf<T>>,
    medians: Option<DeviceBuf<T>>,
    /// The long path's work memory (None off it).
    work: Option<DeviceBuf<u64>>,
}

/// Runs the operation over a host batch; returns the medians (n_traces × seg_levels).
/// `checked`: the caller has already refused non-finite samples. Otherwise a batch of one
/// chunk is checked as it is staged (nothing is written before every sample is seen), and
/// a larger one is scanned first. Chunk results are written to caller memory as each chunk
/// completes: after validation the only failures left are driver errors (device memory
/// exhausted, a broken context), so a failed call may leave earlier chunks done.
pub(super) fn run_host<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    work: &Work,
    traces: Traces<T>,
    batch: TraceBatch,
    checked: bool,
) -> Result<Vec<T>> {
    gpu.bind()?;
    let n = batch.n_samples;
    let stream = gpu.stream()?;
    let kit = Kit::<T>::new(gpu, work.wavelet, &stream)?;
    let long = kit.long_plan(n, work.levels, work.op.kind()).is_long();
    let chunk = chunk_traces::<T>(gpu, &batch, long)?;
    let chunks = batch.n_traces.div_ceil(chunk);
    let (source, dest) = match traces {
        Traces::InPlace(d) => (None, d),
        Traces::Separate { input, output } => (Some(input), output),
    };
    let check_staged = !checked && chunks == 1;
    if !checked && !check_staged {
        batch.check_finite(source.unwrap_or(&*dest), cpu)?;
    }
    let work_bytes = op_long_bytes::<T>(&Sizing::of(&kit), work.op, work.levels, n, chunk);
    let mut bufs = Chunk::new(
        stream.clone(),
        chunk * n,
        long,
        chunk * work.seg_levels,
        work_bytes,
    )?;
    let mut host = HostSide {
        cpu,
        source,
        dest,
        medians: vec![T::zero(); batch.n_traces * work.seg_levels],
        n,
        stride: batch.trace_stride,
        seg_levels: work.seg_levels,
    };
    for first in (0..batch.n_traces).step_by(chunk) {
        let count = chunk.min(batch.n_traces - first);
        bufs.run(gpu, &kit, work, &mut host, (first, count), check_staged)?;
    }
    Ok(host.medians)
}

/// Traces per chunk: the whole batch when its device memory fits in a quarter of the free
/// device memory, else as many traces as do (or the tests' limit).
fn chunk_traces<T>(gpu: &CudaBackend, batch: &TraceBatch, long: bool) -> Result<usize> {
    let (n, size) = (batch.n_samples, std::mem::size_of::<T>());
    let (free, _) = gpu
        .ctx
        .mem_get_info()
        .map_err(driver_error("reading free device memory"))?;
    // Device bytes per trace: input, output (long path), coefficients (long denoise).
    let per_trace = n * size * if long { 3 } else { 1 } + 64;
    let budget = (free / 4).max(per_trace);
    let limit = match HOST_CHUNK_LIMIT.load(Ordering::Relaxed) {
        0 => usize::MAX,
        l => l,
    };
    Ok(batch.n_traces.min(budget / per_trace).min(limit).max(1))
}

impl<T: Sample> Chunk<T> {
    fn new(
        stream: Arc<CudaStream>,
        samples: usize,
        long: bool,
        medians: usize,
        work_bytes: usize,
    ) -> Result<Chunk<T>> {
        let traces = "allocating device memory for a chunk of traces";
        let input = alloc(&stream, samples, traces)?;
        let output = match long {
            true => Some(alloc(&stream, samples, traces)?),
            false => None,
        };
        let medians = match medians {
            0 => None,
            m => Some(alloc(&stream, m, "allocating device memory for medians")?),
        };
        let work = match work_bytes {
            0 => None,
            b => Some(alloc(&stream, b.div_ceil(8), "allocating DWT work memory")?),
        };
        Ok(Chunk {
            stream,
            input,
            output,
            medians,
            work,
        })
    }

    /// Traces `first..first + count`: staged up (checked on the way when `check`), worked,
    /// staged down into the caller's layout with their medians.
    fn run(
        &mut self,
        gpu: &CudaBackend,
        kit: &Kit<T>,
        work: &Work,
        host: &mut HostSide<T>,
        (first, count): (usize, usize),
        check: bool,
    ) -> Result<()> {
        let (n, stride, cpu) = (host.n, host.stride, host.cpu);
        let len = count * n;
        let src: &[T] = host.source.unwrap_or(&*host.dest);
        let rows = RowMap { first, n, stride };
        let input = &mut part_mut(&mut self.input, 0, len);
        upload_pieces(
            &gpu.ctx,
            &gpu.staging,
            &self.stream,
            input,
            len,
            |at, piece| gather(cpu, src, rows, at, piece, check),
        )?;
        self.queue_work(kit, work, n, count)?;
        let result = self.output.as_ref().unwrap_or(&self.input);
        download_rows(gpu, cpu, &self.stream, result, host.dest, rows, len)?;
        if let Some(medians) = &self.medians {
            let segs = host.seg_levels;
            let out = &mut host.medians[first * segs..(first + count) * segs];
            download_pieces(
                &gpu.ctx,
                &gpu.staging,
                &self.stream,
                medians,
                out.len(),
                |at, m| {
                    out[at..at + m.len()].copy_from_slice(m);
                    Ok(())
                },
            )?;
        }
        Ok(())
    }

    /// Queues the operation on the chunk's first `count` traces.
    fn queue_work(&mut self, kit: &Kit<T>, work: &Work, n: usize, count: usize) -> Result<()> {
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
        run_on_device(
            kit,
            work.op,
            work.levels,
            DevBatch { shape, io },
            medians,
            area,
        )
    }
}

/// Copies the caller's dense samples `at..at + piece.len()` into `piece` on the pool; with
/// `check`, refuses a non-finite one (the first, by trace and sample).
fn gather<T: Sample>(
    cpu: &CpuBackend,
    src: &[T],
    rows: RowMap,
    at: usize,
    piece: &mut [T],
    check: bool,
) -> Result<()> {
    let runs = rows.runs(at, piece.len());
    let mut parts = Vec::with_capacity(runs.len());
    let mut rest = piece;
    for &(from, _, len) in &runs {
        let (part, tail) = rest.split_at_mut(len);
        parts.push((part, from));
        rest = tail;
    }
    let bad = cpu.install(|| {
        parts
            .into_par_iter()
            .with_min_len((ROW_RUN / rows.n).max(1))
            .enumerate()
            .find_map_first(|(k, (part, from))| {
                let from = &src[from..from + part.len()];
                stream_copy(part, from);
                // The source, just read through the caches (the copy's stores bypass them).
                let hit = if check { first_non_finite(from) } else { None };
                hit.map(|i| at + runs[k].1 + i)
            })
    });
    match bad {
        None => Ok(()),
        Some(e) => Err(non_finite_at(rows.first + e / rows.n, e % rows.n)),
    }
}
