//! `sg_xcorr_options`: the settings of a correlation plan, NoisePy's defaults, and their
//! way to the core's `Options`.

use super::super::args::code;
use super::super::option_fields::{count, flag, or_default};
use crate::error::Result;
use crate::xcorr::options::{CcMethod, FreqNorm, Options, StackMethod, TimeNorm};

/// No time-domain normalisation (NoisePy `time_norm = "no"`, its default).
pub const SG_XCORR_TIME_NORM_NONE: i32 = 0;
/// One-bit: sign(x) (NoisePy `"one_bit"`).
pub const SG_XCORR_TIME_NORM_ONE_BIT: i32 = 1;
/// x / running mean of |x| over `smooth_n` samples (NoisePy `"rma"`).
pub const SG_XCORR_TIME_NORM_RUNNING_MEAN: i32 = 2;

/// No whitening: the plain spectrum below Nyquist (NoisePy `freq_norm = "no"`).
pub const SG_XCORR_FREQ_NORM_NONE: i32 = 0;
/// Running-mean whitening over `smoothspect_n` bins in the tapered band (NoisePy `"rma"`,
/// its default).
pub const SG_XCORR_FREQ_NORM_RUNNING_MEAN: i32 = 1;
/// Phase only, exp(i·arg S), in the tapered band (NoisePy's whitening with smoothspect_N ≤ 1).
pub const SG_XCORR_FREQ_NORM_PHASE_ONLY: i32 = 2;

/// Mean over windows (NoisePy `"linear"`, its default).
pub const SG_XCORR_STACK_LINEAR: i32 = 0;
/// Phase-weighted stack with exponent `pws_power` (NoisePy `"pws"`).
pub const SG_XCORR_STACK_PWS: i32 = 1;
/// Robust stack (Pavlis & Vernon 2010; NoisePy `"robust"`).
pub const SG_XCORR_STACK_ROBUST: i32 = 2;

/// Plain cross-correlation, conj(S_i)·S_j (NoisePy `cc_method = "xcorr"`, its default).
pub const SG_XCORR_CC_XCORR: i32 = 0;
/// Deconvolution: conj(S_i)·S_j / smooth(|S_i|)² (NoisePy `"deconv"`).
pub const SG_XCORR_CC_DECONV: i32 = 1;
/// Coherency: conj(S_i)·S_j / (smooth(|S_i|)·smooth(|S_j|)) (NoisePy `"coherency"`).
pub const SG_XCORR_CC_COHERENCY: i32 = 2;

/// Options of an `sg_xcorr_plan`. Start from `sg_xcorr_options_default()` (NoisePy's
/// defaults) and set at least `sampling_rate`, `freqmin` and `freqmax`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_xcorr_options {
    /// Samples per second of the station-days (default 20, NoisePy's).
    pub sampling_rate: f64,
    /// Window length, seconds (NoisePy `cc_len`, 1800); a whole number of samples.
    pub cc_len: f64,
    /// Hop between window starts, seconds (NoisePy `step`, 450); a whole number of samples.
    pub step: f64,
    /// Band, Hz (0.05 and 2.0): the whitening band; the day's Butterworth bandpass runs from
    /// 0.9·freqmin to min(1.1·freqmax, 0.45·sampling_rate), as NoisePy's preprocessing.
    pub freqmin: f64,
    pub freqmax: f64,
    /// Windows with max|x| / std(day) ≥ this are rejected (NoisePy `max_over_std`, 10).
    pub max_over_std: f64,
    /// Lags kept: −maxlag..maxlag seconds (NoisePy `maxlag`, 200).
    pub maxlag: f64,
    /// Exponent of the phase-weighted stack (2).
    pub pws_power: f64,
    /// Convergence threshold of the robust stack (0.001).
    pub robust_epsilon: f64,
    /// Corners (order) of the zero-phase Butterworth bandpass (4); 0 = no bandpass.
    pub bandpass_corners: i32,
    /// 1 (default): demean, detrend and taper each day before the bandpass, as NoisePy.
    pub detrend_taper: i32,
    /// `SG_XCORR_TIME_NORM_*` (default NONE).
    pub time_norm: i32,
    /// Running-mean length of SG_XCORR_TIME_NORM_RUNNING_MEAN, samples (NoisePy `smooth_N`, 10).
    pub smooth_n: i32,
    /// `SG_XCORR_FREQ_NORM_*` (default RUNNING_MEAN).
    pub freq_norm: i32,
    /// Running-mean length of the whitening, bins (NoisePy `smoothspect_N`, 10).
    pub smoothspect_n: i32,
    /// Cosine-squared taper width on each side of the whitening band, bins (100).
    pub whiten_taper_bins: i32,
    /// `SG_XCORR_STACK_*` (default LINEAR).
    pub stack_method: i32,
    /// 1: pairs i ≤ j (autocorrelations too) in diagonal blocks; 0 (default): i < j.
    pub autocorrelation: i32,
    /// `SG_XCORR_CC_*` (default XCORR): what is correlated; DECONV and COHERENCY divide by
    /// amplitude spectra smoothed over `smoothspect_n` bins (NoisePy's `moving_ave` along
    /// a station's windows end to end), applied to the whitened (or plain) spectra.
    pub cc_method: i32,
}

