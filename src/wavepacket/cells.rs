//! Direction cells: which lattices' cones can hold a frequency of a given direction, so the
//! normaliser looks at a handful of lattices per frequency instead of every one.

use super::layout::{dot, norm};

/// Cells over the directions (a cube's faces, each K × K, seen from its centre), each listing
/// the lattices whose cone reaches it.
pub struct DirectionCells {
    lattices: Vec<Vec<usize>>,
}

/// Cells per face edge: finer cells list fewer lattices whose cone misses the frequency.
const K: usize = 32;

impl DirectionCells {
    pub fn new(axes: &[[f64; 3]], cone: &[f64]) -> Self {
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
    pub fn of(&self, x: &[f64; 3]) -> &[usize] {
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
