//! From summed cross-spectra to correlations, and the nonlinear stacks.
//!
//! A correlation from a cross-spectrum C(k) = Σ_w conj(S_i(k, w))·S_j(k, w) over the
//! n windows (NoisePy's `correlate`): v = C/n on bins 0..nfft2, minus its mean over those
//! bins (NoisePy removes it to suppress a spike at zero lag), Hermitian completion, the
//! inverse FFT with 1/nfft, real part. Sample τ of the result is the correlation at lag
//! τ·dt, c(τ) = Σ_t x_i(t)·x_j(t + τ): positive lags are station j later than station i.
//! The output keeps lags −maxlag..=maxlag: element k is lag (k − maxlag)·dt. (NoisePy
//! labels its samples one lag too high for even nfft; see the README.)

use super::geometry::Geometry;
use super::options::{Options, StackMethod};
use crate::fft_len::next_fast_len;
use num_complex::{Complex32, Complex64};
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// Inverse FFTs of one plan's length, reused per thread.
pub struct Inverse {
    fft: Arc<dyn Fft<f64>>,
    buf: Vec<Complex64>,
    scratch: Vec<Complex64>,
}

impl Inverse {
    pub fn new(nfft: usize) -> Inverse {
        let fft = FftPlanner::new().plan_fft_inverse(nfft);
        let scratch = vec![Complex64::default(); fft.get_inplace_scratch_len()];
        Inverse {
            fft,
            buf: vec![Complex64::default(); nfft],
            scratch,
        }
    }

    /// The correlation of a cross-spectrum `band` (the geometry's band bins, summed over
    /// `count` windows) into `out` (2·maxlag + 1 lags). `zero_dc`: NoisePy zeroes bin 0 of
    /// single-window cross-correlations (its substack path). A count of 0 gives zeros.
    pub fn correlation(
        &mut self,
        band: &[Complex32],
        count: u32,
        zero_dc: bool,
        g: &Geometry,
        out: &mut [f32],
    ) {
        let out = &mut out[..g.n_lags()];
        if count == 0 {
            out.fill(0.0);
            return;
        }
        let n = g.nfft;
        let scale = 1.0 / count as f64;
        self.buf.fill(Complex64::default());
        let mut mean = Complex64::default();
        for (k, c) in band.iter().enumerate() {
            let v = Complex64::new(c.re as f64, c.im as f64) * scale;
            self.buf[g.band_start + k] = v;
            mean += v;
        }
        mean /= g.nfft2 as f64;
        for k in 0..g.nfft2 {
            self.buf[k] -= mean;
        }
        if zero_dc {
            self.buf[0] = Complex64::default();
        }
        for k in 1..g.nfft2 {
            self.buf[n - k] = self.buf[k].conj();
        }
        self.fft
            .process_with_scratch(&mut self.buf, &mut self.scratch);
        let l = g.maxlag as isize;
        for (k, o) in out.iter_mut().enumerate() {
            let tau = (k as isize - l).rem_euclid(n as isize) as usize;
            *o = (self.buf[tau].re / n as f64) as f32;
        }
    }
}

/// The length a row of `m` lags is zero-padded to for its analytic signal (SciPy's
/// `hilbert` pads to next_fast_len).
pub fn pws_length(m: usize) -> usize {
    next_fast_len(m)
}

