//! The box windows, normalised on the discrete layout into a partition of unity.
//!
//! A box's raw window is g_b(ξ) = radial profile × angular Gaussian, set to zero outside its
//! rectangle (so what is normalised is exactly what the boxes hold). The real-input transform
//! stores one box of each antipodal pair with weight s_b (√2; 1 for the low-pass box), so a
//! frequency ξ receives, from box b, ½·s_b²·(g_b(ξ)² + g_b(−ξ)²). With
//!
//!   S(ξ) = Σ_{m ∈ ℤ^d} Σ_b ½·s_b²·(g_b(ξ+m)² + g_b(−ξ−m)²)
//!
//! (periodic: the data's spectrum is) the stored window ŵ_b = s_b·g_b/√S gives
//! Σ_m Σ_b ½(ŵ_b(ξ+m)² + ŵ_b(−ξ−m)²) = 1 at every ξ that some box covers.

use super::layout::{dot, norm, Layout};
use rayon::prelude::*;

/// Rectangle membership slack, in lattice units: a box's own points lie on its edges exactly
/// up to rounding.
const EDGE: f64 = 1e-7;

/// Evaluates raw windows and their normaliser for one layout.
pub struct WindowEvaluator<'a> {
    layout: &'a Layout,
    radial: super::layout::Radial,
    /// Largest |ξ| any box reaches.
    reach: f64,
    /// Per lattice, the cosine of the widest angle between its axis ν and a point of its
    /// rectangle (−1 when the rectangle reaches ξ·ν ≤ 0): a frequency outside that cone is in
    /// none of its boxes, so the normaliser skips the lattice with one dot product (with 350
    /// directions, all but a handful).
    cone: Vec<f64>,
}

impl<'a> WindowEvaluator<'a> {
    pub fn new(layout: &'a Layout) -> Self {
        let mut reach: f64 = 0.0;
        for l in &layout.lattices {
            for corner in 0..8 {
                let t = std::array::from_fn(|a| {
                    if corner >> a & 1 == 0 {
                        l.lo[a]
                    } else {
                        l.lo[a] + l.len[a] as i64 - 1
                    }
                });
                reach = reach.max(norm(&l.point(t)));
            }
        }
        let dim = layout.dim;
        let cone = layout
            .lattices
            .iter()
            .map(|l| {
                let axial = (l.lo[0] as f64 - EDGE) / l.period[0];
                let lateral: f64 = (1..dim)
                    .map(|a| {
                        let far = (l.lo[a].abs()).max((l.lo[a] + l.len[a] as i64 - 1).abs());
                        ((far as f64 + EDGE) / l.period[a]).powi(2)
                    })
                    .sum();
                if axial > 0.0 {
                    axial / (axial * axial + lateral).sqrt() - 1e-12
                } else {
                    -1.0
                }
            })
            .collect();
        WindowEvaluator {
            layout,
            radial: layout.radial(),
            reach,
            cone,
        }
    }

    /// g_b(ξ) given ξ's continuous coordinates c in b's lattice (0 outside the rectangle).
    fn raw(&self, b: usize, xi: &[f64; 3], c: &[f64; 3]) -> f64 {
        let bx = &self.layout.boxes[b];
        for ((&ca, &lo), &len) in c.iter().zip(&bx.lo).zip(&bx.shape).take(self.layout.dim) {
            if ca < lo as f64 - EDGE || ca > (lo + len as i64 - 1) as f64 + EDGE {
                return 0.0;
            }
        }
        let rho = norm(xi);
        let mut g = self.radial.profile(bx.level, rho);
        if bx.level > 0 {
            let nu = &self.layout.directions[bx.direction.unwrap()];
            let cos = if rho > 0.0 { dot(nu, xi) / rho } else { 0.0 };
            let theta = cos.clamp(-1.0, 1.0).acos();
            let s = self.layout.angular_std;
            g *= (-theta * theta / (2.0 * s * s)).exp();
        }
        g
    }

