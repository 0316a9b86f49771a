//! The filter of one frequency slice in one spatial window: autocorrelation of the
//! estimation region, normal equations (block-)Toeplitz in the lags, exact solve, and the
//! prediction at the output positions, added with its window weight. The CPU backend runs
//! this in f64; kernels/fxdecon.cu (`fx_window_solve`) is its GPU twin (f32 data and
//! prediction, f64 lags and solve).

use super::geometry::{AxisWindow, Setup};
use super::solve::solve_hermitian;
use num_complex::Complex64 as C64;

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
    let gx = wx.gather.len();
    w.local.clear();
    for &ty in &wy.gather {
        for &tx in &wx.gather {
            w.local.push(s[tx + nx * ty]);
        }
    }
    let local = &w.local;
    // Row iy of the local buffer, columns xs.
    let row = |iy: usize, xs: &std::ops::Range<usize>| &local[gx * iy + xs.start..gx * iy + xs.end];

    // Lags over the estimation rectangle; r(−d) = conj r(d).
    let (lx, ly) = setup.stencil.lag_extent();
    let (bw, bh) = (2 * lx + 1, 2 * ly + 1);
    w.lags.clear();
    w.lags.resize(bw * bh, ZERO);
    let centre = (bw * bh - 1) / 2;
    let (ex, ey) = (&wx.est, &wy.est);
    let clip = |e: &std::ops::Range<usize>, d: i64| {
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
            r += dot_conj_first(row(iy, &xs), row((iy as i64 + dy) as usize, &xs2));
        }
        w.lags[l] = r;
        w.lags[2 * centre - l] = r.conj();
    }
    let lag = |dx: i32, dy: i32| w.lags[(dx + lx as i32) as usize + bw * (dy + ly as i32) as usize];

    let offs = &setup.stencil.offsets;
    let k = offs.len();
    let r0 = w.lags[centre].re;
    w.a.clear();
    w.b.clear();
    for (q, &(qx, qy)) in offs.iter().enumerate() {
        for (p, &(px, py)) in offs.iter().enumerate() {
            let mut v = lag(px - qx, py - qy);
            if p == q {
                v += setup.damping * r0;
            }
            w.a.push(v);
        }
        w.b.push(lag(-qx, -qy));
    }
    let tol = 1e-12 * r0 * (1.0 + setup.damping);
    solve_hermitian(&mut w.a, &mut w.b, k, tol);

    // Prediction of the output rectangle: one row update per operator coefficient.
    let fb = setup.stencil.forward_backward;
    let (ox, oy) = (&wx.out, &wy.out);
    let (oxl, oyl) = (ox.len(), oy.len());
    w.pred.clear();
    w.pred.resize(oxl * oyl, ZERO);
    let scale = if fb { 0.5 } else { 1.0 };
    let shifted = |d: i64| (ox.start as i64 + d) as usize..(ox.end as i64 + d) as usize;
    for (p, &(dx, dy)) in offs.iter().enumerate() {
        let (dx, dy) = (dx as i64, dy as i64);
        let c = w.b[p] * scale;
        for (j, iy) in oy.clone().enumerate() {
            let dst = &mut w.pred[j * oxl..(j + 1) * oxl];
            axpy(dst, c, row((iy as i64 + dy) as usize, &shifted(dx)));
            if fb {
                axpy(dst, c.conj(), row((iy as i64 - dy) as usize, &shifted(-dx)));
            }
        }
    }
    for (j, &wyj) in wy.weights.iter().enumerate() {
        let o = &mut out[wx.out_first + nx * (wy.out_first + j)..][..oxl];
        for ((o, p), &wxi) in o.iter_mut().zip(&w.pred[j * oxl..]).zip(&wx.weights) {
            *o += p * (wxi * wyj);
        }
    }
}

/// Σ conj(x)·y, in two interleaved partial sums (independent chains run in parallel).
fn dot_conj_first(x: &[C64], y: &[C64]) -> C64 {
    let (mut re, mut im) = ([0.0; 2], [0.0; 2]);
    let (xc, yc) = (x.chunks_exact(2), y.chunks_exact(2));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..2 {
            re[k] += a[k].re * b[k].re + a[k].im * b[k].im;
            im[k] += a[k].re * b[k].im - a[k].im * b[k].re;
        }
    }
    for (a, b) in xr.iter().zip(yr) {
        re[0] += a.re * b.re + a.im * b.im;
        im[0] += a.re * b.im - a.im * b.re;
    }
    C64::new(re[0] + re[1], im[0] + im[1])
}

/// y += c·x.
fn axpy(y: &mut [C64], c: C64, x: &[C64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += c * x;
    }
}
