//! `sg_wavepacket_volume`'s C, C* and inverse on device memory
//! (`sg_wavepacket_volume_*_device_*`).

use super::status::sg_status;
use super::wavepacket::device_calls::{inverse, transform, DeviceTransforms};
use super::wavepacket_volume::sg_wavepacket_volume;
use crate::backend::cuda::array::CallerArray;
use crate::context::Context;
use crate::error::Result;
use crate::sample::Real;
use crate::wavepacket::inverse::{InverseReport, Stop};
use crate::wavepacket::tiles::TiledPlan;
use crate::wavepacket::Pass;
use crate::wavepacket::Pass::*;

impl<T: Real> DeviceTransforms<T> for TiledPlan<T> {
    fn context(&self) -> &Context {
        TiledPlan::context(self)
    }
    fn transform_on_device(
        &self,
        pass: Pass,
        input: &CallerArray<T>,
        output: &mut CallerArray<T>,
    ) -> Result<()> {
        TiledPlan::transform_on_device(self, pass, input, output)
    }
    fn inverse_on_device(
        &self,
        coeffs: &CallerArray<T>,
        data: &mut CallerArray<T>,
        stop: Stop,
    ) -> Result<InverseReport> {
        TiledPlan::inverse_on_device(self, coeffs, data, stop)
    }
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
    transform::<_, f32>(volume, Forward, [data, coeffs])
}

/// `sg_wavepacket_volume_forward_device_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_device_f64(
    volume: *const sg_wavepacket_volume,
    data: u64,
    coeffs: u64,
) -> sg_status {
    transform::<_, f64>(volume, Forward, [data, coeffs])
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
    transform::<_, f32>(volume, Adjoint, [data, coeffs])
}

/// `sg_wavepacket_volume_adjoint_device_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_device_f64(
    volume: *const sg_wavepacket_volume,
    coeffs: u64,
    data: u64,
) -> sg_status {
    transform::<_, f64>(volume, Adjoint, [data, coeffs])
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
    inverse::<_, f32>(
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
    inverse::<_, f64>(
        volume,
        arrays,
        tolerance,
        max_iterations,
        iterations,
        residual,
    )
}
