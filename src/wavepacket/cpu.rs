//! The box stage on the CPU: lattice values ↔ box coefficients (cut out, window, box FFT).
//! The USFFT between the data and the lattice values runs before (forward) or after (adjoint).
//! Each stage works on a range of boxes (forward) or of lattices (adjoint), so that a call
//! can run it in chunks between progress reports. `shifts` (one per box of the layout, or
//! none) moves each box's coefficient grid by a fraction of a step (`boxfft`, `tiles`).

use super::boxfft::BoxFfts;
use super::layout::{Layout, WaveBox};
use crate::sample::Real;
use num_complex::Complex;
use rayon::prelude::*;
use std::ops::Range;

/// Index of box `bx`'s local point i in the plan's lattice-value array.
fn point_index(layout: &Layout, bx: &WaveBox, i: [usize; 3]) -> usize {
    let l = &layout.lattices[bx.lattice];
    let r: [usize; 3] = std::array::from_fn(|a| (bx.lo[a] - l.lo[a]) as usize + i[a]);
    l.point_offset + (r[2] * l.len[1] + r[1]) * l.len[0] + r[0]
}

/// Calls `f(local linear index, value index)` over box `bx` in its order (axis 1 fastest).
fn for_each_point(layout: &Layout, bx: &WaveBox, mut f: impl FnMut(usize, usize)) {
    let [n1, n2, n3] = bx.shape;
    let mut k = 0;
    for i3 in 0..n3 {
        for i2 in 0..n2 {
            let start = point_index(layout, bx, [0, i2, i3]);
            for i1 in 0..n1 {
                f(k, start + i1);
                k += 1;
            }
        }
    }
}

/// Splits `coeffs`, the coefficients of `boxes`, into one mutable slice per box.
pub(super) fn box_slices<'a, T>(
    layout: &Layout,
    boxes: Range<usize>,
    mut coeffs: &'a mut [T],
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(boxes.len());
    for bx in &layout.boxes[boxes] {
        let (head, tail) = coeffs.split_at_mut(bx.n_coefficients());
        out.push(head);
        coeffs = tail;
    }
    out
}

/// The box stage of a plan: its layout, each box's window and the box FFTs, with a grid
/// shift per box (`shifts`: one per box of the layout, or none).
pub struct Boxes<'a, T: Real> {
    pub layout: &'a Layout,
    pub windows: &'a [Vec<T>],
    pub ffts: &'a BoxFfts<T>,
    pub shifts: &'a [[f64; 3]],
}

impl<T: Real> Boxes<'_, T> {
    /// The grid shift of box `b`: `shifts[b]`, or none when `shifts` is empty.
    fn shift(&self, b: usize) -> [f64; 3] {
        self.shifts.get(b).copied().unwrap_or([0.0; 3])
    }

    /// The coefficients of `boxes` (in `coeffs`, all the layout's; theirs only written)
    /// from the lattice values F̂(ξ).
    pub fn forward(&self, values: &[Complex<T>], boxes: Range<usize>, coeffs: &mut [Complex<T>]) {
        let layout = self.layout;
        let lo = layout.boxes[boxes.start].offset;
        let last = &layout.boxes[boxes.end - 1];
        let coeffs = &mut coeffs[lo..last.offset + last.n_coefficients()];
        let first = boxes.start;
        box_slices(layout, boxes, coeffs)
            .into_par_iter()
            .enumerate()
            .for_each(|(i, out)| {
                let b = first + i;
                let bx = &layout.boxes[b];
                let w = &self.windows[b];
                for_each_point(layout, bx, |k, p| out[k] = values[p] * w[k]);
                self.ffts.to_coefficients(out, bx, self.shift(b));
            });
    }

    /// The adjoint: the values of the points of `lattices` (in `values`, all the layout's;
    /// theirs only written), summed over the boxes sharing a lattice, from the coefficients.
    pub fn adjoint(
        &self,
        coeffs: &[Complex<T>],
        lattices: Range<usize>,
        values: &mut [Complex<T>],
    ) {
        let layout = self.layout;
        let zero = Complex::new(T::zero(), T::zero());
        let first = lattices.start;
        let mut chunks = Vec::with_capacity(lattices.len());
        let mut rest = &mut values[layout.lattices[first].point_offset..];
        for l in &layout.lattices[lattices] {
            let (head, tail) = rest.split_at_mut(l.n_points());
            chunks.push(head);
            rest = tail;
        }
        chunks.into_par_iter().enumerate().for_each(|(i, vals)| {
            let li = first + i;
            vals.fill(zero);
            let base = layout.lattices[li].point_offset;
            let mut u = Vec::new();
            for (b, bx) in layout.boxes.iter().enumerate() {
                if bx.lattice != li {
                    continue;
                }
                u.clear();
                u.extend_from_slice(&coeffs[bx.offset..bx.offset + bx.n_coefficients()]);
                self.ffts.from_coefficients(&mut u, bx, self.shift(b));
                let w = &self.windows[b];
                for_each_point(layout, bx, |k, p| {
                    vals[p - base] = vals[p - base] + u[k] * w[k]
                });
            }
        });
    }
}
