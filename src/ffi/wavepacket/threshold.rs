//! Compression and denoising of an `sg_wavepacket_layout`'s coefficients, in place: the
//! largest kept, or a threshold by value or per level (its call serves the per-box white-noise
//! threshold of `noise` too).

use super::arrays::coefficients;
use super::layout::{sg_wavepacket_layout, transform};
use super::rules::{Rule, Threshold};
use crate::error::Result;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;
use crate::wavepacket::coeffs::{self, keep_largest, threshold_noise};

fn keep<T: Precision>(layout: *const sg_wavepacket_layout, coeffs: *mut T, s: usize) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_keep_largest")?;
    keep_largest(coefficients(&t.plan, coeffs)?, s);
    Ok(())
}

/// A threshold call on the layout's coefficients, in place: `mode` and `threshold` checked,
/// then the coefficients, before any work.
pub(super) fn shrink<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut T,
    mode: i32,
    threshold: Threshold,
) -> Result<()> {
    let t = transform::<T>(layout, &format!("sg_wavepacket_{}", threshold.verb()))?;
    let (mode, rule) = threshold.rule(mode)?;
    rule.check_values()?;
    let (l, c) = (t.plan.layout(), coefficients(&t.plan, coeffs)?);
    match rule {
        Rule::Level(level) => coeffs::threshold(l, c, mode, level),
        Rule::Noise { k, sigma } => threshold_noise(l, &t.plan.packet_norms(), c, mode, k, sigma),
    }
}

/// Compression, in place: keeps the `s` coefficients of largest magnitude and sets the
/// others to 0 (`s` ≥ n_coefficients keeps them all). Non-finite coefficients give
/// `SG_ERR_NON_FINITE` and nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    s: usize,
) -> sg_status {
    guard(|| keep::<f32>(layout, coeffs, s))
}

/// `sg_wavepacket_keep_largest_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    s: usize,
) -> sg_status {
    guard(|| keep::<f64>(layout, coeffs, s))
}

/// Denoising, in place: `mode` `SG_WAVEPACKET_HARD` or `SG_WAVEPACKET_SOFT`, at a threshold
/// given by `kind`: `SG_WAVEPACKET_THRESHOLD_VALUE` (`value` itself) or
/// `SG_WAVEPACKET_THRESHOLD_SIGMA` (`value`·σ of each level). `value` finite and ≥ 0.
/// Non-finite coefficients give `SG_ERR_NON_FINITE`; on failure nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    guard(|| shrink::<f32>(layout, coeffs, mode, Threshold::Level(kind, value)))
}

/// `sg_wavepacket_threshold_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    guard(|| shrink::<f64>(layout, coeffs, mode, Threshold::Level(kind, value)))
}
