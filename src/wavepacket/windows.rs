//! The box windows, normalised on the discrete layout into a partition of unity.
//!
//! A box's raw window is g_b(ξ) = radial profile × angular Gaussian × the taper outside the
//! cell (`Radial::taper`: no window is cut where it is sizeable), set to zero outside its
//! rectangle (so what is normalised is exactly what the boxes hold). The real-input transform
//! stores one box of each antipodal pair with weight s_b (√2; 1 for the low-pass box), so a
//! frequency ξ receives, from box b, ½·s_b²·(g_b(ξ)² + g_b(−ξ)²). With
//!
//!   S(ξ) = Σ_{m ∈ ℤ^d} Σ_b ½·s_b²·(g_b(ξ+m)² + g_b(−ξ−m)²)
//!
//! (periodic: the data's spectrum is) the stored window ŵ_b = s_b·g_b/√S gives
//! Σ_m Σ_b ½(ŵ_b(ξ+m)² + ŵ_b(−ξ−m)²) = 1 at every ξ that some box covers.
//!
//! S dominates plan creation (each point meets a few dozen boxes over its images), so its
//! terms are factored: g_b² = R_k(|ξ|)²·A_ν(ξ)², the radial factor taken once per image and
//! level (shared by ±ξ and every direction), the angular one once per lattice that holds ξ.

use super::angle;
use super::cells::{CellInput, FrequencyCells};
use super::layout::{dot, norm, Lattice, Layout};
use crate::sample::Real;
use rayon::prelude::*;

/// Rectangle membership slack, in lattice units: a box's own points lie on its edges exactly
/// up to rounding.
const EDGE: f64 = 1e-7;

/// Most levels a layout has, plus the low-pass one.
pub(super) const MAX_LEVELS: usize = 13;

/// The first tests of a frequency x against one lattice, packed together (they run for every
/// candidate lattice of every image).
pub(super) struct Gate {
    /// The lattice's axis e₁ = its direction ν.
    axis: [f64; 3],
    /// The cosine of the widest angle between ν and a point of the lattice's rectangle (−1
    /// when the rectangle reaches ξ·ν ≤ 0): x outside that cone is in none of its boxes.
    pub(super) cone: f64,
    /// P₁ and the rectangle's [lo, hi] along e₁ (slack included), in lattice units.
    pub(super) period: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
}

/// Evaluates raw windows and their normaliser for one layout.
pub struct WindowEvaluator<'a> {
    pub(super) layout: &'a Layout,
    pub(super) radial: super::layout::Radial,
    /// Largest |ξ| any box reaches.
    pub(super) reach: f64,
    /// Per lattice, what rejects a frequency outside it (`Gate`).
    pub(super) gates: Vec<Gate>,
    /// The boxes of each lattice.
    pub(super) lattice_boxes: Vec<Vec<usize>>,
    /// Per box, [lo, hi] of its rectangle in continuous lattice coordinates, slack included
    /// (unbounded along unused axes).
    pub(super) bounds: Vec<[[f64; 2]; 3]>,
    /// ln ρ_k of each directional level k (index 0 unused).
    pub(super) ln_centre: [f64; MAX_LEVELS],
    /// [min, max] of |ξ| over each level's rectangles: R_k² is needed only in between.
    pub(super) level_reach: [[f64; 2]; MAX_LEVELS],
    /// Lattices that may hold a frequency, by its direction and length (`FrequencyCells`).
    pub(super) cells: FrequencyCells,
}

/// Lattice index of corner `corner` (bit a: low or high end along axis a) of `l`'s rectangle.
fn corner_index(l: &Lattice, corner: usize) -> [i64; 3] {
    std::array::from_fn(|a| {
        if corner >> a & 1 == 0 {
            l.lo[a]
        } else {
            l.lo[a] + l.len[a] as i64 - 1
        }
    })
}

/// `Gate::cone` of lattice `l`.
fn cone_cosine(l: &Lattice, dim: usize) -> f64 {
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
}

/// Per box, [lo, hi] of its rectangle in continuous lattice coordinates, slack included
/// (unbounded along unused axes).
fn box_bounds(layout: &Layout) -> Vec<[[f64; 2]; 3]> {
    layout
        .boxes
        .iter()
        .map(|bx| {
            std::array::from_fn(|a| {
                if a < layout.dim {
                    let lo = bx.lo[a] as f64 - EDGE;
                    [lo, (bx.lo[a] + bx.shape[a] as i64 - 1) as f64 + EDGE]
                } else {
                    [f64::NEG_INFINITY, f64::INFINITY]
                }
            })
        })
        .collect()
}

