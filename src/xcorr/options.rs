//! The settings of an ambient-noise correlation plan, with NoisePy's defaults
//! (`noisepy.seis.io.datatypes.ConfigParameters`, noisepy-seis 0.9.x) where it has one.

use crate::error::Result;

/// Time-domain normalisation of each window (NoisePy `time_norm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeNorm {
    /// NoisePy `"no"` (its default).
    None,
    /// NoisePy `"one_bit"`: sign(x), with sign(0) = 0.
    OneBit,
    /// NoisePy `"rma"`: x / running mean of |x| over `smooth_n` samples.
    RunningMean,
}

/// Spectral normalisation (whitening) of each window (NoisePy `freq_norm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreqNorm {
    /// NoisePy `"no"`: the plain spectrum, all bins below Nyquist.
    None,
    /// NoisePy `"rma"` (its default): S / running mean of |S| over `smoothspect_n` bins
    /// inside the band, cosine-squared tapers of `whiten_taper_bins` bins outside it.
    RunningMean,
    /// Phase only, exp(i·arg S), in the same tapered band (NoisePy's whitening with
    /// `smoothspect_N <= 1`).
    PhaseOnly,
}

/// What is correlated (NoisePy `cc_method`). The smoothing is NoisePy's `moving_ave` of
/// |S| over `smoothspect_n` bins, run along a station's windows laid end to end (bins
/// 0..nfft/2 of window 0, then of window 1, …), as NoisePy's `smooth_source_spect` runs it
/// on its flattened spectra.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcMethod {
    /// conj(S_i)·S_j (NoisePy `"xcorr"`, its default).
    Xcorr,
    /// conj(S_i)·S_j / smooth(|S_i|)²: the receiver deconvolved by the source's smoothed
    /// power (NoisePy `"deconv"`).
    Deconv,
    /// conj(S_i)·S_j / (smooth(|S_i|)·smooth(|S_j|)) (NoisePy `"coherency"` as its
    /// `smooth_source_spect` and the receiver's division in `correlate` define it).
    Coherency,
}

/// How the correlations of the windows are stacked (NoisePy `stack_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackMethod {
    /// The mean over windows (NoisePy `"linear"`, its default).
    Linear,
    /// Phase-weighted stack (Schimmel & Paulssen 1997; NoisePy `pws`).
    PhaseWeighted,
    /// Robust stack (Pavlis & Vernon 2010; NoisePy `robust_stack`).
    Robust,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Samples per second of the station-days (NoisePy default 20).
    pub sampling_rate: f64,
    /// Window length in seconds (NoisePy `cc_len`, 1800).
    pub cc_len: f64,
    /// Hop between window starts in seconds (NoisePy `step`, 450).
    pub step: f64,
    /// Band in Hz (NoisePy `freqmin` 0.05, `freqmax` 2.0): the whitening band, and the
    /// day's Butterworth bandpass from 0.9·freqmin to min(1.1·freqmax, 0.45·fs).
    pub freqmin: f64,
    pub freqmax: f64,
    /// Corners of that bandpass (ObsPy/NoisePy 4); 0 = no bandpass.
    pub bandpass_corners: u32,
    /// Demean, detrend and taper the day before filtering (NoisePy's preprocess_raw).
    pub detrend_taper: bool,
    pub time_norm: TimeNorm,
    /// Running-mean length in samples for `TimeNorm::RunningMean` (NoisePy `smooth_N`, 10).
    pub smooth_n: usize,
    pub freq_norm: FreqNorm,
    /// Running-mean length in bins for whitening (NoisePy `smoothspect_N`, 10).
    pub smoothspect_n: usize,
    /// Cosine-squared taper width in bins on each side of the band (NoisePy's whiten, 100).
    pub whiten_taper_bins: usize,
    /// Windows with max|x|/std(day) ≥ this are rejected (NoisePy `max_over_std`, 10).
    pub max_over_std: f64,
    /// Correlations are kept for lags in [−maxlag, maxlag] seconds (NoisePy `maxlag`, 200).
    pub maxlag: f64,
    pub stack_method: StackMethod,
    /// What is correlated: plain spectra, or divided by smoothed amplitudes (NoisePy
    /// `cc_method`); the smoothing length is `smoothspect_n`.
    pub cc_method: CcMethod,
    /// Exponent of the phase stack (NoisePy's pws `power`, 2).
    pub pws_power: f64,
    /// Convergence threshold of the robust stack (NoisePy 0.001).
    pub robust_epsilon: f64,
    /// Correlate each station with itself too (pairs i ≤ j instead of i < j).
    pub autocorrelation: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            sampling_rate: 20.0,
            cc_len: 1800.0,
            step: 450.0,
            freqmin: 0.05,
            freqmax: 2.0,
            bandpass_corners: 4,
            detrend_taper: true,
            time_norm: TimeNorm::None,
            smooth_n: 10,
            freq_norm: FreqNorm::RunningMean,
            smoothspect_n: 10,
            whiten_taper_bins: 100,
            max_over_std: 10.0,
            maxlag: 200.0,
            stack_method: StackMethod::Linear,
            cc_method: CcMethod::Xcorr,
            pws_power: 2.0,
            robust_epsilon: 0.001,
            autocorrelation: false,
        }
    }
}

