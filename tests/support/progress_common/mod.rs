//! Shared by tests/progress/progress_cancel.rs (CPU), tests/progress/cuda_progress.rs (GPU) and
//! tests/abi/wavepacket_abi.rs (the wave packets' long calls): progress
//! and cancellation through the C ABI (`sg_context_set_progress`). For each long call
//! (F-X 2D, F-XY 3D, DWT transform and denoise batches, xcorr preprocessing and
//! correlation, the EM-logging search in both modes, USFFT types 1 and 2, wave-packet
//! forward, adjoint and inverse) the callback sees
//! fractions that only
//! grow, within [0, 1], ending with exactly one 1; a stop at a random report gives
//! SG_ERR_CANCELLED, leaves the output as it was (a sentinel pattern; a volume filtered in
//! several slabs may say it was partly written) and the plan usable: the next call,
//! without a stop, gives bit for bit the output of a call made without any callback.
//! The report interval is shortened (`set_report_interval`) so that these small calls
//! report often and can be stopped at many points.
//!
//! SEISGPU_SANITIZING=1 (scripts/gpu_sanitize.sh) runs every case with two stops: at the
//! first report and halfway; `small` runs the DWT, xcorr and EM cases on smaller data (the
//! GPU tests under the sanitizer, where each chunk is slow enough to be reported).

#![allow(dead_code)]

// Modules of each executable that includes this one (tests/abi, tests/progress).
use crate::{cuda_common, xcorr_common};

pub use cuda_common::sanitizing;

use seisgpu::ffi::context::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::*;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Mutex;
use std::time::Duration;
pub use xcorr_common::{last_error, ok, Context};

/// What one call reported, and the fraction from which to ask for a stop (reports are
/// timed, so their number varies from call to call; fractions do not).
#[derive(Default)]
struct Log {
    reports: Vec<(String, f64)>,
    stop_from: Option<f64>,
}

pub unsafe extern "C" fn record(user: *mut c_void, stage: *const c_char, fraction: f64) -> c_int {
    let log = &*(user as *const Mutex<Log>);
    let mut log = log.lock().unwrap();
    let stage = CStr::from_ptr(stage).to_string_lossy().into_owned();
    log.reports.push((stage, fraction));
    c_int::from(log.stop_from.is_some_and(|f| fraction >= f))
}

/// Park-Miller: reproducible test data and stop points.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0 * 48271 % 2147483647;
        self.0
    }
    fn signal(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.next() as f64 / 2147483647.0 - 0.5) as f32)
            .collect()
    }
}

#[track_caller]
fn assert_progress_shape(reports: &[(String, f64)], what: &str) {
    assert!(!reports.is_empty(), "{what}: no report at all");
    let fractions: Vec<f64> = reports.iter().map(|r| r.1).collect();
    assert!(
        fractions.windows(2).all(|w| w[0] <= w[1]),
        "{what}: fractions go back: {fractions:?}"
    );
    assert!(
        fractions.iter().all(|f| (0.0..=1.0).contains(f)),
        "{what}: {fractions:?}"
    );
    assert_eq!(*fractions.last().unwrap(), 1.0, "{what}: does not end at 1");
    assert_eq!(
        fractions.iter().filter(|&&f| f == 1.0).count(),
        1,
        "{what}: 1 reported more than once: {fractions:?}"
    );
    assert!(
        reports.iter().all(|r| !r.0.is_empty()),
        "{what}: a report without a stage name"
    );
}

/// Runs `call` (which fills its output, returning the status and the output) with and
/// without a callback, and stopped at random reports; checks each case as the module
/// documentation says. `sentinel` is the output's content before each call.
pub fn exercise<T: PartialEq + std::fmt::Debug + Clone>(
    ctx: &Context,
    what: &str,
    stops: usize,
    sentinel: &T,
    call: impl FnMut() -> (sg_status, T),
) {
    exercise_slabs(ctx, what, stops, sentinel, false, 3, call);
}

