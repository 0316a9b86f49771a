//! The transform calls of layouts and of tiled volumes alike: C, C* and the inverse, from
//! the C arguments (the handle's plan of the call's precision found, the data and
//! coefficient arrays checked, before any work).

use super::arrays::{coeffs_and_data, data_and_coeffs};
use crate::error::Result;
use crate::ffi::args::{optional_out, MaybeOut};
use crate::ffi::precision::Precision;
use crate::sample::Real;
use crate::wavepacket::inverse::{InverseReport, Stop};
use crate::wavepacket::Pass;
use num_complex::Complex;

/// What the transform calls need of a plan: a layout's transform or a tiled volume.
pub(crate) trait Transforms<T: Real> {
    /// Data values and complex coefficients.
    fn sizes(&self) -> (usize, usize);
    fn forward(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()>;
    fn adjoint(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()>;
    fn inverse(&self, coeffs: &[Complex<T>], data: &mut [T], stop: Stop) -> Result<InverseReport>;
}

/// A C object the transform calls run on (`sg_wavepacket_layout`, `sg_wavepacket_volume`).
pub(crate) trait TransformHandle {
    /// The prefix of its calls' names (`sg_wavepacket`: `sg_wavepacket_forward_f32`, …).
    const CALLS: &'static str;
    type Plan<T: Real>: Transforms<T>;
    /// The handle's plan for calls on `T`, or an error naming `call` for the other precision.
    fn plan<'a, T: Precision>(handle: *const Self, call: &str) -> Result<&'a Self::Plan<T>>;
}

/// The handle's plan for the call `name` (`forward`, …) on `T`, with the sizes of its data
/// and coefficients.
fn plan_and_sizes<'a, H: TransformHandle, T: Precision>(
    handle: *const H,
    name: &str,
) -> Result<(&'a H::Plan<T>, usize, usize)> {
    let plan = H::plan::<T>(handle, &format!("{}_{name}", H::CALLS))?;
    let (n, m) = plan.sizes();
    Ok((plan, n, m))
}

/// C (`input` the data, n values; `output` the coefficients, m complex values) or C*
/// (`input` the coefficients, `output` the data).
pub(crate) fn transform<H: TransformHandle, T: Precision>(
    handle: *const H,
    pass: Pass,
    input: *const T,
    output: *mut T,
) -> Result<()> {
    let (plan, n, m) = plan_and_sizes::<H, T>(handle, pass.verb())?;
    match pass {
        Pass::Forward => {
            let (d, c) = data_and_coeffs(input, n, output, m)?;
            plan.forward(d, c)
        }
        Pass::Adjoint => {
            let (c, d) = coeffs_and_data(input, m, output, n)?;
            plan.adjoint(c, d)
        }
    }
}

/// The inverse: `coeffs` → `data`; `*iterations` and `*residual` (each may be NULL) receive
/// what it took.
pub(crate) fn inverse<H: TransformHandle, T: Precision>(
    handle: *const H,
    coeffs: *const T,
    data: *mut T,
    stop: Stop,
    iterations: *mut usize,
    residual: *mut f64,
) -> Result<()> {
    let (plan, n, m) = plan_and_sizes::<H, T>(handle, "inverse")?;
    let (c, d) = coeffs_and_data(coeffs, m, data, n)?;
    let outs = CountAndResidual::new((iterations, "iterations"), residual)?;
    let report = plan.inverse(c, d, stop)?;
    outs.set(report.iterations, report.residual);
    Ok(())
}

/// The outputs of an iterative call, each of which the caller may leave NULL: a count (the
/// inverse's iterations, the sparse approximation's kept coefficients) and the relative
/// residual reached; checked before any work, written only on success.
pub(crate) struct CountAndResidual(MaybeOut<usize>, MaybeOut<f64>);

impl CountAndResidual {
    /// The count at `count` (named as its argument) and the residual at `residual`.
    pub(crate) fn new((count, name): (*mut usize, &str), residual: *mut f64) -> Result<Self> {
        Ok(Self(
            optional_out(count, name)?,
            optional_out(residual, "residual")?,
        ))
    }

    pub(crate) fn set(self, count: usize, residual: f64) {
        self.0.set(count);
        self.1.set(residual);
    }
}
