//! The EM-logging plan's and result's calls on arrays in device memory
//! (`sg_emlog_*_device`).

use super::super::args::arg_ref;
use super::super::context::{create_on, sg_context};
use super::super::device_arrays::{device_array, overlap};
use super::super::guard;
use super::super::status::sg_status;
use super::{
    bins, listed_models, search_request, searched_columns, sg_emlog_options, sg_emlog_plan,
    sg_emlog_result,
};
use crate::emlog::cuda::gather::DeviceProblem;
use crate::emlog::device_calls::Histogram;
use crate::emlog::matrix::Shape;
use crate::emlog::EmlogPlan;

/// `sg_emlog_plan_create` with A, `sigma0`, `f0`, `f_exp` and `delta` in device memory:
/// `CUdeviceptr` values (addresses in the context's device memory, from `cudaMalloc`,
/// `cuMemAlloc`, a pool or managed memory) in the same layout and strides; `searched` stays
/// a host array (n_searched column indices). The arrays are only read and may overlap.
/// The searched columns of A and their σ₀ are gathered on the device after the work queued
/// on the context's stream (`sg_context_set_stream`), and copied to the host with f0, f_exp
/// and delta (n·(n_searched + 3) + n_searched values, not A): the call waits for the
/// stream, since the plan's closed-form answer is computed on the host. The gathered
/// values are checked as `sg_emlog_plan_create` checks them (`SG_ERR_NON_FINITE`,
/// `SG_ERR_INVALID_ARGUMENT`, naming A's own columns); the other columns of A and σ₀ are
/// not read, so non-finite values there are not looked for. `SG_ERR_INVALID_ARGUMENT` for
/// an address the driver does not know as device memory of the context's device holding
/// the array (A: (n−1)·row_stride + (m−1)·col_stride + 1 values); `SG_ERR_UNSUPPORTED` on
/// a CPU context. The plan equals `sg_emlog_plan_create`'s on the same values bit for bit.
/// Progress callbacks are not called. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_emlog_plan_create_device(
    ctx: *const sg_context,
    n: usize,
    m: usize,
    a: u64,
    row_stride: usize,
    col_stride: usize,
    sigma0: u64,
    f0: u64,
    f_exp: u64,
    delta: u64,
    n_searched: usize,
    searched: *const i32,
    out: *mut *mut sg_emlog_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        let gpu = ctx.gpu_for("sg_emlog_plan_create_device")?;
        let cols = searched_columns(searched, n_searched)?;
        let shape = Shape {
            n,
            m,
            row_stride,
            col_stride,
            searched: &cols,
        };
        shape.check_sizes()?;
        let span = shape.check_strides()?;
        let arrays = DeviceProblem {
            a: device_array::<f64>(gpu, a, span, "a")?,
            sigma0: device_array::<f64>(gpu, sigma0, m, "sigma0")?,
            f0: device_array::<f64>(gpu, f0, n, "f0")?,
            f_exp: device_array::<f64>(gpu, f_exp, n, "f_exp")?,
            delta: device_array::<f64>(gpu, delta, n, "delta")?,
        };
        EmlogPlan::from_device(ctx.clone(), &shape, &arrays).map(sg_emlog_plan)
    })
}

/// `sg_emlog_search` (the same arguments, all host values: the grid's axes, the pairs and
/// the options are small) run after the work queued on the context's stream
/// (`sg_context_set_stream`), the stream's later work after it. The call waits for the
/// search: the result's counts, best model and extents are host values
/// (`sg_emlog_result_summary`), and the first equivalent models, when asked for, are listed
/// on the host as the GPU's counts come in. The histograms are read back on the same wait
/// (the summary's extents and `sg_emlog_result_marginal` / `_pair` use them) and also kept
/// in device memory, which `sg_emlog_result_marginal_device` and
/// `sg_emlog_result_pair_device` copy from without leaving the device; the result holds
/// that memory until `sg_emlog_result_destroy`. Progress is reported as by
/// `sg_emlog_search`.
/// `SG_ERR_UNSUPPORTED` on a CPU context. The same kernels in the same order as
/// `sg_emlog_search`: the result equals its result on the same GPU bit for bit. Several
/// threads may search one plan.
#[no_mangle]
pub extern "C" fn sg_emlog_search_device(
    plan: *const sg_emlog_plan,
    axis_kind: *const i32,
    axis_count: *const usize,
    axis_min: *const f64,
    axis_max: *const f64,
    list_values: *const f64,
    n_list_values: usize,
    n_pairs: usize,
    pairs: *const i32,
    options: *const sg_emlog_options,
    out: *mut *mut sg_emlog_result,
) -> sg_status {
    super::super::create(plan, "plan", out, |plan| {
        let plan = &plan.0;
        plan.context().gpu_for("sg_emlog_search_device")?;
        let (axes, opts) = search_request(
            plan.p(),
            (axis_kind, axis_count),
            [axis_min, axis_max],
            (list_values, n_list_values),
            (n_pairs, pairs),
            options,
        )?;
        plan.search_device(&axes, &opts).map(sg_emlog_result)
    })
}

