//! The DWT on the GPU: kernels/dwt.cu, with the wavelet and the sample type baked in through
//! an NVRTC prelude (one module per wavelet and sample type; trace length and depth are
//! kernel arguments, so that every length shares that module).
//!
//! Two paths compute the same function as the CPU reference (src/dwt/transform.rs):
//! - Whole trace (n up to `single_kernel_max`): one team (a warp, or a block for long traces)
//!   per trace loads it to shared memory once, runs every level there and writes once.
//!   Denoising is one launch: forward levels, median of |d| by radix selection in shared
//!   memory, thresholds, inverse levels with the shrinkage applied as details are read.
//! - Long signals: passes over tiles that each run K levels from an input window with its halo
//!   (`dwt_forward_tiles`, `dwt_inverse_tiles`) until the approximation fits the whole-trace
//!   kernel, which finishes. The median of |d| is a radix selection over device memory
//!   (histogram passes per (trace, level) segment); thresholds are applied as the inverse
//!   passes load the details.
//!
//! Host arrays are staged through page-locked buffers in chunks of traces on two streams, so
//! that the copies and kernels of one chunk overlap the host-side gather/scatter of the other.

use crate::backend::cuda::buffers::dptr;
use device::{run_on_device, DevBatch, Op};
use host::run_host;
use kit::Kit;
use shrink::{thresholds_from_medians, Rules};
mod device;
mod geometry;
mod host;
mod kit;
mod long;
mod prelude;
mod shrink;
mod tuning;

pub use prelude::{dwt_kernel_preludes, prelude};
pub use tuning::set_single_kernel_limit;

use super::denoise::{DenoiseOptions, ThresholdRule};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::{driver_error, CudaBackend};

use super::traces::{Direction, Traces};
use super::wavelet::Wavelet;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::{result, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

pub fn transform<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<()> {
    run_host(
        gpu,
        cpu,
        wavelet,
        Op::Transform(direction),
        levels,
        traces,
        batch,
        0,
    )?;
    Ok(())
}

pub fn denoise<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<Vec<f64>> {
    let n = batch.n_samples;
    let rules = Rules::<T>::new(options, levels, n);
    let seg_levels = if rules.universal() {
        rules.seg_levels as usize
    } else {
        0
    };
    let medians = run_host(
        gpu,
        cpu,
        wavelet,
        Op::Denoise(options),
        levels,
        traces,
        batch,
        seg_levels,
    )?;
    Ok(thresholds_from_medians(
        options,
        levels,
        n,
        batch.n_traces,
        &medians,
    ))
}

/// Device-resident transform of `levels` levels (0 = all): input and output already on the
/// GPU (stride = batch.trace_stride), queued on `stream` without waiting. Input and output
/// may be the same buffer only for traces the whole-trace kernels take; long traces need
/// dense coefficients (stride = n_samples).
#[allow(clippy::too_many_arguments)]
pub fn transform_device<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let n = batch.n_samples;
    let levels = check_device_batch(n, levels, input.len(), output.len(), &batch)?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    if batch.trace_stride != n
        && kit
            .long_plan(n, levels, Op::Transform(direction).kind())
            .is_long()
    {
        return Err(crate::invalid!(
            "traces of {n} samples take the long-signal path, which needs trace_stride = n_samples"
        ));
    }
    let (pi, _ri) = input.device_ptr(stream);
    let (po, _ro) = output.device_ptr_mut(stream);
    let b = DevBatch {
        n,
        traces: batch.n_traces,
        input: pi,
        in_stride: batch.trace_stride,
        output: po,
        out_stride: batch.trace_stride,
    };
    run_on_device(&kit, Op::Transform(direction), levels, b, 0)
}

/// Checks a device-resident call's sizes; returns the depth (0 resolved to all levels).
fn check_device_batch(
    n: usize,
    levels: u32,
    input: usize,
    output: usize,
    batch: &TraceBatch,
) -> Result<u32> {
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
    if input < batch.span() || output < batch.span() {
        return Err(crate::invalid!(
            "device buffers shorter than the {} elements the batch spans",
            batch.span()
        ));
    }
    Ok(levels)
}

/// Device-resident denoise: input and output already on the GPU (contiguous traces,
/// stride = batch.trace_stride), work queued on `stream`. Returns the thresholds.
/// Waits for the stream: the thresholds depend on the data.
#[allow(clippy::too_many_arguments)]
pub fn denoise_device<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &std::sync::Arc<CudaStream>,
) -> Result<Vec<f64>> {
    denoise_device_enqueue(gpu, wavelet, options, levels, input, output, batch, stream)?
        .thresholds(gpu, stream)
}

/// The medians a queued denoise leaves on the device, until `thresholds` reads them.
pub struct DeviceMedians<T> {
    medians: CudaSlice<T>,
    options: DenoiseOptions,
    levels: u32,
    n: usize,
    traces: usize,
}

impl<T: Sample> DeviceMedians<T> {
    /// Waits for `stream` and returns the thresholds (n_traces × levels, as the CPU backend).
    pub fn thresholds(self, gpu: &CudaBackend, stream: &Arc<CudaStream>) -> Result<Vec<f64>> {
        let universal = self.options.rule == ThresholdRule::Universal;
        let len = if universal { self.medians.len() } else { 0 };
        let mut host = vec![T::zero(); len];
        if len > 0 {
            let mut pinned = gpu.staging.take(&gpu.ctx, len * std::mem::size_of::<T>())?;
            let staged = pinned.slice_mut::<T>(len);
            // SAFETY: page-locked destination of the medians' size; synchronised below
            // before the buffer is read or reused.
            let copied = unsafe {
                result::memcpy_dtoh_async(staged, dptr(&self.medians, stream), stream.cu_stream())
            }
            .map_err(driver_error("copying medians from the device"));
            let done = stream
                .synchronize()
                .map_err(driver_error("running the DWT denoise"));
            copied?;
            done?;
            host.copy_from_slice(pinned.slice_mut::<T>(len));
            gpu.staging.put(pinned);
        } else {
            stream
                .synchronize()
                .map_err(driver_error("running the DWT denoise"))?;
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

/// Queues a device-resident denoise on `stream` without waiting (for timing with events);
/// `levels` 0 means all. The returned medians turn into thresholds once the stream is done.
#[allow(clippy::too_many_arguments)]
pub fn denoise_device_enqueue<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &std::sync::Arc<CudaStream>,
) -> Result<DeviceMedians<T>> {
    let n = batch.n_samples;
    let levels = check_device_batch(n, levels, input.len(), output.len(), &batch)?;
    options.validate()?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    let rules = Rules::<T>::new(options, levels, n);
    let medians = kit.alloc::<T>(
        batch.n_traces * rules.seg_levels as usize,
        "allocating device memory for medians",
    )?;
    {
        // The guards make `stream` wait for earlier work on the buffers, and later work
        // elsewhere wait for this.
        let (pi, _ri) = input.device_ptr(stream);
        let (po, _ro) = output.device_ptr_mut(stream);
        let b = DevBatch {
            n,
            traces: batch.n_traces,
            input: pi,
            in_stride: batch.trace_stride,
            output: po,
            out_stride: batch.trace_stride,
        };
        run_on_device(
            &kit,
            Op::Denoise(options),
            levels,
            b,
            dptr(&medians, stream),
        )?;
    }
    Ok(DeviceMedians {
        medians,
        options: *options,
        levels,
        n,
        traces: batch.n_traces,
    })
}