/// `value · fs` as a whole number of samples, or a message naming `name`.
fn samples(value: f64, fs: f64, name: &str) -> Result<usize> {
    let n = value * fs;
    let r = n.round();
    if !(n.is_finite() && r >= 1.0 && (n - r).abs() <= 1e-6 * r.max(1.0)) {
        return Err(crate::invalid!(
            "{name} = {value} s is not a whole number (≥ 1) of samples at {fs} Hz"
        ));
    }
    if r > (1u64 << 31) as f64 {
        return Err(crate::invalid!(
            "{name} = {value} s is too long ({r} samples)"
        ));
    }
    Ok(r as usize)
}

impl Options {
    pub fn validate(&self) -> Result<()> {
        let fs = self.sampling_rate;
        if !(fs.is_finite() && fs > 0.0) {
            return Err(crate::invalid!("sampling_rate is {fs}; expected > 0"));
        }
        samples(self.cc_len, fs, "cc_len")?;
        samples(self.step, fs, "step")?;
        let nyquist = fs / 2.0;
        if !(self.freqmin.is_finite() && self.freqmax.is_finite())
            || self.freqmin <= 0.0
            || self.freqmin >= self.freqmax
            || self.freqmax >= nyquist
        {
            return Err(crate::invalid!(
                "freqmin {} and freqmax {} Hz: expected 0 < freqmin < freqmax < Nyquist ({nyquist} Hz)",
                self.freqmin,
                self.freqmax
            ));
        }
        if self.bandpass_corners > 10 {
            return Err(crate::invalid!(
                "bandpass_corners is {}; expected 0 (no bandpass) to 10",
                self.bandpass_corners
            ));
        }
        if self.time_norm == TimeNorm::RunningMean && self.smooth_n == 0 {
            return Err(crate::invalid!("smooth_n is 0; expected ≥ 1 samples"));
        }
        let smoothed = self.freq_norm == FreqNorm::RunningMean || self.cc_method != CcMethod::Xcorr;
        if smoothed && self.smoothspect_n == 0 {
            return Err(crate::invalid!("smoothspect_n is 0; expected ≥ 1 bins"));
        }
        if self.max_over_std.is_nan() || self.max_over_std <= 0.0 {
            return Err(crate::invalid!(
                "max_over_std is {}; expected > 0 (a huge value keeps every window)",
                self.max_over_std
            ));
        }
        if !(self.maxlag.is_finite() && self.maxlag >= 0.0) {
            return Err(crate::invalid!("maxlag is {}; expected ≥ 0 s", self.maxlag));
        }
        if !(self.pws_power.is_finite() && self.pws_power >= 0.0) {
            return Err(crate::invalid!(
                "pws_power is {}; expected ≥ 0",
                self.pws_power
            ));
        }
        if !(self.robust_epsilon.is_finite() && self.robust_epsilon > 0.0) {
            return Err(crate::invalid!(
                "robust_epsilon is {}; expected > 0",
                self.robust_epsilon
            ));
        }
        Ok(())
    }

    /// Window length and hop in samples (validated).
    pub fn window_samples(&self) -> Result<(usize, usize)> {
        Ok((
            samples(self.cc_len, self.sampling_rate, "cc_len")?,
            samples(self.step, self.sampling_rate, "step")?,
        ))
    }
}
