//! One level of the periodic wavelet transform on one contiguous signal, in the
//! sample type of the caller. The CPU backend strings these together; the CUDA
//! kernels implement the same index arithmetic.

use super::wavelet::Wavelet;
use crate::sample::Sample;

/// A wavelet's filters converted to the sample type.
pub struct Filters<T> {
    pub h1: Vec<T>,
    pub g1: Vec<T>,
    pub h2: Vec<T>,
    pub g2: Vec<T>,
    pub offset: usize,
}

impl<T: Sample> Filters<T> {
    pub fn new(w: &Wavelet) -> Filters<T> {
        let conv = |v: &[f64]| v.iter().map(|&c| T::from_f64(c).unwrap()).collect();
        Filters {
            h1: conv(&w.h1),
            g1: conv(&w.g1),
            h2: conv(&w.h2),
            g2: conv(&w.g2),
            offset: w.offset,
        }
    }

    /// Forward step for output positions `i0..i0+approx.len()`: `approx[i]` and `detail[i]`
    /// from signal `x` (length n, a power of two).
    pub fn forward(&self, x: &[T], i0: usize, approx: &mut [T], detail: &mut [T]) {
        let n = x.len();
        let nc = self.h1.len();
        for (r, (a, d)) in approx.iter_mut().zip(detail.iter_mut()).enumerate() {
            let base = 2 * (i0 + r) as isize - self.offset as isize;
            let (mut sa, mut sd) = (T::zero(), T::zero());
            if base >= 0 && base as usize + nc <= n {
                let window = &x[base as usize..base as usize + nc];
                for k in 0..nc {
                    sa = sa + self.h1[k] * window[k];
                    sd = sd + self.g1[k] * window[k];
                }
            } else {
                for k in 0..nc {
                    let v = x[(base + k as isize).rem_euclid(n as isize) as usize];
                    sa = sa + self.h1[k] * v;
                    sd = sd + self.g1[k] * v;
                }
            }
            *a = sa;
            *d = sd;
        }
    }

    /// Inverse step for output positions `j0..j0+out.len()`, from `approx` and `detail`
    /// (each n/2 long). Written as a gather: x[j] = Σ h2[k]·a[i] + g2[k]·d[i] over the
    /// taps k for which (2i + k − offset) ≡ j (mod n).
    pub fn inverse(&self, approx: &[T], detail: &[T], j0: usize, out: &mut [T]) {
        let half = approx.len() as isize;
        let nc = self.h1.len() as isize;
        for (r, x) in out.iter_mut().enumerate() {
            let jo = (j0 + r) as isize + self.offset as isize;
            let mut s = T::zero();
            let mut k = jo & 1;
            if jo - (nc - 1) >= 0 && jo / 2 < half {
                while k < nc {
                    let i = ((jo - k) / 2) as usize;
                    s = s + self.h2[k as usize] * approx[i] + self.g2[k as usize] * detail[i];
                    k += 2;
                }
            } else {
                while k < nc {
                    let i = ((jo - k) / 2).rem_euclid(half) as usize;
                    s = s + self.h2[k as usize] * approx[i] + self.g2[k as usize] * detail[i];
                    k += 2;
                }
            }
            *x = s;
        }
    }
}
