//! `sg_xcorr_plan`, `sg_xcorr_spectra`: ambient-noise preprocessing, all-pairs
//! correlation and stacking, following NoisePy.

use super::args::{arg_ref, code, optional_out, optional_ref, out_ptr};
use super::arrays::{not_null, optional, optional_mut, slice, slice_mut};
use super::context::sg_context;
use super::guard;
use super::status::sg_status;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::xcorr::options::{CcMethod, FreqNorm, Options, StackMethod, TimeNorm};
use crate::xcorr::pairs::Block;
use crate::xcorr::{Spectra, XcorrPlan};
use num_complex::Complex32;

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

/// A correlation plan: options and sizes, on one context. Opaque.
pub struct sg_xcorr_plan(XcorrPlan);

/// One day of window spectra of n_stations stations (on the GPU for a CUDA context). Opaque.
pub struct sg_xcorr_spectra(Spectra);

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

fn count(v: i32, name: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| crate::invalid!("options.{name} is {v}; expected ≥ 0"))
}

fn flag(v: i32, name: &str) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(crate::invalid!("options.{name} is {v}; expected 0 or 1")),
    }
}

/// The options behind a caller's pointer, NULL meaning the defaults.
fn plan_options(o: *const sg_xcorr_options) -> Result<Options> {
    match optional_ref(o, "options")? {
        Some(o) => options(o),
        None => Ok(Options::default()),
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

/// Creates a plan from `options` (NULL: the defaults). Refuses inconsistent options
/// (a band outside 0 < freqmin < freqmax < Nyquist, windows or hops that are not whole
/// samples, maxlag longer than half a window, …) with `SG_ERR_INVALID_ARGUMENT`. On
/// success `*out` receives a plan the caller owns (`sg_xcorr_plan_destroy`); it holds
/// its own reference to `ctx`. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_xcorr_plan_create(
    ctx: *const sg_context,
    options: *const sg_xcorr_options,
    out: *mut *mut sg_xcorr_plan,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let out = out_ptr(out, "out")?;
        let options = plan_options(options)?;
        out.hand_over(sg_xcorr_plan(XcorrPlan::new(ctx.0.clone(), options)?));
        Ok(())
    })
}

/// Releases a plan. NULL is a no-op. Spectra made by it stay valid.
#[no_mangle]
pub extern "C" fn sg_xcorr_plan_destroy(plan: *mut sg_xcorr_plan) {
    super::destroy(plan);
}

/// Sizes for a day of `n_samples` samples: `*n_windows` windows (NoisePy's
/// ⌊(n_samples − cc_len·fs)/(step·fs)⌋, at least 1) and `*n_lags` = 2·maxlag·fs + 1
/// samples per correlation. Either output may be NULL. `SG_ERR_INVALID_ARGUMENT` when
/// the day is shorter than one window.
#[no_mangle]
pub extern "C" fn sg_xcorr_plan_sizes(
    plan: *const sg_xcorr_plan,
    n_samples: usize,
    n_windows: *mut usize,
    n_lags: *mut usize,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let outs = (
            optional_out(n_windows, "n_windows")?,
            optional_out(n_lags, "n_lags")?,
        );
        let g = plan.geometry();
        let w = g.n_windows(n_samples)?;
        outs.0.set(w);
        outs.1.set(g.n_lags());
        Ok(())
    })
}

