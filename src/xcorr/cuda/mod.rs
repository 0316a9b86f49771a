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

mod day_filter;
mod days;
pub mod held;
mod kit;
mod linear;
mod nonlinear;
mod pace;
mod preprocess;
mod put;
mod rows;
pub mod spectra;
mod stacks;
pub mod tables;

pub use kit::{holds_result, set_memory_budget, set_result_budget, Kit};
pub use linear::gemm_seconds;
pub use preprocess::{preprocess, preprocess_on, DeviceDays};
pub use spectra::{divided, divided_on};

use super::calls::{CorrelateCall, DeviceOut};
use super::options::StackMethod;
use crate::backend::cuda::array::part_mut;
use crate::backend::cuda::staging::{download_rows, RowMap};
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::progress::Reporter;
use rows::RowBuffers;

pub fn correlate(gpu: &CudaBackend, call: CorrelateCall, reporter: &mut Reporter) -> Result<()> {
    correlate_on(&Kit::new(gpu)?, call, reporter)
}

/// A host call (without dense arrays) whose rows stay on the device until every one is
/// there (`holds_result`), then go straight into the caller's `stacks` and `substacks`
/// (array, row stride): the caller's arrays are written only once nothing can fail but
/// the copy itself (a `DeviceOutOfMemory` comes before any).
pub fn correlate_to_host(
    gpu: &CudaBackend,
    call: CorrelateCall,
    reporter: &mut Reporter,
    [stacks, substacks]: [(&mut [f32], usize); 2],
) -> Result<()> {
    let kit = Kit::new(gpu)?;
    let (n_lags, n_pairs) = (call.plan.geometry().n_lags(), call.block.n_pairs());
    let n_sub = call.groups.map_or(0, |g| g.n_groups * n_pairs);
    let cpu = &call.plan.context().cpu;
    let what = "allocating correlations";
    let mut all = kit.take::<f32>(n_pairs * n_lags, what)?;
    let mut sub = kit.take::<f32>((n_sub * n_lags).max(1), what)?;
    let out = DeviceOut {
        stacks: part_mut(&mut all, 0, n_pairs * n_lags),
        substacks: call.groups.map(|_| part_mut(&mut sub, 0, n_sub * n_lags)),
        stride: n_lags,
    };
    correlate_on(&kit, call.into_device(out), reporter)?;
    for (src, rows, (dest, stride)) in [(&all, n_pairs, stacks), (&sub, n_sub, substacks)] {
        let map = RowMap {
            first: 0,
            n: n_lags,
            stride,
        };
        download_rows(gpu, cpu, &kit.stream, src, dest, map, rows * n_lags)?;
    }
    Ok(())
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