/// `exercise`, where a call that runs in slabs (`slabs`) may be stopped after writing
/// some: then its message says "partly filtered", and only the output of a stop that does
/// not say so must be the sentinel; and where a whole call reports at least `min_reports`
/// times (the last one the final 1). Returns how many stops left the output untouched.
pub fn exercise_slabs<T: PartialEq + std::fmt::Debug + Clone>(
    ctx: &Context,
    what: &str,
    stops: usize,
    sentinel: &T,
    slabs: bool,
    min_reports: usize,
    mut call: impl FnMut() -> (sg_status, T),
) -> usize {
    let mut untouched = 0;
    seisgpu::progress::set_report_interval(Some(Duration::from_micros(200)));
    let (s, reference) = call();
    ok(s);
    assert_ne!(&reference, sentinel, "{what}: the call wrote nothing");

    let log = Mutex::new(Log::default());
    ok(sg_context_set_progress(
        ctx.0,
        Some(record),
        &log as *const Mutex<Log> as *mut c_void,
    ));
    // A call that ends within one interval (many cores, a fast GPU) reports only its start
    // and end: shorter intervals (and chunks) until it reports often enough to be stopped.
    let mut full = Vec::new();
    for nanos in [200_000, 20_000, 2_000, 1] {
        seisgpu::progress::set_report_interval(Some(Duration::from_nanos(nanos)));
        let (s, out) = call();
        ok(s);
        assert_eq!(out, reference, "{what}: the callback changed the result");
        full = std::mem::take(&mut log.lock().unwrap().reports);
        assert_progress_shape(&full, what);
        if full.len() >= min_reports.max(2) {
            break;
        }
    }
    assert!(
        full.len() >= min_reports.max(2),
        "{what}: only {} reports, even at a report interval of 1 ns: nothing to stop at",
        full.len()
    );

    // Stop points below the last report before the final 1, where a stop is honoured.
    // Under the sanitizer, two: at the first report (nothing done yet) and halfway.
    let last_before_one = full[full.len() - 2].1;
    let mut rng = Rng(0x5eed ^ what.len() as u64);
    let thin = sanitizing();
    if thin {
        println!("{what}: thinned for the sanitizer: 2 stops");
    }
    for k in 0..if thin { 2 } else { stops } {
        let from = if thin {
            0.45 * last_before_one * k as f64
        } else {
            0.9 * last_before_one * (rng.next() as f64 / 2147483647.0)
        };
        {
            let mut l = log.lock().unwrap();
            l.reports.clear();
            l.stop_from = Some(from);
        }
        let (s, out) = call();
        assert_eq!(
            s,
            SG_ERR_CANCELLED,
            "{what}: stop from {from}: {}",
            last_error()
        );
        let message = last_error();
        assert!(message.contains("cancelled"), "{message}");
        if slabs && message.contains("partly filtered") {
            assert_ne!(&out, sentinel, "{what}: {message}, but nothing was written");
        } else {
            assert_eq!(&out, sentinel, "{what}: a cancelled call wrote its output");
            untouched += 1;
        }
        let seen = std::mem::take(&mut log.lock().unwrap().reports);
        let (last, before) = seen.split_last().unwrap();
        assert!(
            last.1 >= from && before.iter().all(|r| r.1 < from),
            "{what}: reports after the stop from {from}: {seen:?}"
        );

        log.lock().unwrap().stop_from = None;
        let (s, out) = call();
        ok(s);
        assert_eq!(out, reference, "{what}: the call after a cancel differs");
    }
    ok(sg_context_set_progress(ctx.0, None, ptr::null_mut()));
    seisgpu::progress::set_report_interval(Some(Duration::from_micros(200)));
    log.lock().unwrap().reports.clear();
    let (s, out) = call();
    ok(s);
    assert_eq!(out, reference);
    assert!(
        log.lock().unwrap().reports.is_empty(),
        "{what}: a removed callback was called"
    );
    untouched
}

pub fn fx_decon_2d(ctx: &Context) {
    let (n, ntr) = (500, 200);
    let data = Rng(7).signal(n * ntr);
    let mut o = sg_fxdecon_options_default();
    o.time_window_s = 0.5;
    let mut plan = ptr::null_mut();
    ok(sg_fxdecon_plan_create_2d(ctx.0, &o, n, ntr, &mut plan));
    let sentinel = vec![1234.5f32; n * ntr];
    exercise(ctx, "F-X 2D", 6, &sentinel, || {
        let mut out = sentinel.clone();
        let s = sg_fxdecon_execute_2d_f32(plan, data.as_ptr(), out.as_mut_ptr(), n);
        (s, out)
    });
    sg_fxdecon_plan_destroy(plan);
}

