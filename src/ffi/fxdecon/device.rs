//! The F-X plan's calls on volumes in device memory (`sg_fxdecon_execute_*_device_*`).

use super::super::device_arrays::{in_out, InOut};
use super::super::guard;
use super::super::status::sg_status;
use super::{plan_of_dims, sg_fxdecon_plan};
use crate::error::{Error, Result};
use crate::fxdecon::cuda::DeviceIo;
use crate::fxdecon::{FxdeconPlan, Volume};

/// The body of the f32 calls: the plan of `dims` dimensions, the device arrays `input` and
/// `output` laid out by `layout` (`input == output` in place; other overlaps refused).
fn execute(
    plan: *const sg_fxdecon_plan,
    dims: usize,
    arrays: [u64; 2],
    layout: impl FnOnce(&FxdeconPlan) -> Result<Volume>,
) -> sg_status {
    let call = format!("sg_fxdecon_execute_{dims}d_device_f32");
    guard(|| {
        let plan = plan_of_dims(plan, dims)?;
        let gpu = plan.context().gpu_for(&call)?;
        let layout = layout(plan)?;
        match in_out::<f32>(gpu, arrays, layout.span())? {
            InOut::InPlace(mut a) => plan.execute_device(DeviceIo::in_place(&mut a), layout),
            InOut::Apart(i, mut o) => plan.execute_device(DeviceIo::apart(&i, &mut o), layout),
        }
    })
}

/// The body of the f64 calls: refused (after the plan and context checks), nothing written.
fn execute_f64(plan: *const sg_fxdecon_plan, dims: usize) -> sg_status {
    let call = format!("sg_fxdecon_execute_{dims}d_device_f64");
    guard(|| {
        let plan = plan_of_dims(plan, dims)?;
        plan.context().gpu_for(&call)?;
        Err(Error::Unsupported(format!(
            "{call}: the GPU F-X filter runs float data only (sg_fxdecon_execute_{dims}d_f64 \
             runs double data on the CPU); pass float arrays to \
             sg_fxdecon_execute_{dims}d_device_f32"
        )))
    })
}

/// `sg_fxdecon_execute_2d_f32` on device memory: `input` and `output` are `CUdeviceptr`
/// values (addresses in the context's device memory, from `cudaMalloc`, `cuMemAlloc`, a
/// pool or managed memory) in the host call's layout (trace t at element
/// `t * trace_stride`); `input == output` filters in place (the call then takes a device
/// copy of the input, as the host call takes a host copy); other overlaps are refused.
/// Samples between traces are not touched. Queued on the context's stream
/// (`sg_context_set_stream`): returns without waiting (the plan's FFT plans and buffers are
/// made when it is created; an in-place call allocates a copy of its input), the output is ready when the stream has
/// run; progress callbacks are not called. Non-finite samples reach the output, and are
/// reported by `sg_context_synchronize` with device checks on (`sg_context_set_device_checks`). `SG_ERR_INVALID_ARGUMENT` for an address the driver does not know as
/// device memory of the context's device holding the section; `SG_ERR_UNSUPPORTED` on a
/// CPU context, and where the host call would run on the CPU (an operator and windows too
/// large for a block's shared memory). Equal to the results of `sg_fxdecon_execute_2d_f32`
/// on the same GPU to rounding: overlapping windows add their predictions into a trace's
/// spectrum with atomic additions, whose order follows the threads' timing.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_2d_device_f32(
    plan: *const sg_fxdecon_plan,
    input: u64,
    output: u64,
    trace_stride: usize,
) -> sg_status {
    execute(plan, 2, [input, output], |p| p.layout_2d(trace_stride))
}

/// `sg_fxdecon_execute_2d_device_f32` for `double` traces: always `SG_ERR_UNSUPPORTED` (the
/// GPU filter runs float data only; `sg_fxdecon_execute_2d_f64` runs double data on the
/// CPU), nothing written. Kept so that every precision has its call.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_2d_device_f64(
    plan: *const sg_fxdecon_plan,
    input: u64,
    output: u64,
    trace_stride: usize,
) -> sg_status {
    let _ = (input, output, trace_stride);
    execute_f64(plan, 2)
}

/// `sg_fxdecon_execute_3d_f32` on device memory: trace (il, xl) starts at element
/// `il * inline_stride + xl * crossline_stride` of `input` and `output` (`CUdeviceptr`
/// values). Otherwise as `sg_fxdecon_execute_2d_device_f32`: in place allowed (with a device
/// copy of the input), other overlaps refused; queued on the context's stream without
/// waiting; non-finite samples reported as by the 2D call; no progress callbacks; equal to
/// `sg_fxdecon_execute_3d_f32` on the same GPU to rounding (overlapping windows add their
/// predictions with atomic additions, in an order that follows the threads' timing).
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_3d_device_f32(
    plan: *const sg_fxdecon_plan,
    input: u64,
    output: u64,
    inline_stride: usize,
    crossline_stride: usize,
) -> sg_status {
    execute(plan, 3, [input, output], |p| {
        p.layout_3d(inline_stride, crossline_stride)
    })
}

/// `sg_fxdecon_execute_3d_device_f32` for `double` traces: always `SG_ERR_UNSUPPORTED`, as
/// `sg_fxdecon_execute_2d_device_f64`.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_3d_device_f64(
    plan: *const sg_fxdecon_plan,
    input: u64,
    output: u64,
    inline_stride: usize,
    crossline_stride: usize,
) -> sg_status {
    let _ = (input, output, inline_stride, crossline_stride);
    execute_f64(plan, 3)
}
