//! Ambient-noise cross-correlation, following NoisePy (Jiang & Denolle 2020) so that
//! results compare number for number: station-day preprocessing into window spectra,
//! all-pairs correlation as matrix products, and stacking.
//!
//! Stages:
//! 1. `XcorrPlan::preprocess`: station-days (n_stations × n_samples, optional per-sample
//!    validity) → `Spectra`: for each station and window, the whitened (or plain)
//!    spectrum on the band bins, stored frequency-major `[bin][station][window]`, and
//!    which windows were kept. On a CUDA context they stay on the device.
//! 2. `XcorrPlan::correlate`: one or more days of spectra → one stack per station pair
//!    of a block (see `pairs`). Linear stacks are, per frequency, the Hermitian product
//!    of the window-spectra matrix with itself (rejected windows are zero columns; the
//!    per-pair window count is the product of the masks), then one inverse FFT per pair.
//!    Nonlinear stacks correlate each window, in pair chunks, then stack.

pub mod butterworth;
pub mod calls;
pub mod cpu;
pub mod cuda;
pub mod geometry;
pub mod options;
pub mod pairs;
pub mod plan;
pub mod preprocess;
pub mod spectra;
pub mod stack;

use crate::error::Result;
use crate::layout::TraceBatch;
use calls::{CorrelateCall, Correlations, PreprocessCall};
use pairs::Block;
pub use plan::XcorrPlan;
pub use spectra::{Spectra, SpectraData};
use std::sync::Arc;

impl XcorrPlan {
    /// Preprocesses `batch.n_traces` station-days (`batch.n_samples` samples each, station
    /// s at `days[s·trace_stride..]`). `valid`, if given, has the same layout: 0 marks a
    /// missing sample (set to 0, and every window touching it is rejected).
    pub fn preprocess(
        &self,
        days: &[f32],
        batch: TraceBatch,
        valid: Option<&[u8]>,
    ) -> Result<Spectra> {
        let n_windows = self.geometry.n_windows(batch.n_samples)?;
        crate::alloc::host_bytes(
            &[batch.n_traces, n_windows, self.geometry.band_len],
            8,
            "the window spectra (stations × windows × band bins, complex f32)",
        )?;
        let span = batch.span();
        if days.len() < span || valid.is_some_and(|v| v.len() < span) {
            return Err(crate::invalid!(
                "arrays shorter than the {span} elements the station-days span"
            ));
        }
        batch.check_finite(days, &self.ctx.cpu)?;
        let mut reporter = self.ctx.reporter();
        let call = PreprocessCall {
            plan: self,
            days,
            batch,
            valid,
            n_windows,
        };
        let (kept, data) = match &self.ctx.cuda {
            Some(gpu) => cuda::preprocess(gpu, call, &mut reporter)?,
            None => cpu::preprocess(&self.ctx.cpu, call, &mut reporter)?,
        };
        reporter.finish();
        Ok(Spectra {
            ctx: self.ctx.clone(),
            geometry: self.geometry,
            n_stations: batch.n_traces,
            n_windows,
            kept,
            data,
        })
    }

    /// Checks that every day was made by this plan's context and geometry for the same
    /// stations.
    fn check_days(&self, days: &[&Spectra]) -> Result<usize> {
        let first = days
            .first()
            .ok_or_else(|| crate::invalid!("n_days is 0; expected at least one day of spectra"))?;
        for (d, s) in days.iter().enumerate() {
            if !Arc::ptr_eq(&s.ctx, &self.ctx) {
                return Err(crate::invalid!(
                    "day {d}: spectra made on another context; correlate them with a plan of that context"
                ));
            }
            if s.geometry != self.geometry {
                return Err(crate::invalid!(
                    "day {d}: spectra made by a plan with other window, band or lag settings"
                ));
            }
            if s.n_stations != first.n_stations {
                return Err(crate::invalid!(
                    "day {d} has {} stations, day 0 has {}",
                    s.n_stations,
                    first.n_stations
                ));
            }
        }
        Ok(first.n_stations)
    }

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
        let n_stations = self.check_days(days)?;
        let (i0, ni, j0, nj) = block;
        let block = Block::new(i0, ni, j0, nj, n_stations, self.options.autocorrelation)?;
        let n_pairs = block.n_pairs();
        if n_pairs == 0 {
            return Ok(0);
        }
        let n_lags = self.geometry.n_lags();
        if pair_stride < n_lags {
            return Err(crate::invalid!(
                "pair_stride {pair_stride} is smaller than a correlation ({n_lags} lags)"
            ));
        }
        let need = (n_pairs - 1)
            .checked_mul(pair_stride)
            .and_then(|x| x.checked_add(n_lags))
            .ok_or_else(|| crate::invalid!("{n_pairs} pairs with stride {pair_stride} overflow"))?;
        if out.len() < need {
            return Err(crate::invalid!(
                "output holds {} floats; {n_pairs} pairs with stride {pair_stride} need {need}",
                out.len()
            ));
        }
        if counts.as_ref().is_some_and(|c| c.len() < n_pairs) {
            return Err(crate::invalid!(
                "counts holds fewer than the {n_pairs} pairs"
            ));
        }
        let pair_counts = window_counts(days, &block);
        // Computed densely, then copied: the caller's array is written only on success.
        let mut dense = crate::error::try_vec(n_pairs * n_lags, 0.0f32, "the correlations")?;
        let mut reporter = self.ctx.reporter();
        let call = CorrelateCall {
            plan: self,
            days,
            block: &block,
            counts: &pair_counts,
            out: Correlations::new(&mut dense, n_lags),
        };
        match &self.ctx.cuda {
            Some(gpu) => cuda::correlate(gpu, call, &mut reporter)?,
            None => cpu::correlate(&self.ctx.cpu, call, &mut reporter)?,
        }
        {
            use rayon::prelude::*;
            self.ctx.cpu.install(|| {
                out.par_chunks_mut(pair_stride)
                    .zip(dense.par_chunks(n_lags))
                    .for_each(|(o, d)| o[..n_lags].copy_from_slice(d))
            });
        }
        if let Some(c) = counts {
            c[..n_pairs].copy_from_slice(&pair_counts);
        }
        reporter.finish();
        Ok(n_pairs)
    }
}

/// Windows stacked per pair (in block order): the product of the two stations' masks,
/// summed over windows and days (bit sets, so that it is cheap for many stations).
pub fn window_counts(days: &[&Spectra], block: &Block) -> Vec<u32> {
    use rayon::prelude::*;
    let bits: Vec<(usize, Vec<u64>)> = days
        .iter()
        .map(|d| {
            let words = d.n_windows.div_ceil(64);
            let mut b = vec![0u64; words * d.n_stations];
            for s in 0..d.n_stations {
                for w in 0..d.n_windows {
                    if d.kept[s * d.n_windows + w] != 0 {
                        b[s * words + w / 64] |= 1 << (w % 64);
                    }
                }
            }
            (words, b)
        })
        .collect();
    block
        .pairs()
        .par_iter()
        .map(|&(i, j)| {
            bits.iter()
                .map(|(words, b)| {
                    let (x, y) = (&b[i * words..][..*words], &b[j * words..][..*words]);
                    x.iter()
                        .zip(y)
                        .map(|(a, c)| (a & c).count_ones())
                        .sum::<u32>()
                })
                .sum()
        })
        .collect()
}