pub fn fx_decon_3d(ctx: &Context) {
    let (n, nx, ny) = (128, 24, 40);
    let data = Rng(11).signal(n * nx * ny);
    let mut plan = ptr::null_mut();
    ok(sg_fxdecon_plan_create_3d(
        ctx.0,
        ptr::null(),
        n,
        nx,
        ny,
        &mut plan,
    ));
    let sentinel = vec![-77.0f64; n * nx * ny];
    let input: Vec<f64> = data.iter().map(|&v| v as f64).collect();
    exercise(ctx, "F-XY 3D", 6, &sentinel, || {
        let mut out = sentinel.clone();
        let s = sg_fxdecon_execute_3d_f64(plan, input.as_ptr(), out.as_mut_ptr(), n, n * nx);
        (s, out)
    });
    sg_fxdecon_plan_destroy(plan);
}

pub fn dwt_batches(ctx: &Context, small: bool) {
    // Small: under the sanitizer each trace is a chunk of its own, 24 reports per call.
    let (n, ntr) = if small { (1024, 24) } else { (1024, 2000) };
    let data = Rng(3).signal(n * ntr);
    let mut plan = ptr::null_mut();
    ok(sg_dwt_plan_create(
        ctx.0,
        SG_WAVELET_DAUBECHIES,
        8,
        n,
        &mut plan,
    ));
    let sentinel = vec![9.0f32; n * ntr];
    exercise(ctx, "DWT forward", 4, &sentinel, || {
        let mut out = sentinel.clone();
        let s = sg_dwt_execute_f32(
            plan,
            SG_DWT_FORWARD,
            0,
            data.as_ptr(),
            out.as_mut_ptr(),
            ntr,
            n,
        );
        (s, out)
    });
    let opts = sg_dwt_denoise_options_default();
    let sentinel = (vec![9.0f32; n * ntr], vec![-1.0f64; ntr * 10]);
    exercise(ctx, "DWT denoise", 4, &sentinel, || {
        let (mut out, mut thresholds) = sentinel.clone();
        let s = sg_dwt_denoise_f32(
            plan,
            &opts,
            data.as_ptr(),
            out.as_mut_ptr(),
            ntr,
            n,
            thresholds.as_mut_ptr(),
        );
        (s, (out, thresholds))
    });
    // In place: a cancel leaves the caller's traces as they were, too.
    let original = data.clone();
    exercise(ctx, "DWT denoise in place", 3, &original, || {
        let mut inout = original.clone();
        let p = inout.as_mut_ptr();
        let s = sg_dwt_denoise_f32(plan, &opts, p, p, ntr, n, ptr::null_mut());
        (s, inout)
    });
    sg_dwt_plan_destroy(plan);
}

