//! The transforms of an `sg_wavepacket_layout`: C, its adjoint C*, and the inverse.

use super::calls::{inverse, transform};
use super::layout::sg_wavepacket_layout;
use crate::ffi::guard;
use crate::ffi::status::sg_status;
use crate::wavepacket::inverse::Stop;
use crate::wavepacket::Pass::*;

/// C: real data (n_samples values, axis 1 fastest) → `coeffs` (2·n_coefficients floats,
/// interleaved re, im; box after box at their offsets, each L1 × L2 × L3, axis 1 fastest).
/// The arrays must not overlap. Non-finite data gives `SG_ERR_NON_FINITE`. With a progress
/// callback on the context (`sg_context_set_progress`) reports stages "wave-packet spectrum"
/// and "wave-packet boxes"; a stop gives `SG_ERR_CANCELLED`. On any failure `coeffs` is not
/// written. Several threads may use one layout at once.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_f32(
    layout: *const sg_wavepacket_layout,
    data: *const f32,
    coeffs: *mut f32,
) -> sg_status {
    guard(|| transform::<_, f32>(layout, Forward, data, coeffs))
}

/// `sg_wavepacket_forward_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_f64(
    layout: *const sg_wavepacket_layout,
    data: *const f64,
    coeffs: *mut f64,
) -> sg_status {
    guard(|| transform::<_, f64>(layout, Forward, data, coeffs))
}

/// C*: `coeffs` (as `sg_wavepacket_forward_f32` writes them) → real `data` (the real part of
/// the exact adjoint: ⟨C f, c⟩ = ⟨f, C* c⟩ for real f). Non-finite coefficients give
/// `SG_ERR_NON_FINITE`. Progress and stops as the forward call; on failure `data` is not
/// written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    data: *mut f32,
) -> sg_status {
    guard(|| transform::<_, f32>(layout, Adjoint, coeffs, data))
}

/// `sg_wavepacket_adjoint_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    data: *mut f64,
) -> sg_status {
    guard(|| transform::<_, f64>(layout, Adjoint, coeffs, data))
}

/// The inverse: the data whose coefficients are closest (least squares) to `coeffs` — C*
/// followed by the correction filter (the inverse of C*C's response to a unit impulse, built
/// at the first inverse or POCS call on the layout), refined by conjugate gradients on C*C
/// until the relative residual is ≤ `tolerance` (in (0, 1)) or `max_iterations` (0: the
/// filter alone) were made. `*iterations` and `*residual` (each may be NULL) receive the
/// iterations made and the residual reached. Progress: stage "wave-packet inverse", one item
/// per iteration. On failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    data: *mut f32,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let stop = Stop::new(tolerance, max_iterations);
    guard(|| inverse::<_, f32>(layout, coeffs, data, stop, iterations, residual))
}

/// `sg_wavepacket_inverse_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    data: *mut f64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let stop = Stop::new(tolerance, max_iterations);
    guard(|| inverse::<_, f64>(layout, coeffs, data, stop, iterations, residual))
}
