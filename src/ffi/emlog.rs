//! `sg_emlog_plan`, `sg_emlog_result`: EM-logging inversion by exhaustive search over a
//! sensitivity matrix (quasi-solution regions, Glinskikh & Gorbatenko 2015).

pub mod device;

use super::args::{arg_ref, options_or, out_ptr};
use super::arrays::{out_slice, slice_or_empty};
use super::context::{create_on, sg_context};
use super::guard;
use super::status::sg_status;
use crate::emlog::criterion::{Criterion, Mode, Norm, SearchOptions};
use crate::emlog::device_calls::Histogram;
use crate::emlog::grid::Axis;
use crate::emlog::matrix::SensitivitySpec;
use crate::emlog::result::SearchResult;
use crate::emlog::EmlogPlan;
use crate::error::{Error, Result};

/// Axis of `count` values evenly spaced from min to max.
pub const SG_EMLOG_AXIS_LINEAR: i32 = 0;
/// Axis of `count` values evenly spaced in log10 from min to max (both > 0).
pub const SG_EMLOG_AXIS_LOG: i32 = 1;
/// Axis given as `count` strictly increasing values, taken in turn from `list_values`.
pub const SG_EMLOG_AXIS_LIST: i32 = 2;
/// Equivalent when F ≤ 1: within the measurement errors (the seed's criterion; default).
pub const SG_EMLOG_FIT_WITHIN_ERRORS: i32 = 0;
/// Equivalent when F ≤ `level`.
pub const SG_EMLOG_MAX_MISFIT: i32 = 1;
/// Equivalent when F² ≤ F²_min + `level` (least squares only); `level` = χ²_p(α)/n gives
/// the joint confidence region of probability α when δ are standard deviations.
pub const SG_EMLOG_DELTA_CHI_SQUARE: i32 = 2;
/// Fast mode: the centred quadratic form, O(1) per model (least squares; default).
pub const SG_EMLOG_FAST: i32 = 0;
/// Direct mode: the full residual over every measurement for every model.
pub const SG_EMLOG_DIRECT: i32 = 1;
/// F = √(Σ r²/n), r_i = (f_exp − f_syn)_i / (f_exp_i δ_i) (default).
pub const SG_EMLOG_NORM_L2: i32 = 0;
/// F = Σ|r_i|/n (direct mode).
pub const SG_EMLOG_NORM_L1: i32 = 1;
/// F = max |r_i| (direct mode).
pub const SG_EMLOG_NORM_MAX: i32 = 2;

/// Options of `sg_emlog_search`. Start from `sg_emlog_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_emlog_options {
    /// `SG_EMLOG_FIT_WITHIN_ERRORS` (default), `SG_EMLOG_MAX_MISFIT` or
    /// `SG_EMLOG_DELTA_CHI_SQUARE`.
    pub criterion: i32,
    /// F_max or Δ of the criterion (default 1, unused by F ≤ 1).
    pub level: f64,
    /// `SG_EMLOG_FAST` (default) or `SG_EMLOG_DIRECT`.
    pub mode: i32,
    /// `SG_EMLOG_NORM_L2` (default), `_L1` or `_MAX` (the last two: direct mode).
    pub norm: i32,
    /// List the first this many equivalent models, in index order (default 0).
    pub max_models: usize,
}

/// A sensitivity-matrix plan. Opaque.
pub struct sg_emlog_plan(EmlogPlan);

/// The outcome of a search. Opaque.
pub struct sg_emlog_result(SearchResult);

/// The default options. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_emlog_options_default() -> sg_emlog_options {
    sg_emlog_options {
        criterion: SG_EMLOG_FIT_WITHIN_ERRORS,
        level: 1.0,
        mode: SG_EMLOG_FAST,
        norm: SG_EMLOG_NORM_L2,
        max_models: 0,
    }
}

fn criterion(kind: i32, level: f64) -> Result<Criterion> {
    match kind {
        SG_EMLOG_FIT_WITHIN_ERRORS => Ok(Criterion::FitWithinErrors),
        SG_EMLOG_MAX_MISFIT => Ok(Criterion::MaxMisfit(level)),
        SG_EMLOG_DELTA_CHI_SQUARE => Ok(Criterion::DeltaChiSquare(level)),
        v => Err(crate::invalid!("criterion is {v}; expected SG_EMLOG_FIT_WITHIN_ERRORS (0), SG_EMLOG_MAX_MISFIT (1) or SG_EMLOG_DELTA_CHI_SQUARE (2)")),
    }
}

