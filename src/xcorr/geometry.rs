//! Sizes derived from the options: window and FFT lengths, the whitening band, the lags.

use super::options::{FreqNorm, Options};
use crate::error::Result;
use crate::fft_len::next_fast_len;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Samples per window (cc_len·fs) and between window starts (step·fs).
    pub npts: usize,
    pub step: usize,
    /// FFT length (next_fast_len(npts), zero padded) and NoisePy's Nfft2 = nfft/2: the
    /// correlation uses bins 0..nfft2 (exclusive) of each window spectrum.
    pub nfft: usize,
    pub nfft2: usize,
    /// Whitening: band edges ix0, ix1 (bins nearest freqmin, freqmax) and taper ends
    /// ix00 = ix0 − taper, ix11 = ix1 + taper (clamped), as NoisePy's whiten.
    pub ix0: usize,
    pub ix1: usize,
    pub ix00: usize,
    pub ix11: usize,
    /// The bins stored per window: [band_start, band_start + band_len); all others are 0.
    pub band_start: usize,
    pub band_len: usize,
    /// Lags kept: −maxlag..=maxlag samples.
    pub maxlag: usize,
    /// Half-length of the per-window Hann taper (NoisePy: min(20, ⌊0.05·npts⌋)).
    pub taper_len: usize,
}

/// The bin whose frequency (NumPy `fftfreq`) is nearest `f` (0 < f < Nyquist); ties go to
/// the lower bin. The frequencies of the bins increase with k up to (nfft − 1)/2 and the
/// negative ones lie farther from a positive f, so the nearest is one of the bins around
/// f·nfft·dt: those few are compared exactly as a scan of every bin would compare them.
fn nearest_bin(f: f64, nfft: usize, dt: f64) -> usize {
    let freq = |k: usize| bin_frequency(k, nfft, dt);
    let top = (nfft - 1) / 2;
    let guess = ((f * nfft as f64 * dt).floor().max(0.0) as usize).min(top);
    (guess.saturating_sub(1)..=(guess + 2).min(top))
        .min_by(|&a, &b| (freq(a) - f).abs().total_cmp(&(freq(b) - f).abs()))
        .unwrap()
}

/// The frequency of bin k of an nfft-point FFT at sample interval dt (NumPy `fftfreq`).
fn bin_frequency(k: usize, nfft: usize, dt: f64) -> f64 {
    let k = if k <= (nfft - 1) / 2 {
        k as f64
    } else {
        k as f64 - nfft as f64
    };
    k / (nfft as f64 * dt)
}

impl Geometry {
    pub fn new(o: &Options) -> Result<Geometry> {
        o.validate()?;
        let (npts, step) = o.window_samples()?;
        let nfft = next_fast_len(npts);
        // Each station's windows are transformed through one buffer of nfft complex values.
        crate::alloc::host_bytes(&[nfft], 16, "the FFT of one window (nfft complex f64)")?;
        let nfft2 = nfft / 2;
        let dt = 1.0 / o.sampling_rate;
        let ix0 = nearest_bin(o.freqmin, nfft, dt);
        let ix1 = nearest_bin(o.freqmax, nfft, dt);
        let ix00 = ix0.saturating_sub(o.whiten_taper_bins);
        let ix11 = (ix1 + o.whiten_taper_bins).min(nfft);
        let (band_start, band_end) = match o.freq_norm {
            FreqNorm::None => (0, nfft2),
            _ => (ix00, ix11.min(nfft2)),
        };
        if band_end <= band_start {
            return Err(crate::invalid!(
                "the band {}–{} Hz holds no frequency bin below Nyquist with cc_len {} s",
                o.freqmin,
                o.freqmax,
                o.cc_len
            ));
        }
        let maxlag = (o.maxlag * o.sampling_rate + 1e-9).floor() as usize;
        if maxlag + 1 > nfft2 {
            return Err(crate::invalid!(
                "maxlag {} s ({maxlag} samples) does not fit a {}-sample correlation; at most {} samples",
                o.maxlag,
                nfft,
                nfft2.saturating_sub(1)
            ));
        }
        let taper_len = if npts as f64 * 0.05 > 20.0 {
            20
        } else {
            (npts as f64 * 0.05) as usize
        };
        Ok(Geometry {
            npts,
            step,
            nfft,
            nfft2,
            ix0,
            ix1,
            ix00,
            ix11,
            band_start,
            band_len: band_end - band_start,
            maxlag,
            taper_len,
        })
    }

    /// Lags per correlation: 2·maxlag + 1.
    pub fn n_lags(&self) -> usize {
        2 * self.maxlag + 1
    }

    /// Windows cut from a day of `n_samples`: NoisePy's ⌊(day − cc_len)/step⌋ (so a day
    /// of 86,400 s with cc_len 1800 s and step 450 s gives 188, leaving out the last
    /// window that would end exactly at midnight), at least 1 when one window fits.
    /// A day shorter than one window is refused.
    pub fn n_windows(&self, n_samples: usize) -> Result<usize> {
        if n_samples < self.npts {
            return Err(crate::invalid!(
                "n_samples is {n_samples}, shorter than one window (cc_len = {} samples)",
                self.npts
            ));
        }
        Ok(((n_samples - self.npts) / self.step).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::{bin_frequency, nearest_bin};

    /// Every bin compared, as NumPy's `argmin(|fftfreq − f|)` does.
    fn scanned(f: f64, nfft: usize, dt: f64) -> usize {
        let freq = |k: usize| bin_frequency(k, nfft, dt);
        (0..nfft)
            .min_by(|&a, &b| (freq(a) - f).abs().total_cmp(&(freq(b) - f).abs()))
            .unwrap()
    }

    #[test]
    fn the_nearest_bin_is_the_one_a_scan_of_every_bin_finds() {
        for nfft in (1..=40).chain([100, 101, 1000, 1001]) {
            for fs in [1.0, 20.0, 100.0] {
                let dt = 1.0 / fs;
                // Bin centres, the midpoints between bins (ties) and points in between.
                for i in 1..4 * nfft {
                    let f = i as f64 * fs / (4.0 * nfft as f64);
                    if f >= fs / 2.0 {
                        break;
                    }
                    assert_eq!(
                        nearest_bin(f, nfft, dt),
                        scanned(f, nfft, dt),
                        "{f} {nfft} {fs}"
                    );
                }
            }
        }
    }
}
