//! `sg_xcorr_plan`, `sg_xcorr_spectra`: ambient-noise preprocessing, all-pairs
//! correlation and stacking, following NoisePy.

use super::args::{arg_ref, optional_out, out_ptr};
use super::arrays::{not_null, optional, optional_mut, slice, slice_mut};
use super::context::{create_on, sg_context};
use super::guard;
use super::status::sg_status;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::xcorr::pairs::Block;
use crate::xcorr::{Spectra, XcorrPlan};
use num_complex::Complex32;

pub mod device;
mod options;
mod substacks;

pub use options::*;
pub use substacks::*;

/// A correlation plan: options and sizes, on one context. Opaque.
pub struct sg_xcorr_plan(XcorrPlan);

/// One day of window spectra of n_stations stations (on the GPU for a CUDA context). Opaque.
pub struct sg_xcorr_spectra(Spectra);

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
    create_on(ctx, out, |ctx| {
        XcorrPlan::new(ctx.clone(), plan_options(options)?).map(sg_xcorr_plan)
    })
}

/// Releases a plan. NULL is a no-op. Spectra made by it stay valid.
#[no_mangle]
pub extern "C" fn sg_xcorr_plan_destroy(plan: *mut sg_xcorr_plan) {
    super::destroy(plan);
}

/// Device bytes `plan` holds, into `*bytes` (0 on a CPU context). Made from the context's
/// allocator with the plan on a CUDA context: its device calls' stream state, cuBLAS and its
/// workspace (linear stacks: 4 MiB, 32 MiB from Hopper on) and the filter and whitening
/// tables. Then the device calls' (`sg_xcorr_*_device_f32`) cuFFT plans, one per shape, and
/// their work arrays, sized by their stations, days and pairs: a call made without room
/// allocates them and the plan keeps, after it, as much as that call used at once, so that
/// later calls no larger allocate nothing (a preprocess: its spectra alone). A device call
/// captured into a CUDA graph must find that room (make it once before the capture): one
/// that would allocate is refused with `SG_ERR_INVALID_ARGUMENT`. Host calls
/// (`sg_xcorr_preprocess_f32`, …) make their buffers per call and give them back when they
/// return; spectra on a CUDA context hold theirs until destroyed.
/// `plan` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_xcorr_plan_workspace_bytes(
    plan: *const sg_xcorr_plan,
    bytes: *mut usize,
) -> sg_status {
    crate::ffi::workspace_bytes(plan, "plan", bytes, |p| p.0.device_bytes())
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
    super::create(plan, "plan", out, |plan| {
        let plan = &plan.0;
        not_null(station_days, "station_days")?;
        let batch = station_batch(n_samples, n_stations, station_stride)?;
        let span = batch.span();
        let days = slice(station_days, span, "station_days")?;
        let valid = optional(valid, span, "valid")?;
        plan.preprocess(days, batch, valid).map(sg_xcorr_spectra)
    })
}

/// Spectra from host arrays laid out as `sg_xcorr_spectra_copy` writes them — e.g. sent by
/// another process that made them with a plan of the same settings: `values`
/// (2·band_len·n_stations·n_windows floats, interleaved complex, bin-major) and `kept`
/// (n_stations·n_windows bytes, 0 or 1; rejected windows must be zero columns). On a CUDA
/// context they are copied to the GPU. For `SG_XCORR_CC_DECONV` the source side is derived
/// again from the values, as preprocessing derives it, so the result correlates bit for bit
/// as the spectra that were copied. Non-finite values give `SG_ERR_NON_FINITE`. On success
/// `*out` receives spectra the caller owns (`sg_xcorr_spectra_destroy`).
#[no_mangle]
pub extern "C" fn sg_xcorr_spectra_import(
    plan: *const sg_xcorr_plan,
    values: *const f32,
    kept: *const u8,
    n_stations: usize,
    n_windows: usize,
    out: *mut *mut sg_xcorr_spectra,
) -> sg_status {
    super::create(plan, "plan", out, |plan| {
        let plan = &plan.0;
        let g = plan.geometry();
        let n = crate::alloc::host_bytes(
            &[g.band_len, n_stations, n_windows],
            8,
            "the window spectra",
        )? / 8;
        let v = slice(values.cast::<Complex32>(), n, "values")?;
        let k = slice(kept, n_stations.saturating_mul(n_windows), "kept")?;
        plan.import(v, k, n_stations, n_windows)
            .map(sg_xcorr_spectra)
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
        out.set(block(plan, n_stations, (i0, ni, j0, nj))?.n_pairs());
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
        let b = block(plan, n_stations, (i0, ni, j0, nj))?;
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
        let (spectra, n_pairs) = days_and_pairs(plan, days, n_days, (i0, ni, j0, nj))?;
        let out = slice_mut(stacks, rows_span(n_pairs, pair_stride, plan)?, "stacks")?;
        let counts = optional_mut(n_windows, n_pairs, "n_windows")?;
        plan.correlate(&spectra, (i0, ni, j0, nj), out, pair_stride, counts)?;
        Ok(())
    })
}

/// The station-days' layout, in the preprocess calls' words.
fn station_batch(n_samples: usize, n_stations: usize, station_stride: usize) -> Result<TraceBatch> {
    let names = ["n_stations", "station_stride"];
    TraceBatch::named(n_samples, n_stations, station_stride, names)
}

/// The caller's list of days as spectra, and the pairs of the block (0 where the block is
/// not valid: the plan then says why).
fn days_and_pairs<'a>(
    plan: &XcorrPlan,
    days: *const *const sg_xcorr_spectra,
    n_days: usize,
    (i0, ni, j0, nj): (usize, usize, usize, usize),
) -> Result<(Vec<&'a Spectra>, usize)> {
    let list = slice(days, n_days, "days")?;
    let spectra = list
        .iter()
        .enumerate()
        .map(|(d, &p)| arg_ref(p, &format!("days[{d}]")).map(|s| &s.0))
        .collect::<Result<Vec<&Spectra>>>()?;
    let n_stations = spectra.first().map_or(0, |s| s.n_stations);
    let n_pairs = block(plan, n_stations.max(1), (i0, ni, j0, nj)).map_or(0, |b| b.n_pairs());
    Ok((spectra, n_pairs))
}

/// The block [i0, i0+ni) × [j0, j0+nj) of `n_stations` stations, its pairs as the plan's
/// autocorrelation setting has them.
fn block(
    plan: &XcorrPlan,
    n_stations: usize,
    (i0, ni, j0, nj): (usize, usize, usize, usize),
) -> Result<Block> {
    Block::new(i0, ni, j0, nj, n_stations, plan.options().autocorrelation)
}

/// The floats `rows` rows of `stride` span (the last one n_lags); the plan refuses a
/// stride too small for a correlation.
fn rows_span(rows: usize, stride: usize, plan: &XcorrPlan) -> Result<usize> {
    let n_lags = plan.geometry().n_lags();
    match rows {
        0 => Ok(0),
        n => (n - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(n_lags))
            .ok_or_else(|| crate::invalid!("{n} rows with stride {stride} overflow")),
    }
}