/// Preprocesses one day of `n_stations` station-days of `n_samples` samples (station s
/// at `station_days[s * station_stride]`): gaps zeroed, demean/detrend/taper, zero-phase
/// Butterworth bandpass, windows (rejected where max|x|/std(day) ≥ max_over_std or where
/// they touch a gap), per-window demean/detrend/taper, time normalisation, FFT,
/// whitening. `valid` may be NULL (no gaps) or hold one byte per sample with the same
/// layout, 0 for a missing sample. On success `*out` receives the spectra, which the
/// caller owns (`sg_xcorr_spectra_destroy`); on a CUDA context they stay on the GPU.
/// Non-finite samples are refused (`SG_ERR_NON_FINITE`). A day shorter than one window
/// is refused (`SG_ERR_INVALID_ARGUMENT`). Several threads may use one plan at once.
#[no_mangle]
pub extern "C" fn sg_xcorr_preprocess_f32(
    plan: *const sg_xcorr_plan,
    station_days: *const f32,
    n_stations: usize,
    n_samples: usize,
    station_stride: usize,
    valid: *const u8,
    out: *mut *mut sg_xcorr_spectra,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let out = out_ptr(out, "out")?;
        not_null(station_days, "station_days")?;
        let batch = TraceBatch::named(
            n_samples,
            n_stations,
            station_stride,
            ["n_stations", "station_stride"],
        )?;
        let span = batch.span();
        let days = slice(station_days, span, "station_days")?;
        let valid = optional(valid, span, "valid")?;
        out.hand_over(sg_xcorr_spectra(plan.preprocess(days, batch, valid)?));
        Ok(())
    })
}

/// Releases spectra (and their GPU memory). NULL is a no-op.
#[no_mangle]
pub extern "C" fn sg_xcorr_spectra_destroy(spectra: *mut sg_xcorr_spectra) {
    super::destroy(spectra);
}

/// The layout of `spectra`: `n_stations`, `n_windows`, and the stored bins
/// [band_start, band_start + band_len) of the nfft-point window FFT (all other bins are 0).
/// Any output may be NULL.
#[no_mangle]
pub extern "C" fn sg_xcorr_spectra_sizes(
    spectra: *const sg_xcorr_spectra,
    n_stations: *mut usize,
    n_windows: *mut usize,
    band_start: *mut usize,
    band_len: *mut usize,
    nfft: *mut usize,
) -> sg_status {
    guard(|| {
        let s = &arg_ref(spectra, "spectra")?.0;
        let g = s.geometry();
        let outs = [
            (optional_out(n_stations, "n_stations")?, s.n_stations),
            (optional_out(n_windows, "n_windows")?, s.n_windows),
            (optional_out(band_start, "band_start")?, g.band_start),
            (optional_out(band_len, "band_len")?, g.band_len),
            (optional_out(nfft, "nfft")?, g.nfft),
        ];
        for (p, v) in outs {
            p.set(v);
        }
        Ok(())
    })
}

/// Copies the spectra to the host: `values` (may be NULL) receives 2·band_len·n_stations·
/// n_windows floats, interleaved complex, element (bin f, station s, window w) at complex
/// index (f·n_stations + s)·n_windows + w; `kept` (may be NULL) receives n_stations·n_windows
/// bytes, kept[s·n_windows + w] = 1 where the window is used, 0 where it was rejected (its
/// spectrum is 0).
#[no_mangle]
pub extern "C" fn sg_xcorr_spectra_copy(
    spectra: *const sg_xcorr_spectra,
    values: *mut f32,
    kept: *mut u8,
) -> sg_status {
    guard(|| {
        let s = &arg_ref(spectra, "spectra")?.0;
        let host = match values.is_null() {
            true => None,
            false => Some(s.to_host()?),
        };
        let outs = (
            match &host {
                Some(v) => Some(slice_mut(values.cast::<Complex32>(), v.len(), "values")?),
                None => None,
            },
            optional_mut(kept, s.kept.len(), "kept")?,
        );
        if let (Some(dst), Some(v)) = (outs.0, &host) {
            dst.copy_from_slice(v);
        }
        if let Some(dst) = outs.1 {
            dst.copy_from_slice(&s.kept);
        }
        Ok(())
    })
}