/// The searched column indices, checked ≥ 0.
fn searched_columns(searched: *const i32, n_searched: usize) -> Result<Vec<usize>> {
    slice_or_empty(searched, n_searched, "searched")?
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            usize::try_from(c)
                .map_err(|_| crate::invalid!("searched[{k}] is {c}; expected a column index ≥ 0"))
        })
        .collect()
}

/// Creates a plan for the linearised problem f_syn = f₀ + A(σ − σ₀): A is n × m (n
/// measurements, m conductivities), element (i, j) at `a[i*row_stride + j*col_stride]`
/// (row-major: m, 1; column-major: 1, n); `sigma0` (m) the reference model, `f0` (n) its
/// synthetic data, `f_exp` (n) the measured data, `delta` (n) their relative errors, and
/// `searched` (n_searched, 1 to 16 distinct column indices) the searched conductivities,
/// in grid-axis order (axis 0 varies fastest); the other columns stay at σ₀. Non-finite
/// values give `SG_ERR_NON_FINITE`; f_exp = 0, δ ≤ 0, an all-zero or linearly dependent
/// searched column, bad strides or indices give `SG_ERR_INVALID_ARGUMENT`. A searched
/// column is dependent when its part outside the span of the searched columns before it
/// (weighted by 1/(f_exp·δ)) is at most 1e-12 of its own norm: the test does not depend on
/// the units of the conductivities (scaling a column does not change it). On success
/// `*out` receives a plan the caller owns (`sg_emlog_plan_destroy`). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_emlog_plan_create(
    ctx: *const sg_context,
    n: usize,
    m: usize,
    a: *const f64,
    row_stride: usize,
    col_stride: usize,
    sigma0: *const f64,
    f0: *const f64,
    f_exp: *const f64,
    delta: *const f64,
    n_searched: usize,
    searched: *const i32,
    out: *mut *mut sg_emlog_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        let span = n
            .checked_sub(1)
            .and_then(|r| r.checked_mul(row_stride))
            .and_then(|r| m.checked_sub(1)?.checked_mul(col_stride)?.checked_add(r))
            .and_then(|s| s.checked_add(1))
            .filter(|s| s.checked_mul(8).is_some())
            .ok_or_else(|| crate::invalid!("A is {n} × {m} with strides ({row_stride}, {col_stride}); expected n, m ≥ 1 and strides that fit the address space"))?;
        let cols = searched_columns(searched, n_searched)?;
        let spec = SensitivitySpec {
            n,
            m,
            a: slice_or_empty(a, span, "a")?,
            row_stride,
            col_stride,
            sigma0: slice_or_empty(sigma0, m, "sigma0")?,
            f0: slice_or_empty(f0, n, "f0")?,
            f_exp: slice_or_empty(f_exp, n, "f_exp")?,
            delta: slice_or_empty(delta, n, "delta")?,
            searched: &cols,
        };
        EmlogPlan::new(ctx.clone(), &spec).map(sg_emlog_plan)
    })
}

/// Releases a plan. NULL is a no-op.
#[no_mangle]
pub extern "C" fn sg_emlog_plan_destroy(plan: *mut sg_emlog_plan) {
    super::destroy(plan);
}

/// Device bytes `plan` holds, into `*bytes` (0 on a CPU context): on a CUDA context the
/// weighted matrix Ã and data (n·(p + 1) doubles) and the searches' reductions, made from
/// the context's allocator when the plan is created, and the search tables (the grid's
/// values, the fast mode's tables), which follow a search's grid: made by the first search
/// that needs more than the plan holds and kept, so that later searches of grids no larger
/// allocate nothing for them. A search's histograms are its result's: made by the search
/// and given back with the result (`sg_emlog_result_destroy`).
/// `plan` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_emlog_plan_workspace_bytes(
    plan: *const sg_emlog_plan,
    bytes: *mut usize,
) -> sg_status {
    super::workspace_bytes(plan, "plan", bytes, |p| p.0.device_bytes())
}

