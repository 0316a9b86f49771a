//! NoisePy's correlation methods (`cc_method`) on stored spectra: the divisions by smoothed
//! amplitude spectra of `deconv` and `coherency`, mirrored by `xc_normalise` in
//! `kernels/xcorr.cu`.
//!
//! NoisePy keeps a station's spectra flattened, its windows laid end to end (bins 0..nfft/2
//! of window 0, then of window 1, …), and smooths |S| along that sequence with
//! `moving_ave` (`smooth_source_spect`; the receiver's division in `correlate`): a bin near
//! either end of a window averages bins of the neighbouring window, and the two ends of the
//! day are extended with the first and last values. Here bins outside the stored band are
//! 0 (whitening zeroes them; without whitening the band is every bin below nfft/2), and a
//! rejected window's bins are 0 where NoisePy still has its spectrum: the two differ only
//! next to a rejected window, without whitening, in the few bins nearest 0 and nfft/2.

use super::geometry::Geometry;
use super::options::{CcMethod, Options};
use num_complex::Complex32;
use rayon::prelude::*;

/// What a day's spectra were divided by, recorded with them: a plan correlates only
/// spectra made with its own method and smoothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Method {
    pub cc_method: CcMethod,
    pub smoothspect_n: usize,
}

impl Method {
    pub fn of(o: &Options) -> Method {
        Method {
            cc_method: o.cc_method,
            // Only the divisions read it: xcorr spectra match whatever their smoothing.
            smoothspect_n: match o.cc_method {
                CcMethod::Xcorr => 0,
                _ => o.smoothspect_n,
            },
        }
    }

    /// The power of the smoothed amplitude the stored values are divided by (coherency
    /// divides both sides, so the stored values themselves).
    pub fn stored_power(&self) -> i32 {
        match self.cc_method {
            CcMethod::Coherency => 1,
            _ => 0,
        }
    }

    /// The power of the source side's separate divisor, if the source differs from the
    /// stored values (deconvolution: smooth(|S|)²).
    pub fn source_power(&self) -> Option<i32> {
        match self.cc_method {
            CcMethod::Deconv => Some(2),
            _ => None,
        }
    }

    /// Whether NoisePy zeroes bin 0 of single-window (and substack) cross-spectra of a pair
    /// of stations (i, j): its `correlate` does so unless source and receiver spectra have
    /// equal amplitudes, which holds only for an autocorrelation without deconvolution.
    pub fn zero_dc(&self, i: usize, j: usize) -> bool {
        i != j || self.cc_method == CcMethod::Deconv
    }
}

/// Where a day's spectra sit: `[bin][station][window]`, `plane` = stations × windows a bin.
#[derive(Clone, Copy, Debug)]
pub struct Planes {
    pub n_stations: usize,
    pub n_windows: usize,
}

impl Planes {
    fn plane(&self) -> usize {
        self.n_stations * self.n_windows
    }
}

/// NoisePy's moving average of |S| (`n` bins, the mean of n values ending (n−1)/2 after
/// the bin) at band bin `f` of window `w` of station `s`, along the station's windows end
/// to end.
pub fn smoothed_amplitude(
    values: &[Complex32],
    p: Planes,
    g: &Geometry,
    n: usize,
    (s, w, f): (usize, usize, usize),
) -> f64 {
    let nfft2 = g.nfft2 as i64;
    let last = (p.n_windows as i64) * nfft2 - 1;
    let back = ((n - 1) / 2) as i64;
    let q = w as i64 * nfft2 + (g.band_start + f) as i64;
    let mut sum = 0.0f64;
    for j in 0..n as i64 {
        let at = (q + back - j).clamp(0, last);
        let (wj, k) = ((at / nfft2) as usize, (at % nfft2) as usize);
        if k >= g.band_start && k < g.band_start + g.band_len {
            let v = values[(k - g.band_start) * p.plane() + s * p.n_windows + wj];
            sum += ((v.re as f64).powi(2) + (v.im as f64).powi(2)).sqrt();
        }
    }
    sum / n as f64
}

/// `values` divided by their smoothed amplitude to `power` (1 or 2) over `n` bins: a new
/// array in the same layout; a bin whose smoothed amplitude is 0 (a rejected window) gives 0.
pub fn divided(
    values: &[Complex32],
    p: Planes,
    g: &Geometry,
    n: usize,
    power: i32,
) -> Vec<Complex32> {
    let plane = p.plane();
    let mut out = vec![Complex32::default(); values.len()];
    out.par_chunks_mut(plane.max(1))
        .enumerate()
        .for_each(|(f, row)| {
            for (k, o) in row.iter_mut().enumerate() {
                let (s, w) = (k / p.n_windows, k % p.n_windows);
                let m = smoothed_amplitude(values, p, g, n, (s, w, f));
                let d = m.powi(power);
                let v = values[f * plane + k];
                *o = if d > 0.0 {
                    Complex32::new((v.re as f64 / d) as f32, (v.im as f64 / d) as f32)
                } else {
                    Complex32::default()
                };
            }
        });
    out
}