pub fn xcorr_preprocess_and_correlate(ctx: &Context, small: bool) {
    let mut o = sg_xcorr_options_default();
    o.sampling_rate = 20.0;
    o.cc_len = 60.0;
    o.step = 30.0;
    o.maxlag = 10.0;
    o.freqmin = 0.1;
    o.freqmax = 2.0;
    o.whiten_taper_bins = 10;
    let plan = ctx.plan(&o);
    // Small: 80 stations (about five preprocessing chunks and several correlation tiles on
    // the GPU's 2 MB budget: 40 gave too few reports to stop at) and 3 windows.
    let (n_sta, n) = if small {
        (80, 20 * 120)
    } else {
        (200, 20 * 240)
    };
    let data = Rng(5).signal(n_sta * n);

    // Preprocessing: the output is the spectra handle, written only on success.
    exercise(ctx, "xcorr preprocess", 4, &(ptr::null_mut(), None), || {
        let mut out: *mut sg_xcorr_spectra = ptr::null_mut();
        let s = sg_xcorr_preprocess_f32(plan.0, data.as_ptr(), n_sta, n, n, ptr::null(), &mut out);
        let host = (!out.is_null()).then(|| {
            let spectra = xcorr_common::Spectra(out);
            let h = spectra.host();
            h.values
                .iter()
                .map(|v| (v[0].to_bits(), v[1].to_bits()))
                .collect::<Vec<_>>()
        });
        (s, (ptr::null_mut::<sg_xcorr_spectra>(), host))
    });

    let day = plan.preprocess(&data, n_sta, n, None).unwrap();
    let n_lags = plan.n_lags();
    let mut n_pairs = 0;
    ok(sg_xcorr_pair_count(
        plan.0,
        n_sta,
        0,
        n_sta,
        0,
        n_sta,
        &mut n_pairs,
    ));
    let days = [day.0 as *const sg_xcorr_spectra; 3];
    let sentinel = vec![f32::MAX; n_pairs * n_lags];
    exercise(ctx, "xcorr correlate", 4, &sentinel, || {
        let mut stacks = sentinel.clone();
        let s = sg_xcorr_correlate_f32(
            plan.0,
            days.as_ptr(),
            days.len(),
            0,
            n_sta,
            0,
            n_sta,
            stacks.as_mut_ptr(),
            n_lags,
            ptr::null_mut(),
        );
        (s, stacks)
    });
}

/// Everything a search result holds (floats as bits, so that NaN compares equal).
#[derive(Clone, Debug, PartialEq)]
struct EmSummary {
    numbers: Vec<u64>,
    marginals: Vec<Vec<u64>>,
    pair: Vec<u64>,
    models: Vec<u64>,
}

fn em_summary(r: *mut sg_emlog_result, lens: &[usize]) -> EmSummary {
    let p = lens.len();
    let (mut total, mut count, mut best, mut best_f, mut n_models, mut more) =
        (0u64, 0u64, 0u64, 0.0f64, 0usize, 0i32);
    let (mut best_model, mut vmin, mut vmax) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    ok(sg_emlog_result_summary(
        r,
        &mut total,
        &mut count,
        &mut best,
        best_model.as_mut_ptr(),
        &mut best_f,
        vmin.as_mut_ptr(),
        vmax.as_mut_ptr(),
        &mut n_models,
        &mut more,
    ));
    let mut numbers = vec![
        total,
        count,
        best,
        best_f.to_bits(),
        n_models as u64,
        more as u64,
    ];
    numbers.extend(
        best_model
            .iter()
            .chain(&vmin)
            .chain(&vmax)
            .map(|v| v.to_bits()),
    );
    let marginals = lens
        .iter()
        .enumerate()
        .map(|(k, &len)| {
            let mut m = vec![0u64; len];
            ok(sg_emlog_result_marginal(r, k, m.as_mut_ptr(), len));
            m
        })
        .collect();
    let mut pair = vec![0u64; lens[0] * lens[2]];
    ok(sg_emlog_result_pair(r, 0, pair.as_mut_ptr(), pair.len()));
    let mut models = vec![0u64; n_models];
    let mut values = vec![0.0f64; n_models * p];
    ok(sg_emlog_result_models(
        r,
        models.as_mut_ptr(),
        values.as_mut_ptr(),
        n_models,
    ));
    models.extend(values.iter().map(|v| v.to_bits()));
    EmSummary {
        numbers,
        marginals,
        pair,
        models,
    }
}

