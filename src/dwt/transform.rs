//! One level of the periodic wavelet transform on one contiguous signal, in the
//! sample type of the caller. The CPU backend strings these together; the CUDA
//! kernels implement the same index arithmetic.
//!
//! Polyphase form: with k − offset = 2σ_k + ρ_k (ρ_k ∈ {0, 1}), the forward step is
//! a[i] = Σ_k h1[k]·P_ρk[i + σ_k], where P_0 and P_1 are the even and odd samples, and
//! the inverse is x[2p + ρ] = Σ_{k: ρ_k = ρ} h2[k]·a[p − σ_k] + g2[k]·d[p − σ_k]
//! (indices of P, a, d modulo n/2). Each tap is then a contiguous multiply-add across a
//! block of outputs, which the compiler vectorises. Every output sums its terms in GSL's
//! order, so that f64 results equal GSL's bit for bit: the forward in ascending k; the
//! inverse, which GSL computes as a scatter (input pairs i ascending, each adding
//! h2[k]·a[i] + g2[k]·d[i] for k ascending to its output), by (i, k) ascending, i.e. by
//! descending k away from the periodic wrap.

use super::wavelet::Wavelet;
use crate::sample::Sample;

/// Outputs computed together (accumulators kept on the stack).
const BLOCK: usize = 256;
/// Room for the spread of σ_k across the taps: at most ⌈nc/2⌉ ≤ 10 for GSL's filters.
const SPREAD: usize = 16;

/// A wavelet's filters converted to the sample type, with each tap's polyphase shift.
pub struct Filters<T> {
    pub h1: Vec<T>,
    pub g1: Vec<T>,
    pub h2: Vec<T>,
    pub g2: Vec<T>,
    pub offset: usize,
    /// σ_k − min σ, and ρ_k, per tap.
    shift: Vec<usize>,
    phase: Vec<usize>,
    sigma_min: isize,
    sigma_span: usize,
}

impl<T: Sample> Filters<T> {
    pub fn new(w: &Wavelet) -> Filters<T> {
        let conv = |v: &[f64]| -> Vec<T> { v.iter().map(|&c| T::from_f64(c).unwrap()).collect() };
        let s: Vec<isize> = (0..w.taps())
            .map(|k| k as isize - w.offset as isize)
            .collect();
        let sigma: Vec<isize> = s.iter().map(|&s| s.div_euclid(2)).collect();
        let sigma_min = *sigma.iter().min().unwrap();
        let sigma_span = (*sigma.iter().max().unwrap() - sigma_min) as usize;
        assert!(
            sigma_span < SPREAD,
            "filter longer than the tables GSL provides"
        );
        Filters {
            h1: conv(&w.h1),
            g1: conv(&w.g1),
            h2: conv(&w.h2),
            g2: conv(&w.g2),
            offset: w.offset,
            shift: sigma.iter().map(|&g| (g - sigma_min) as usize).collect(),
            phase: s.iter().map(|&s| s.rem_euclid(2) as usize).collect(),
            sigma_min,
            sigma_span,
        }
    }

    /// Forward step for output positions `i0..i0+approx.len()`: `approx[i]` and `detail[i]`
    /// from signal `x` (length n, a power of two).
    pub fn forward(&self, x: &[T], i0: usize, approx: &mut [T], detail: &mut [T]) {
        let half = (x.len() / 2) as isize;
        let zero = T::zero();
        for b in (0..approx.len()).step_by(BLOCK) {
            let len = BLOCK.min(approx.len() - b);
            // The even and odd samples this block reads, periodically extended.
            let q0 = (i0 + b) as isize + self.sigma_min;
            let width = len + self.sigma_span;
            let (mut even, mut odd) = ([zero; BLOCK + SPREAD], [zero; BLOCK + SPREAD]);
            for u in 0..width {
                let q = (q0 + u as isize).rem_euclid(half) as usize;
                even[u] = x[2 * q];
                odd[u] = x[2 * q + 1];
            }
            let (mut sa, mut sd) = ([zero; BLOCK], [zero; BLOCK]);
            for k in 0..self.h1.len() {
                let src = if self.phase[k] == 0 { &even } else { &odd };
                let src = &src[self.shift[k]..self.shift[k] + len];
                let (h, g) = (self.h1[k], self.g1[k]);
                for ((a, d), &v) in sa[..len].iter_mut().zip(&mut sd[..len]).zip(src) {
                    *a = *a + h * v;
                    *d = *d + g * v;
                }
            }
            approx[b..b + len].copy_from_slice(&sa[..len]);
            detail[b..b + len].copy_from_slice(&sd[..len]);
        }
    }