/// NoisePy's defaults (see the fields). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_xcorr_options_default() -> sg_xcorr_options {
    let d = Options::default();
    sg_xcorr_options {
        sampling_rate: d.sampling_rate,
        cc_len: d.cc_len,
        step: d.step,
        freqmin: d.freqmin,
        freqmax: d.freqmax,
        max_over_std: d.max_over_std,
        maxlag: d.maxlag,
        pws_power: d.pws_power,
        robust_epsilon: d.robust_epsilon,
        bandpass_corners: d.bandpass_corners as i32,
        detrend_taper: d.detrend_taper as i32,
        time_norm: SG_XCORR_TIME_NORM_NONE,
        smooth_n: d.smooth_n as i32,
        freq_norm: SG_XCORR_FREQ_NORM_RUNNING_MEAN,
        smoothspect_n: d.smoothspect_n as i32,
        whiten_taper_bins: d.whiten_taper_bins as i32,
        stack_method: SG_XCORR_STACK_LINEAR,
        autocorrelation: d.autocorrelation as i32,
        cc_method: SG_XCORR_CC_XCORR,
    }
}

/// The options behind a caller's pointer, NULL meaning the defaults.
pub(super) fn plan_options(o: *const sg_xcorr_options) -> Result<Options> {
    or_default(o, options)
}

/// The library's options of a C options struct, checked as `sg_xcorr_plan_create` checks
/// them.
impl TryFrom<&sg_xcorr_options> for Options {
    type Error = crate::error::Error;
    fn try_from(o: &sg_xcorr_options) -> Result<Options> {
        options(o)
    }
}

fn options(o: &sg_xcorr_options) -> Result<Options> {
    Ok(Options {
        sampling_rate: o.sampling_rate,
        cc_len: o.cc_len,
        step: o.step,
        freqmin: o.freqmin,
        freqmax: o.freqmax,
        bandpass_corners: count(o.bandpass_corners, "bandpass_corners")? as u32,
        detrend_taper: flag(o.detrend_taper, "detrend_taper")?,
        time_norm: code(
            o.time_norm,
            "options.time_norm",
            "SG_XCORR_TIME_NORM_* (0 to 2)",
            &[
                (SG_XCORR_TIME_NORM_NONE, TimeNorm::None),
                (SG_XCORR_TIME_NORM_ONE_BIT, TimeNorm::OneBit),
                (SG_XCORR_TIME_NORM_RUNNING_MEAN, TimeNorm::RunningMean),
            ],
        )?,
        smooth_n: count(o.smooth_n, "smooth_n")?,
        freq_norm: code(
            o.freq_norm,
            "options.freq_norm",
            "SG_XCORR_FREQ_NORM_* (0 to 2)",
            &[
                (SG_XCORR_FREQ_NORM_NONE, FreqNorm::None),
                (SG_XCORR_FREQ_NORM_RUNNING_MEAN, FreqNorm::RunningMean),
                (SG_XCORR_FREQ_NORM_PHASE_ONLY, FreqNorm::PhaseOnly),
            ],
        )?,
        smoothspect_n: count(o.smoothspect_n, "smoothspect_n")?,
        whiten_taper_bins: count(o.whiten_taper_bins, "whiten_taper_bins")?,
        max_over_std: o.max_over_std,
        maxlag: o.maxlag,
        stack_method: code(
            o.stack_method,
            "options.stack_method",
            "SG_XCORR_STACK_* (0 to 2)",
            &[
                (SG_XCORR_STACK_LINEAR, StackMethod::Linear),
                (SG_XCORR_STACK_PWS, StackMethod::PhaseWeighted),
                (SG_XCORR_STACK_ROBUST, StackMethod::Robust),
            ],
        )?,
        pws_power: o.pws_power,
        robust_epsilon: o.robust_epsilon,
        autocorrelation: flag(o.autocorrelation, "autocorrelation")?,
        cc_method: code(
            o.cc_method,
            "options.cc_method",
            "SG_XCORR_CC_* (0 to 2)",
            &[
                (SG_XCORR_CC_XCORR, CcMethod::Xcorr),
                (SG_XCORR_CC_DECONV, CcMethod::Deconv),
                (SG_XCORR_CC_COHERENCY, CcMethod::Coherency),
            ],
        )?,
    })
}
