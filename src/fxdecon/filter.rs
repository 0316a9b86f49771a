//! The filter of one frequency slice in one spatial window: autocorrelation of the
//! estimation region, normal equations (block-)Toeplitz in the lags, exact solve, and the
//! prediction at the output positions, added with its window weight. The CPU backend runs
//! this in f64; kernels/fxdecon.cu (`fx_window_solve`) is its f32 twin.

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
    let at = |ix: i64, iy: i64| local[ix as usize + gx * iy as usize];

    // Lags over the estimation rectangle; r(−d) = conj r(d).
    let (lx, ly) = setup.stencil.lag_extent();
    let (bw, bh) = (2 * lx + 1, 2 * ly + 1);
    w.lags.clear();
    w.lags.resize(bw * bh, ZERO);
    let centre = (bw * bh - 1) / 2;
    let (ex, ey) = (&wx.est, &wy.est);
    for l in centre..bw * bh {
        let dx = (l % bw) as i64 - lx as i64;
        let dy = (l / bw) as i64 - ly as i64;
        let xs =
            (ex.start as i64).max(ex.start as i64 - dx)..(ex.end as i64).min(ex.end as i64 - dx);
        let ys =
            (ey.start as i64).max(ey.start as i64 - dy)..(ey.end as i64).min(ey.end as i64 - dy);
        let mut r = ZERO;
        for iy in ys {
            for ix in xs.clone() {
                r += at(ix, iy).conj() * at(ix + dx, iy + dy);
            }
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

    let fb = setup.stencil.forward_backward;
    for (j, iy) in wy.out.clone().enumerate() {
        for (i, ix) in wx.out.clone().enumerate() {
            let (ix, iy) = (ix as i64, iy as i64);
            let mut pred = ZERO;
            for (p, &(dx, dy)) in offs.iter().enumerate() {
                let (dx, dy) = (dx as i64, dy as i64);
                pred += w.b[p] * at(ix + dx, iy + dy);
                if fb {
                    pred += w.b[p].conj() * at(ix - dx, iy - dy);
                }
            }
            if fb {
                pred *= 0.5;
            }
            let t = (wx.out_first + i) + nx * (wy.out_first + j);
            out[t] += pred * (wx.weights[i] * wy.weights[j]);
        }
    }
}
