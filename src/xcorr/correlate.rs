//! The correlate stage of a plan: the stack of every pair of a block over all windows of
//! the days given, and optionally per group of windows (substacks), checked and dispatched
//! to a backend; the caller's arrays are written only on success.

use super::calls::CorrelateCall;
use super::groups::{stack_counts, WindowGroups};
use super::pairs::Block;
use super::{cpu, cuda, Spectra, XcorrPlan};
use crate::error::{try_zeros, Error, Result};
use rayon::prelude::*;

/// Where stacks go: row r's lags at `out[r·pair_stride..]` (`out` in host memory, or in
/// device memory for the device calls), its window count at `counts[r]` (host memory).
pub struct Stacks<'a, O> {
    pub out: O,
    pub pair_stride: usize,
    pub counts: Option<&'a mut [u32]>,
}

/// Stacks into host memory.
pub type StackOut<'a> = Stacks<'a, &'a mut [f32]>;

/// An output array of floats, in host or device memory.
pub trait Floats {
    fn floats(&self) -> usize;
}

impl Floats for &mut [f32] {
    fn floats(&self) -> usize {
        self.len()
    }
}

impl<O: Floats> Stacks<'_, O> {
    /// Refuses an output too small for `rows` rows of `n_lags` lags.
    pub(super) fn check(&self, rows: usize, n_lags: usize, what: &str) -> Result<()> {
        let counts = self.counts.as_ref().map(|c| c.len());
        check_rows(
            (self.out.floats(), counts),
            self.pair_stride,
            rows,
            n_lags,
            what,
        )
    }
}

impl StackOut<'_> {
    /// Copies dense rows of n_lags, if not already in place, and their counts into the
    /// caller's arrays.
    fn fill(self, plan: &XcorrPlan, dense: Option<&[f32]>, counts: &[u32], n_lags: usize) {
        let (out, stride) = (self.out, self.pair_stride);
        if let Some(dense) = dense {
            plan.context().cpu.install(|| {
                out.par_chunks_mut(stride)
                    .zip(dense.par_chunks(n_lags))
                    .for_each(|(o, d)| o[..n_lags].copy_from_slice(d))
            });
        }
        if let Some(c) = self.counts {
            c[..counts.len()].copy_from_slice(counts);
        }
    }
}

/// Refuses an output of `out` floats (and `counts` counts, if any) too small for `rows`
/// rows of `n_lags` lags, `stride` apart.
fn check_rows(
    (out, counts): (usize, Option<usize>),
    stride: usize,
    rows: usize,
    n_lags: usize,
    what: &str,
) -> Result<()> {
    if stride < n_lags {
        return Err(crate::invalid!(
            "{what}: pair_stride {stride} is smaller than a correlation ({n_lags} lags)"
        ));
    }
    let need = (rows - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(n_lags))
        .ok_or_else(|| crate::invalid!("{what}: {rows} rows with stride {stride} overflow"))?;
    if out < need {
        return Err(crate::invalid!(
            "{what}: the output holds {out} floats; {rows} rows with stride {stride} need {need}"
        ));
    }
    if counts.is_some_and(|c| c < rows) {
        return Err(crate::invalid!(
            "{what}: counts hold fewer than the {rows} rows"
        ));
    }
    Ok(())
}

impl XcorrPlan {
    /// Correlates and stacks the pairs of `block` over all windows of all `days`.
    /// Pair p's 2·maxlag + 1 lags go to `out[p·pair_stride..]`; `counts[p]` (if given)
    /// receives the number of windows stacked. Nothing is written on failure.
    pub fn correlate(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
        out: &mut [f32],
        pair_stride: usize,
        counts: Option<&mut [u32]>,
    ) -> Result<usize> {
        let all = StackOut {
            out,
            pair_stride,
            counts,
        };
        self.correlate_with(days, block, all, None)
    }

