//! Substacks (NoisePy's `substack`, `substack_len`): windows grouped (by hour, by day, or
//! as the caller says), one stack per group and pair besides the stack of all windows,
//! and the window counts of pairs, overall and per group.

use super::pairs::Block;
use super::spectra::Spectra;
use crate::backend::cpu::CpuBackend;
use crate::error::Result;
use rayon::prelude::*;

/// A label per window of each day: its group (0..n_groups), or none (the window counts in
/// the stack of all windows only).
#[derive(Clone, Debug)]
pub struct WindowGroups {
    pub n_groups: usize,
    /// Per group, then for the unlabelled windows (index n_groups): runs of consecutive
    /// windows of one day, (day, first window, end).
    runs: Vec<Vec<(usize, usize, usize)>>,
    /// Per day, per window: the group, or n_groups for none.
    labels: Vec<Vec<usize>>,
}

/// The label of windows that belong to no substack (`SG_XCORR_NO_GROUP` in C).
pub(crate) const NO_GROUP: i32 = -1;

impl WindowGroups {
    /// Groups from `labels`: the windows of day 0, then of day 1, … (`windows[d]` each), each
    /// a group in 0..n_groups or NO_GROUP.
    pub fn new(labels: &[i32], windows: &[usize], n_groups: usize) -> Result<WindowGroups> {
        let total: usize = windows.iter().sum();
        if labels.len() != total {
            return Err(crate::invalid!(
                "{} group labels for the {total} windows of the days",
                labels.len()
            ));
        }
        if n_groups == 0 || n_groups > u32::MAX as usize {
            return Err(crate::invalid!("n_groups is {n_groups}; expected ≥ 1"));
        }
        let mut runs = vec![Vec::new(); n_groups + 1];
        let mut per_day = Vec::with_capacity(windows.len());
        let mut at = 0;
        for (d, &nw) in windows.iter().enumerate() {
            let mut day = Vec::with_capacity(nw);
            for (w, &l) in labels[at..at + nw].iter().enumerate() {
                let g = match l {
                    NO_GROUP => n_groups,
                    l if l >= 0 && (l as usize) < n_groups => l as usize,
                    l => {
                        return Err(crate::invalid!(
                            "group label {l} (day {d}, window {w}); expected 0 … {} or -1 (none)",
                            n_groups - 1
                        ))
                    }
                };
                match runs[g].last_mut() {
                    Some((rd, _, end)) if *rd == d && *end == w => *end = w + 1,
                    _ => runs[g].push((d, w, w + 1)),
                }
                day.push(g);
            }
            per_day.push(day);
            at += nw;
        }
        Ok(WindowGroups {
            n_groups,
            runs,
            labels: per_day,
        })
    }

    /// Labels by window start time: window w of day d starts at `day_start[d] + w·step`
    /// seconds, and its group is ⌊(start − day_start[0]) / substack_len⌋ (so with days that
    /// start at midnight, `substack_len` = 3600 gives clock hours and 86400 days).
    pub fn by_time(
        day_start: &[f64],
        windows: &[usize],
        step: f64,
        substack_len: f64,
    ) -> Result<(Vec<i32>, usize)> {
        if !(substack_len.is_finite() && substack_len > 0.0) {
            return Err(crate::invalid!(
                "substack_len is {substack_len}; expected > 0 s"
            ));
        }
        let t0 = *day_start
            .first()
            .ok_or_else(|| crate::invalid!("no days"))?;
        let mut labels = Vec::with_capacity(windows.iter().sum());
        for (d, (&start, &nw)) in day_start.iter().zip(windows).enumerate() {
            if !(start.is_finite() && start >= t0) {
                return Err(crate::invalid!(
                    "day_start[{d}] is {start}; expected finite and ≥ day_start[0] ({t0})"
                ));
            }
            for w in 0..nw {
                let g = ((start - t0 + w as f64 * step) / substack_len).floor();
                if g >= i32::MAX as f64 {
                    return Err(crate::invalid!(
                        "day {d}: more than 2^31 substacks of {substack_len} s"
                    ));
                }
                labels.push(g as i32);
            }
        }
        let n_groups = labels.iter().max().map_or(0, |&m| m as usize + 1);
        Ok((labels, n_groups))
    }

    /// Runs of group `g` (n_groups: the unlabelled windows): (day, first window, end).
    pub fn runs(&self, g: usize) -> &[(usize, usize, usize)] {
        &self.runs[g]
    }

