//! Set-points: the caller's coordinates folded onto the fine grid and sorted by bin.
//!
//! Each coordinate x (radians, period 2π) becomes, in f64, the fine-grid coordinate
//! g = frac(x/2π)·nf, then an integer first cell i0 = ceil(g − w/2) and an offset
//! d = i0 − g ∈ [−w/2, −w/2 + 1). The kernel weight on cell i0 + k is φ((d + k)/(w/2)).
//! Execute never forms x·nf/2π again, so single precision loses nothing on large grids.
//!
//! i0 is shifted by one period where needed so that u = i0 + w/2 + 1 lies in [0, nf); the
//! point's bin is u / tile, and a bin b's cells start at b·tile − (w/2 + 1).

use super::grid::Tiling;
use crate::error::{Error, Result};
use crate::sample::Sample;
use rayon::prelude::*;

/// Points sorted by bin, in the form the spreading and interpolation loops read.
pub struct SortedPoints<T> {
    pub dim: usize,
    pub width: usize,
    pub tiling: Tiling,
    /// Sorted position → the caller's point index.
    pub perm: Vec<u32>,
    /// Sorted positions of bin b: bin_start[b]..bin_start[b + 1].
    pub bin_start: Vec<u32>,
    /// Per dimension (only the first `dim` used), in sorted order: i0 and d.
    pub first: [Vec<i32>; 3],
    pub offset: [Vec<T>; 3],
}

impl<T> SortedPoints<T> {
    /// The points (each has its place in `perm`).
    pub fn m(&self) -> usize {
        self.perm.len()
    }
}

/// w/2 + 1 (integer w/2): the distance from a bin's first cell to the first i0 it holds.
pub fn origin_shift(width: usize) -> i64 {
    (width / 2) as i64 + 1
}

/// Per dimension (c, scale): the points' coordinates are placed as the radians
/// (x − c)·scale, in f64 whatever their precision (type 3 rescales its points and
/// frequencies onto its grid so).
pub type Frame = [(f64, f64); 3];

/// Coordinates in radians already (types 1 and 2): (x − 0)·1 is x.
pub const RADIANS: Frame = [(0.0, 1.0); 3];

/// The largest number of points a plan accepts (indices are 32-bit on the device).
pub(crate) const MAX_POINTS: usize = i32::MAX as usize;

/// (i0, d) of one coordinate on a fine grid of `nf` cells.
#[inline]
fn place(x: f64, nf: usize, width: usize) -> (i64, f64) {
    let t = x / std::f64::consts::TAU;
    let mut g = (t - t.floor()) * nf as f64;
    if g >= nf as f64 {
        g -= nf as f64;
    }
    let mut i0 = (g - width as f64 / 2.0).ceil() as i64;
    let d = i0 as f64 - g;
    if i0 + origin_shift(width) >= nf as i64 {
        i0 -= nf as i64;
    }
    (i0, d)
}

/// Checks the coordinates (finite) and sorts them into the bins of `tiling`. The coordinates
/// may be of another precision than the sorted offsets (type 3 places its rescaled points
/// from f64 in every plan).
pub fn sort_points<C: Sample, T: Sample>(
    coords: [&[C]; 3],
    dim: usize,
    m: usize,
    width: usize,
    tiling: Tiling,
) -> Result<SortedPoints<T>> {
    if m > MAX_POINTS {
        return Err(Error::Unsupported(format!(
            "{m} points; at most {MAX_POINTS} per plan"
        )));
    }
    for (axis, c) in coords.iter().enumerate().take(dim) {
        if let Some(j) = c[..m].par_iter().position_first(|v| !v.is_finite()) {
            return Err(Error::NonFinite(format!(
                "coordinate {} of point {j} is not finite; no points were set",
                ["x", "y", "z"][axis]
            )));
        }
    }
    let shift = origin_shift(width);
    let bin_of = |j: usize| -> usize {
        let mut b = 0;
        for d in (0..dim).rev() {
            let (i0, _) = place(coords[d][j].to_f64().unwrap(), tiling.nf[d], width);
            b = b * tiling.bins[d] + (i0 + shift) as usize / tiling.tile[d];
        }
        b
    };
    let n_bins = tiling.n_bins();
    if n_bins >= u32::MAX as usize {
        return Err(Error::Unsupported(format!("{n_bins} bins is too many")));
    }
    let mut keys = crate::error::try_vec(m, 0u32, "USFFT point bins")?;
    keys.par_iter_mut()
        .enumerate()
        .for_each(|(j, k)| *k = bin_of(j) as u32);
    let (perm, bin_start) = counting_sort(&keys, n_bins)?;
    drop(keys);
    let mut first: [Vec<i32>; 3] = Default::default();
    let mut offset: [Vec<T>; 3] = Default::default();
    for d in 0..dim {
        let mut f = crate::error::try_vec(m, 0i32, "USFFT sorted points")?;
        let mut o = crate::error::try_vec(m, T::zero(), "USFFT sorted points")?;
        f.par_iter_mut()
            .zip(o.par_iter_mut())
            .zip(perm.par_iter())
            .for_each(|((f, o), &j)| {
                let (i0, off) = place(coords[d][j as usize].to_f64().unwrap(), tiling.nf[d], width);
                *f = i0 as i32;
                *o = T::from_f64(off).unwrap();
            });
        first[d] = f;
        offset[d] = o;
    }
    Ok(SortedPoints {
        dim,
        width,
        tiling,
        perm,
        bin_start,
        first,
        offset,
    })
}