    /// Inverse step for output positions `j0..j0+out.len()` (both even), from `approx`
    /// and `detail` (each n/2 long): x[j] = Σ h2[k]·a[i] + g2[k]·d[i] over the taps k
    /// for which (2i + k − offset) ≡ j (mod n).
    pub fn inverse(&self, approx: &[T], detail: &[T], j0: usize, out: &mut [T]) {
        debug_assert!(j0 % 2 == 0 && out.len() % 2 == 0);
        let half = approx.len() as isize;
        let zero = T::zero();
        let pairs = out.len() / 2;
        for b in (0..pairs).step_by(BLOCK) {
            let len = BLOCK.min(pairs - b);
            // a and d at p − σ for p in the block: window position u holds index
            // p0 − σ_max + u, so tap k reads from u = r + (σ_max − σ_k).
            let p0 = (j0 / 2 + b) as isize;
            let first = p0 - (self.sigma_min + self.sigma_span as isize);
            let width = len + self.sigma_span;
            let (mut wa, mut wd) = ([zero; BLOCK + SPREAD], [zero; BLOCK + SPREAD]);
            for u in 0..width {
                let i = (first + u as isize).rem_euclid(half) as usize;
                wa[u] = approx[i];
                wd[u] = detail[i];
            }
            let mut sum = [[zero; BLOCK]; 2];
            for k in (0..self.h2.len()).rev() {
                let at = self.sigma_span - self.shift[k];
                let (h, g) = (self.h2[k], self.g2[k]);
                let acc = &mut sum[self.phase[k]][..len];
                for ((s, &a), &d) in acc.iter_mut().zip(&wa[at..at + len]).zip(&wd[at..at + len]) {
                    *s = *s + (h * a + g * d);
                }
            }
            // Where a tap wraps around the signal, GSL's order is no longer descending k.
            let sigma_max = self.sigma_min + self.sigma_span as isize;
            for r in 0..len {
                let p = p0 + r as isize;
                if p < sigma_max || p >= half + self.sigma_min {
                    for (rho, s) in sum.iter_mut().enumerate() {
                        s[r] = self.inverse_in_gsl_order(approx, detail, p, rho);
                    }
                }
            }
            for (r, pair) in out[2 * b..2 * (b + len)].chunks_exact_mut(2).enumerate() {
                pair[0] = sum[0][r];
                pair[1] = sum[1][r];
            }
        }
    }

    /// x[2p + ρ] summed term by term in GSL's order: by input index i = (p − σ_k) mod n/2,
    /// then by k (taps that alias on short signals land on the same i).
    fn inverse_in_gsl_order(&self, approx: &[T], detail: &[T], p: isize, rho: usize) -> T {
        let half = approx.len() as isize;
        let sigma = |k: usize| self.sigma_min + self.shift[k] as isize;
        let mut terms = [(0usize, 0usize); 2 * SPREAD];
        let mut count = 0;
        for k in (0..self.h2.len()).filter(|&k| self.phase[k] == rho) {
            terms[count] = ((p - sigma(k)).rem_euclid(half) as usize, k);
            count += 1;
        }
        terms[..count].sort_unstable();
        terms[..count].iter().fold(T::zero(), |s, &(i, k)| {
            s + (self.h2[k] * approx[i] + self.g2[k] * detail[i])
        })
    }
}
