//! An `sg_wavepacket_layout`'s calls on arrays in device memory
//! (`sg_wavepacket_*_device_*`): C, C*, the inverse and the threshold (whose call serves the
//! white-noise threshold of `device_coeffs` too).

use super::super::device_arrays::device_array;
use super::arrays::sizes;
use super::device_calls::{inverse, plan_on_gpu, transform, DeviceTransforms};
use super::layout::{sg_wavepacket_layout, Transform};
use super::rules::{Rule, Threshold};
use crate::backend::cuda::array::CallerArray;
use crate::backend::cuda::CudaBackend;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;
use crate::sample::Real;
use crate::wavepacket::coeffs::ThresholdLevel;
use crate::wavepacket::inverse::{InverseReport, Stop};
use crate::wavepacket::Pass;
use crate::wavepacket::Pass::*;

/// The layout's transform for the device call `verb` on `T`, with its context's GPU (a CPU
/// context: `Unsupported` naming the call).
pub(super) fn transform_on_gpu<'a, T: Precision>(
    layout: *const sg_wavepacket_layout,
    verb: &str,
) -> Result<(&'a Transform<T>, &'a CudaBackend)> {
    plan_on_gpu::<sg_wavepacket_layout, T>(layout, verb)
}

/// The layout's coefficients (2·m reals) in device memory, checked, for a call on them alone.
pub(super) fn coeffs_on_device<'a, T: Precision>(
    t: &Transform<T>,
    gpu: &CudaBackend,
    coeffs: u64,
) -> Result<CallerArray<'a, T>> {
    device_array::<T>(gpu, coeffs, 2 * sizes(&t.plan).1, "coeffs")
}

impl<T: Real> DeviceTransforms<T> for Transform<T> {
    fn context(&self) -> &Context {
        self.plan.context()
    }
    fn transform_on_device(
        &self,
        pass: Pass,
        input: &CallerArray<T>,
        output: &mut CallerArray<T>,
    ) -> Result<()> {
        self.plan.transform_on_device(pass, input, output)
    }
    fn inverse_on_device(
        &self,
        coeffs: &CallerArray<T>,
        data: &mut CallerArray<T>,
        stop: Stop,
    ) -> Result<InverseReport> {
        let filter = self.filter()?;
        self.plan.inverse_on_device(filter, coeffs, data, stop)
    }
}

/// A threshold call on the layout's device coefficients, in place: `mode` and `threshold`
/// checked (the per-level σ refused: its medians are not computed on the device), then the
/// coefficients, before any work.
pub(super) fn shrink<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    mode: i32,
    threshold: Threshold,
) -> sg_status {
    guard(|| {
        let (t, gpu) = transform_on_gpu::<T>(layout, threshold.verb())?;
        let (mode, rule) = threshold.rule(mode)?;
        if let Rule::Level(ThresholdLevel::Sigma(_)) = rule {
            return Err(Error::Unsupported(
                "SG_WAVEPACKET_THRESHOLD_SIGMA takes the median of each level's coefficients, which the device calls do not compute; use SG_WAVEPACKET_THRESHOLD_VALUE or sg_wavepacket_threshold on host coefficients".into(),
            ));
        }
        rule.check_values()?;
        let mut c = coeffs_on_device(t, gpu, coeffs)?;
        match rule {
            // The σ kind was refused above.
            Rule::Level(ThresholdLevel::Value(v) | ThresholdLevel::Sigma(v)) => {
                t.plan.threshold_on_device(&mut c, mode, v)
            }
            Rule::Noise { k, sigma } => t.plan.threshold_noise_on_device(&mut c, mode, k, sigma),
        }
    })
}

/// `sg_wavepacket_forward_f32` on device memory: `data` (n_samples floats) and `coeffs`
/// (2·n_coefficients floats, interleaved re, im, in the host call's layout) are `CUdeviceptr`
/// values (addresses in the context's device memory: `cudaMalloc`, `cuMemAlloc`, a pool or
/// managed memory); they must not overlap. Queued on the context's stream
/// (`sg_context_set_stream`): returns without waiting, the coefficients are ready when the
/// stream has run. Non-finite data reaches the coefficients, and is
/// reported by `sg_context_synchronize` with device checks on (`sg_context_set_device_checks`); the
/// progress callback is not called. `SG_ERR_INVALID_ARGUMENT` for an address the driver does
/// not know as device memory of the context's device holding the array;
/// `SG_ERR_UNSUPPORTED` on a CPU context. Bit for bit the coefficients of
/// `sg_wavepacket_forward_f32` on the same GPU.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_device_f32(
    layout: *const sg_wavepacket_layout,
    data: u64,
    coeffs: u64,
) -> sg_status {
    transform::<_, f32>(layout, Forward, [data, coeffs])
}