/// Phase-weighted stack (NoisePy's `pws`): the mean of the rows times
/// |mean over rows of exp(i·φ)|^power, φ the phase of each row's analytic signal
/// (SciPy's `hilbert` with the row zero-padded to next_fast_len(M)).
pub fn phase_weighted(rows: &[f32], m: usize, power: f64) -> Vec<f32> {
    let n_rows = rows.len() / m;
    let n = pws_length(m);
    let mut planner = FftPlanner::<f64>::new();
    let (fwd, inv) = (planner.plan_fft_forward(n), planner.plan_fft_inverse(n));
    let mut phasor = vec![Complex64::default(); m];
    let mut mean = vec![0.0f64; m];
    let mut buf = vec![Complex64::default(); n];
    for row in rows.chunks_exact(m) {
        buf.fill(Complex64::default());
        for (b, &x) in buf.iter_mut().zip(row) {
            b.re = x as f64;
        }
        fwd.process(&mut buf);
        // Analytic signal: keep DC (and Nyquist), double positive, zero negative bins.
        for (k, b) in buf.iter_mut().enumerate() {
            let h = if k == 0 || (n % 2 == 0 && k == n / 2) {
                1.0
            } else if k < n.div_ceil(2) {
                2.0
            } else {
                0.0
            };
            *b *= h / n as f64;
        }
        inv.process(&mut buf);
        for t in 0..m {
            phasor[t] += Complex64::from_polar(1.0, buf[t].arg());
            mean[t] += row[t] as f64;
        }
    }
    (0..m)
        .map(|t| {
            let w = (phasor[t].norm() / n_rows as f64).powf(power);
            (mean[t] / n_rows as f64 * w) as f32
        })
        .collect()
}

/// Robust stack (Pavlis & Vernon 2010; NoisePy's `robust_stack`): starting from the
/// median, weights w_i = |⟨s, d_i⟩| / (‖d_i‖·‖d_i − ⟨s, d_i⟩ s‖), normalised to sum 1,
/// s = Σ w_i d_i, until ‖s_new − s‖₁/‖s_new‖₂/n_rows ≤ epsilon or 11 iterations.
pub fn robust(rows: &[f32], m: usize, epsilon: f64) -> Vec<f32> {
    let d: Vec<&[f32]> = rows.chunks_exact(m).collect();
    let n_rows = d.len();
    let mut col = vec![0.0f64; n_rows];
    let mut stack: Vec<f64> = (0..m)
        .map(|t| {
            for (c, r) in col.iter_mut().zip(&d) {
                *c = r[t] as f64;
            }
            col.sort_by(f64::total_cmp);
            if n_rows % 2 == 1 {
                col[n_rows / 2]
            } else {
                0.5 * (col[n_rows / 2 - 1] + col[n_rows / 2])
            }
        })
        .collect();
    let mut w = vec![0.0f64; n_rows];
    for _step in 0..11 {
        for (wi, r) in w.iter_mut().zip(&d) {
            let dot: f64 = r.iter().zip(&stack).map(|(&x, s)| x as f64 * s).sum();
            let dn = r.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
            let rn = r
                .iter()
                .zip(&stack)
                .map(|(&x, s)| (x as f64 - dot * s).powi(2))
                .sum::<f64>()
                .sqrt();
            *wi = if dn > 0.0 && rn > 0.0 {
                dot.abs() / dn / rn
            } else {
                0.0
            };
        }
        let total: f64 = w.iter().sum();
        if total.is_nan() || total <= 0.0 {
            break;
        }
        let mut next = vec![0.0f64; m];
        for (wi, r) in w.iter().zip(&d) {
            for (n, &x) in next.iter_mut().zip(r.iter()) {
                *n += wi / total * x as f64;
            }
        }
        let l1: f64 = next.iter().zip(&stack).map(|(a, b)| (a - b).abs()).sum();
        let l2: f64 = next.iter().map(|a| a * a).sum::<f64>().sqrt();
        stack = next;
        let residual = l1 / l2 / n_rows as f64;
        if residual.is_nan() || residual <= epsilon {
            break;
        }
    }
    stack.iter().map(|&x| x as f32).collect()
}

/// A nonlinear stack of one pair's per-window correlations (rows of `m` lags); zeros
/// when no window was kept.
pub fn stack_windows(rows: &[f32], m: usize, method: StackMethod, o: &Options) -> Vec<f32> {
    if rows.is_empty() {
        return vec![0.0; m];
    }
    match method {
        StackMethod::PhaseWeighted => phase_weighted(rows, m, o.pws_power),
        StackMethod::Robust => robust(rows, m, o.robust_epsilon),
        StackMethod::Linear => {
            let n = (rows.len() / m) as f64;
            (0..m)
                .map(|t| (rows.chunks_exact(m).map(|r| r[t] as f64).sum::<f64>() / n) as f32)
                .collect()
        }
    }
}