/// The number of pairs of the block [i0, i0+ni) × [j0, j0+nj) of `n_stations` stations:
/// a diagonal block (i0 == j0, ni == nj) holds pairs i < j (i ≤ j with autocorrelation)
/// in row-major order; an off-diagonal block (i0 + ni ≤ j0) all ni·nj pairs, pair
/// p = (i − i0)·nj + (j − j0). Other blocks are refused. 0 pairs (one station, no
/// autocorrelation) is a valid answer.
#[no_mangle]
pub extern "C" fn sg_xcorr_pair_count(
    plan: *const sg_xcorr_plan,
    n_stations: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    n_pairs: *mut usize,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let out = out_ptr(n_pairs, "n_pairs")?;
        let b = Block::new(i0, ni, j0, nj, n_stations, plan.options().autocorrelation)?;
        out.set(b.n_pairs());
        Ok(())
    })
}

/// The stations (i, j) of pair `pair` of a block (see `sg_xcorr_pair_count`).
#[no_mangle]
pub extern "C" fn sg_xcorr_pair_stations(
    plan: *const sg_xcorr_plan,
    n_stations: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    pair: usize,
    i: *mut usize,
    j: *mut usize,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let (oi, oj) = (out_ptr(i, "i")?, out_ptr(j, "j")?);
        let b = Block::new(i0, ni, j0, nj, n_stations, plan.options().autocorrelation)?;
        let (si, sj) = b.pair(pair).ok_or_else(|| {
            crate::invalid!("pair is {pair}; the block holds {} pairs", b.n_pairs())
        })?;
        oi.set(si);
        oj.set(sj);
        Ok(())
    })
}

/// Correlates and stacks the pairs of the block [i0, i0+ni) × [j0, j0+nj) (see
/// `sg_xcorr_pair_count`) over every kept window of the `n_days` days (`days[d]`, all
/// made by plans of this context with the same settings and stations). Pair p's n_lags
/// samples (`sg_xcorr_plan_sizes`) go to `stacks[p * pair_stride]` (≥ n_lags): element k
/// is lag (k − maxlag·fs)/fs seconds (centred: element maxlag·fs is lag 0; NoisePy's own
/// lag labels are one sample off for even FFT lengths, see the README), c_ij(τ) =
/// Σ_t x_i(t)·x_j(t + τ), so positive lags are station j later than station i. Amplitudes are NoisePy's (mean over windows of
/// the inverse FFT with 1/nfft). `n_windows` (may be NULL) receives per pair the windows
/// stacked; a pair without any gives zeros. A block without pairs writes nothing and
/// succeeds. Several threads may use one plan at once.
#[no_mangle]
pub extern "C" fn sg_xcorr_correlate_f32(
    plan: *const sg_xcorr_plan,
    days: *const *const sg_xcorr_spectra,
    n_days: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    stacks: *mut f32,
    pair_stride: usize,
    n_windows: *mut u32,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let list = slice(days, n_days, "days")?;
        not_null(stacks, "stacks")?;
        let spectra = list
            .iter()
            .enumerate()
            .map(|(d, &p)| arg_ref(p, &format!("days[{d}]")).map(|s| &s.0))
            .collect::<Result<Vec<&Spectra>>>()?;
        let n_stations = spectra.first().map_or(0, |s| s.n_stations);
        let autocorrelation = plan.options().autocorrelation;
        let n_pairs = Block::new(i0, ni, j0, nj, n_stations.max(1), autocorrelation)
            .map(|b| b.n_pairs())
            .unwrap_or(0);
        let n_lags = plan.geometry().n_lags();
        // The span of the stacks; the plan refuses a stride too small for a correlation.
        let len = match n_pairs {
            0 => 0,
            n => (n - 1)
                .checked_mul(pair_stride)
                .and_then(|x| x.checked_add(n_lags))
                .ok_or_else(|| crate::invalid!("{n} pairs with stride {pair_stride} overflow"))?,
        };
        let out = slice_mut(stacks, len, "stacks")?;
        let counts = optional_mut(n_windows, n_pairs, "n_windows")?;
        plan.correlate(&spectra, (i0, ni, j0, nj), out, pair_stride, counts)?;
        Ok(())
    })
}
