//! The sparse (S-term) approximation of data by an `sg_wavepacket_layout`'s packets.

use super::arrays::{data_and_coeffs, sizes};
use super::calls::CountAndResidual;
use super::layout::{sg_wavepacket_layout, transform};
use super::options::{sg_wavepacket_sparse_options, sparse_options};
use crate::error::Result;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;

fn sparse<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: *const T,
    coeffs: *mut T,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_sparse_approximation")?;
    let (n, m) = sizes(&t.plan);
    let (d, out) = data_and_coeffs(data, n, coeffs, m)?;
    let opts = sparse_options(options)?;
    let outs = CountAndResidual::new((kept, "kept"), residual)?;
    let (c, report) = t.plan.sparse_approximation(d, s, &opts)?;
    out.copy_from_slice(&c);
    outs.set(report.kept, report.residual);
    Ok(())
}

/// The S-term approximation (compression): `coeffs` (as `sg_wavepacket_forward_f32` writes
/// them) receives at most `s` (≤ n_coefficients) non-zero coefficients whose synthesis C*c
/// (`sg_wavepacket_adjoint_f32`) approximates `data` (n_samples values). The frame is
/// redundant, so the largest coefficients of C f (`sg_wavepacket_keep_largest_f32`) are a poor
/// choice; here the support grows in `options.stages` stages, each adding the coefficients
/// whose packets correlate best with the residual (|(C r)_i|/‖ψ_i‖; only local maxima on
/// their box's grid while there are enough), and the kept ones are refitted by least squares
/// on ‖C*c − f‖ after each stage; two exchange rounds then each add S/4 more and drop the S/4
/// weakest (|c_i|·‖ψ_i‖). `options` may be NULL for the defaults. `*kept` (the non-zero
/// coefficients) and `*residual` (‖f − C*c‖/‖f‖) may each be NULL. The arrays must not
/// overlap. Non-finite data gives `SG_ERR_NON_FINITE`. Progress: stage "wave-packet sparse
/// approximation", one item per stage and per exchange round. On failure nothing is
/// written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_f32(
    layout: *const sg_wavepacket_layout,
    data: *const f32,
    coeffs: *mut f32,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| sparse::<f32>(layout, data, coeffs, s, options, kept, residual))
}

/// `sg_wavepacket_sparse_approximation_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_f64(
    layout: *const sg_wavepacket_layout,
    data: *const f64,
    coeffs: *mut f64,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| sparse::<f64>(layout, data, coeffs, s, options, kept, residual))
}