/// The order of the points by bin (`keys[j]` is point j's bin) and where each bin starts in
/// it: a parallel counting sort (per-chunk histograms, offsets in (bin, chunk) order, then
/// each chunk scatters its points), stable (caller order within a bin).
fn counting_sort(keys: &[u32], n_bins: usize) -> Result<(Vec<u32>, Vec<u32>)> {
    let m = keys.len();
    let chunks = (rayon::current_num_threads() * 4).clamp(1, m.max(1));
    let chunk_len = m.div_ceil(chunks).max(1);
    let mut counts: Vec<Vec<u32>> = keys
        .par_chunks(chunk_len)
        .map(|ks| {
            let mut h = vec![0u32; n_bins];
            for &k in ks {
                h[k as usize] += 1;
            }
            h
        })
        .collect();
    let mut bin_start = vec![0u32; n_bins + 1];
    let mut running = 0u32;
    for b in 0..n_bins {
        bin_start[b] = running;
        for h in counts.iter_mut() {
            let c = h[b];
            h[b] = running;
            running += c;
        }
    }
    bin_start[n_bins] = running;
    let mut perm = crate::error::try_vec(m, 0u32, "USFFT point order")?;
    let out = SyncPtr(perm.as_mut_ptr());
    keys.par_chunks(chunk_len)
        .zip(counts.par_iter_mut())
        .enumerate()
        .for_each(|(c, (ks, next))| {
            let out = &out;
            for (i, &k) in ks.iter().enumerate() {
                let slot = &mut next[k as usize];
                // SAFETY: each (bin, chunk) pair owns a disjoint range of slots.
                unsafe { *out.0.add(*slot as usize) = (c * chunk_len + i) as u32 };
                *slot += 1;
            }
        });
    Ok((perm, bin_start))
}

/// A raw pointer shared by parallel tasks that write disjoint elements.
#[derive(Clone, Copy)]
pub(crate) struct SyncPtr<T>(pub *mut T);
// SAFETY: users guarantee disjoint access.
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_covers_the_kernel_support() {
        for &w in &[2usize, 7, 8, 16] {
            for &x in &[-std::f64::consts::PI, -1.0, 0.0, 1e-9, 3.0, 10.0, -100.0] {
                let nf = 40;
                let (i0, d) = place(x, nf, w);
                assert!(d >= -(w as f64) / 2.0 - 1e-12 && d < -(w as f64) / 2.0 + 1.0);
                let u = i0 + origin_shift(w);
                assert!((0..nf as i64).contains(&u), "u {u} for x {x} w {w}");
                // The same grid coordinate modulo nf.
                let g = (i0 as f64 - d).rem_euclid(nf as f64);
                let want = (x / std::f64::consts::TAU).rem_euclid(1.0) * nf as f64;
                assert!((g - want).abs() < 1e-9 || (g - want).abs() > nf as f64 - 1e-9);
            }
        }
    }
}
