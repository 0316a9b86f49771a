//! The DWT plan's calls on arrays in device memory (`sg_dwt_*_device_*`).

use super::super::status::sg_status;
use super::{denoise, execute, sg_dwt_plan, Arrays};

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
    let arrays = Arrays::<f32>::Device([input, output]);
    execute(plan, direction, n_levels, arrays, n_traces, trace_stride)
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
    let arrays = Arrays::<f64>::Device([input, output]);
    execute(plan, direction, n_levels, arrays, n_traces, trace_stride)
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
    let arrays = Arrays::<f32>::Device([input, output]);
    denoise(plan, options, arrays, n_traces, trace_stride, thresholds)
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
    let arrays = Arrays::<f64>::Device([input, output]);
    denoise(plan, options, arrays, n_traces, trace_stride, thresholds)
}
