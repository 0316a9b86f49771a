//! Points on rotated lattices: ξ(t) = Σ_a t_a/P_a · e_a (cycles) for every integer t in a
//! box `lo … lo+len−1`, axis 1 fastest, lattice after lattice; the plan's coordinate of a
//! point is 2π·ξ rounded to the plan's precision. The wave packets' lattice points are such
//! sets (10⁸–10⁹ points at 256³). On the GPU a plan set from lattices keeps only their small
//! table and the sort's permutation (4 bytes a point instead of 28 in f32): the kernels
//! compute each point's coordinates where they use them (`kernels/usfft.cu`,
//! `lattice_point`), rounded in the same order as `PointLattice::point` here, so that both
//! backends see the same coordinates bit for bit.

use crate::error::{try_vec, Error, Result};
use crate::sample::Real;
use crate::usfft::points::MAX_POINTS;
use rayon::prelude::*;

/// One rotated lattice of points.
#[derive(Clone, Debug, PartialEq)]
pub struct PointLattice {
    /// Unit axes e_a (unused ones: the remaining unit vectors).
    pub axes: [[f64; 3]; 3],
    /// Period P_a along each axis (1 for unused axes).
    pub period: [f64; 3],
    /// The box of integer lattice coordinates: `lo[a] … lo[a] + len[a] − 1` (len 1 on an
    /// unused axis, with lo 0).
    pub lo: [i64; 3],
    pub len: [usize; 3],
}

impl PointLattice {
    /// ξ(t) in cycles.
    pub fn point(&self, t: [i64; 3]) -> [f64; 3] {
        point_of(&self.axes, &self.period, t)
    }

    pub fn n_points(&self) -> usize {
        self.len.iter().product()
    }
}

/// ξ(t) = Σ_a t_a·(1/P_a) · e_a in cycles, each operation rounded on its own and summed axis
/// by axis in a fixed order: the device's (a multiplication by the reciprocal period rather
/// than a division, which costs the kernels several times more).
pub fn point_of(axes: &[[f64; 3]; 3], period: &[f64; 3], t: [i64; 3]) -> [f64; 3] {
    let mut x = [0.0; 3];
    for ((&ta, p), axis) in t.iter().zip(period).zip(axes) {
        let s = ta as f64 * (1.0 / p);
        for (xd, ad) in x.iter_mut().zip(axis) {
            *xd += s * ad;
        }
    }
    x
}

/// The point count of `lattices`, refused beyond what a plan takes.
pub fn count_points(lattices: &[PointLattice]) -> Result<usize> {
    let m = lattices
        .iter()
        .try_fold(0usize, |m, l| m.checked_add(l.n_points()));
    match m {
        Some(m) if m <= MAX_POINTS => Ok(m),
        _ => Err(Error::Unsupported(format!(
            "lattices of more than {MAX_POINTS} points; at most {MAX_POINTS} per plan"
        ))),
    }
}

/// The coordinates (radians, 2π·ξ in T) of every point, per dimension (the first `dim`),
/// the lattices in parallel on the calling pool.
pub fn coordinates<T: Real>(lattices: &[PointLattice], dim: usize) -> Result<[Vec<T>; 3]> {
    let m = count_points(lattices)?;
    let mut coords: [Vec<T>; 3] = Default::default();
    for c in coords.iter_mut().take(dim) {
        *c = try_vec(m, T::zero(), "lattice point coordinates")?;
    }
    // Each lattice's part of each array (empty for unused dimensions).
    let mut parts: Vec<[&mut [T]; 3]> = Vec::with_capacity(lattices.len());
    let mut rest = coords.each_mut().map(|c| c.as_mut_slice());
    for l in lattices {
        let split = rest.map(|r| r.split_at_mut(l.n_points().min(r.len())));
        let (mine, after): (Vec<_>, Vec<_>) = split.into_iter().unzip();
        parts.push(mine.try_into().unwrap());
        rest = after.try_into().unwrap();
    }
    parts
        .into_par_iter()
        .zip(lattices.par_iter())
        .for_each(|(out, l)| fill(l, dim, out));
    Ok(coords)
}

/// One lattice's coordinates, axis 1 fastest.
fn fill<T: Real>(l: &PointLattice, dim: usize, out: [&mut [T]; 3]) {
    let mut j = 0;
    for t3 in 0..l.len[2] as i64 {
        for t2 in 0..l.len[1] as i64 {
            for t1 in 0..l.len[0] as i64 {
                let xi = l.point([l.lo[0] + t1, l.lo[1] + t2, l.lo[2] + t3]);
                for d in 0..dim {
                    out[d][j] = T::from_f64(std::f64::consts::TAU * xi[d]).unwrap();
                }
                j += 1;
            }
        }
    }
}

/// The lattices as the kernels read them: 12 reals a lattice (the axes row by row, then the
/// reciprocal periods), 6 integers (lo, then len) and where each lattice's points start.
pub fn device_table(lattices: &[PointLattice]) -> (Vec<f64>, Vec<i64>, Vec<i64>) {
    let (mut frames, mut shapes, mut first) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 0i64;
    for l in lattices {
        frames.extend(l.axes.iter().flatten());
        frames.extend(l.period.map(|p| 1.0 / p));
        shapes.extend(l.lo);
        shapes.extend(l.len.map(|v| v as i64));
        first.push(at);
        at += l.n_points() as i64;
    }
    (frames, shapes, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tilted() -> Vec<PointLattice> {
        let (c, s) = (0.6f64, 0.8f64);
        vec![
            PointLattice {
                axes: [[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]],
                period: [40.5, 33.0, 1.0],
                lo: [-3, 2, 0],
                len: [5, 4, 1],
            },
            PointLattice {
                axes: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                period: [20.0, 18.0, 1.0],
                lo: [1, -2, 0],
                len: [3, 2, 1],
            },
        ]
    }

    #[test]
    fn coordinates_run_lattice_after_lattice_axis_one_fastest() {
        let lattices = tilted();
        let c = coordinates::<f64>(&lattices, 2).unwrap();
        assert_eq!(c[0].len(), 26);
        assert!(c[2].is_empty());
        // Point 6 of the first lattice: t = (−3 + 1, 2 + 1).
        let (t1, t2) = (-2.0, 3.0);
        let x = std::f64::consts::TAU * (t1 / 40.5 * 0.6 + t2 / 33.0 * -0.8);
        let y = std::f64::consts::TAU * (t1 / 40.5 * 0.8 + t2 / 33.0 * 0.6);
        assert!((c[0][6] - x).abs() < 1e-15 && (c[1][6] - y).abs() < 1e-15);
        // The second lattice's first point: t = (1, −2) on the unrotated axes.
        let x = std::f64::consts::TAU * (1.0 / 20.0);
        let y = std::f64::consts::TAU * (-2.0 / 18.0);
        assert!((c[0][20] - x).abs() < 1e-15 && (c[1][20] - y).abs() < 1e-15);
        let (frames, shapes, first) = device_table(&lattices);
        assert_eq!((frames.len(), shapes.len(), first), (24, 12, vec![0, 20]));
    }

    #[test]
    fn too_many_points_are_refused() {
        let mut l = tilted();
        l[0].len = [1 << 16, 1 << 16, 1];
        assert!(matches!(count_points(&l), Err(Error::Unsupported(_))));
    }
}