/// The EM-logging search, fast and direct modes, on a small well-posed problem (4
/// searched conductivities, the measured data those of σ₀, 3 % errors): the result handle
/// is the output, written only on success.
pub fn em_search(ctx: &Context, small: bool) {
    let (n, m) = (40, 4);
    let a: Vec<f64> = (0..n * m)
        .map(|k| {
            let (i, j) = ((k / m) as f64, (k % m) as f64);
            0.2 + 0.1 * (0.37 * i * (j + 1.0)).sin() + 0.05 * j
        })
        .collect();
    let sigma0 = [0.5, 1.0, 2.0, 4.0];
    let f0: Vec<f64> = (0..n).map(|i| 1.0 + 0.02 * i as f64).collect();
    let delta = vec![0.03; n];
    let searched = [0i32, 1, 2, 3];
    let mut plan = ptr::null_mut();
    ok(sg_emlog_plan_create(
        ctx.0,
        n,
        m,
        a.as_ptr(),
        m,
        1,
        sigma0.as_ptr(),
        f0.as_ptr(),
        f0.as_ptr(),
        delta.as_ptr(),
        searched.len(),
        searched.as_ptr(),
        &mut plan,
    ));
    // Small: 36 rows (the GPU's unit of progress) of 48 models, 44 of them equivalent,
    // instead of 43,200 rows.
    let lens = if small {
        [48usize, 4, 3, 3]
    } else {
        [48, 40, 36, 30]
    };
    let kinds = [SG_EMLOG_AXIS_LINEAR; 4];
    let lo: Vec<f64> = sigma0.iter().map(|s| 0.5 * s).collect();
    let hi: Vec<f64> = sigma0.iter().map(|s| 1.5 * s).collect();
    let pairs = [0i32, 2];
    for (mode, what) in [
        (SG_EMLOG_FAST, "EM search fast"),
        (SG_EMLOG_DIRECT, "EM search direct"),
    ] {
        let mut o = sg_emlog_options_default();
        o.mode = mode;
        o.max_models = 20;
        let mut reference = None;
        exercise(ctx, what, 4, &None, || {
            let mut r = ptr::null_mut();
            let s = sg_emlog_search(
                plan,
                kinds.as_ptr(),
                lens.as_ptr(),
                lo.as_ptr(),
                hi.as_ptr(),
                ptr::null(),
                0,
                1,
                pairs.as_ptr(),
                &o,
                &mut r,
            );
            let summary = (!r.is_null()).then(|| em_summary(r, &lens));
            sg_emlog_result_destroy(r);
            reference = reference.take().or(summary.clone());
            (s, summary)
        });
        // Not a trivial grid: some models equivalent, more than listed, not all.
        let numbers = reference.unwrap().numbers;
        let (total, count) = (numbers[0], numbers[1]);
        assert_eq!(total, lens.iter().product::<usize>() as u64);
        assert!(
            count > 20 && count < total / 2,
            "{what}: {count} of {total}"
        );
    }
    sg_emlog_plan_destroy(plan);
}

/// A value compared to within 1e-9 + 1e-12·|value|: the GPU's type 1 adds each bin's
/// rows into the fine grid with atomics, in an order that varies from run to run, so its
/// outputs agree across runs to rounding, not bit for bit.
#[derive(Clone, Debug)]
pub struct Near(pub f64);

impl PartialEq for Near {
    fn eq(&self, other: &Near) -> bool {
        (self.0 - other.0).abs() <= 1e-9 + 1e-12 * self.0.abs().max(other.0.abs())
    }
}

/// An f32 output compared to rounding (|a − b| ≤ 1e-4·(1 + max |a|, |b|)): the wave packets'
/// adjoint on the GPU ends in the type-1 USFFT (atomics, as `Near` says), and the inverse
/// iterates on it. A sentinel (−3 where the data are of order 1) is still told apart.
#[derive(Clone, Debug)]
pub struct Near32(pub f32);

impl PartialEq for Near32 {
    fn eq(&self, other: &Near32) -> bool {
        (self.0 - other.0).abs() <= 1e-4 * (1.0 + self.0.abs().max(other.0.abs()))
    }
}

