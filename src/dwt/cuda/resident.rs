//! Device-resident calls: traces already in device memory, work queued on the caller's stream.

use super::device::{op_long_bytes, run_on_device, DevBatch, Op};
use super::kit::{Kit, Sizing};
use super::rows::{whole, whole_mut, Io, Rows, Shape};
use super::shrink::{thresholds_from_medians, Rules};
use crate::backend::cuda::array::{piece_bytes, DeviceArray, DeviceArrayMut, Part, PartMut};
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::workspace::Workspace;
use crate::backend::cuda::{checks, driver_error, CudaBackend};
use crate::dwt::denoise::{DenoiseOptions, ThresholdRule};
use crate::dwt::traces::Direction;
use crate::dwt::wavelet::Wavelet;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// A batch already on the GPU: `batch.n_traces` traces of `batch.n_samples` samples,
/// `batch.trace_stride` apart, in `input`; the results go to `output` at the same stride.
pub struct DeviceTraces<'a, T> {
    pub input: &'a CudaSlice<T>,
    pub output: &'a mut CudaSlice<T>,
    pub batch: TraceBatch,
}

impl<'a, T> DeviceTraces<'a, T> {
    pub fn new(input: &'a CudaSlice<T>, output: &'a mut CudaSlice<T>, batch: TraceBatch) -> Self {
        DeviceTraces {
            input,
            output,
            batch,
        }
    }
}

/// Traces in device memory as a device call passes them: separate input and output
/// arrays, or one array transformed in place.
pub enum DeviceIo<'a, T> {
    Apart(Part<'a, T>, PartMut<'a, T>),
    InPlace(PartMut<'a, T>),
}

impl<'a, T> DeviceIo<'a, T> {
    pub fn apart(input: &'a impl DeviceArray<T>, output: &'a mut impl DeviceArrayMut<T>) -> Self {
        DeviceIo::Apart(whole(input), whole_mut(output))
    }

    pub fn in_place(traces: &'a mut impl DeviceArrayMut<T>) -> Self {
        DeviceIo::InPlace(whole_mut(traces))
    }

    /// With device checks on, a scan of the input's traces on `stream` (`checks.rs`).
    pub fn check_finite(
        &self,
        gpu: &CudaBackend,
        stream: &CudaStream,
        batch: &TraceBatch,
        call: &str,
    ) -> Result<()>
    where
        T: Sample,
    {
        let rows = checks::Rows::traces(batch.n_samples, batch.n_traces, batch.trace_stride);
        let name = || format!("{call}'s input traces");
        match self {
            DeviceIo::Apart(input, _) => gpu.check_finite(stream, input, rows, name),
            DeviceIo::InPlace(traces) => gpu.check_finite(stream, traces, rows, name),
        }
    }

    /// The shorter of the arrays' lengths.
    fn len(&self) -> usize {
        match self {
            DeviceIo::Apart(i, o) => i.len().min(o.len()),
            DeviceIo::InPlace(a) => a.len(),
        }
    }

    fn batch(self, batch: TraceBatch) -> DevBatch<'a, T> {
        let stride = batch.trace_stride;
        DevBatch {
            shape: Shape {
                n: batch.n_samples,
                traces: batch.n_traces,
            },
            io: match self {
                DeviceIo::Apart(data, out) => {
                    Io::Apart(Rows { data, stride }, Rows { data: out, stride })
                }
                DeviceIo::InPlace(data) => Io::InPlace(Rows { data, stride }),
            },
        }
    }
}

/// Device-resident transform of `levels` levels (0 = all), queued on `stream` without
/// waiting; the long path's work memory comes from `work` (grown to the call if short).
/// Long traces (beyond the whole-trace kernels) need dense traces (stride = n_samples) in
/// separate arrays.
#[allow(clippy::too_many_arguments)]
pub fn transform_on<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    io: DeviceIo<T>,
    batch: TraceBatch,
    stream: &Arc<CudaStream>,
    work: &mut Workspace,
) -> Result<()> {
    let levels = check_device_batch(levels, &io, &batch)?;
    gpu.bind()?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    let op = Op::Transform(direction);
    check_long(&kit, op, levels, &io, &batch)?;
    let long = op_long_bytes::<T>(
        &Sizing::of(&kit),
        op,
        levels,
        batch.n_samples,
        batch.n_traces,
    );
    if long == 0 {
        return run_on_device(&kit, op, levels, io.batch(batch), None, None);
    }
    let mut pieces = work.for_call(stream, long, "making room for a device DWT")?;
    let area = pieces.take::<u64>(long / 8);
    run_on_device(&kit, op, levels, io.batch(batch), None, Some(area))
}

