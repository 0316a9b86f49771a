//! What the plan hands either backend: a preprocess call's station-days, and a correlate
//! call's pairs and where their correlations go.

use super::groups::WindowGroups;
use super::pairs::Block;
use super::plan::XcorrPlan;
use super::spectra::Spectra;
use crate::backend::cuda::array::PartMut;
use crate::layout::TraceBatch;

/// One `preprocess` call: `batch.n_traces` station-days of `days` (station s at
/// `days[s·trace_stride..]`) and their validity mask in the same layout (0: a missing
/// sample), each cut into `n_windows` windows.
pub struct PreprocessCall<'a> {
    pub plan: &'a XcorrPlan,
    pub days: &'a [f32],
    pub batch: TraceBatch,
    pub valid: Option<&'a [u8]>,
    pub n_windows: usize,
}

/// Correlations in block order: pair p's lags at `out[p·stride..]`.
pub struct Correlations<'a> {
    out: &'a mut [f32],
    stride: usize,
}

impl<'a> Correlations<'a> {
    pub fn new(out: &'a mut [f32], stride: usize) -> Correlations<'a> {
        Correlations { out, stride }
    }

    /// Pair `p`'s correlation.
    pub fn put(&mut self, p: usize, row: &[f32]) {
        self.out[p * self.stride..][..row.len()].copy_from_slice(row);
    }

    /// The array and its row stride, for copies of many rows at once.
    pub fn rows_mut(&mut self) -> (&mut [f32], usize) {
        (self.out, self.stride)
    }
}

/// A device call's outputs, the caller's device arrays in the host call's layout: the
/// stacks (row p at p·stride) and, with groups, the substacks (row g·n_pairs + p).
pub struct DeviceOut<'a> {
    pub stacks: PartMut<'a, f32>,
    pub substacks: Option<PartMut<'a, f32>>,
    pub stride: usize,
}

/// One `correlate` call: the pairs of `block` over every window of `days`, `counts[p]`
/// windows stacked for pair p (block order), each correlation written to `out`; with
/// `groups`, also the linear stack of each group g, `group_counts[g·n_pairs + p]` windows,
/// to `sub` at g·n_pairs + p. With `device` (a device call on a CUDA context) the rows go
/// there instead, and `out` and `sub` stay empty.
pub struct CorrelateCall<'a> {
    pub plan: &'a XcorrPlan,
    pub days: &'a [&'a Spectra],
    pub block: &'a Block,
    pub counts: &'a [u32],
    pub out: Correlations<'a>,
    pub groups: Option<&'a WindowGroups>,
    pub group_counts: &'a [u32],
    pub sub: Correlations<'a>,
    pub device: Option<DeviceOut<'a>>,
}

impl<'a> CorrelateCall<'a> {
    /// The call of `plan` on `block` of `days`, its stacks' and substacks' window counts
    /// in `counts` and their rows into `dense` (the host call's arrays, or empty ones for a
    /// device call, which sets `device`).
    pub fn new(
        plan: &'a XcorrPlan,
        days: &'a [&'a Spectra],
        block: &'a Block,
        groups: Option<&'a WindowGroups>,
        counts: [&'a [u32]; 2],
        dense: [&'a mut [f32]; 2],
    ) -> Self {
        let n_lags = plan.geometry.n_lags();
        let [out, sub] = dense.map(|d| Correlations::new(d, n_lags));
        CorrelateCall {
            plan,
            days,
            block,
            counts: counts[0],
            out,
            groups,
            group_counts: counts[1],
            sub,
            device: None,
        }
    }

    /// The call with its rows sent to `out` (device memory that may live shorter than the
    /// call's inputs).
    pub fn into_device<'b>(self, out: DeviceOut<'b>) -> CorrelateCall<'b>
    where
        'a: 'b,
    {
        CorrelateCall {
            device: Some(out),
            ..self
        }
    }
}
