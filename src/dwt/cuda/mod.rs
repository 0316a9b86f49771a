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
//! Host arrays go to the device whole when they fit (else in chunks of traces), through
//! page-locked pieces: the host gathers (and checks) one piece while the one before is in
//! flight, and scatters each result piece as the next one comes back.

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

pub(crate) use kit::load_kernels;
pub use prelude::{dwt_kernel_preludes, prelude};
pub use resident::work_bytes;
pub use resident::{
    denoise_device_enqueue, denoise_on, transform_device, transform_on, DeviceIo, DeviceMedians,
    DeviceTraces,
};
pub use tuning::{set_host_chunk_limit, set_single_kernel_limit};

use super::traces::{Job, Op};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::sample::Sample;

/// Runs `job` on the GPU; returns the thresholds used when denoising (n_traces × levels),
/// else nothing.
pub fn run<T: Sample>(gpu: &CudaBackend, cpu: &CpuBackend, job: Job<T>) -> Result<Vec<f64>> {
    let (n, levels) = (job.batch.n_samples, job.levels);
    let seg_levels = match job.op {
        Op::Denoise(options) => {
            let rules = Rules::<T>::new(options, levels, n);
            if rules.universal() {
                rules.seg_levels as usize
            } else {
                0
            }
        }
        Op::Transform(_) => 0,
    };
    let work = Work {
        wavelet: job.wavelet,
        op: job.op,
        levels,
        seg_levels,
    };
    let n_traces = job.batch.n_traces;
    let medians = run_host(gpu, cpu, &work, job.traces, job.batch, job.checked)?;
    Ok(match job.op {
        Op::Denoise(options) => thresholds_from_medians(options, levels, n, n_traces, &medians),
        Op::Transform(_) => Vec::new(),
    })
}
