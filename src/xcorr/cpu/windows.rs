//! Nonlinear stacks on the CPU: each kept window of a pair correlated on its own, then
//! stacked (phase-weighted, robust); substacks as the mean of their windows' correlations.

use super::{host, Rows};
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::method::Method;
use crate::xcorr::stack::{stack_windows, Inverse};
use num_complex::Complex32;

/// A pair's per-window correlations (rows of n_lags) and each row's group label.
fn window_rows(
    call: &CorrelateCall,
    inv: &mut Inverse,
    (i, j): (usize, usize),
) -> (Vec<f32>, Vec<usize>) {
    let g = call.plan.geometry();
    let zero_dc = Method::of(call.plan.options()).zero_dc(i, j);
    let mut band = vec![Complex32::default(); g.band_len];
    let (mut rows, mut labels) = (Vec::new(), Vec::new());
    for (dn, d) in call.days.iter().enumerate() {
        let (x, nw) = (host(&d.data), d.n_windows);
        let a = d.source.as_ref().map_or(x, host);
        let plane = d.n_stations * nw;
        for w in 0..nw {
            if d.kept[i * nw + w] == 0 || d.kept[j * nw + w] == 0 {
                continue;
            }
            for (f, b) in band.iter_mut().enumerate() {
                *b = a[f * plane + i * nw + w].conj() * x[f * plane + j * nw + w];
            }
            let at = rows.len();
            rows.resize(at + g.n_lags(), 0.0);
            inv.correlation(&band, 1, zero_dc, g, &mut rows[at..]);
            labels.push(call.groups.map_or(0, |gr| gr.label(dn, w)));
        }
    }
    (rows, labels)
}

/// The mean of the rows (n_lags each) labelled `group`, in f64.
fn group_mean(rows: &[f32], labels: &[usize], group: usize, m: usize) -> Vec<f32> {
    let mut sum = vec![0.0f64; m];
    let mut n = 0usize;
    for (r, _) in rows
        .chunks_exact(m)
        .zip(labels)
        .filter(|(_, &l)| l == group)
    {
        sum.iter_mut().zip(r).for_each(|(s, &v)| *s += v as f64);
        n += 1;
    }
    sum.iter()
        .map(|&s| if n == 0 { 0.0 } else { (s / n as f64) as f32 })
        .collect()
}

/// The nonlinear stacks (and substacks) of a run of pairs.
pub(super) fn stacked_run(call: &CorrelateCall, run: &[(usize, usize)]) -> Rows {
    let (g, o) = (call.plan.geometry(), call.plan.options());
    let m = g.n_lags();
    let mut inv = Inverse::new(g.nfft);
    let mut out = Rows::default();
    let n_pairs = call.block.n_pairs();
    for &(i, j) in run {
        let k = call.block.index(i, j).unwrap();
        let (rows, labels) = window_rows(call, &mut inv, (i, j));
        if let Some(groups) = call.groups {
            for grp in 0..groups.n_groups {
                out.sub
                    .push((grp * n_pairs + k, group_mean(&rows, &labels, grp, m)));
            }
        }
        out.total
            .push((k, stack_windows(&rows, m, o.stack_method, o)));
    }
    out
}