/// The closed-form answer (least squares, p = the plan's searched parameters):
/// `sigma_star` (p) the least-squares model, `*f_min` its misfit, `*empty` 1 when the
/// criterion (`criterion`, `level` as in `sg_emlog_options`) cannot be met, `lower` and
/// `upper` (p) the ellipsoid's extent per parameter (NaN when empty), `singular_values`
/// (p, decreasing) and `right_vectors` (p × p, vector c at `[k*p + c]`) the SVD of the
/// weighted matrix. Every pointer must be non-NULL; written only on success.
#[no_mangle]
pub extern "C" fn sg_emlog_analytic(
    plan: *const sg_emlog_plan,
    criterion_kind: i32,
    level: f64,
    sigma_star: *mut f64,
    f_min: *mut f64,
    empty: *mut i32,
    lower: *mut f64,
    upper: *mut f64,
    singular_values: *mut f64,
    right_vectors: *mut f64,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let c = criterion(criterion_kind, level)?;
        crate::emlog::criterion::SearchOptions {
            criterion: c,
            ..Default::default()
        }
        .validate(plan.p())?;
        let p = plan.p();
        let outs = [
            out_slice(sigma_star, p, "sigma_star")?,
            out_slice(lower, p, "lower")?,
            out_slice(upper, p, "upper")?,
            out_slice(singular_values, p, "singular_values")?,
            out_slice(right_vectors, p * p, "right_vectors")?,
        ];
        let (f_min, empty) = (out_ptr(f_min, "f_min")?, out_ptr(empty, "empty")?);
        let r = plan.analytic(c);
        for (dst, src) in outs.into_iter().zip([
            &r.sigma_star,
            &r.lower,
            &r.upper,
            &r.singular_values,
            &r.right_vectors,
        ]) {
            dst.copy_from_slice(src);
        }
        f_min.set(r.f_min);
        empty.set(r.empty as i32);
        Ok(())
    })
}

fn search_options(
    options: *const sg_emlog_options,
    pairs: Vec<(usize, usize)>,
) -> Result<SearchOptions> {
    let o = options_or(options, sg_emlog_options_default())?;
    Ok(SearchOptions {
        criterion: criterion(o.criterion, o.level)?,
        mode: match o.mode {
            SG_EMLOG_FAST => Mode::Fast,
            SG_EMLOG_DIRECT => Mode::Direct,
            v => {
                return Err(crate::invalid!(
                    "options.mode is {v}; expected SG_EMLOG_FAST (0) or SG_EMLOG_DIRECT (1)"
                ))
            }
        },
        norm: match o.norm {
            SG_EMLOG_NORM_L2 => Norm::L2,
            SG_EMLOG_NORM_L1 => Norm::L1,
            SG_EMLOG_NORM_MAX => Norm::Max,
            v => {
                return Err(crate::invalid!(
                    "options.norm is {v}; expected SG_EMLOG_NORM_L2 (0), _L1 (1) or _MAX (2)"
                ))
            }
        },
        pairs,
        max_models: o.max_models,
    })
}

/// Searches a grid: axis k (k < p) is `axis_kind[k]` (`SG_EMLOG_AXIS_*`) with
/// `axis_count[k]` values from `axis_min[k]` to `axis_max[k]`, or, for a list axis,
/// the next `axis_count[k]` values of `list_values` (NULL when no axis is a list); axis 0
/// varies fastest. An axis of one value (count 1, linear or logarithmic) is `axis_min[k]`,
/// its first grid value; `axis_max[k]` is then only checked (finite; > 0 on a log axis).
/// A grid of more than 2^63 models is refused (`SG_ERR_INVALID_ARGUMENT`) from the counts
/// alone, before any value is built. `pairs` (2 × n_pairs parameter indices, NULL when 0)
/// asks for 2D marginals. `options` may be NULL for the defaults. On success `*out`
/// receives a result the caller owns (`sg_emlog_result_destroy`). Several threads may
/// search one plan.
#[no_mangle]
pub extern "C" fn sg_emlog_search(
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
    super::create(plan, "plan", out, |plan| {
        let plan = &plan.0;
        let (axes, opts) = search_request(
            plan.p(),
            (axis_kind, axis_count),
            [axis_min, axis_max],
            (list_values, n_list_values),
            (n_pairs, pairs),
            options,
        )?;
        plan.search(&axes, &opts).map(sg_emlog_result)
    })
}

