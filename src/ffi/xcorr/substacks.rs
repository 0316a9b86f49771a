//! Substacks (NoisePy's `substack`, `substack_len`): the stacks of groups of windows —
//! every hour, every day, or any grouping the caller gives as a label per window —
//! besides the stack of all windows, in one pass over the spectra.

use super::super::args::{arg_ref, out_ptr};
use super::super::arrays::{optional_mut, overlap, slice, slice_mut};
use super::super::guard;
use super::super::status::sg_status;
use super::{days_and_pairs, rows_span, sg_xcorr_plan, sg_xcorr_spectra};
use crate::error::Result;
use crate::xcorr::groups::WindowGroups;
use crate::xcorr::{Spectra, StackOut, XcorrPlan};

/// The group label of a window that belongs to no substack (it counts in the stack of
/// all windows only).
pub const SG_XCORR_NO_GROUP: i32 = -1;

const _: () = assert!(SG_XCORR_NO_GROUP == crate::xcorr::groups::NO_GROUP);

/// Substack labels by time: window w of day d (`day_windows[d]` windows, from
/// `sg_xcorr_plan_sizes`) starts at `day_start[d] + w·step` seconds, and its label is
/// ⌊(start − day_start[0]) / substack_len⌋ — with days that start at midnight,
/// `substack_len` 3600 gives clock hours, 86400 days. `labels` receives the labels of day
/// 0's windows, then day 1's, … (Σ day_windows values); `*n_groups` the number of groups
/// (the largest label + 1). `day_start` values must be finite and ≥ day_start[0].
/// NoisePy's own grouping starts at each pair's first kept window and drops the windows
/// past round(span / substack_len) groups; pass such labels to reproduce it.
#[no_mangle]
pub extern "C" fn sg_xcorr_substack_groups(
    plan: *const sg_xcorr_plan,
    n_days: usize,
    day_windows: *const usize,
    day_start: *const f64,
    substack_len: f64,
    labels: *mut i32,
    n_groups: *mut usize,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let windows = slice(day_windows, n_days, "day_windows")?;
        let starts = slice(day_start, n_days, "day_start")?;
        let total = windows
            .iter()
            .try_fold(0usize, |a, &w| a.checked_add(w))
            .ok_or_else(|| crate::invalid!("day_windows overflow size_t"))?;
        let outs = (
            slice_mut(labels, total, "labels")?,
            out_ptr(n_groups, "n_groups")?,
        );
        let step = plan.options().step;
        let (l, n) = WindowGroups::by_time(starts, windows, step, substack_len)?;
        outs.0.copy_from_slice(&l);
        outs.1.set(n);
        Ok(())
    })
}

/// `sg_xcorr_correlate_f32`, and in the same pass the linear stack of every group of
/// windows (NoisePy's substacks: the mean of the group's windows, bin 0 of the
/// cross-spectrum zeroed as NoisePy's `correlate` does for substacks, except for an
/// autocorrelation without deconvolution). `labels` holds a label per window of day 0,
/// then of day 1, … (`sg_xcorr_substack_groups` makes them by time): a group in
/// 0 … n_groups − 1, or `SG_XCORR_NO_GROUP`. Group g's stack of pair p goes to
/// `substacks[(g * n_pairs + p) * pair_stride]`, its window count to
/// `substack_windows[g * n_pairs + p]` (may be NULL; 0: the row is zeros). The stacks of
/// all windows (`stacks`, `n_windows`) follow the plan's stack method; the substacks are
/// linear whatever it is. Nothing is written on failure.
#[no_mangle]
pub extern "C" fn sg_xcorr_correlate_substacks_f32(
    plan: *const sg_xcorr_plan,
    days: *const *const sg_xcorr_spectra,
    n_days: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    labels: *const i32,
    n_groups: usize,
    stacks: *mut f32,
    pair_stride: usize,
    n_windows: *mut u32,
    substacks: *mut f32,
    substack_windows: *mut u32,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let block = (i0, ni, j0, nj);
        let (spectra, n_pairs) = days_and_pairs(plan, days, n_days, block)?;
        let rows = SubstackRows::new(plan, &spectra, (labels, n_groups), n_pairs, pair_stride)?;
        rows.apart(|na, ns| overlap(stacks, na, substacks, ns))?;
        let all = StackOut {
            out: slice_mut(stacks, rows.na, "stacks")?,
            pair_stride,
            counts: optional_mut(n_windows, n_pairs, "n_windows")?,
        };
        let sub = StackOut {
            out: slice_mut(substacks, rows.ns, "substacks")?,
            pair_stride,
            counts: optional_mut(substack_windows, rows.n_sub, "substack_windows")?,
        };
        plan.correlate_substacks(&spectra, block, all, &rows.groups, sub)?;
        Ok(())
    })
}

/// The rows of a substacks call, host or device.
pub(super) struct SubstackRows {
    /// The window groups of the days, from the caller's labels (one per window of each day).
    pub groups: WindowGroups,
    /// Substack rows: one per group and pair.
    pub n_sub: usize,
    /// The floats the stacks span.
    pub na: usize,
    /// The floats the substacks span.
    pub ns: usize,
}

impl SubstackRows {
    pub fn new(
        plan: &XcorrPlan,
        spectra: &[&Spectra],
        (labels, n_groups): (*const i32, usize),
        n_pairs: usize,
        pair_stride: usize,
    ) -> Result<Self> {
        let windows: Vec<usize> = spectra.iter().map(|s| s.n_windows).collect();
        let labels = slice(labels, windows.iter().sum(), "labels")?;
        let groups = WindowGroups::new(labels, &windows, n_groups)?;
        let n_sub = n_groups
            .checked_mul(n_pairs)
            .ok_or_else(|| crate::invalid!("{n_groups} groups × {n_pairs} pairs overflow"))?;
        Ok(Self {
            groups,
            n_sub,
            na: rows_span(n_pairs, pair_stride, plan)?,
            ns: rows_span(n_sub, pair_stride, plan)?,
        })
    }

    /// Refuses the caller's outputs when `overlap(na, ns)`: its stacks (`na` floats) and
    /// substacks (`ns`) share memory.
    pub fn apart(&self, overlap: impl FnOnce(usize, usize) -> bool) -> Result<()> {
        match overlap(self.na, self.ns) {
            true => Err(crate::invalid!("stacks and substacks overlap")),
            false => Ok(()),
        }
    }
}
