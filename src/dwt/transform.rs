//! One level of the periodic wavelet transform on one contiguous signal, in the
//! sample type of the caller. The CPU backend strings these together; the CUDA
//! kernels implement the same index arithmetic.
//!
//! Polyphase form: with k − offset = 2σ_k + ρ_k (ρ_k ∈ {0, 1}), the forward step is
//! a[i] = Σ_k h1[k]·P_ρk[i + σ_k], where P_0 and P_1 are the even and odd samples, and
//! the inverse is x[2p + ρ] = Σ_{k: ρ_k = ρ} h2[k]·a[p − σ_k] + g2[k]·d[p − σ_k]
//! (indices of P, a, d modulo n/2). Each tap is then a contiguous multiply-add across a
//! group of outputs whose sums stay in registers, which the compiler vectorises; only
//! windows that cross the periodic wrap take indices modulo n/2. Every output sums its
//! terms in GSL's order, so that f64 results equal GSL's bit for bit: the forward in
//! ascending k; the inverse, which GSL computes as a scatter (input pairs i ascending,
//! each adding h2[k]·a[i] + g2[k]·d[i] for k ascending to its output), by (i, k)
//! ascending, i.e. by descending k away from the periodic wrap.

use super::wavelet::Wavelet;
use crate::backend::cpu::simd::{self, Kernel};
use crate::sample::Sample;

/// Outputs computed together from one window of the input.
const BLOCK: usize = 256;
/// Room for the spread of σ_k across the taps: at most ⌈nc/2⌉ ≤ 10 for GSL's filters.
const SPREAD: usize = 16;
/// A window's length: a block and the spread. A forward window holds two, the even
/// samples then the odd ones.
const WINDOW: usize = BLOCK + SPREAD;