/// Bytes of `work` a device call of `op` over `traces` traces of `n` samples at `levels`
/// levels (resolved) uses: a denoise's medians (traces × seg_levels), and on the long path
/// the work arrays of one group of traces. Sized for sample type `T`.
pub fn work_bytes<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    op: Op,
    levels: u32,
    n: usize,
    traces: usize,
) -> usize {
    let long = op_long_bytes::<T>(&Sizing::new::<T>(gpu, wavelet), op, levels, n, traces);
    match op {
        Op::Denoise(options) => {
            let segs = Rules::<T>::new(options, levels, n).seg_levels as usize;
            piece_bytes::<T>(traces * segs) + long
        }
        Op::Transform(_) => long,
    }
}

/// `transform_on` for arrays the library allocated (cudarc orders them across streams).
pub fn transform_device<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    traces: DeviceTraces<T>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let mut work = Workspace::default();
    on_stream(stream, traces, |io, batch| {
        transform_on(
            gpu, wavelet, direction, levels, io, batch, stream, &mut work,
        )
    })
}

/// The long-signal path needs dense traces and separate arrays.
fn check_long<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    levels: u32,
    io: &DeviceIo<T>,
    batch: &TraceBatch,
) -> Result<()> {
    let n = batch.n_samples;
    if !kit.long_plan(n, levels, op.kind()).is_long() {
        return Ok(());
    }
    if batch.trace_stride != n {
        return Err(crate::invalid!(
            "traces of {n} samples take the long-signal path, which needs trace_stride = n_samples"
        ));
    }
    if let DeviceIo::InPlace(_) = io {
        return Err(crate::invalid!(
            "traces of {n} samples take the long-signal path, which cannot run in place: pass separate input and output arrays"
        ));
    }
    Ok(())
}

/// Checks a device-resident call's sizes; returns the depth (0 resolved to all levels).
fn check_device_batch<T>(levels: u32, io: &DeviceIo<T>, batch: &TraceBatch) -> Result<u32> {
    let n = batch.n_samples;
    if n < 2 || !n.is_power_of_two() {
        return Err(crate::invalid!(
            "n_samples is {n}; expected a power of two ≥ 2"
        ));
    }
    let levels = if levels == 0 {
        n.trailing_zeros()
    } else {
        levels
    };
    if levels > n.trailing_zeros() {
        return Err(crate::invalid!(
            "{levels} levels asked for {n}-sample traces"
        ));
    }
    if io.len() < batch.span() {
        return Err(crate::invalid!(
            "device arrays shorter than the {} elements the batch spans",
            batch.span()
        ));
    }
    Ok(levels)
}

/// Runs `queue` over the library's arrays as a batch, on `stream`. cudarc orders the use of
/// a slice across streams by events: `stream` first waits for earlier work on the arrays
/// elsewhere (their last writes, and the output's reads), and their events are recorded on
/// it after the work, for later work elsewhere to wait for.
fn on_stream<T, R>(
    stream: &CudaStream,
    traces: DeviceTraces<T>,
    queue: impl FnOnce(DeviceIo<T>, TraceBatch) -> R,
) -> R {
    let DeviceTraces {
        input,
        output,
        batch,
    } = traces;
    drop((input.device_ptr(stream), output.device_ptr_mut(stream)));
    let queued = queue(DeviceIo::apart(input, output), batch);
    drop((input.device_ptr(stream), output.device_ptr_mut(stream)));
    queued
}