/// `sg_wavepacket_forward_device_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_device_f64(
    layout: *const sg_wavepacket_layout,
    data: u64,
    coeffs: u64,
) -> sg_status {
    transform::<_, f64>(layout, Forward, [data, coeffs])
}

/// `sg_wavepacket_adjoint_f32` on device memory (arrays as in
/// `sg_wavepacket_forward_device_f32`, not overlapping). Queued on the context's stream:
/// returns without waiting. Non-finite coefficients reach the data (reported by
/// `sg_context_synchronize` with device checks on); the progress callback is not called. The data equal those of
/// `sg_wavepacket_adjoint_f32` on the same GPU to rounding: the adjoint's non-uniform FFT
/// accumulates with atomic additions, whose order follows the threads' timing.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    data: u64,
) -> sg_status {
    transform::<_, f32>(layout, Adjoint, [data, coeffs])
}

/// `sg_wavepacket_adjoint_device_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    data: u64,
) -> sg_status {
    transform::<_, f64>(layout, Adjoint, [data, coeffs])
}

/// `sg_wavepacket_inverse_f32` on device memory (arrays as in
/// `sg_wavepacket_forward_device_f32`, not overlapping; `iterations` and `residual` host
/// memory, each may be NULL). The coefficients stay on the device: C* of them is computed
/// there after the work queued on the context's stream, the correction filter and the
/// conjugate gradients run as in the host call (each C*C on the device), and the result is
/// copied into `data` on the stream. The call **waits**: each iteration's stopping test reads
/// the residual on the host, and the iterations and residual are host outputs. Non-finite
/// coefficients are reported by `sg_context_synchronize` with device checks on (an inverse
/// that comes out non-finite gives `SG_ERR_NON_FINITE`, `data` unwritten); the progress callback is not called. Equal to the
/// data of `sg_wavepacket_inverse_f32` on the same GPU to rounding (as the adjoint).
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    data: u64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let arrays = [coeffs, data];
    inverse::<_, f32>(
        layout,
        arrays,
        tolerance,
        max_iterations,
        iterations,
        residual,
    )
}

/// `sg_wavepacket_inverse_device_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    data: u64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let arrays = [coeffs, data];
    inverse::<_, f64>(
        layout,
        arrays,
        tolerance,
        max_iterations,
        iterations,
        residual,
    )
}

/// `sg_wavepacket_threshold_f32` on device coefficients, in place (`coeffs` a `CUdeviceptr`
/// as in `sg_wavepacket_forward_device_f32`): `mode` `SG_WAVEPACKET_HARD` or
/// `SG_WAVEPACKET_SOFT` at `kind` `SG_WAVEPACKET_THRESHOLD_VALUE` (`value`, finite and ≥ 0);
/// `SG_WAVEPACKET_THRESHOLD_SIGMA` gives `SG_ERR_UNSUPPORTED` (its per-level medians are not
/// computed on the device). Queued on the context's stream: returns without waiting.
/// Non-finite coefficients are reported by `sg_context_synchronize` with device checks on.
/// Between `sg_wavepacket_forward_device_f32`
/// and `sg_wavepacket_adjoint_device_f32` (or the inverse) it makes the threshold round
/// trip on device data. Bit for bit the coefficients of `sg_wavepacket_threshold_f32` (the
/// magnitudes computed as the C library's `hypotf` computes them).
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    shrink::<f32>(layout, coeffs, mode, Threshold::Level(kind, value))
}

/// `sg_wavepacket_threshold_device_f32` for a double-precision layout. The magnitudes are
/// the GPU's `hypot`, which may differ from the host library's by an ulp: a coefficient
/// within an ulp of the threshold may be kept where the host call zeroes it (or the
/// reverse), and soft shrinking may differ in the last bits.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    shrink::<f64>(layout, coeffs, mode, Threshold::Level(kind, value))
}