/// [min, max] of |ξ| over each level's rectangles (`in_frequency`, per box).
fn level_reach(layout: &Layout, in_frequency: &[[[f64; 2]; 3]]) -> [[f64; 2]; MAX_LEVELS] {
    let mut level_reach = [[f64::INFINITY, 0.0]; MAX_LEVELS];
    for (bx, r) in layout.boxes.iter().zip(in_frequency) {
        let (mut near, mut far) = (0.0, 0.0);
        for &[lo, hi] in &r[..layout.dim] {
            near += lo.max(-hi).max(0.0).powi(2);
            far += lo.abs().max(hi.abs()).powi(2);
        }
        let k = &mut level_reach[bx.level];
        *k = [k[0].min(near.sqrt() - 1e-9), k[1].max(far.sqrt() + 1e-9)];
    }
    level_reach
}

impl<'a> WindowEvaluator<'a> {
    pub fn new(layout: &'a Layout) -> Self {
        let reach = layout
            .lattices
            .iter()
            .map(|l| {
                (0..8)
                    .map(|corner| norm(&l.point(corner_index(l, corner))))
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max);
        let cone: Vec<f64> = layout
            .lattices
            .iter()
            .map(|l| cone_cosine(l, layout.dim))
            .collect();
        let mut lattice_boxes = vec![Vec::new(); layout.lattices.len()];
        for (b, bx) in layout.boxes.iter().enumerate() {
            lattice_boxes[bx.lattice].push(b);
        }
        let bounds = box_bounds(layout);
        // The rectangles in frequency units (along the lattice axes).
        let in_frequency: Vec<[[f64; 2]; 3]> = layout
            .boxes
            .iter()
            .zip(&bounds)
            .map(|(bx, r)| {
                let p = &layout.lattices[bx.lattice].period;
                std::array::from_fn(|a| r[a].map(|v| v / p[a]))
            })
            .collect();
        let cells = FrequencyCells::new(&CellInput {
            axes: layout.lattices.iter().map(|l| l.axes).collect(),
            cone: &cone,
            boxes: lattice_boxes
                .iter()
                .map(|bs| bs.iter().map(|&b| in_frequency[b]).collect())
                .collect(),
            reach,
        });
        let gates = layout
            .lattices
            .iter()
            .zip(&cone)
            .map(|(l, &cone)| Gate {
                axis: l.axes[0],
                cone,
                period: l.period[0],
                lo: l.lo[0] as f64 - EDGE,
                hi: (l.lo[0] + l.len[0] as i64 - 1) as f64 + EDGE,
            })
            .collect();
        let radial = layout.radial();
        let ln_centre = std::array::from_fn(|k| {
            if (1..=layout.levels).contains(&k) {
                radial.centre(k).ln()
            } else {
                0.0
            }
        });
        WindowEvaluator {
            layout,
            radial,
            reach,
            gates,
            lattice_boxes,
            bounds,
            ln_centre,
            level_reach: level_reach(layout, &in_frequency),
            cells,
        }
    }

    /// g_b(ξ) given ξ's continuous coordinates c in b's lattice (0 outside the rectangle).
    fn raw(&self, b: usize, xi: &[f64; 3], c: &[f64; 3]) -> f64 {
        if !inside(&self.bounds[b], c) {
            return 0.0;
        }
        let bx = &self.layout.boxes[b];
        let rho = norm(xi);
        let mut g = self.radial.profile(bx.level, rho) * self.radial.taper(xi);
        if bx.level > 0 {
            let nu = &self.layout.directions[bx.direction.unwrap()];
            let cos = if rho > 0.0 { dot(nu, xi) / rho } else { 0.0 };
            let theta = cos.clamp(-1.0, 1.0).acos();
            let s = self.layout.angular_std;
            g *= (-theta * theta / (2.0 * s * s)).exp();
        }
        g
    }

    /// R_k(ρ)² of every level k (0: the low-pass box) whose rectangles reach |ξ| = ρ > 0; 0
    /// for the others (no box of theirs holds ξ, so it is never used).
    fn radial_squares(&self, rho: f64) -> [f64; MAX_LEVELS] {
        let mut r = [0.0; MAX_LEVELS];
        let reaches = |k: usize| {
            let [lo, hi] = self.level_reach[k];
            rho >= lo && rho <= hi
        };
        if reaches(0) {
            let s0 = self.radial.sigma0;
            r[0] = (-rho * rho / (s0 * s0)).exp();
        }
        let ln_rho = rho.ln();
        let alpha = self.radial.alpha;
        for (k, (rk, &lc)) in r
            .iter_mut()
            .zip(&self.ln_centre)
            .enumerate()
            .take(self.layout.levels + 1)
            .skip(1)
        {
            if reaches(k) {
                let l = (ln_rho - lc) * alpha;
                *rk = (-l * l).exp();
            }
        }
        r
    }

    /// Σ_b ½·s_b²·(g_b(ξ)² + g_b(−ξ)²), without periodic images: the sum without the taper
    /// outside the cell, times its square (the same at ±ξ).
    fn local_sum(&self, xi: &[f64; 3]) -> f64 {
        match self.radial.taper(xi) {
            0.0 => 0.0,
            t => t * t * self.untapered_sum(xi),
        }
    }

    /// `local_sum` without the taper.
    fn untapered_sum(&self, xi: &[f64; 3]) -> f64 {
        let neg = [-xi[0], -xi[1], -xi[2]];
        let rho = norm(xi);
        if rho == 0.0 {
            // Only the low-pass box reaches ξ = 0 (the directional profiles vanish there).
            let mut r = [0.0; MAX_LEVELS];
            r[0] = 1.0;
            return (0..self.layout.lattices.len())
                .map(|l| {
                    self.side(l, xi, rho, &[0.0; 3], &r) + self.side(l, &neg, rho, &[0.0; 3], &r)
                })
                .sum();
        }
        let r = self.radial_squares(rho);
        let unit = [xi[0] / rho, xi[1] / rho, xi[2] / rho];
        let mut plus = 0.0;
        for &l in self.cells.of(xi, rho) {
            plus += self.side(l as usize, xi, rho, &unit, &r);
        }
        let unit = unit.map(|v| -v);
        let mut minus = 0.0;
        for &l in self.cells.of(&neg, rho) {
            minus += self.side(l as usize, &neg, rho, &unit, &r);
        }
        plus + minus
    }

    /// Σ over lattice l's boxes of ½·s_b²·g_b(x)², given |x| = rho, x/|x| = `unit` and the
    /// radial squares r (at x = 0, `unit` is not read: no directional box holds it).
    #[inline]
    fn side(
        &self,
        l: usize,
        x: &[f64; 3],
        rho: f64,
        unit: &[f64; 3],
        r: &[f64; MAX_LEVELS],
    ) -> f64 {
        let gate = &self.gates[l];
        let along = dot(&gate.axis, x);
        let c0 = along * gate.period;
        if along < gate.cone * rho || c0 < gate.lo || c0 > gate.hi {
            return 0.0;
        }
        let lat = &self.layout.lattices[l];
        let c = [
            c0,
            dot(&lat.axes[1], x) * lat.period[1],
            dot(&lat.axes[2], x) * lat.period[2],
        ];
        let mut radial = 0.0;
        let mut directional = false;
        for &b in &self.lattice_boxes[l] {
            if inside(&self.bounds[b], &c) {
                let bx = &self.layout.boxes[b];
                radial += 0.5 * bx.scale * bx.scale * r[bx.level];
                directional = bx.level > 0;
            }
        }
        // (Directional boxes reach no x = 0: radial is 0 there.)
        if !directional || radial == 0.0 {
            return radial;
        }
        // A lattice's boxes share its direction ν = its axis e₁, hence one angular factor.
        let s = self.layout.angular_std;
        radial * (-angle::squared(unit, &gate.axis) / (s * s)).exp()
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

/// `c` lies in the rectangle `bounds` (all three axes).
#[inline]
fn inside(bounds: &[[f64; 2]; 3], c: &[f64; 3]) -> bool {
    bounds
        .iter()
        .zip(c)
        .all(|(&[lo, hi], &ca)| ca >= lo && ca <= hi)
}

/// The stored window of every box at its lattice points, in the box's order (axis 1 fastest):
/// ŵ_b times the lattice cell factor, computed in f64 and rounded to T.
pub fn box_windows<T: Real>(layout: &Layout) -> Vec<Vec<T>> {
    let ev = WindowEvaluator::new(layout);
    let per_lattice: Vec<Vec<(usize, Vec<T>)>> = (0..layout.lattices.len())
        .into_par_iter()
        .map(|l| lattice_windows(&ev, l))
        .collect();
    let mut windows = vec![Vec::new(); layout.boxes.len()];
    for (b, w) in per_lattice.into_iter().flatten() {
        windows[b] = w;
    }
    windows
}

/// The stored windows of lattice l's boxes. The levels of a direction overlap on its lattice,
/// so S is evaluated once per lattice point and shared by the boxes that hold it.
fn lattice_windows<T: Real>(ev: &WindowEvaluator, l: usize) -> Vec<(usize, Vec<T>)> {
    let layout = ev.layout;
    let lat = &layout.lattices[l];
    let cell = ev.cell_factor(l);
    let mut s = vec![f64::NAN; lat.n_points()];
    let index = |t: [i64; 3]| {
        let r: [usize; 3] = std::array::from_fn(|a| (t[a] - lat.lo[a]) as usize);
        r[0] + lat.len[0] * (r[1] + lat.len[1] * r[2])
    };
    ev.lattice_boxes[l]
        .iter()
        .map(|&b| {
            let bx = &layout.boxes[b];
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
                        let xi = lat.point(t);
                        let g = ev.raw(b, &xi, &[t[0] as f64, t[1] as f64, t[2] as f64]);
                        let v = if g == 0.0 {
                            0.0
                        } else {
                            let sk = &mut s[index(t)];
                            if sk.is_nan() {
                                *sk = ev.normaliser(&xi);
                            }
                            cell * bx.scale * g / sk.sqrt()
                        };
                        w.push(T::from_f64(v).unwrap());
                    }
                }
            }
            (b, w)
        })
        .collect()
}
