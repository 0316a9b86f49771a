//! The data and coefficient arrays of the wave-packet calls, of layouts and of tiled
//! volumes alike: `data` n real values, `coeffs` m complex values (2·m interleaved reals),
//! checked non-NULL and apart before they become slices.

use crate::error::Result;
use crate::ffi::arrays::{check, overlap, slice, slice_mut};
use crate::sample::Real;
use crate::wavepacket::{check_finite, WavepacketPlan};
use num_complex::Complex;

/// `Ok` when `data` (n values) and `coeffs` (m complex values) are non-NULL and apart.
fn apart<T>(data: *const T, n: usize, coeffs: *const Complex<T>, m: usize) -> Result<()> {
    check(data, n, "data")?;
    check(coeffs, m, "coeffs")?;
    if overlap(data, n, coeffs, m) {
        return Err(crate::invalid!("`data` and `coeffs` overlap"));
    }
    Ok(())
}

/// The arrays of a forward transform: `data` read, `coeffs` written.
pub(crate) fn data_and_coeffs<'a, T>(
    data: *const T,
    n: usize,
    coeffs: *mut T,
    m: usize,
) -> Result<(&'a [T], &'a mut [Complex<T>])> {
    let coeffs = coeffs.cast::<Complex<T>>();
    apart(data, n, coeffs, m)?;
    Ok((slice(data, n, "data")?, slice_mut(coeffs, m, "coeffs")?))
}

/// The arrays of an adjoint or inverse: `coeffs` read, `data` written.
pub(crate) fn coeffs_and_data<'a, T>(
    coeffs: *const T,
    m: usize,
    data: *mut T,
    n: usize,
) -> Result<(&'a [Complex<T>], &'a mut [T])> {
    let coeffs = coeffs.cast::<Complex<T>>();
    apart(data, n, coeffs, m)?;
    Ok((slice(coeffs, m, "coeffs")?, slice_mut(data, n, "data")?))
}

/// The sizes of a layout's arrays: data values and complex coefficients.
pub(crate) fn sizes<T: Real>(plan: &WavepacketPlan<T>) -> (usize, usize) {
    let l = plan.layout();
    (l.n_samples(), l.n_coefficients)
}

/// The layout's coefficients in the caller's array, checked non-NULL and finite.
pub(crate) fn coefficients_in<'a, T: Real>(
    plan: &WavepacketPlan<T>,
    coeffs: *const T,
) -> Result<&'a [Complex<T>]> {
    let c = slice(coeffs.cast::<Complex<T>>(), sizes(plan).1, "coeffs")?;
    check_finite(c, &plan.context().cpu)?;
    Ok(c)
}

/// `coefficients_in`, for a call that changes them in place.
pub(crate) fn coefficients<'a, T: Real>(
    plan: &WavepacketPlan<T>,
    coeffs: *mut T,
) -> Result<&'a mut [Complex<T>]> {
    let c = slice_mut(coeffs.cast::<Complex<T>>(), sizes(plan).1, "coeffs")?;
    check_finite(c, &plan.context().cpu)?;
    Ok(c)
}
