//! Nonlinear stacks of a batch's rows on the device (`xc_pws_*`, `xc_robust`) and the
//! substacks' group means (`xc_group_means`), as src/xcorr/stack.rs computes them: sums in
//! double, rows in order.

use super::kit::{blocks, grid_dim, Kit};
use crate::backend::cuda::array::{complex_mut, part, part_mut};
use crate::backend::cuda::buffers::download;
use crate::backend::cuda::fft::{self, Direction, Shape};
use crate::backend::cuda::launch::for_elems;
use crate::backend::cuda::workspace::Work;
use crate::error::{Error, Result};
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::groups::WindowGroups;
use crate::xcorr::options::StackMethod;
use crate::xcorr::stack::pws_length;
use std::ops::Range;

/// A batch's per-window correlations on the device: pair p's rows are start[p] ..
/// start[p + 1] of `rows` (n_lags floats each); `start_host` the same offsets on the host.
pub(super) struct RowsOnDevice<'k> {
    pub(super) rows: Work<'k, f32>,
    pub(super) start: Work<'k, i32>,
    pub(super) start_host: Vec<i32>,
    pub(super) n_rows: usize,
    pub(super) n_pairs: usize,
}

/// `len` floats of a batch's rows on the device, copied to the host (waits for them).
pub(super) fn to_host(
    kit: &Kit,
    rows: &Work<'_, f32>,
    len: usize,
    what: &'static str,
) -> Result<Vec<f32>> {
    let mut host = vec![0f32; len];
    download(&kit.stream, rows, &mut host, what)?;
    Ok(host)
}

/// The batch's stacks (n_pairs × n_lags) on the device.
pub(super) fn stack_on<'k>(
    kit: &'k Kit,
    call: &CorrelateCall,
    method: StackMethod,
    r: &RowsOnDevice,
) -> Result<Work<'k, f32>> {
    let m = call.plan.geometry().n_lags();
    let mut out = kit.take::<f32>(r.n_pairs * m, "allocating stacks")?;
    match method {
        StackMethod::PhaseWeighted => pws(kit, call, r, &mut out)?,
        StackMethod::Robust => robust(kit, call, r, &mut out)?,
        StackMethod::Linear => {
            return Err(Error::Internal(
                "a linear stack on the nonlinear path".into(),
            ))
        }
    }
    Ok(out)
}

fn pws(kit: &Kit, call: &CorrelateCall, r: &RowsOnDevice, out: &mut Work<'_, f32>) -> Result<()> {
    let m = call.plan.geometry().n_lags();
    let n = pws_length(m);
    let values = r.n_rows * n;
    let mut z = kit.take::<f64>(2 * values.max(1), "allocating analytic signals")?;
    if r.n_rows > 0 {
        let rows = part(&r.rows, 0, r.n_rows * m);
        let mut zp = part_mut(&mut z, 0, 2 * values);
        let mut l = kit.launch("xc_pws_pad", for_elems(values))?;
        l.input(&rows)
            .scalar(r.n_rows as i64)
            .scalar(m as i32)
            .scalar(n as i32)
            .output(&mut zp);
        // SAFETY: xc_pws_pad(const float* rows, i64 n_rows, int m, int n, double* z): threads
        // i < n_rows·n (the others return) read rows[r·m + t] (t < m) inside rows'
        // n_rows·m part and write z[2i], z[2i + 1] inside z's 2·n_rows·n part.
        unsafe { l.run() }?;
        let plan = kit.fft_many(
            &[n],
            (n, n),
            fft::kind::<f64>(Shape::C2C),
            r.n_rows,
            "the analytic signals",
        )?;
        plan.exec_c2c_in_place::<f64>(&mut complex_mut(&mut zp), Direction::Forward)?;
        let mut l = kit.launch("xc_pws_analytic", for_elems(values))?;
        l.output(&mut zp).scalar(r.n_rows as i64).scalar(n as i32);
        // SAFETY: xc_pws_analytic(double* z, i64 n_rows, int n): threads i < n_rows·n touch
        // z[2i], z[2i + 1], inside z's 2·n_rows·n part.
        unsafe { l.run() }?;
        plan.exec_c2c_in_place::<f64>(&mut complex_mut(&mut zp), Direction::Inverse)?;
        // the plan is dropped at the end of this block
        kit.release_one_off("the analytic signals")?;
    }
    let grid = (grid_dim(r.n_pairs, "pairs")?, m.div_ceil(128) as u32);
    let mut l = kit.launch("xc_pws_stack", blocks(grid, (128, 1)))?;
    let rows = part(&r.rows, 0, r.n_rows * m);
    let zp = part(&z, 0, 2 * values);
    let mut o = part_mut(out, 0, r.n_pairs * m);
    l.input(&rows)
        .input(&zp)
        .input(&r.start)
        .scalar(m as i32)
        .scalar(n as i32)
        .scalar(call.plan.options().pws_power)
        .output(&mut o);
    // SAFETY: xc_pws_stack(const float* rows, const double* z, const int* start, int m,
    // int n, double power, float* out): block p < n_pairs reads start[p], start[p + 1]
    // (n_pairs + 1 values, non-decreasing, at most n_rows) and, for t < m, rows[r·m + t]
    // and z at 2·(r·n + t) for rows start[p] ≤ r < start[p + 1], inside rows' n_rows·m and
    // z's 2·n_rows·n parts; it writes out[p·m + t], inside out's n_pairs·m part.
    unsafe { l.run() }
}