    /// The group of window w of day d (n_groups: none).
    pub fn label(&self, d: usize, w: usize) -> usize {
        self.labels[d][w]
    }

    /// Whether the days have the windows these labels were made for.
    pub fn check_days(&self, days: &[&Spectra]) -> Result<()> {
        let ok = self.labels.len() == days.len()
            && days
                .iter()
                .zip(&self.labels)
                .all(|(d, l)| d.n_windows == l.len());
        match ok {
            true => Ok(()),
            false => Err(crate::invalid!(
                "the group labels were made for other days (a label per window of each day)"
            )),
        }
    }
}

/// Bit sets of the kept windows of every station of a day, restricted to `mask` (a bit
/// per window) when given.
fn kept_bits(d: &Spectra, mask: Option<&[u64]>) -> (usize, Vec<u64>) {
    let words = d.n_windows.div_ceil(64);
    let mut b = vec![0u64; words * d.n_stations];
    for s in 0..d.n_stations {
        for w in 0..d.n_windows {
            if d.kept[s * d.n_windows + w] != 0 {
                b[s * words + w / 64] |= 1 << (w % 64);
            }
        }
        if let Some(m) = mask {
            for (x, y) in b[s * words..][..words].iter_mut().zip(m) {
                *x &= y;
            }
        }
    }
    (words, b)
}

/// Windows stacked per pair (in block order): the product of the two stations' masks,
/// summed over windows and days, over the windows `masks[d]` marks (all when None); the
/// block's rows counted in parallel on `cpu`.
fn counts_over(
    cpu: &CpuBackend,
    days: &[&Spectra],
    block: &Block,
    masks: Option<&[Vec<u64>]>,
) -> Vec<u32> {
    let bits: Vec<(usize, Vec<u64>)> = days
        .iter()
        .enumerate()
        .map(|(d, day)| kept_bits(day, masks.map(|m| m[d].as_slice())))
        .collect();
    let common = |i: usize, j: usize| -> u32 {
        bits.iter()
            .map(|(words, b)| {
                let (x, y) = (&b[i * words..][..*words], &b[j * words..][..*words]);
                x.iter()
                    .zip(y)
                    .map(|(a, c)| (a & c).count_ones())
                    .sum::<u32>()
            })
            .sum()
    };
    let mut out = vec![0u32; block.n_pairs()];
    let mut rows = Vec::with_capacity(block.ni);
    let mut rest = &mut out[..];
    for a in 0..block.ni {
        let (i, js) = block.row(a);
        let (row, tail) = rest.split_at_mut(js.len());
        rows.push((i, js, row));
        rest = tail;
    }
    cpu.install(|| {
        rows.into_par_iter().for_each(|(i, js, row)| {
            row.iter_mut().zip(js).for_each(|(c, j)| *c = common(i, j));
        })
    });
    out
}

/// Windows stacked per pair (in block order) over all windows of the days.
pub fn window_counts(cpu: &CpuBackend, days: &[&Spectra], block: &Block) -> Vec<u32> {
    counts_over(cpu, days, block, None)
}

/// The window counts of a correlate call: per pair, and per group and pair when `groups`
/// are given (empty otherwise).
pub fn stack_counts(
    cpu: &CpuBackend,
    days: &[&Spectra],
    block: &Block,
    groups: Option<&WindowGroups>,
) -> (Vec<u32>, Vec<u32>) {
    let sub = groups.map_or_else(Vec::new, |g| group_counts(cpu, days, block, g));
    (window_counts(cpu, days, block), sub)
}

/// Windows stacked per group and pair: element g·n_pairs + p.
pub fn group_counts(
    cpu: &CpuBackend,
    days: &[&Spectra],
    block: &Block,
    groups: &WindowGroups,
) -> Vec<u32> {
    let mut out = Vec::with_capacity(groups.n_groups * block.n_pairs());
    for g in 0..groups.n_groups {
        let masks: Vec<Vec<u64>> = days
            .iter()
            .map(|d| vec![0u64; d.n_windows.div_ceil(64)])
            .zip(0..)
            .map(|(mut m, d)| {
                for &(rd, w0, w1) in groups.runs(g) {
                    if rd == d {
                        (w0..w1).for_each(|w| m[w / 64] |= 1 << (w % 64));
                    }
                }
                m
            })
            .collect();
        out.extend(counts_over(cpu, days, block, Some(&masks)));
    }
    out
}
