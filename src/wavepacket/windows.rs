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
    /// The boxes of each lattice.
    lattice_boxes: Vec<Vec<usize>>,
    /// Lattices whose cone may hold a frequency of each direction cell (`DirectionCells`).
    cells: DirectionCells,
}

/// Cells over the directions (a cube's faces, each K × K, seen from its centre), each listing
/// the lattices whose cone reaches it: the normaliser looks at a handful of lattices per
/// frequency instead of every one.
struct DirectionCells {
    lattices: Vec<Vec<usize>>,
}

/// Cells per face edge.
const K: usize = 16;

impl DirectionCells {
    fn new(axes: &[[f64; 3]], cone: &[f64]) -> Self {
        let angle =
            |a: &[f64; 3], b: &[f64; 3]| (dot(a, b) / (norm(a) * norm(b))).clamp(-1.0, 1.0).acos();
        let mut lattices = Vec::with_capacity(6 * K * K);
        for face in 0..6 {
            for i in 0..K {
                for j in 0..K {
                    let at = |u: f64, v: f64| -> [f64; 3] { face_point(face, u, v) };
                    let (u0, u1) = (cell_edge(i), cell_edge(i + 1));
                    let (v0, v1) = (cell_edge(j), cell_edge(j + 1));
                    let centre = at(0.5 * (u0 + u1), 0.5 * (v0 + v1));
                    // The cell is a spherical quadrilateral of great-circle arcs: no point of
                    // it is farther from the centre than its farthest corner.
                    let radius = [(u0, v0), (u0, v1), (u1, v0), (u1, v1)]
                        .iter()
                        .map(|&(u, v)| angle(&centre, &at(u, v)))
                        .fold(0.0, f64::max)
                        + 1e-9;
                    lattices.push(
                        (0..axes.len())
                            .filter(|&l| {
                                cone[l] <= -1.0
                                    || angle(&axes[l], &centre)
                                        <= cone[l].clamp(-1.0, 1.0).acos() + radius
                            })
                            .collect(),
                    );
                }
            }
        }
        DirectionCells { lattices }
    }

    /// The lattices that may hold frequencies of direction x/|x| (x ≠ 0).
    fn of(&self, x: &[f64; 3]) -> &[usize] {
        let a = (0..3)
            .max_by(|&p, &q| x[p].abs().total_cmp(&x[q].abs()))
            .unwrap();
        let face = 2 * a + usize::from(x[a] < 0.0);
        let m = x[a].abs();
        let (u, v) = (x[(a + 1) % 3] / m, x[(a + 2) % 3] / m);
        let cell = |t: f64| (((t + 1.0) * 0.5 * K as f64) as usize).min(K - 1);
        &self.lattices[(face * K + cell(u)) * K + cell(v)]
    }
}

/// Face coordinate of cell edge i (of K), in [−1, 1].
fn cell_edge(i: usize) -> f64 {
    -1.0 + 2.0 * i as f64 / K as f64
}

/// The point of cube face `face` (axis face/2, sign by face%2) at face coordinates (u, v).
fn face_point(face: usize, u: f64, v: f64) -> [f64; 3] {
    let a = face / 2;
    let mut p = [0.0; 3];
    p[a] = if face % 2 == 0 { 1.0 } else { -1.0 };
    p[(a + 1) % 3] = u;
    p[(a + 2) % 3] = v;
    p
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
        let cone: Vec<f64> = layout
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
        let mut lattice_boxes = vec![Vec::new(); layout.lattices.len()];
        for (b, bx) in layout.boxes.iter().enumerate() {
            lattice_boxes[bx.lattice].push(b);
        }
        let axes: Vec<[f64; 3]> = layout.lattices.iter().map(|l| l.axes[0]).collect();
        let cells = DirectionCells::new(&axes, &cone);
        WindowEvaluator {
            layout,
            radial: layout.radial(),
            reach,
            cone,
            lattice_boxes,
            cells,
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
        if rho == 0.0 {
            return (0..self.layout.lattices.len())
                .map(|l| self.side(l, xi, rho) + self.side(l, &neg, rho))
                .sum();
        }
        let plus: f64 = self
            .cells
            .of(xi)
            .iter()
            .map(|&l| self.side(l, xi, rho))
            .sum();
        let minus: f64 = self
            .cells
            .of(&neg)
            .iter()
            .map(|&l| self.side(l, &neg, rho))
            .sum();
        plus + minus
    }

    /// Σ over lattice l's boxes of ½·s_b²·g_b(x)² (|x| = rho).
    fn side(&self, l: usize, x: &[f64; 3], rho: f64) -> f64 {
        let lat = &self.layout.lattices[l];
        let along = dot(&lat.axes[0], x);
        let c0 = along * lat.period[0];
        let lo = lat.lo[0] as f64 - EDGE;
        let hi = (lat.lo[0] + lat.len[0] as i64 - 1) as f64 + EDGE;
        if along < self.cone[l] * rho || c0 < lo || c0 > hi {
            return 0.0;
        }
        let c = lat.coords(x);
        self.lattice_boxes[l]
            .iter()
            .map(|&b| {
                let g = self.raw(b, x, &c);
                let s = self.layout.boxes[b].scale;
                0.5 * s * s * g * g
            })
            .sum()
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