/// USFFT 3D, f64, types 1 and 2, two vectors of 60,000 points: the type 1 output (modes)
/// and the type 2 output (point values) written only on success. `min_reports`: reports of
/// a whole call (the GPU has one cancellation point, before its download: 2). `gpu`: type 1
/// results are compared as `Near` values.
pub fn usfft_types(ctx: &Context, min_reports: usize, gpu: bool) {
    use seisgpu::ffi::usfft::*;
    let (m, nv, modes) = (60_000usize, 2usize, [40usize, 36, 32]);
    let n_modes: usize = modes.iter().product();
    let mut rng = Rng(17);
    let mut coord = || -> Vec<f64> {
        (0..m)
            .map(|_| (rng.next() as f64 / 2147483647.0 - 0.5) * 2.0 * std::f64::consts::PI)
            .collect()
    };
    let (x, y, z) = (coord(), coord(), coord());
    let strengths: Vec<f64> = Rng(19)
        .signal(2 * nv * m)
        .iter()
        .map(|&v| v as f64)
        .collect();
    let coefficients: Vec<f64> = Rng(23)
        .signal(2 * nv * n_modes)
        .iter()
        .map(|&v| v as f64)
        .collect();
    for (kind, what) in [
        (SG_USFFT_TYPE1, "USFFT type 1"),
        (SG_USFFT_TYPE2, "USFFT type 2"),
    ] {
        let mut plan = ptr::null_mut();
        ok(sg_usfft_plan_create(
            ctx.0,
            kind,
            3,
            modes.as_ptr(),
            -1,
            1e-6,
            SG_USFFT_F64,
            nv,
            ptr::null(),
            &mut plan,
        ));
        ok(sg_usfft_set_points_f64(
            plan,
            m,
            x.as_ptr(),
            y.as_ptr(),
            z.as_ptr(),
        ));
        let (c_len, f_len) = (2 * nv * m, 2 * nv * n_modes);
        let sentinel = vec![-5.0f64; if kind == SG_USFFT_TYPE1 { f_len } else { c_len }];
        let call = || {
            let mut out = sentinel.clone();
            let s = if kind == SG_USFFT_TYPE1 {
                let mut c = strengths.clone();
                sg_usfft_execute_f64(plan, c.as_mut_ptr(), out.as_mut_ptr())
            } else {
                let mut f = coefficients.clone();
                sg_usfft_execute_f64(plan, out.as_mut_ptr(), f.as_mut_ptr())
            };
            (s, out)
        };
        if gpu && kind == SG_USFFT_TYPE1 {
            let near = |v: &[f64]| v.iter().map(|&x| Near(x)).collect::<Vec<_>>();
            exercise_slabs(ctx, what, 4, &near(&sentinel), false, min_reports, || {
                let (s, out) = call();
                (s, near(&out))
            });
        } else {
            exercise_slabs(ctx, what, 4, &sentinel, false, min_reports, call);
        }
        sg_usfft_plan_destroy(plan);
    }
}

/// Wave-packet forward, adjoint and inverse of the f32 layout `l` (of `m` coefficients) on
/// the data `f`: on the GPU the forward and adjoint report their USFFT and box stages (the
/// device waited for at each), the inverse each iteration.
pub fn wavepacket_transforms(
    ctx: &Context,
    l: *mut seisgpu::ffi::wavepacket::sg_wavepacket_layout,
    f: &[f32],
    m: usize,
    min_reports: usize,
) {
    use seisgpu::ffi::wavepacket::*;
    let mut c = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_forward_f32(l, f.as_ptr(), c.as_mut_ptr()));
    let sentinel_c = vec![-3.0f32; 2 * m];
    let sentinel_d = vec![-3.0f32; f.len()];
    exercise_slabs(
        ctx,
        "wave-packet forward",
        4,
        &sentinel_c,
        false,
        min_reports,
        || {
            let mut out = sentinel_c.clone();
            let s = sg_wavepacket_forward_f32(l, f.as_ptr(), out.as_mut_ptr());
            (s, out)
        },
    );
    // Near32: on the GPU the adjoint (and the inverse built on it) agrees run to run to
    // rounding; the CPU's is bit for bit, and Near32 holds for it too.
    let near = |v: &[f32]| v.iter().map(|&x| Near32(x)).collect::<Vec<_>>();
    let sentinel_n = near(&sentinel_d);
    exercise_slabs(
        ctx,
        "wave-packet adjoint",
        4,
        &sentinel_n,
        false,
        min_reports,
        || {
            let mut out = sentinel_d.clone();
            let s = sg_wavepacket_adjoint_f32(l, c.as_ptr(), out.as_mut_ptr());
            (s, near(&out))
        },
    );
    exercise(ctx, "wave-packet inverse", 4, &sentinel_n, || {
        let mut out = sentinel_d.clone();
        let (i, r) = (ptr::null_mut(), ptr::null_mut());
        let s = sg_wavepacket_inverse_f32(l, c.as_ptr(), out.as_mut_ptr(), 1e-6, 20, i, r);
        (s, near(&out))
    });
}