/// The grid axes, pairs and options of a search (host or device) from its C arguments, for
/// a plan of `p` parameters: the axes' kinds and counts, their bounds (min, max), the list
/// values and their count, the pairs' count and indices, and the options (NULL: defaults).
pub(super) fn search_request(
    p: usize,
    kinds: (*const i32, *const usize),
    bounds: [*const f64; 2],
    list: (*const f64, usize),
    (n_pairs, pairs): (usize, *const i32),
    options: *const sg_emlog_options,
) -> Result<(Vec<Axis>, SearchOptions)> {
    let axes = grid_axes(p, kinds, bounds, list)?;
    Ok((axes, search_options(options, pair_list(n_pairs, pairs)?)?))
}

/// The p grid axes of a search's arguments.
fn grid_axes(
    p: usize,
    (axis_kind, axis_count): (*const i32, *const usize),
    [axis_min, axis_max]: [*const f64; 2],
    (list_values, n_list_values): (*const f64, usize),
) -> Result<Vec<Axis>> {
    let (kind, count) = (
        slice_or_empty(axis_kind, p, "axis_kind")?,
        slice_or_empty(axis_count, p, "axis_count")?,
    );
    let (lo, hi) = (
        slice_or_empty(axis_min, p, "axis_min")?,
        slice_or_empty(axis_max, p, "axis_max")?,
    );
    let mut list = slice_or_empty(list_values, n_list_values, "list_values")?;
    let mut axes = Vec::with_capacity(p);
    for k in 0..p {
        axes.push(match kind[k] {
            SG_EMLOG_AXIS_LINEAR => Axis::Linear {
                min: lo[k],
                max: hi[k],
                count: count[k],
            },
            SG_EMLOG_AXIS_LOG => Axis::Log {
                min: lo[k],
                max: hi[k],
                count: count[k],
            },
            SG_EMLOG_AXIS_LIST => {
                if count[k] > list.len() {
                    return Err(crate::invalid!(
                        "axis {k} takes {} list values but only {} remain in list_values",
                        count[k],
                        list.len()
                    ));
                }
                let (mine, rest) = list.split_at(count[k]);
                list = rest;
                Axis::List(mine.to_vec())
            }
            v => {
                return Err(crate::invalid!(
                "axis_kind[{k}] is {v}; expected SG_EMLOG_AXIS_LINEAR (0), _LOG (1) or _LIST (2)"
            ))
            }
        });
    }
    Ok(axes)
}

/// The requested pairs (2 × n_pairs indices), checked ≥ 0.
fn pair_list(n_pairs: usize, pairs: *const i32) -> Result<Vec<(usize, usize)>> {
    slice_or_empty(pairs, n_pairs.saturating_mul(2), "pairs")?
        .chunks(2)
        .enumerate()
        .map(
            |(q, c)| match (usize::try_from(c[0]), usize::try_from(c[1])) {
                (Ok(a), Ok(b)) => Ok((a, b)),
                _ => Err(crate::invalid!(
                    "pair {q} is ({}, {}); expected parameter indices ≥ 0",
                    c[0],
                    c[1]
                )),
            },
        )
        .collect()
}

/// Releases a result. NULL is a no-op.
#[no_mangle]
pub extern "C" fn sg_emlog_result_destroy(result: *mut sg_emlog_result) {
    super::destroy(result);
}