fn robust(
    kit: &Kit,
    call: &CorrelateCall,
    r: &RowsOnDevice,
    out: &mut Work<'_, f32>,
) -> Result<()> {
    let m = call.plan.geometry().n_lags();
    // Scratch per pair: s and next (m each), ‖d_r‖ and w (a value per row each).
    let start = &r.start_host;
    let mut at = Vec::with_capacity(r.n_pairs);
    let mut total = 0usize;
    for p in 0..r.n_pairs {
        at.push(total as i64);
        total += 2 * m + 2 * (start[p + 1] - start[p]) as usize;
    }
    let at = kit.upload(&at, "uploading scratch offsets")?;
    let mut scratch = kit.take::<f64>(total.max(1), "allocating robust-stack scratch")?;
    let rows = part(&r.rows, 0, r.n_rows * m);
    let mut sc = part_mut(&mut scratch, 0, total.max(1));
    let mut o = part_mut(out, 0, r.n_pairs * m);
    let cfg = blocks((grid_dim(r.n_pairs, "pairs")?, 1), (256, 1));
    let mut l = kit.launch("xc_robust", cfg)?;
    l.input(&rows)
        .input(&r.start)
        .scalar(m as i32)
        .scalar(call.plan.options().robust_epsilon)
        .output(&mut sc)
        .input(&at)
        .output(&mut o);
    // SAFETY: xc_robust(const float* rows, const int* start, int m, double epsilon,
    // double* scratch, const i64* scratch_at, float* out): block p < n_pairs reads
    // start[p], start[p + 1] (R rows, within n_rows) and rows of the pair (R·m floats
    // from start[p]·m, inside rows' n_rows·m part); it uses scratch from scratch_at[p],
    // 2·m + 2·R doubles, inside the total allocated (the offsets are those running sums);
    // it writes out[p·m + t] for t < m, inside out's n_pairs·m part. blockDim 256 is a
    // multiple of 32, as its warp and block sums need.
    unsafe { l.run() }
}

/// The batch's substacks (pairs `range` × groups × n_lags) on the device, the mean of each
/// group's rows: pair q of the batch, group g at row q·n_groups + g.
pub(super) fn group_means_on<'k>(
    kit: &'k Kit,
    call: &CorrelateCall,
    groups: &WindowGroups,
    r: &RowsOnDevice,
    labels: &[i32],
    range: Range<usize>,
) -> Result<Work<'k, f32>> {
    let m = call.plan.geometry().n_lags();
    let ng = groups.n_groups;
    let n_pairs = call.block.n_pairs();
    let mut counts = Vec::with_capacity(range.len() * ng);
    for k in range.clone() {
        counts.extend((0..ng).map(|g| call.group_counts[g * n_pairs + k]));
    }
    let what = "uploading substack counts";
    let counts = kit.upload(&counts, what)?;
    let label = kit.upload(labels, what)?;
    let len = r.n_pairs * ng * m;
    let mut sums = kit.take::<f64>(len.max(1), "allocating substacks")?;
    let mut out = kit.take::<f32>(len.max(1), "allocating substacks")?;
    let rows = part(&r.rows, 0, r.n_rows * m);
    let (mut s, mut o) = (part_mut(&mut sums, 0, len), part_mut(&mut out, 0, len));
    let grid = (grid_dim(r.n_pairs, "pairs")?, m.div_ceil(128) as u32);
    let mut l = kit.launch("xc_group_means", blocks(grid, (128, 1)))?;
    l.input(&rows)
        .input(&r.start)
        .input(&label)
        .scalar(m as i32)
        .scalar(ng as i32)
        .input(&counts)
        .output(&mut s)
        .output(&mut o);
    // SAFETY: xc_group_means(const float* rows, const int* start, const int* label, int m,
    // int n_groups, const unsigned int* counts, double* sums, float* out): block p <
    // n_pairs reads start[p], start[p + 1] (rows within n_rows), label[r] and rows[r·m + t]
    // for those rows (labels: n_rows values), counts[p·n_groups + g] (n_pairs·n_groups
    // values); it touches sums and out at (p·n_groups + g)·m + t for g < n_groups, t < m,
    // inside their n_pairs·n_groups·m parts.
    unsafe { l.run() }?;
    Ok(out)
}
