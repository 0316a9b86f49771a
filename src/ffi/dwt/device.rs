//! The DWT plan's calls on arrays in device memory (`sg_dwt_*_device_*`).

use super::super::args::arg_ref;
use super::super::device_arrays::{in_out, InOut};
use super::super::guard;
use super::super::status::sg_status;
use super::{options, sg_dwt_plan, thresholds_out};
use crate::dwt::cuda::DeviceIo;
use crate::dwt::DwtPlan;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;

/// The batch's device arrays (`input == output` in place; other overlaps refused), handed
/// to `call` with the plan.
fn with_traces<T: Sample>(
    plan: *const sg_dwt_plan,
    call: &str,
    [input, output]: [u64; 2],
    n_traces: usize,
    trace_stride: usize,
    body: impl FnOnce(&DwtPlan, DeviceIo<T>, TraceBatch) -> Result<()>,
) -> Result<()> {
    let plan = &arg_ref(plan, "plan")?.0;
    let gpu = plan.context().gpu_for(call)?;
    let batch = TraceBatch::new(plan.n_samples(), n_traces, trace_stride)?;
    match in_out::<T>(gpu, [input, output], batch.span())? {
        InOut::InPlace(mut a) => body(plan, DeviceIo::in_place(&mut a), batch),
        InOut::Apart(i, mut o) => body(plan, DeviceIo::apart(&i, &mut o), batch),
    }
}

fn execute<T: Sample>(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    arrays: [u64; 2],
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    guard(|| {
        let direction = super::direction(direction)?;
        let call = "sg_dwt_execute_device";
        with_traces::<T>(plan, call, arrays, n_traces, trace_stride, |p, io, b| {
            p.transform_device(direction, n_levels, io, b)
        })
    })
}

fn denoise<T: Sample>(
    plan: *const sg_dwt_plan,
    opts: *const super::sg_dwt_denoise_options,
    arrays: [u64; 2],
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    guard(|| {
        let options = options(opts)?;
        let call = "sg_dwt_denoise_device";
        with_traces::<T>(plan, call, arrays, n_traces, trace_stride, |p, io, b| {
            let t = thresholds_out(p, &options, thresholds, n_traces)?;
            p.denoise_device(&options, io, b, t)
        })
    })
}

/// `sg_dwt_execute_f32` on device memory: `input` and `output` are `CUdeviceptr` values
/// (addresses in the context's device memory, from `cudaMalloc`, `cuMemAlloc`, a pool or
/// managed memory) in the same layout; `input == output` transforms in place (traces too
/// long for one block's shared memory take a multi-pass path that needs separate arrays and
/// trace_stride = n_samples; the status says so). Queued on the context's stream (`sg_context_set_stream`):
/// returns without waiting, the results are ready when the stream has run. Non-finite
/// samples reach the outputs, and are reported by `sg_context_synchronize` with device checks
/// on (`sg_context_set_device_checks`). `SG_ERR_INVALID_ARGUMENT` for an
/// address the driver does not know as device memory of the context's device holding the
/// batch; `SG_ERR_UNSUPPORTED` on a CPU context. Bit for bit the results of
/// `sg_dwt_execute_f32` on the same GPU. Work arrays (the multi-pass path's) come from the
/// plan's workspace (`sg_dwt_plan_reserve`), grown by a call that needs more; a call queued
/// while its stream is captured into a graph must find the room there (else
/// `SG_ERR_INVALID_ARGUMENT`, nothing allocated).
#[no_mangle]
pub extern "C" fn sg_dwt_execute_device_f32(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    input: u64,
    output: u64,
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    let arrays = [input, output];
    execute::<f32>(plan, direction, n_levels, arrays, n_traces, trace_stride)
}

/// `sg_dwt_execute_device_f32` for `double` traces.
#[no_mangle]
pub extern "C" fn sg_dwt_execute_device_f64(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    input: u64,
    output: u64,
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    let arrays = [input, output];
    execute::<f64>(plan, direction, n_levels, arrays, n_traces, trace_stride)
}

/// `sg_dwt_denoise_f32` on device memory (arrays as in `sg_dwt_execute_device_f32`).
/// `thresholds`, if not NULL, is *host* memory for n_traces × levels doubles: the call then
/// waits for the stream to fill it; with NULL it returns without waiting. Its medians
/// (n_traces × levels at most) are work arrays of the plan's workspace, as the multi-pass
/// path's: reserve it (`sg_dwt_plan_reserve`) before capturing the call into a graph.
#[no_mangle]
pub extern "C" fn sg_dwt_denoise_device_f32(
    plan: *const sg_dwt_plan,
    options: *const super::sg_dwt_denoise_options,
    input: u64,
    output: u64,
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    let arrays = [input, output];
    denoise::<f32>(plan, options, arrays, n_traces, trace_stride, thresholds)
}

/// `sg_dwt_denoise_device_f32` for `double` traces.
#[no_mangle]
pub extern "C" fn sg_dwt_denoise_device_f64(
    plan: *const sg_dwt_plan,
    options: *const super::sg_dwt_denoise_options,
    input: u64,
    output: u64,
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    let arrays = [input, output];
    denoise::<f64>(plan, options, arrays, n_traces, trace_stride, thresholds)
}