/// A wavelet's filters converted to the sample type, with each tap's polyphase shift.
pub struct Filters<T> {
    /// Per tap in ascending k: h1[k], g1[k] and where it reads in a forward window.
    forward: Vec<(T, T, usize)>,
    /// Per output phase ρ, its taps in descending k: h2[k], g2[k] and where they read in
    /// an inverse window (σ_max − σ_k).
    inverse: [Vec<(T, T, usize)>; 2],
    h2: Vec<T>,
    g2: Vec<T>,
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
        let shift: Vec<usize> = sigma.iter().map(|&g| (g - sigma_min) as usize).collect();
        let phase: Vec<usize> = s.iter().map(|&s| s.rem_euclid(2) as usize).collect();
        let (h1, g1) = (conv(&w.analysis.low), conv(&w.analysis.high));
        let (h2, g2) = (conv(&w.synthesis.low), conv(&w.synthesis.high));
        let forward = (0..w.taps())
            .map(|k| (h1[k], g1[k], phase[k] * WINDOW + shift[k]))
            .collect();
        let inverse = [0, 1].map(|rho| {
            (0..w.taps())
                .rev()
                .filter(|&k| phase[k] == rho)
                .map(|k| (h2[k], g2[k], sigma_span - shift[k]))
                .collect()
        });
        Filters {
            forward,
            inverse,
            h2,
            g2,
            shift,
            phase,
            sigma_min,
            sigma_span,
        }
    }

    /// Forward step for output positions `i0..i0+approx.len()`: `approx[i]` and `detail[i]`
    /// from signal `x` (length n, a power of two).
    pub fn forward(&self, x: &[T], i0: usize, approx: &mut [T], detail: &mut [T]) {
        let step = Step::Forward {
            x,
            i0,
            approx,
            detail,
        };
        simd::run(StepKernel(self, step))
    }

    #[inline(always)]
    fn forward_groups<const G: usize>(
        &self,
        x: &[T],
        i0: usize,
        approx: &mut [T],
        detail: &mut [T],
    ) {
        let half = x.len() / 2;
        for b in (0..approx.len()).step_by(BLOCK) {
            let len = BLOCK.min(approx.len() - b);
            // The even and odd samples this block reads, periodically extended.
            let q0 = (i0 + b) as isize + self.sigma_min;
            let width = len + self.sigma_span;
            let mut win = [T::zero(); 2 * WINDOW];
            let (even, odd) = win.split_at_mut(WINDOW);
            if q0 >= 0 && q0 as usize + width <= half {
                let pairs = x[2 * q0 as usize..][..2 * width].chunks_exact(2);
                for ((e, o), pair) in even.iter_mut().zip(odd.iter_mut()).zip(pairs) {
                    (*e, *o) = (pair[0], pair[1]);
                }
            } else {
                // Near the wrap: indices modulo n/2, a power of two.
                for u in 0..width {
                    let q = (q0 + u as isize) as usize & (half - 1);
                    (even[u], odd[u]) = (x[2 * q], x[2 * q + 1]);
                }
            }
            // A short level computes a whole group from the zero-padded window and keeps
            // only its outputs.
            for c in (0..len).step_by(G) {
                let (mut sa, mut sd) = ([T::zero(); G], [T::zero(); G]);
                for &(h, g, at) in &self.forward {
                    let src: &[T; G] = win[at + c..][..G].try_into().unwrap();
                    for r in 0..G {
                        sa[r] = sa[r] + h * src[r];
                        sd[r] = sd[r] + g * src[r];
                    }
                }
                let keep = G.min(len - c);
                approx[b + c..][..keep].copy_from_slice(&sa[..keep]);
                detail[b + c..][..keep].copy_from_slice(&sd[..keep]);
            }
        }
    }

    /// Inverse step for output positions `j0..j0+out.len()` (both even), from `approx`
    /// and `detail` (each n/2 long): x[j] = Σ h2[k]·a[i] + g2[k]·d[i] over the taps k
    /// for which (2i + k − offset) ≡ j (mod n).
    pub fn inverse(&self, approx: &[T], detail: &[T], j0: usize, out: &mut [T]) {
        let step = Step::Inverse {
            approx,
            detail,
            j0,
            out,
        };
        simd::run(StepKernel(self, step))
    }

    #[inline(always)]
    fn inverse_groups<const G: usize>(&self, approx: &[T], detail: &[T], j0: usize, out: &mut [T]) {
        debug_assert!(j0 % 2 == 0 && out.len() % 2 == 0);
        let half = approx.len();
        let pairs = out.len() / 2;
        let sigma_max = self.sigma_min + self.sigma_span as isize;
        for b in (0..pairs).step_by(BLOCK) {
            let len = BLOCK.min(pairs - b);
            // a and d at p − σ for p in the block: window position u holds index
            // p0 − σ_max + u, so tap k reads from u = r + (σ_max − σ_k).
            let p0 = (j0 / 2 + b) as isize;
            let first = p0 - sigma_max;
            let width = len + self.sigma_span;
            let (mut wa, mut wd) = ([T::zero(); WINDOW], [T::zero(); WINDOW]);
            let (wa, wd): (&[T], &[T]) = if first >= 0 && first as usize + width + G <= half {
                // Interior: read in place (a group may run past the block, not the signal).
                (&approx[first as usize..], &detail[first as usize..])
            } else {
                // Near the wrap, or a short level: indices modulo n/2, a power of two,
                // zero-padded up to whole groups.
                for u in 0..width {
                    let i = (first + u as isize) as usize & (half - 1);
                    (wa[u], wd[u]) = (approx[i], detail[i]);
                }
                (&wa, &wd)
            };
            for c in (0..len).step_by(G) {
                let sum = [0, 1].map(|rho| {
                    let mut s = [T::zero(); G];
                    for &(h, g, at) in &self.inverse[rho] {
                        let a: &[T; G] = wa[at + c..][..G].try_into().unwrap();
                        let d: &[T; G] = wd[at + c..][..G].try_into().unwrap();
                        for r in 0..G {
                            s[r] = s[r] + (h * a[r] + g * d[r]);
                        }
                    }
                    s
                });
                let keep = G.min(len - c);
                let dst = out[2 * (b + c)..][..2 * keep].chunks_exact_mut(2);
                for ((pair, &even), &odd) in dst.zip(&sum[0]).zip(&sum[1]) {
                    (pair[0], pair[1]) = (even, odd);
                }
            }
            // Where a tap wraps around the signal, GSL's order is no longer descending k.
            let head = (sigma_max - p0).clamp(0, len as isize) as usize;
            let tail = (half as isize + self.sigma_min - p0).clamp(0, len as isize) as usize;
            for r in (0..head).chain(tail.max(head)..len) {
                let p = p0 + r as isize;
                for rho in 0..2 {
                    out[2 * (b + r) + rho] = self.inverse_in_gsl_order(approx, detail, p, rho);
                }
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

/// A forward or inverse step over a range of outputs (the arguments of
/// [`Filters::forward`] and [`Filters::inverse`]).
enum Step<'a, T> {
    Forward {
        x: &'a [T],
        i0: usize,
        approx: &'a mut [T],
        detail: &'a mut [T],
    },
    Inverse {
        approx: &'a [T],
        detail: &'a [T],
        j0: usize,
        out: &'a mut [T],
    },
}

/// A step on a wavelet's filters, as a kernel for the vector unit present.
struct StepKernel<'a, T>(&'a Filters<T>, Step<'a, T>);

impl<T: Sample> Kernel for StepKernel<'_, T> {
    type Output = ();

    /// Groups of outputs whose sums stay in registers, four vectors each: 16 f32 or 8 f64
    /// outputs with 128-bit vectors, twice that with 256-bit ones.
    #[inline(always)]
    fn run(self, vector_bytes: usize) {
        match 4 * vector_bytes / std::mem::size_of::<T>() {
            32 => self.groups::<32>(),
            16 => self.groups::<16>(),
            _ => self.groups::<8>(),
        }
    }
}

impl<T: Sample> StepKernel<'_, T> {
    #[inline(always)]
    fn groups<const G: usize>(self) {
        let StepKernel(f, step) = self;
        match step {
            Step::Forward {
                x,
                i0,
                approx,
                detail,
            } => f.forward_groups::<G>(x, i0, approx, detail),
            Step::Inverse {
                approx,
                detail,
                j0,
                out,
            } => f.inverse_groups::<G>(approx, detail, j0, out),
        }
    }
}
