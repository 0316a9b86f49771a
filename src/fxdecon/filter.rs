//! The filter of one frequency slice in one spatial window: autocorrelation of the
//! estimation region, normal equations (block-)Toeplitz in the lags, exact solve, and the
//! prediction at the output positions, added with its window weight. The CPU backend runs
//! this in f64; kernels/fxdecon.cu (`fx_window_solve`) is its GPU twin (f32 data and
//! prediction, f64 lags and solve).

use super::geometry::{AxisWindow, Setup};
use super::solve::{dot_conj_first, solve_hermitian};
use num_complex::Complex64 as C64;
use std::ops::Range;

/// Reusable buffers of one worker.
#[derive(Default)]
pub struct Scratch {
    local: Vec<C64>,
    lags: Vec<C64>,
    a: Vec<C64>,
    b: Vec<C64>,
    pred: Vec<C64>,
}

const ZERO: C64 = C64::new(0.0, 0.0);

/// Filters window (wx, wy) of the slice `s` (index ix + nx·iy) into `out` (same layout).
pub fn filter_window(
    setup: &Setup,
    wx: &AxisWindow,
    wy: &AxisWindow,
    s: &[C64],
    out: &mut [C64],
    w: &mut Scratch,
) {
    let nx = setup.nx;
    w.local.clear();
    for &ty in &wy.gather {
        for &tx in &wx.gather {
            w.local.push(s[tx + nx * ty]);
        }
    }
    let (lx, ly) = setup.stencil.lag_extent();
    w.autocorrelate(wx, wy, lx, ly);
    w.solve(setup, lx, ly);
    w.predict(setup, wx, wy, out);
}

impl Scratch {
    /// Row iy of the local buffer (rows of `gx` values), columns xs.
    fn row(&self, gx: usize, iy: usize, xs: &Range<usize>) -> &[C64] {
        &self.local[gx * iy + xs.start..gx * iy + xs.end]
    }

    /// The lags (|dx| ≤ lx, |dy| ≤ ly) of the local buffer's autocorrelation over the
    /// estimation rectangle; r(−d) = conj r(d).
    fn autocorrelate(&mut self, wx: &AxisWindow, wy: &AxisWindow, lx: usize, ly: usize) {
        let gx = wx.gather.len();
        let (bw, bh) = (2 * lx + 1, 2 * ly + 1);
        let mut lags = std::mem::take(&mut self.lags);
        lags.clear();
        lags.resize(bw * bh, ZERO);
        let centre = (bw * bh - 1) / 2;
        let (ex, ey) = (&wx.est, &wy.est);
        let clip = |e: &Range<usize>, d: i64| {
            let (s, t) = (e.start as i64, e.end as i64);
            (s.max(s - d) as usize)..(t.min(t - d).max(s.max(s - d)) as usize)
        };
        for l in centre..bw * bh {
            let dx = (l % bw) as i64 - lx as i64;
            let dy = (l / bw) as i64 - ly as i64;
            let xs = clip(ex, dx);
            let xs2 = (xs.start as i64 + dx) as usize..(xs.end as i64 + dx) as usize;
            let mut r = ZERO;
            // A lag longer than the window (an operator wider than the data) has no terms;
            // its shifted range may start past the row.
            let ys = if xs.is_empty() { 0..0 } else { clip(ey, dy) };
            for iy in ys {
                let shifted = self.row(gx, (iy as i64 + dy) as usize, &xs2);
                r += dot_conj_first(self.row(gx, iy, &xs), shifted);
            }
            lags[l] = r;
            lags[2 * centre - l] = r.conj();
        }
        self.lags = lags;
    }

    /// The operator: the normal equations of the stencil from the lags, damped, solved
    /// exactly into `b`.
    fn solve(&mut self, setup: &Setup, lx: usize, ly: usize) {
        let bw = 2 * lx + 1;
        let lags = &self.lags;
        let lag =
            |dx: i32, dy: i32| lags[(dx + lx as i32) as usize + bw * (dy + ly as i32) as usize];
        let offs = &setup.stencil.offsets;
        let k = offs.len();
        let r0 = lags[(lags.len() - 1) / 2].re;
        self.a.clear();
        self.b.clear();
        for (q, &(qx, qy)) in offs.iter().enumerate() {
            for (p, &(px, py)) in offs.iter().enumerate() {
                let mut v = lag(px - qx, py - qy);
                if p == q {
                    v += setup.damping * r0;
                }
                self.a.push(v);
            }
            self.b.push(lag(-qx, -qy));
        }
        let tol = 1e-12 * r0 * (1.0 + setup.damping);
        solve_hermitian(&mut self.a, &mut self.b, k, tol);
    }

    /// The prediction of the output rectangle (one row update per operator coefficient),
    /// added into `out` with the window's weights.
    fn predict(&mut self, setup: &Setup, wx: &AxisWindow, wy: &AxisWindow, out: &mut [C64]) {
        let gx = wx.gather.len();
        let fb = setup.stencil.forward_backward;
        let (ox, oy) = (&wx.out, &wy.out);
        let (oxl, oyl) = (ox.len(), oy.len());
        let mut pred = std::mem::take(&mut self.pred);
        pred.clear();
        pred.resize(oxl * oyl, ZERO);
        let scale = if fb { 0.5 } else { 1.0 };
        let shifted = |d: i64| (ox.start as i64 + d) as usize..(ox.end as i64 + d) as usize;
        for (p, &(dx, dy)) in setup.stencil.offsets.iter().enumerate() {
            let (dx, dy) = (dx as i64, dy as i64);
            let c = self.b[p] * scale;
            for (j, iy) in oy.clone().enumerate() {
                let dst = &mut pred[j * oxl..(j + 1) * oxl];
                axpy(
                    dst,
                    c,
                    self.row(gx, (iy as i64 + dy) as usize, &shifted(dx)),
                );
                if fb {
                    axpy(
                        dst,
                        c.conj(),
                        self.row(gx, (iy as i64 - dy) as usize, &shifted(-dx)),
                    );
                }
            }
        }
        let nx = setup.nx;
        for (j, &wyj) in wy.weights.iter().enumerate() {
            let o = &mut out[wx.out_first + nx * (wy.out_first + j)..][..oxl];
            for ((o, p), &wxi) in o.iter_mut().zip(&pred[j * oxl..]).zip(&wx.weights) {
                *o += p * (wxi * wyj);
            }
        }
        self.pred = pred;
    }
}

/// y += c·x.
fn axpy(y: &mut [C64], c: C64, x: &[C64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += c * x;
    }
}
