//! An `sg_wavepacket_layout`'s coefficient operations on device memory
//! (`sg_wavepacket_*_device_*`): keep the largest, the white-noise threshold and the noise
//! estimate.

use super::super::args::out_ptr;
use super::device::{coeffs_on_device, shrink, transform_on_gpu};
use super::layout::sg_wavepacket_layout;
use super::rules::Threshold;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;

fn keep<T: Precision>(layout: *const sg_wavepacket_layout, coeffs: u64, s: usize) -> sg_status {
    guard(|| {
        let (t, gpu) = transform_on_gpu::<T>(layout, "keep_largest")?;
        let mut c = coeffs_on_device(t, gpu, coeffs)?;
        t.plan.keep_largest_on_device(&mut c, s)
    })
}

fn noise_level<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    sigma: *mut f64,
) -> sg_status {
    guard(|| {
        let (t, gpu) = transform_on_gpu::<T>(layout, "estimate_noise")?;
        let sigma = out_ptr(sigma, "sigma")?;
        let c = coeffs_on_device(t, gpu, coeffs)?;
        sigma.set(t.plan.estimate_noise_on_device(&c)?);
        Ok(())
    })
}

/// `sg_wavepacket_keep_largest_f32` on device coefficients, in place (`coeffs` a
/// `CUdeviceptr` as in `sg_wavepacket_forward_device_f32`: 2·n_coefficients floats,
/// interleaved re, im, device memory of the context's device): keeps the `s` coefficients of
/// largest magnitude and sets the others to 0 (`s` ≥ n_coefficients keeps them all; of
/// equal magnitudes the first in the array are kept). The rank is found on the device (a
/// radix select over |c|², a few dozen small kernels): queued on the context's stream
/// (`sg_context_set_stream`), returns without waiting. Non-finite coefficients are reported
/// by `sg_context_synchronize` with device checks on (`sg_context_set_device_checks`), else
/// not looked for; the progress callback is not called. `SG_ERR_INVALID_ARGUMENT` for an
/// address the driver does not know as device memory of the context's device holding the
/// array; `SG_ERR_UNSUPPORTED` on a CPU context (nothing written). Bit for bit the
/// coefficients of `sg_wavepacket_keep_largest_f32` (|c|² is computed as the host computes
/// it, unfused).
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    s: usize,
) -> sg_status {
    keep::<f32>(layout, coeffs, s)
}

/// `sg_wavepacket_keep_largest_device_f32` for a double-precision layout (bit for bit
/// `sg_wavepacket_keep_largest_f64`).
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    s: usize,
) -> sg_status {
    keep::<f64>(layout, coeffs, s)
}

/// `sg_wavepacket_threshold_noise_f32` on device coefficients, in place (`coeffs` as in
/// `sg_wavepacket_keep_largest_device_f32`): each box b thresholded at
/// `k`·`sigma`·‖ψ_b‖, `mode` `SG_WAVEPACKET_HARD` or `SG_WAVEPACKET_SOFT`, `k` and `sigma`
/// finite and ≥ 0 (host values; `sigma` from `sg_wavepacket_estimate_noise_device_f32`, say).
/// The packet norms live on the device with the layout. Queued on the context's stream:
/// returns without waiting. Non-finite coefficients are reported by `sg_context_synchronize`
/// with device checks on; the progress callback is not called. Bit for bit the coefficients
/// of `sg_wavepacket_threshold_noise_f32` (the magnitudes computed as the C library's
/// `hypotf` computes them).
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    shrink::<f32>(layout, coeffs, mode, Threshold::Noise { k, sigma })
}

/// `sg_wavepacket_threshold_noise_device_f32` for a double-precision layout. The magnitudes
/// are the GPU's `hypot`, which may differ from the host library's by an ulp: a coefficient
/// within an ulp of its box's threshold may be kept where the host call zeroes it (or the
/// reverse), and soft shrinking may differ in the last bits.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    shrink::<f64>(layout, coeffs, mode, Threshold::Noise { k, sigma })
}

/// `sg_wavepacket_estimate_noise_f32` on device coefficients (`coeffs` as in
/// `sg_wavepacket_keep_largest_device_f32`; `sigma` host memory): the median of |c|/‖ψ_b‖
/// over the finest level's coefficients whose packets lie inside the data is selected on the
/// device (a radix select; the coefficients are not copied), after the work queued on the
/// context's stream. The call **waits** for that one value: σ is a host value, the argument
/// `sigma` of `sg_wavepacket_threshold_noise_device_f32`, so a device copy would have to
/// be read back before the threshold anyway. A layout's first estimate also uploads which
/// coefficients are sampled (a bit each). Non-finite coefficients are reported by
/// `sg_context_synchronize` with device checks on; the progress callback is not called.
/// `*sigma` is written only on success. Bit for bit the σ of
/// `sg_wavepacket_estimate_noise_f32`.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_device_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    sigma: *mut f64,
) -> sg_status {
    noise_level::<f32>(layout, coeffs, sigma)
}

/// `sg_wavepacket_estimate_noise_device_f32` for a double-precision layout. The magnitudes
/// are the GPU's `hypot` (an ulp from the host library's at most), so σ may differ from
/// that of `sg_wavepacket_estimate_noise_f64` in the last bits.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_device_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: u64,
    sigma: *mut f64,
) -> sg_status {
    noise_level::<f64>(layout, coeffs, sigma)
}
