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

use device::Op;
use host::{run_host, Work};
use shrink::{thresholds_from_medians, Rules};
mod device;
mod geometry;
mod host;
mod kit;
mod long;
mod prelude;
mod resident;
mod rows;
mod select;
mod shrink;
mod tiles;
mod tuning;

pub use prelude::{dwt_kernel_preludes, prelude};
pub use resident::{
    denoise_device, denoise_device_enqueue, denoise_on, transform_device, transform_on, DeviceIo,
    DeviceMedians, DeviceTraces,
};
pub use tuning::set_single_kernel_limit;

use super::denoise::DenoiseOptions;
use super::traces::{Direction, Traces};
use super::wavelet::Wavelet;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;

pub fn transform<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<()> {
    let work = Work {
        wavelet,
        op: Op::Transform(direction),
        levels,
        seg_levels: 0,
    };
    run_host(gpu, cpu, &work, traces, batch)?;
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
    let work = Work {
        wavelet,
        op: Op::Denoise(options),
        levels,
        seg_levels: if rules.universal() {
            rules.seg_levels as usize
        } else {
            0
        },
    };
    let medians = run_host(gpu, cpu, &work, traces, batch)?;
    Ok(thresholds_from_medians(
        options,
        levels,
        n,
        batch.n_traces,
        &medians,
    ))
}