    /// Σ_b ½·s_b²·(g_b(ξ)² + g_b(−ξ)²), without periodic images.
    fn local_sum(&self, xi: &[f64; 3]) -> f64 {
        let neg = [-xi[0], -xi[1], -xi[2]];
        let rho = norm(xi);
        let mut s = 0.0;
        let boxes = &self.layout.boxes;
        for (li, l) in self.layout.lattices.iter().enumerate() {
            let along = dot(&l.axes[0], xi);
            let inside = self.cone[li] * rho;
            let c0 = along * l.period[0];
            let lo = l.lo[0] as f64 - EDGE;
            let hi = (l.lo[0] + l.len[0] as i64 - 1) as f64 + EDGE;
            let plus = along >= inside && c0 >= lo && c0 <= hi;
            let minus = -along >= inside && -c0 >= lo && -c0 <= hi;
            if !plus && !minus {
                continue;
            }
            let c = l.coords(xi);
            let cn = [-c[0], -c[1], -c[2]];
            for (b, bx) in boxes.iter().enumerate().filter(|(_, bx)| bx.lattice == li) {
                let g1 = if plus { self.raw(b, xi, &c) } else { 0.0 };
                let g2 = if minus { self.raw(b, &neg, &cn) } else { 0.0 };
                s += 0.5 * bx.scale * bx.scale * (g1 * g1 + g2 * g2);
            }
        }
        s
    }

    /// S(ξ): the normaliser, summed over the periodic images of ξ that some box reaches.
    pub fn normaliser(&self, xi: &[f64; 3]) -> f64 {
        let dim = self.layout.dim;
        let range = |d: usize| -> std::ops::RangeInclusive<i64> {
            if d < dim {
                (-self.reach - xi[d]).ceil() as i64..=(self.reach - xi[d]).floor() as i64
            } else {
                0..=0
            }
        };
        let mut s = 0.0;
        for m3 in range(2) {
            for m2 in range(1) {
                for m1 in range(0) {
                    let x = [xi[0] + m1 as f64, xi[1] + m2 as f64, xi[2] + m3 as f64];
                    if norm(&x) <= self.reach + 1e-9 {
                        s += self.local_sum(&x);
                    }
                }
            }
        }
        s
    }

    /// The window ŵ_b(ξ) = s_b·g_b(ξ)/√S(ξ) (0 where no box covers ξ), without the lattice
    /// cell factor.
    pub fn window(&self, b: usize, xi: &[f64; 3]) -> f64 {
        let l = &self.layout.lattices[self.layout.boxes[b].lattice];
        let g = self.raw(b, xi, &l.coords(xi));
        if g == 0.0 {
            return 0.0;
        }
        self.layout.boxes[b].scale * g / self.normaliser(xi).sqrt()
    }

    /// √(cell volume) of lattice `l`: the lattice sums Σ_ξ |ŵ F̂|² approximate ∫|ŵ F̂|² dξ
    /// (Parseval: ‖f‖²) once the stored windows carry this factor.
    pub fn cell_factor(&self, l: usize) -> f64 {
        let p = &self.layout.lattices[l].period;
        1.0 / p[..self.layout.dim].iter().product::<f64>().sqrt()
    }
}

/// The stored window of every box at its lattice points, in the box's order (axis 1 fastest):
/// ŵ_b times the lattice cell factor.
pub fn box_windows(layout: &Layout) -> Vec<Vec<f64>> {
    let ev = WindowEvaluator::new(layout);
    layout
        .boxes
        .par_iter()
        .enumerate()
        .map(|(b, bx)| {
            let l = &layout.lattices[bx.lattice];
            let cell = ev.cell_factor(bx.lattice);
            let [n1, n2, n3] = bx.shape;
            let mut w = Vec::with_capacity(n1 * n2 * n3);
            for i3 in 0..n3 {
                for i2 in 0..n2 {
                    for i1 in 0..n1 {
                        let t = [
                            bx.lo[0] + i1 as i64,
                            bx.lo[1] + i2 as i64,
                            bx.lo[2] + i3 as i64,
                        ];
                        let xi = l.point(t);
                        let g = ev.raw(b, &xi, &[t[0] as f64, t[1] as f64, t[2] as f64]);
                        w.push(if g == 0.0 {
                            0.0
                        } else {
                            cell * bx.scale * g / ev.normaliser(&xi).sqrt()
                        });
                    }
                }
            }
            w
        })
        .collect()
}
