//! Ambient-noise correlation on the GPU (kernels in `kernels/xcorr.cu`).
//!
//! Preprocessing (`preprocess`): station-days go up in chunks through page-locked buffers;
//! per chunk, day kernels, window kernels, one batched cuFFT R2C and whitening written
//! straight into the frequency-major spectra `[bin][station][window]`, which stay on the
//! device (`DeviceSpectra`).
//!
//! Linear stacks (`linear`): per tile of stations, one cuBLAS complex GEMM batched over the
//! band bins (per group of windows with substacks), then per chunk of pairs a gather into
//! rows. Nonlinear stacks (`nonlinear`): per batch of pairs, the (pair, window) rows on the
//! device, stacked there (`stacks`: PWS, robust, substacks' means). Either way the rows
//! (`rows`) go through NoisePy's spectral-mean removal, one batched cuFFT C2R and the lag
//! trim. NoisePy's correlation methods divide the spectra once (`spectra::divided`).

mod days;
pub mod held;
mod kit;
mod linear;
mod nonlinear;
mod preprocess;
mod put;
mod rows;
pub mod spectra;
mod stacks;
pub mod tables;

pub use kit::{set_memory_budget, Kit};
pub use linear::gemm_seconds;
pub use preprocess::{preprocess, preprocess_on, DeviceDays};
pub use spectra::{divided, divided_on};

use super::calls::CorrelateCall;
use super::options::StackMethod;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::progress::Reporter;
use rows::RowBuffers;

pub fn correlate(gpu: &CudaBackend, call: CorrelateCall, reporter: &mut Reporter) -> Result<()> {
    correlate_on(&Kit::new(gpu)?, call, reporter)
}

/// `correlate` queued on the kit's stream; a device call's (`call.device`) returns
/// without waiting.
pub fn correlate_on(kit: &Kit, call: CorrelateCall, reporter: &mut Reporter) -> Result<()> {
    let g = *call.plan.geometry();
    let days = call.days;
    let mut rows = RowBuffers::new(kit, g.nfft, g.n_lags())?;
    reporter.stage("xcorr correlate", 1.0, call.block.n_pairs());
    match call.plan.options().stack_method {
        StackMethod::Linear => linear::run(kit, call, &mut rows, reporter),
        method => nonlinear::run(kit, call, method, &mut rows, reporter),
    }?;
    days::order_reads(days, &kit.stream)
}
