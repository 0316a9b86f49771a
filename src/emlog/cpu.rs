//! The exhaustive search on the CPU: rows of the grid (axis 0 runs along a row) in chunks,
//! one rayon task per chunk, each with its own tally, merged in index order. Memory is
//! the tallies' histograms, whatever the grid's size. With a progress callback the chunks
//! run in consecutive groups, reported (and a stop honoured) between groups; the merge
//! order, hence the result, is the same.

use super::criterion::{Mode, Norm};
use super::result::Tally;
use super::setup::SearchSetup;
use crate::backend::cpu::CpuBackend;
use crate::error::Result;
use crate::progress::Reporter;
use rayon::prelude::*;

/// Models per task in the fast mode; the direct mode scales it down by n.
const CHUNK_MODELS: u64 = 1 << 16;

/// Rows per task.
pub fn chunk_rows(s: &SearchSetup) -> u64 {
    let per_model = match s.mode {
        Mode::Fast => 1,
        Mode::Direct => 1 + s.problem.n as u64 / 16,
    };
    (CHUNK_MODELS / per_model / s.n0() as u64).max(1)
}

pub fn search(cpu: &CpuBackend, s: &SearchSetup, reporter: &mut Reporter) -> Result<Tally> {
    let rows = s.grid.rows();
    let step = chunk_rows(s);
    let chunks = rows.div_ceil(step) as usize;
    let k = s.options.max_models;
    reporter.stage("emlog search", 1.0, chunks);
    let mut tally = Tally::new(s.bins.len);
    reporter.for_chunks(chunks, cpu.threads(), |group| {
        let t = cpu.install(|| {
            group
                .into_par_iter()
                .fold(
                    || Tally::new(s.bins.len),
                    |t, c| {
                        let start = c as u64 * step;
                        scan_rows(s, t, start, (start + step).min(rows))
                    },
                )
                .reduce(|| Tally::new(s.bins.len), |a, b| a.merge(b, k))
        });
        tally = std::mem::replace(&mut tally, Tally::new(0)).merge(t, k);
        Ok(())
    })?;
    Ok(tally)
}

/// Adds rows `first..end` (in order) to `t`.
pub fn scan_rows(s: &SearchSetup, mut t: Tally, first: u64, end: u64) -> Tally {
    if first >= end {
        return t;
    }
    let p = s.grid.p();
    let n0 = s.n0();
    let mut digits = vec![0usize; p];
    s.grid.row_digits(first, &mut digits);
    let mut row_q = vec![0.0f64; n0];
    let mut rows = Rows::new(s, &digits);
    for row in first..end {
        if row > first {
            let changed = advance(&s.grid, &mut digits);
            rows.update(s, &digits, changed);
        }
        rows.evaluate(s, &mut row_q);
        tally_row(s, &mut t, row, &digits, &row_q);
    }
    t
}

/// Steps the row digits (axes 1…) like an odometer; returns the slowest axis changed.
fn advance(g: &super::grid::Grid, digits: &mut [usize]) -> usize {
    let mut k = 1;
    loop {
        digits[k] += 1;
        if digits[k] < g.len(k) || k + 1 == digits.len() {
            return k;
        }
        digits[k] = 0;
        k += 1;
    }
}

/// The per-row state of either mode.
enum Rows {
    /// levels[k·p..(k+1)·p] = Σ_{j=p−1…k} T_j (k = 1…p; level p is 0): recomputing the
    /// levels at and below the slowest axis that changed keeps the sum order fixed and
    /// drift-free, O(p) per row on average.
    Fast { levels: Vec<f64> },
    /// s_i = d_i − Σ_{j≥1} Ã_ij x_j of the row.
    Direct { s: Vec<f64> },
}

impl Rows {
    fn new(s: &SearchSetup, digits: &[usize]) -> Rows {
        let p = s.grid.p();
        let mut r = match s.mode {
            Mode::Fast => Rows::Fast {
                levels: vec![0.0; (p + 1) * p],
            },
            Mode::Direct => Rows::Direct {
                s: vec![0.0; s.problem.n],
            },
        };
        r.update(s, digits, p - 1);
        r
    }