/// The summary of a search (p = the plan's parameters): `*total` models searched,
/// `*count` equivalent ones, the grid's best model (`*best_index`, `best_model` (p),
/// `*best_misfit` its F, equivalent or not), per parameter the least and greatest value of
/// an equivalent model `value_min`, `value_max` (p; NaN when none), `*n_models` models
/// listed and `*more_models` 1 when there were more equivalent models than listed. Every
/// pointer must be non-NULL.
#[no_mangle]
pub extern "C" fn sg_emlog_result_summary(
    result: *const sg_emlog_result,
    total: *mut u64,
    count: *mut u64,
    best_index: *mut u64,
    best_model: *mut f64,
    best_misfit: *mut f64,
    value_min: *mut f64,
    value_max: *mut f64,
    n_models: *mut usize,
    more_models: *mut i32,
) -> sg_status {
    guard(|| {
        let r = &arg_ref(result, "result")?.0;
        let p = r.best_model.len();
        let ptrs = (
            out_ptr(total, "total")?,
            out_ptr(count, "count")?,
            out_ptr(best_index, "best_index")?,
            out_slice(best_model, p, "best_model")?,
            out_ptr(best_misfit, "best_misfit")?,
            out_slice(value_min, p, "value_min")?,
            out_slice(value_max, p, "value_max")?,
            out_ptr(n_models, "n_models")?,
            out_ptr(more_models, "more_models")?,
        );
        ptrs.0.set(r.total);
        ptrs.1.set(r.count);
        ptrs.2.set(r.best_index);
        ptrs.3.copy_from_slice(&r.best_model);
        ptrs.4.set(r.best_misfit);
        ptrs.5.copy_from_slice(&r.value_min);
        ptrs.6.copy_from_slice(&r.value_max);
        ptrs.7.set(r.models.len());
        ptrs.8.set(r.more_models as i32);
        Ok(())
    })
}

/// The bins of histogram `h` of a search result, checked to fit the caller's `len`.
pub(super) fn bins(r: &SearchResult, h: Histogram, len: usize) -> Result<&[u64]> {
    let (src, _, what) = r.histogram(h)?;
    if len < src.len() {
        return Err(Error::BufferTooSmall(format!(
            "{what} has {} bins; `len` is {len}",
            src.len()
        )));
    }
    Ok(src)
}

/// The body of the marginal calls: the bins of `h` copied to the caller's `counts`, which
/// holds `len`.
fn copy_counts(
    result: *const sg_emlog_result,
    h: Histogram,
    counts: *mut u64,
    len: usize,
) -> sg_status {
    guard(|| {
        let src = bins(&arg_ref(result, "result")?.0, h, len)?;
        out_slice(counts, src.len(), "counts")?.copy_from_slice(src);
        Ok(())
    })
}

/// Equivalent models per value of axis `parameter` (its count of bins, ≤ `len`).
#[no_mangle]
pub extern "C" fn sg_emlog_result_marginal(
    result: *const sg_emlog_result,
    parameter: usize,
    counts: *mut u64,
    len: usize,
) -> sg_status {
    copy_counts(result, Histogram::Marginal(parameter), counts, len)
}

/// Equivalent models per (i_a, i_b) of requested pair `pair` = (a, b), at i_a + n_a·i_b
/// (n_a × n_b bins, ≤ `len`).
#[no_mangle]
pub extern "C" fn sg_emlog_result_pair(
    result: *const sg_emlog_result,
    pair: usize,
    counts: *mut u64,
    len: usize,
) -> sg_status {
    copy_counts(result, Histogram::Pair(pair), counts, len)
}

/// The count of models `r` listed, checked to fit the caller's room of `len` models.
pub(super) fn listed_models(r: &SearchResult, len: usize) -> Result<usize> {
    let k = r.models.len();
    if len < k {
        return Err(Error::BufferTooSmall(format!(
            "{k} models were listed; `len` is {len}"
        )));
    }
    Ok(k)
}

/// The listed equivalent models (the first in index order): `indices` (n_models) and
/// `values` (p per model, model after model); `len` the room in models (≥ n_models).
#[no_mangle]
pub extern "C" fn sg_emlog_result_models(
    result: *const sg_emlog_result,
    indices: *mut u64,
    values: *mut f64,
    len: usize,
) -> sg_status {
    guard(|| {
        let r = &arg_ref(result, "result")?.0;
        let k = listed_models(r, len)?;
        if k == 0 {
            return Ok(());
        }
        let (i, v) = (
            out_slice(indices, k, "indices")?,
            out_slice(values, r.model_values.len(), "values")?,
        );
        i.copy_from_slice(&r.models);
        v.copy_from_slice(&r.model_values);
        Ok(())
    })
}
