//! Host arrays: chunks of traces staged through page-locked buffers on two streams.

use super::device::{run_on_device, DevBatch, Op};
use super::kit::Kit;
use super::tuning::CHUNK_BYTES;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::buffers::dptr;
use crate::backend::cuda::staging::PinnedBuffer;
use crate::backend::cuda::{driver_error, CudaBackend};

use crate::dwt::traces::Traces;
use crate::dwt::wavelet::Wavelet;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::{result, CudaSlice, CudaStream};
use rayon::prelude::*;
use std::sync::Arc;

/// One stream's buffers.
pub(super) struct Slot<T: Sample> {
    pub(super) stream: Arc<CudaStream>,
    pub(super) pinned: Option<PinnedBuffer>,
    pub(super) pinned_medians: Option<PinnedBuffer>,
    pub(super) input: CudaSlice<T>,
    pub(super) output: Option<CudaSlice<T>>,
    pub(super) medians: Option<CudaSlice<T>>,
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
            // A failed synchronisation leaves the buffers to be freed, not reused.
            let idle = slot.stream.synchronize().is_ok();
            for buffer in [slot.pinned.take(), slot.pinned_medians.take()]
                .into_iter()
                .flatten()
            {
                if idle {
                    self.gpu.staging.put(buffer);
                }
            }
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

/// Runs `op` over a host batch. Chunk results are written to caller memory as each chunk
/// completes: after validation the only failures left are driver errors (device memory
/// exhausted, a broken context), so a failed call may leave earlier chunks done and later ones
/// untouched; a batch of one chunk is written only once all its GPU work succeeded.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_host<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    op: Op,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
    seg_levels: usize,
) -> Result<Vec<T>> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let n = batch.n_samples;
    let size = std::mem::size_of::<T>();
    let first_stream = gpu.stream()?;
    let kit0 = Kit::<T>::new(gpu, wavelet, &first_stream)?;
    let long = kit0.long_plan(n, levels, op.kind()).is_long();
    let (free, _) = gpu
        .ctx
        .mem_get_info()
        .map_err(driver_error("reading free device memory"))?;
    // Device bytes per trace: input, output (long path), coefficients (long denoise).
    let per_trace = n * size * if long { 3 } else { 1 } + 64;
    let budget = (free / 4).max(per_trace);
    let chunk = (CHUNK_BYTES / (n * size))
        .clamp(1, batch.n_traces)
        .min(budget / per_trace)
        .max(1);
    let chunks = batch.n_traces.div_ceil(chunk);
    let n_slots = chunks.min(2);

    let mut slots = Slots::<T> {
        gpu,
        slots: Vec::new(),
    };
    for i in 0..n_slots {
        let stream = if i == 0 {
            first_stream.clone()
        } else {
            gpu.stream()?
        };
        let alloc = |len: usize, what: &'static str| {
            // SAFETY: written by copies or kernels before being read.
            unsafe { stream.alloc::<T>(len.max(1)) }.map_err(driver_error(what))
        };
        let input = alloc(chunk * n, "allocating device memory for a chunk of traces")?;
        let output = if long {
            Some(alloc(
                chunk * n,
                "allocating device memory for a chunk of traces",
            )?)
        } else {
            None
        };
        let medians = if seg_levels > 0 {
            Some(alloc(
                chunk * seg_levels,
                "allocating device memory for medians",
            )?)
        } else {
            None
        };
        let pinned = gpu.staging.take(&gpu.ctx, chunk * n * size)?;
        let pinned_medians = if seg_levels > 0 {
            Some(gpu.staging.take(&gpu.ctx, chunk * seg_levels * size)?)
        } else {
            None
        };
        slots.slots.push(Slot {
            stream,
            pinned: Some(pinned),
            pinned_medians,
            input,
            output,
            medians,
            pending: None,
        });
    }

    let mut medians = vec![T::zero(); batch.n_traces * seg_levels];
    let (source, dest): (Option<&[T]>, &mut [T]) = match traces {
        Traces::InPlace(d) => (None, d),
        Traces::Separate { input, output } => (Some(input), output),
    };
    let stride = batch.trace_stride;

    // Writes a finished chunk's samples and medians out of its slot.
    let finish = |slot: &mut Slot<T>, dest: &mut [T], medians: &mut [T]| -> Result<()> {
        if let Some((first, count)) = slot.pending.take() {
            slot.stream
                .synchronize()
                .map_err(driver_error("running the DWT"))?;
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            scatter(cpu, pinned, dest, first, n, stride);
            if seg_levels > 0 {
                let m = slot
                    .pinned_medians
                    .as_mut()
                    .unwrap()
                    .slice_mut::<T>(count * seg_levels);
                medians[first * seg_levels..(first + count) * seg_levels].copy_from_slice(m);
            }
        }
        Ok(())
    };

    for c in 0..chunks {
        let slot = &mut slots.slots[c % n_slots];
        finish(slot, dest, &mut medians)?;
        let first = c * chunk;
        let count = chunk.min(batch.n_traces - first);
        {
            let src: &[T] = source.unwrap_or(&*dest);
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            gather(cpu, src, first, pinned, n, stride);
        }
        let kit = Kit::<T>::new(gpu, wavelet, &slot.stream)?;
        let cu = slot.stream.cu_stream();
        let input = dptr(&slot.input, &slot.stream);
        let output = slot
            .output
            .as_ref()
            .map_or(input, |o| dptr(o, &slot.stream));
        let med = slot.medians.as_ref().map_or(0, |m| dptr(m, &slot.stream));
        {
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            // SAFETY: page-locked source, device buffer of chunk × n elements; the buffer
            // stays untouched by the host until the stream is synchronised in `finish`.
            unsafe { result::memcpy_htod_async(input, &*pinned, cu) }
                .map_err(driver_error("copying traces to the device"))?;
        }
        let b = DevBatch {
            n,
            traces: count,
            input,
            in_stride: n,
            output,
            out_stride: n,
        };
        run_on_device(&kit, op, levels, b, med)?;
        {
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            // SAFETY: as above, device to host.
            unsafe { result::memcpy_dtoh_async(pinned, output, cu) }
                .map_err(driver_error("copying traces from the device"))?;
        }
        if seg_levels > 0 {
            let m = slot
                .pinned_medians
                .as_mut()
                .unwrap()
                .slice_mut::<T>(count * seg_levels);
            // SAFETY: as above.
            unsafe { result::memcpy_dtoh_async(m, med, cu) }
                .map_err(driver_error("copying medians from the device"))?;
        }
        slot.pending = Some((first, count));
    }
    for slot in &mut slots.slots {
        finish(slot, dest, &mut medians)?;
    }
    Ok(medians)
}