    fn update(&mut self, s: &SearchSetup, digits: &[usize], changed: usize) {
        let p = s.grid.p();
        match self {
            Rows::Fast { levels } => {
                for k in (1..=changed.min(p - 1)).rev() {
                    let (lo, hi) = levels.split_at_mut((k + 1) * p);
                    let below = &hi[..p];
                    let col = s.fast.column(k, digits[k]);
                    for i in 0..p {
                        lo[k * p + i] = below[i] + col[i];
                    }
                }
            }
            Rows::Direct { s: acc } => {
                let pb = s.problem;
                acc.copy_from_slice(&pb.d);
                for (j, &dj) in digits.iter().enumerate().skip(1) {
                    let x = s.grid.values[j][dj];
                    acc.iter_mut()
                        .zip(pb.column(j))
                        .for_each(|(r, a)| *r -= a * x);
                }
            }
        }
    }

    /// The decision value of each model of the row.
    fn evaluate(&self, s: &SearchSetup, q: &mut [f64]) {
        let p = s.grid.p();
        match self {
            Rows::Fast { levels } => {
                let u = &levels[p..2 * p];
                let base = s.fast.base(u);
                for (q, &w) in q.iter_mut().zip(&s.fast.w) {
                    let t = u[0] + w;
                    *q = base + t * t;
                }
            }
            Rows::Direct { s: row } => {
                let a0 = s.problem.column(0);
                for (qs, vs) in q.chunks_mut(LANES).zip(s.grid.values[0].chunks(LANES)) {
                    let mut v = [vs[0]; LANES];
                    v[..vs.len()].copy_from_slice(vs);
                    let acc = match s.norm {
                        Norm::L2 => direct::<0>(row, a0, &v),
                        Norm::L1 => direct::<1>(row, a0, &v),
                        Norm::Max => direct::<2>(row, a0, &v),
                    };
                    qs.copy_from_slice(&acc[..qs.len()]);
                }
            }
        }
    }
}

/// Models of a row evaluated together in the direct mode (one pass over the measurements).
const LANES: usize = 8;

/// Σr², Σ|r| or max|r| with r_i = s_i − Ã_i0·v, for LANES values v, in measurement order.
fn direct<const NORM: u8>(s: &[f64], a0: &[f64], v: &[f64; LANES]) -> [f64; LANES] {
    let mut acc = [0.0f64; LANES];
    for (&si, &ai) in s.iter().zip(a0) {
        for m in 0..LANES {
            let r = si - ai * v[m];
            acc[m] = match NORM {
                0 => acc[m] + r * r,
                1 => acc[m] + r.abs(),
                _ => acc[m].max(r.abs()),
            };
        }
    }
    acc
}

fn tally_row(s: &SearchSetup, t: &mut Tally, row: u64, digits: &[usize], q: &[f64]) {
    let n0 = q.len();
    let first = row * n0 as u64;
    let bins = &s.bins;
    let k_max = s.options.max_models;
    let mut in_row = 0u64;
    for (i, &qi) in q.iter().enumerate() {
        if qi < t.best_q {
            t.best_q = qi;
            t.best_index = first + i as u64;
        }
        if qi <= s.q_thr {
            in_row += 1;
            t.bins[bins.axis_offset[0] + i] += 1;
            for (&(a, b), &o) in bins.pairs.iter().zip(&bins.pair_offset) {
                if a == 0 || b == 0 {
                    let (ia, ib) = (
                        if a == 0 { i } else { digits[a] },
                        if b == 0 { i } else { digits[b] },
                    );
                    t.bins[o + ia + s.grid.len(a) * ib] += 1;
                }
            }
            if t.models.len() < k_max {
                t.models.push(first + i as u64);
            }
        }
    }
    if in_row > 0 {
        t.count += in_row;
        for (k, &d) in digits.iter().enumerate().skip(1) {
            t.bins[bins.axis_offset[k] + d] += in_row;
        }
        for (&(a, b), &o) in bins.pairs.iter().zip(&bins.pair_offset) {
            if a != 0 && b != 0 {
                t.bins[o + digits[a] + s.grid.len(a) * digits[b]] += in_row;
            }
        }
    }
}
