//! `sg_wavepacket_volume`'s C, C* and inverse on device memory
//! (`sg_wavepacket_volume_*_device_*`).

use super::args::arg_ref;
use super::device_arrays::apart;
use super::guard;
use super::precision::Precision;
use super::status::sg_status;
use super::wavepacket::calls::CountAndResidual;
use super::wavepacket_volume::sg_wavepacket_volume;
use crate::backend::cuda::array::CallerArray;
use crate::error::Result;
use crate::wavepacket::tiles::TiledPlan;

/// The volume's plan for the device call `verb` on `T`, with its arrays (`data`: n reals,
/// `coeffs`: 2·m reals) checked as device memory of the first context's device and apart:
/// `(plan, data, coeffs)`. A CPU context: `Unsupported` naming the call.
fn on_gpu<'a, T: Precision>(
    volume: *const sg_wavepacket_volume,
    verb: &str,
    data: u64,
    coeffs: u64,
) -> Result<(&'a TiledPlan<T>, CallerArray<'a, T>, CallerArray<'a, T>)> {
    let call = format!("sg_wavepacket_volume_{verb}_device");
    let plan = arg_ref(volume, "volume")?.0.get::<T>("volume", &call)?;
    let gpu = plan.context().gpu_for(&format!("{call}_{}", T::SUFFIX))?;
    let n: usize = plan.volume().iter().product();
    let m = 2 * plan.n_coefficients();
    let (d, c) = apart(gpu, (data, n, "data"), (coeffs, m, "coeffs"))?;
    Ok((plan, d, c))
}

fn forward<T: Precision>(volume: *const sg_wavepacket_volume, data: u64, coeffs: u64) -> sg_status {
    guard(|| {
        let (plan, d, mut c) = on_gpu::<T>(volume, "forward", data, coeffs)?;
        plan.forward_on_device(&d, &mut c)
    })
}

fn adjoint<T: Precision>(volume: *const sg_wavepacket_volume, coeffs: u64, data: u64) -> sg_status {
    guard(|| {
        let (plan, mut d, c) = on_gpu::<T>(volume, "adjoint", data, coeffs)?;
        plan.adjoint_on_device(&c, &mut d)
    })
}

fn inverse<T: Precision>(
    volume: *const sg_wavepacket_volume,
    [coeffs, data]: [u64; 2],
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| {
        let (plan, mut d, c) = on_gpu::<T>(volume, "inverse", data, coeffs)?;
        let outs = CountAndResidual::new((iterations, "iterations"), residual)?;
        let report = plan.inverse_on_device(&c, &mut d, tolerance, max_iterations)?;
        outs.set(report.iterations, report.residual);
        Ok(())
    })
}

/// `sg_wavepacket_volume_forward_f32` on device memory: `data` (n_samples floats, axis 1
/// fastest) and `coeffs` (2·n_coefficients floats, interleaved re, im, on the common grids
/// as the host call writes them) are `CUdeviceptr` values (device memory of the volume's
/// context's device, the first context's for a volume of several: `cudaMalloc`,
/// `cuMemAlloc`, a pool or managed memory); they must not overlap. On a volume of one
/// context the call is queued on the context's stream (`sg_context_set_stream`) and returns
/// without waiting: each tile is cut from `data`, transformed and added into `coeffs` in tile
/// order on the device, with buffers made at the volume's creation (nothing allocated, no
/// host copy), so the call can be captured into a CUDA graph; non-finite data are not looked
/// for (only with `sg_context_set_device_checks` on). A volume over several contexts adds the
/// tiles' coefficients on the host, as the host call: there the call **waits** (the data are
/// read once after the work queued on the stream and the coefficients copied into `coeffs`
/// ordered on it), cannot be captured, and non-finite data give `SG_ERR_NON_FINITE`. The
/// progress callback is not called. `SG_ERR_INVALID_ARGUMENT` for an address the driver does
/// not know as device memory of that device holding the array; `SG_ERR_UNSUPPORTED` on a
/// CPU context. Bit for bit the coefficients of `sg_wavepacket_volume_forward_f32` on the
/// same GPUs.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_device_f32(
    volume: *const sg_wavepacket_volume,
    data: u64,
    coeffs: u64,
) -> sg_status {
    forward::<f32>(volume, data, coeffs)
}

/// `sg_wavepacket_volume_forward_device_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_device_f64(
    volume: *const sg_wavepacket_volume,
    data: u64,
    coeffs: u64,
) -> sg_status {
    forward::<f64>(volume, data, coeffs)
}

/// `sg_wavepacket_volume_adjoint_f32` on device memory (arrays as in
/// `sg_wavepacket_volume_forward_device_f32`, not overlapping). Queued without waiting and
/// capturable on a volume of one context (each tile's window taken from `coeffs`, its
/// adjoint, its samples written into `data`, on the device; non-finite coefficients looked
/// for only with device checks on); over several contexts it **waits** as the forward does
/// and non-finite coefficients give `SG_ERR_NON_FINITE`. The progress callback is not
/// called. The data equal those of `sg_wavepacket_volume_adjoint_f32` on the same GPUs to
/// rounding: each tile's adjoint accumulates with atomic additions, whose order follows the
/// threads' timing (as `sg_wavepacket_adjoint_device_f32`).
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_device_f32(
    volume: *const sg_wavepacket_volume,
    coeffs: u64,
    data: u64,
) -> sg_status {
    adjoint::<f32>(volume, coeffs, data)
}

/// `sg_wavepacket_volume_adjoint_device_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_device_f64(
    volume: *const sg_wavepacket_volume,
    coeffs: u64,
    data: u64,
) -> sg_status {
    adjoint::<f64>(volume, coeffs, data)
}

/// `sg_wavepacket_volume_inverse_f32` on device memory (arrays as in
/// `sg_wavepacket_volume_forward_device_f32`, not overlapping; `iterations` and `residual`
/// host memory, each may be NULL). The call **waits**, on any volume: the coefficients are
/// read once after the work queued on the context's stream, the inverse runs as in the host
/// call (each conjugate-gradient iteration's step and stopping test need scalars on the
/// host), and the volume is copied into `data` ordered on the stream; it cannot be captured.
/// Non-finite coefficients give `SG_ERR_NON_FINITE`; the progress callback is not called; on
/// failure nothing is written. Equal to the data of `sg_wavepacket_volume_inverse_f32` on
/// the same GPUs to rounding (as the adjoint).
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_inverse_device_f32(
    volume: *const sg_wavepacket_volume,
    coeffs: u64,
    data: u64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let arrays = [coeffs, data];
    inverse::<f32>(
        volume,
        arrays,
        tolerance,
        max_iterations,
        iterations,
        residual,
    )
}

/// `sg_wavepacket_volume_inverse_device_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_inverse_device_f64(
    volume: *const sg_wavepacket_volume,
    coeffs: u64,
    data: u64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let arrays = [coeffs, data];
    inverse::<f64>(
        volume,
        arrays,
        tolerance,
        max_iterations,
        iterations,
        residual,
    )
}