    /// `correlate`, and in the same pass one linear stack per group of windows and pair
    /// (NoisePy's substacks): group g's stack of pair p is row g·n_pairs + p of `sub`, its
    /// window count `sub.counts[g·n_pairs + p]` (0: the row is zeros).
    pub fn correlate_substacks(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
        all: StackOut,
        groups: &WindowGroups,
        sub: StackOut,
    ) -> Result<usize> {
        self.correlate_with(days, block, all, Some((groups, sub)))
    }

    fn correlate_with(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
        all: StackOut,
        sub: Option<(&WindowGroups, StackOut)>,
    ) -> Result<usize> {
        let groups = sub.as_ref().map(|(g, _)| *g);
        let Some(block) = self.checked_block(days, block, &all, groups)? else {
            return Ok(0);
        };
        let (n_pairs, n_lags) = (block.n_pairs(), self.geometry.n_lags());
        let n_sub = sub.as_ref().map_or(0, |(g, _)| g.n_groups * n_pairs);
        if let Some((_, s)) = &sub {
            crate::alloc::host_bytes(&[n_sub, n_lags], 4, "the substacks")?;
            s.check(n_sub, n_lags, "substacks")?;
        }
        let (pair_counts, sub_counts) = stack_counts(&self.ctx.cpu, days, &block, groups);
        let mut reporter = self.ctx.reporter();
        let counts = [&pair_counts[..], &sub_counts];
        let (all, mut sub) = (all, sub.map(|(_, s)| s));
        let direct = match self.ctx.cuda() {
            Some(gpu) if cuda::holds_result(gpu, 4 * (n_pairs + n_sub) * n_lags) => {
                let call =
                    CorrelateCall::new(self, days, &block, groups, counts, [&mut [], &mut []]);
                let mut none = [0f32; 0];
                let sub_rows = match &mut sub {
                    Some(s) => (&mut *s.out, s.pair_stride),
                    None => (&mut none[..], n_lags),
                };
                let outs = [(&mut *all.out, all.pair_stride), sub_rows];
                // A device allocator with less room than the device (or a full device) leaves
                // the dense path, which needs only a chunk's rows there.
                match cuda::correlate_to_host(gpu, call, &mut reporter, outs) {
                    Err(Error::DeviceOutOfMemory(_)) => false,
                    done => done.map(|()| true)?,
                }
            }
            _ => false,
        };
        if direct {
            all.fill(self, None, &pair_counts, n_lags);
            if let Some(s) = sub {
                s.fill(self, None, &sub_counts, n_lags);
            }
        } else {
            // Computed densely, then copied: the caller's arrays are written only on success.
            let mut dense = try_zeros(n_pairs * n_lags, "the correlations")?;
            let mut dense_sub = try_zeros(n_sub * n_lags, "the substacks")?;
            let dense_out = [&mut dense[..], &mut dense_sub];
            let call = CorrelateCall::new(self, days, &block, groups, counts, dense_out);
            match self.ctx.cuda() {
                Some(gpu) => cuda::correlate(gpu, call, &mut reporter)?,
                None => cpu::correlate(&self.ctx.cpu, call, &mut reporter)?,
            }
            all.fill(self, Some(&dense), &pair_counts, n_lags);
            if let Some(s) = sub {
                s.fill(self, Some(&dense_sub), &sub_counts, n_lags);
            }
        }
        reporter.finish();
        Ok(n_pairs)
    }

    /// The block of a correlate call after the checks of every path (the days, the
    /// block, the groups' days, the stacks' rows); `None` when it holds no pairs.
    pub(super) fn checked_block<O: Floats>(
        &self,
        days: &[&Spectra],
        (i0, ni, j0, nj): (usize, usize, usize, usize),
        all: &Stacks<O>,
        groups: Option<&WindowGroups>,
    ) -> Result<Option<Block>> {
        let n_stations = self.check_days(days)?;
        let block = Block::new(i0, ni, j0, nj, n_stations, self.options.autocorrelation)?;
        if let Some(g) = groups {
            g.check_days(days)?;
        }
        if block.n_pairs() == 0 {
            return Ok(None);
        }
        all.check(block.n_pairs(), self.geometry.n_lags(), "stacks")?;
        Ok(Some(block))
    }
}
