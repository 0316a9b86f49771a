//! White noise in an `sg_wavepacket_layout`'s coefficients: thresholds per box scaled by
//! the packets' norms, the noise level's estimate, and the norms themselves.

use super::arrays::coefficients_in;
use super::layout::{layout_of, packet_norms_of, sg_wavepacket_layout, transform};
use super::rules::Threshold;
use super::threshold::shrink;
use crate::error::Result;
use crate::ffi::args::out_ptr;
use crate::ffi::arrays::out_slice;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;
use crate::wavepacket::coeffs::estimate_noise;

fn noise_level<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *const T,
    sigma: *mut f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_estimate_noise")?;
    let sigma = out_ptr(sigma, "sigma")?;
    let c = coefficients_in(&t.plan, coeffs)?;
    sigma.set(estimate_noise(t.plan.layout(), &t.plan.packet_norms(), c));
    Ok(())
}

/// Denoising of white noise, in place: each box b is thresholded at `k`·`sigma`·‖ψ_b‖ (‖ψ_b‖
/// its packet norm, `sg_wavepacket_packet_norms`), `mode` `SG_WAVEPACKET_HARD` or
/// `SG_WAVEPACKET_SOFT`. `sigma` is the noise's standard deviation in the data (known, or from
/// `sg_wavepacket_estimate_noise_f32`): a coefficient of such noise has E|c|² = σ²‖ψ_b‖², and
/// exceeds k·σ‖ψ_b‖ with probability e^(−k²) (k ≈ 2.5, hard, removes all but 0.2 % of the
/// noise's coefficients). `k` and `sigma` finite and ≥ 0. Non-finite coefficients give
/// `SG_ERR_NON_FINITE`; on failure nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    guard(|| shrink::<f32>(layout, coeffs, mode, Threshold::Noise { k, sigma }))
}

/// `sg_wavepacket_threshold_noise_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    guard(|| shrink::<f64>(layout, coeffs, mode, Threshold::Noise { k, sigma }))
}

/// `*sigma` receives the standard deviation of white noise in the data whose coefficients
/// (from `sg_wavepacket_forward_f32`) are `coeffs`: the median of |c|/‖ψ_b‖ over the finest
/// level's coefficients whose packets lie inside the data, over √ln 2 (the median of a
/// complex Gaussian's magnitude); the finest level holds the least signal. 0 when that level
/// holds no such coefficient. Non-finite coefficients give `SG_ERR_NON_FINITE`; on failure
/// `*sigma` is not written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    sigma: *mut f64,
) -> sg_status {
    guard(|| noise_level::<f32>(layout, coeffs, sigma))
}

/// `sg_wavepacket_estimate_noise_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    sigma: *mut f64,
) -> sg_status {
    guard(|| noise_level::<f64>(layout, coeffs, sigma))
}

/// `norms[b]` receives ‖ψ_b‖ of every box b (`n_boxes` must be the layout's box count): the ℓ2
/// norm of one of its complex packets where it lies inside the data (less near the edges), from
/// its window. A coefficient of white noise of variance σ² has E|c|² = σ²‖ψ_b‖², so |c|/‖ψ_b‖
/// compares coefficients across boxes. Any precision; on failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_packet_norms(
    layout: *const sg_wavepacket_layout,
    norms: *mut f64,
    n_boxes: usize,
) -> sg_status {
    guard(|| {
        let l = layout_of(layout)?;
        if n_boxes != l.boxes.len() {
            return Err(crate::invalid!(
                "n_boxes is {n_boxes}; the layout has {} boxes",
                l.boxes.len()
            ));
        }
        let out = out_slice(norms, n_boxes, "norms")?;
        out.copy_from_slice(&packet_norms_of(layout)?);
        Ok(())
    })
}