/// The body of the marginal calls: histogram `h` into the device array `counts` (room for
/// `len`).
fn histogram_device(
    result: *const sg_emlog_result,
    h: Histogram,
    counts: u64,
    len: usize,
) -> sg_status {
    guard(|| {
        let r = &arg_ref(result, "result")?.0;
        let gpu = r.origin.ctx.gpu_for(match h {
            Histogram::Marginal(_) => "sg_emlog_result_marginal_device",
            Histogram::Pair(_) => "sg_emlog_result_pair_device",
        })?;
        let src = bins(r, h, len)?;
        let mut dst = device_array::<u64>(gpu, counts, src.len(), "counts")?;
        r.histogram_device(gpu, h, &mut dst)
    })
}

/// `sg_emlog_result_marginal` into device memory: `counts` is a `CUdeviceptr` of the
/// context's device with room for `len` (≥ the axis's count of bins) `uint64_t`. Queued on
/// the context's stream (`sg_context_set_stream`): returns without waiting; the counts are
/// there when the stream has run. From a result of `sg_emlog_search_device` the bins are
/// copied device to device; from one of `sg_emlog_search` (on a CUDA context), from the
/// result's host copy. The same counts as `sg_emlog_result_marginal`.
/// `SG_ERR_UNSUPPORTED` for a result of a CPU context.
#[no_mangle]
pub extern "C" fn sg_emlog_result_marginal_device(
    result: *const sg_emlog_result,
    parameter: usize,
    counts: u64,
    len: usize,
) -> sg_status {
    histogram_device(result, Histogram::Marginal(parameter), counts, len)
}

/// `sg_emlog_result_pair` into device memory (`counts` as in
/// `sg_emlog_result_marginal_device`, n_a × n_b bins at i_a + n_a·i_b). Returns without
/// waiting.
#[no_mangle]
pub extern "C" fn sg_emlog_result_pair_device(
    result: *const sg_emlog_result,
    pair: usize,
    counts: u64,
    len: usize,
) -> sg_status {
    histogram_device(result, Histogram::Pair(pair), counts, len)
}

/// `sg_emlog_result_models` into device memory: `indices` (n_models `uint64_t`) and
/// `values` (p `double` per model) are `CUdeviceptr` values of the context's device that
/// must not overlap; `len` the room in models (≥ n_models). Queued on the context's
/// stream: returns without waiting. The models are listed on the host (by the search, as
/// on the host path), so they are copied from host memory; nothing is copied when none
/// were listed. `SG_ERR_UNSUPPORTED` for a result of a CPU context.
#[no_mangle]
pub extern "C" fn sg_emlog_result_models_device(
    result: *const sg_emlog_result,
    indices: u64,
    values: u64,
    len: usize,
) -> sg_status {
    guard(|| {
        let r = &arg_ref(result, "result")?.0;
        let gpu = r.origin.ctx.gpu_for("sg_emlog_result_models_device")?;
        let (k, kp) = (listed_models(r, len)?, r.model_values.len());
        if k == 0 {
            return Ok(());
        }
        if overlap::<u64>(indices, k, values, kp) {
            return Err(crate::invalid!("`indices` and `values` overlap"));
        }
        let mut i = device_array::<u64>(gpu, indices, k, "indices")?;
        let mut v = device_array::<f64>(gpu, values, kp, "values")?;
        r.models_device(gpu, &mut i, &mut v)
    })
}