/// The medians a queued denoise leaves on the device (in `M`: a buffer of the call's, or a
/// plan's workspace), until `thresholds` reads them.
pub struct DeviceMedians<T, M> {
    medians: M,
    options: DenoiseOptions,
    levels: u32,
    n: usize,
    traces: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Sample, M: DeviceArray<T>> DeviceMedians<T, M> {
    /// The medians a denoise of `batch` at `levels` writes into `medians`.
    fn new(medians: M, options: &DenoiseOptions, levels: u32, batch: &TraceBatch) -> Self {
        DeviceMedians {
            medians,
            options: *options,
            levels,
            n: batch.n_samples,
            traces: batch.n_traces,
            _t: std::marker::PhantomData,
        }
    }

    /// Waits for `stream` and returns the thresholds (n_traces × levels, as the CPU backend).
    pub fn thresholds(self, gpu: &CudaBackend, stream: &Arc<CudaStream>) -> Result<Vec<f64>> {
        let universal = self.options.rule == ThresholdRule::Universal;
        let len = if universal { self.medians.len() } else { 0 };
        let mut host = vec![T::zero(); len];
        // Only the universal rule reads the medians: the others skip the copy.
        let staged = if len > 0 {
            let mut pinned = gpu.staging.take(&gpu.ctx, len * std::mem::size_of::<T>())?;
            let what = "copying medians from the device";
            pinned.download_from(stream, &self.medians, len, what)?;
            Some(pinned)
        } else {
            None
        };
        stream
            .synchronize()
            .map_err(driver_error("running the DWT denoise"))?;
        if let Some(mut pinned) = staged {
            host.copy_from_slice(pinned.slice_mut::<T>(len)?);
            gpu.staging.put(pinned);
        }
        Ok(thresholds_from_medians(
            &self.options,
            self.levels,
            self.n,
            self.traces,
            &host,
        ))
    }
}

/// A denoise's kit, depth (0 resolved) and rules, the batch checked.
fn denoise_setup<'a, T: Sample>(
    gpu: &'a CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    io: &DeviceIo<T>,
    batch: &TraceBatch,
    stream: &'a Arc<CudaStream>,
) -> Result<(Kit<'a, T>, u32, Rules<T>)> {
    let levels = check_device_batch(levels, io, batch)?;
    options.validate()?;
    gpu.bind()?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    check_long(&kit, Op::Denoise(options), levels, io, batch)?;
    Ok((
        kit,
        levels,
        Rules::<T>::new(options, levels, batch.n_samples),
    ))
}

/// Queues a device-resident denoise on `stream` without waiting; `levels` 0 means all. Its
/// medians and the long path's work arrays are cut from `work` (grown to the call if
/// short); the returned medians, in `work`, turn into thresholds once the stream is done.
#[allow(clippy::too_many_arguments)]
pub fn denoise_on<'w, T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    io: DeviceIo<T>,
    batch: TraceBatch,
    stream: &Arc<CudaStream>,
    work: &'w mut Workspace,
) -> Result<DeviceMedians<T, PartMut<'w, T>>> {
    let (kit, levels, rules) = denoise_setup(gpu, wavelet, options, levels, &io, &batch, stream)?;
    let (n, op) = (batch.n_samples, Op::Denoise(options));
    let long = op_long_bytes::<T>(&Sizing::of(&kit), op, levels, n, batch.n_traces);
    let segs = batch.n_traces * rules.seg_levels as usize;
    let bytes = piece_bytes::<T>(segs) + long;
    let mut pieces = work.for_call(stream, bytes, "making room for a device DWT denoise")?;
    let mut medians = pieces.take::<T>(segs);
    let area = (long > 0).then(|| pieces.take::<u64>(long / 8));
    run_on_device(
        &kit,
        op,
        levels,
        io.batch(batch),
        Some(whole_mut(&mut medians)),
        area,
    )?;
    Ok(DeviceMedians::new(medians, options, levels, &batch))
}

/// `denoise_on` for arrays the library allocated (for timing with events), with its
/// medians and work arrays made for the call. The thresholds come from the returned
/// medians' `thresholds`, which waits for the stream (they depend on the data).
pub fn denoise_device_enqueue<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    traces: DeviceTraces<T>,
    stream: &Arc<CudaStream>,
) -> Result<DeviceMedians<T, DeviceBuf<T>>> {
    on_stream(stream, traces, |io, batch| {
        let (kit, levels, rules) =
            denoise_setup(gpu, wavelet, options, levels, &io, &batch, stream)?;
        let (n, op) = (batch.n_samples, Op::Denoise(options));
        let what = "allocating device memory for medians";
        let mut medians = alloc::<T>(stream, batch.n_traces * rules.seg_levels as usize, what)?;
        let long = op_long_bytes::<T>(&Sizing::of(&kit), op, levels, n, batch.n_traces);
        let mut area = match long {
            0 => None,
            b => Some(alloc::<u64>(stream, b / 8, "allocating DWT work memory")?),
        };
        let wanted = Some(whole_mut(&mut medians));
        let io = io.batch(batch);
        run_on_device(&kit, op, levels, io, wanted, area.as_mut().map(whole_mut))?;
        Ok(DeviceMedians::new(medians, options, levels, &batch))
    })
}
