//! Frequency cells: which lattices can hold a frequency x, by its direction and its length, so
//! the normaliser looks at a handful of lattices per frequency instead of every one.
//!
//! A lattice's cone (the directions of its rectangle) is wide near the origin but its boxes
//! are narrow far out: listing lattices by direction alone let through several times more
//! lattices than hold x. Each cell is a direction cell (a cube face's K × K cells, seen from
//! its centre) times a shell of |x|; it lists the lattices with a box meeting a ball that
//! contains the cell.

use super::layout::{dot, norm};
use rayon::prelude::*;

/// Cells per face edge.
pub(super) const K: usize = 32;
/// Shells over 0 ≤ |x| ≤ reach.
pub(super) const SHELLS: usize = 32;

/// What the cells are built from.
pub struct CellInput<'a> {
    /// Per lattice, its axes (axes[0] = its direction).
    pub axes: Vec<[[f64; 3]; 3]>,
    /// Per lattice, the cosine of its cone's half-angle (−1: no cone).
    pub cone: &'a [f64],
    /// Per lattice, its boxes' [lo, hi] along each axis, in frequency units.
    pub boxes: Vec<Vec<[[f64; 2]; 3]>>,
    /// Largest |x| asked about.
    pub reach: f64,
}

pub struct FrequencyCells {
    /// Shell width in |x|.
    pub(super) width: f64,
    /// The list of cell c is lattices[offsets[c]..offsets[c + 1]], ascending.
    pub(super) offsets: Vec<usize>,
    pub(super) lattices: Vec<u32>,
}

impl FrequencyCells {
    pub fn new(input: &CellInput) -> Self {
        let width = (input.reach + 1e-6) / SHELLS as f64;
        let per_direction: Vec<Vec<Vec<u32>>> = (0..6 * K * K)
            .into_par_iter()
            .map(|c| direction_cell(input, c, width))
            .collect();
        let mut offsets = Vec::with_capacity(6 * K * K * SHELLS + 1);
        let mut lattices = Vec::new();
        offsets.push(0);
        for list in per_direction.into_iter().flatten() {
            lattices.extend(list);
            offsets.push(lattices.len());
        }
        FrequencyCells {
            width,
            offsets,
            lattices,
        }
    }

    /// The lattices that may hold x (0 < |x| = rho ≤ reach), ascending.
    pub fn of(&self, x: &[f64; 3], rho: f64) -> &[u32] {
        let a = (0..3)
            .max_by(|&p, &q| x[p].abs().total_cmp(&x[q].abs()))
            .unwrap();
        let face = 2 * a + usize::from(x[a] < 0.0);
        let m = x[a].abs();
        let (u, v) = (x[(a + 1) % 3] / m, x[(a + 2) % 3] / m);
        let cell = |t: f64| (((t + 1.0) * 0.5 * K as f64) as usize).min(K - 1);
        let shell = ((rho / self.width) as usize).min(SHELLS - 1);
        let c = ((face * K + cell(u)) * K + cell(v)) * SHELLS + shell;
        &self.lattices[self.offsets[c]..self.offsets[c + 1]]
    }
}

/// The lists of direction cell c's shells.
fn direction_cell(input: &CellInput, c: usize, width: f64) -> Vec<Vec<u32>> {
    let angle =
        |a: &[f64; 3], b: &[f64; 3]| (dot(a, b) / (norm(a) * norm(b))).clamp(-1.0, 1.0).acos();
    let (face, i, j) = (c / (K * K), c / K % K, c % K);
    let at = |u: f64, v: f64| -> [f64; 3] { face_point(face, u, v) };
    let (u0, u1) = (cell_edge(i), cell_edge(i + 1));
    let (v0, v1) = (cell_edge(j), cell_edge(j + 1));
    let centre = at(0.5 * (u0 + u1), 0.5 * (v0 + v1));
    // The cell is a spherical quadrilateral of great-circle arcs: no point of it is farther
    // from the centre than its farthest corner.
    let radius = [(u0, v0), (u0, v1), (u1, v0), (u1, v1)]
        .iter()
        .map(|&(u, v)| angle(&centre, &at(u, v)))
        .fold(0.0, f64::max)
        + 1e-9;
    let n = norm(&centre);
    let unit = centre.map(|x| x / n);
    let by_cone: Vec<usize> = (0..input.axes.len())
        .filter(|&l| {
            let cone = input.cone[l];
            cone <= -1.0 || angle(&input.axes[l][0], &unit) <= cone.clamp(-1.0, 1.0).acos() + radius
        })
        .collect();
    (0..SHELLS)
        .map(|s| {
            let (r0, r1) = (s as f64 * width, (s + 1) as f64 * width);
            let p = unit.map(|x| x * 0.5 * (r0 + r1));
            // x = ρ·û with ρ in [r0, r1] and û within `radius` of the centre is within
            // ρ·2 sin(radius/2) + (r1 − r0)/2 of p.
            let ball = r1 * 2.0 * (0.5 * radius).sin() + 0.5 * (r1 - r0) + 1e-9;
            by_cone
                .iter()
                .filter(|&&l| {
                    let q = input.axes[l].map(|e| dot(&e, &p));
                    input.boxes[l].iter().any(|b| {
                        let d2: f64 = (0..3)
                            .map(|a| (b[a][0] - q[a]).max(q[a] - b[a][1]).max(0.0).powi(2))
                            .sum();
                        d2 <= ball * ball
                    })
                })
                .map(|&l| l as u32)
                .collect()
        })
        .collect()
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
