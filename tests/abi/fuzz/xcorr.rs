//! `sg_xcorr_*`: plans, day preprocessing, spectra (copied out and imported), pair
//! blocks, correlation and substacks.

use super::{data, handle_slot, sentinel, Faults, Fuzz, Snapshot, Target};
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;

/// A live plan with the spectra made by it (n_stations of each).
struct Plan {
    p: *mut sg_xcorr_plan,
    days: Vec<(*mut sg_xcorr_spectra, usize)>,
    autocorrelation: bool,
}

struct Xcorr {
    plans: Vec<Plan>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Xcorr { plans: Vec::new() })
}

fn release(p: Plan) {
    for (d, _) in p.days {
        sg_xcorr_spectra_destroy(d);
    }
    sg_xcorr_plan_destroy(p.p);
}

impl Drop for Xcorr {
    fn drop(&mut self) {
        self.plans.drain(..).for_each(release);
    }
}

/// 128-sample windows at 10 Hz: small enough for thousands of calls.
const NPTS: usize = 128;

impl Target for Xcorr {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.plans.is_empty() || r < 15 {
            return create(f, &mut self.plans);
        }
        let i = f.rng.range(0, self.plans.len() - 1);
        if r < 18 {
            f.announce("sg_xcorr_plan_destroy", String::new);
            // Spectra outlive their plan.
            let mut p = self.plans.swap_remove(i);
            sg_xcorr_plan_destroy(p.p);
            p.days
                .drain(..)
                .for_each(|(d, _)| sg_xcorr_spectra_destroy(d));
            return;
        }
        let plan = &mut self.plans[i];
        match r {
            18..=38 => preprocess(f, plan),
            39..=44 => sizes(f, plan),
            45..=51 => spectra(f, plan),
            52..=62 => pairs(f, plan),
            63..=69 => import(f, plan),
            70..=75 => substack_groups(f, plan),
            76..=84 => correlate_substacks(f, plan),
            _ => correlate(f, plan),
        }
    }
}

fn create(f: &mut Fuzz, plans: &mut Vec<Plan>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let mut o = sg_xcorr_options_default();
    o.sampling_rate = 10.0;
    o.cc_len = 12.8;
    o.step = f.rng.pick(&[6.4, 12.8, 3.2]);
    o.freqmin = 0.5;
    o.freqmax = f.rng.pick(&[2.0, 4.0]);
    o.maxlag = f.rng.pick(&[0.0, 1.0, 3.0]);
    o.whiten_taper_bins = f.rng.range(0, 8) as i32;
    o.smoothspect_n = f.rng.range(1, 5) as i32;
    o.smooth_n = f.rng.range(1, 8) as i32;
    o.time_norm = f.rng.range(0, 2) as i32;
    o.freq_norm = f.rng.range(0, 2) as i32;
    o.stack_method = f.rng.range(0, 2) as i32;
    o.autocorrelation = f.rng.range(0, 1) as i32;
    o.cc_method = f.rng.range(0, 2) as i32;
    o.detrend_taper = f.rng.range(0, 1) as i32;
    o.bandpass_corners = f.rng.range(0, 4) as i32;
    // NULL options (the defaults) leave no room for a fault in them.
    let opts_null = f.rng.chance(0.05);
    match f.rng.range(0, if opts_null { 0 } else { 29 }) {
        0 if !opts_null => {
            k.plant("sampling_rate");
            o.sampling_rate = f.rng.pick(&[0.0, -10.0, f64::NAN, f64::INFINITY]);
        }
        1 => {
            k.plant("cc_len");
            o.cc_len = f.rng.pick(&[0.0, 12.85, -1.0, f64::NAN, 1e300]);
        }
        2 => {
            k.plant("step");
            o.step = f.rng.pick(&[0.0, 0.05, -6.4, f64::INFINITY]);
        }
        3 => {
            k.plant("freqmin");
            o.freqmin = f.rng.pick(&[0.0, -1.0, 4.5, f64::NAN]);
        }
        4 => {
            k.plant("freqmax");
            o.freqmax = f.rng.pick(&[5.0, 100.0, 0.4, f64::NAN]);
        }
        5 => {
            k.plant("max_over_std");
            o.max_over_std = f.rng.pick(&[0.0, -1.0, f64::NAN]);
        }
        6 => {
            k.plant("maxlag");
            o.maxlag = f.rng.pick(&[-1.0, 7.0, 1e9, f64::NAN]);
        }
        7 => {
            k.plant("pws_power");
            o.pws_power = f.rng.pick(&[-1.0, f64::NAN, f64::INFINITY]);
        }
        8 => {
            k.plant("robust_epsilon");
            o.robust_epsilon = f.rng.pick(&[0.0, -1.0, f64::NAN]);
        }
        9 => {
            k.plant("bandpass_corners");
            o.bandpass_corners = f.rng.pick(&[-1, 11, i32::MAX, i32::MIN]);
        }
        10 => {
            let name = f.rng.pick(&["detrend_taper", "autocorrelation"]);
            k.plant(name);
            let v = f.rng.bad_enum(&[0, 1]);
            if name == "detrend_taper" {
                o.detrend_taper = v;
            } else {
                o.autocorrelation = v;
            }
        }
        11 => {
            let name = f
                .rng
                .pick(&["time_norm", "freq_norm", "stack_method", "cc_method"]);
            k.plant(name);
            let v = f.rng.bad_enum(&[0, 1, 2]);
            match name {
                "time_norm" => o.time_norm = v,
                "freq_norm" => o.freq_norm = v,
                "cc_method" => o.cc_method = v,
                _ => o.stack_method = v,
            }
        }
        12 => {
            k.plant("smooth_n");
            o.time_norm = SG_XCORR_TIME_NORM_RUNNING_MEAN;
            o.smooth_n = f.rng.pick(&[0, -1, i32::MIN]);
        }
        13 => {
            k.plant("smoothspect_n");
            o.freq_norm = SG_XCORR_FREQ_NORM_RUNNING_MEAN;
            o.smoothspect_n = f.rng.pick(&[0, -5]);
        }
        14 => {
            k.plant("whiten_taper_bins");
            o.whiten_taper_bins = -1 - f.rng.range(0, 100) as i32;
        }
        15 => {
            o = f.rng.garbage();
            k.maybe(&[
                "options",
                "sampling_rate",
                "cc_len",
                "step",
                "freq",
                "maxlag",
                "band",
                "max_over_std",
                "pws_power",
                "robust_epsilon",
                "smooth",
                "bandpass",
                "cc_method",
            ]);
        }
        _ => {}
    }
    let opts: *const sg_xcorr_options = if opts_null { ptr::null() } else { &o };
    let mut out: *mut sg_xcorr_plan = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_xcorr_plan_create", || {
        format!("step {} maxlag {}", o.step, o.maxlag)
    });
    let s = sg_xcorr_plan_create(ctx, opts, out_p);
    f.check("sg_xcorr_plan_create", s, &k, &[snap]);
    if s == SG_OK {
        // Only the small windows chosen above are cheap enough to use further.
        let small = !opts.is_null() && !k.any();
        if plans.len() < 3 && small {
            plans.push(Plan {
                p: out,
                days: Vec::new(),
                autocorrelation: o.autocorrelation == 1,
            });
        } else {
            sg_xcorr_plan_destroy(out);
        }
    }
}

fn plan_or_null(f: &mut Fuzz, p: *mut sg_xcorr_plan, k: &mut Faults) -> *const sg_xcorr_plan {
    if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null()
    } else {
        p
    }
}

fn preprocess(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    let p = plan_or_null(f, plan.p, &mut k);
    let mut n_stations = f.rng.range(1, 4);
    let mut n_samples = NPTS + f.rng.range(0, 3 * NPTS);
    let mut stride = n_samples + f.rng.range(0, 2);
    let mut broken = true;
    match f.rng.range(0, 14) {
        0 => {
            k.plant("n_stations");
            n_stations = 0;
        }
        1 => {
            k.plant("n_samples");
            n_samples = f.rng.range(0, NPTS - 1);
            stride = n_samples;
        }
        2 => {
            k.plant("station_stride");
            stride = f.rng.range(0, n_samples - 1);
        }
        3 => {
            k.plant("n_stations");
            k.plant("station_stride");
            stride = f.rng.pick(&[n_samples, 1 << 40]);
            n_stations = usize::MAX / stride + 2;
        }
        _ => broken = false,
    }
    let span = if broken {
        n_samples.max(1)
    } else {
        (n_stations - 1) * stride + n_samples
    };
    let days = data::<f32>(f, span, Some(&mut k));
    let mut valid = vec![1u8; span];
    if f.rng.chance(0.2) {
        let a = f.rng.range(0, span - 1);
        let b = f.rng.range(a, (a + NPTS).min(span - 1));
        valid[a..=b].iter_mut().for_each(|v| *v = 0);
    }
    let mut days_p = days.as_ptr();
    if f.rng.chance(0.03) {
        k.plant("station_days");
        days_p = ptr::null();
    }
    let valid_p = if f.rng.chance(0.5) {
        ptr::null()
    } else {
        valid.as_ptr()
    };
    let mut out: *mut sg_xcorr_spectra = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_xcorr_preprocess_f32", || {
        format!("{n_stations}, {n_samples}, {stride}")
    });
    let s = sg_xcorr_preprocess_f32(p, days_p, n_stations, n_samples, stride, valid_p, out_p);
    f.check("sg_xcorr_preprocess_f32", s, &k, &[snap]);
    if s == SG_OK {
        if plan.days.len() < 4 {
            plan.days.push((out, n_stations));
        } else {
            sg_xcorr_spectra_destroy(out);
        }
    }
}

fn sizes(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    let p = plan_or_null(f, plan.p, &mut k);
    let mut n_samples = NPTS + f.rng.range(0, 1000);
    if f.rng.chance(0.1) {
        k.plant("n_samples");
        n_samples = f.rng.range(0, NPTS - 1);
    } else if f.rng.chance(0.05) {
        n_samples = usize::MAX - f.rng.range(0, 3);
    }
    let (mut w, mut l) = (0x5151usize, 0x5151usize);
    let wp: *mut usize = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut w
    };
    let lp: *mut usize = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut l
    };
    let snaps = [
        Snapshot::of("n_windows", wp, 1),
        Snapshot::of("n_lags", lp, 1),
    ];
    f.announce("sg_xcorr_plan_sizes", || format!("{n_samples}"));
    let s = sg_xcorr_plan_sizes(p, n_samples, wp, lp);
    f.check("sg_xcorr_plan_sizes", s, &k, &snaps);
}

fn spectra(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    let (d, n_stations) = if plan.days.is_empty() || f.rng.chance(0.03) {
        k.plant("spectra");
        (ptr::null_mut(), 0)
    } else {
        plan.days[f.rng.range(0, plan.days.len() - 1)]
    };
    let mut v = [0x5151usize; 5];
    let vp: Vec<*mut usize> = v
        .iter_mut()
        .map(|x| {
            if f.rng.chance(0.2) {
                ptr::null_mut()
            } else {
                x as *mut usize
            }
        })
        .collect();
    let snap = Snapshot::of("sizes", v.as_ptr(), 5);
    f.announce("sg_xcorr_spectra_sizes", String::new);
    let s = sg_xcorr_spectra_sizes(d, vp[0], vp[1], vp[2], vp[3], vp[4]);
    f.check("sg_xcorr_spectra_sizes", s, &k, &[snap]);
    if s != SG_OK || f.rng.chance(0.5) {
        return;
    }
    let (n_windows, band_len) = (v[1], v[3]);
    if vp[1].is_null() || vp[3].is_null() || v[0] != n_stations && !vp[0].is_null() {
        return;
    }
    let mut values = sentinel::<f32>(2 * band_len * n_stations * n_windows);
    let mut kept = sentinel::<u8>(n_stations * n_windows);
    let valp = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        values.as_mut_ptr()
    };
    let kp = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        kept.as_mut_ptr()
    };
    f.announce("sg_xcorr_spectra_copy", String::new);
    let s = sg_xcorr_spectra_copy(d, valp, kp);
    f.check("sg_xcorr_spectra_copy", s, &Faults::default(), &[]);
}

/// A block of `n` stations, sometimes a wrong one: (i0, ni, j0, nj).
pub fn block(f: &mut Fuzz, n: usize, k: &mut Faults) -> (usize, usize, usize, usize) {
    let b = if n >= 2 && f.rng.chance(0.4) {
        // Off-diagonal: [i0, i0+ni) before m ≤ [j0, j0+nj).
        let m = f.rng.range(1, n - 1);
        let i0 = f.rng.range(0, m - 1);
        let j0 = f.rng.range(m, n - 1);
        (i0, f.rng.range(1, m - i0), j0, f.rng.range(1, n - j0))
    } else {
        let i0 = f.rng.range(0, n - 1);
        let ni = f.rng.range(1, n - i0);
        (i0, ni, i0, ni)
    };
    match f.rng.range(0, 9) {
        0 => {
            k.plant("block");
            (b.0, 0, b.2, b.3)
        }
        1 => {
            k.plant("block");
            (n, 1, n, 1)
        }
        2 if n >= 2 => {
            // Ranges that overlap without being the same.
            k.plant("block");
            (0, 2, 1, 1.max(n - 1))
        }
        3 => {
            k.plant("block");
            (usize::MAX - f.rng.range(0, 3), 2, b.2, b.3)
        }
        _ => b,
    }
}

fn pairs(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    let p = plan_or_null(f, plan.p, &mut k);
    let n = f.rng.range(1, 50);
    let (i0, ni, j0, nj) = block(f, n, &mut k);
    let mut k2 = k.clone();
    let mut count = 0x5151usize;
    let cp: *mut usize = if f.rng.chance(0.05) {
        k.plant("n_pairs");
        ptr::null_mut()
    } else {
        &mut count
    };
    let snap = Snapshot::of("n_pairs", &count, 1);
    f.announce("sg_xcorr_pair_count", || {
        format!("{n}, {i0}, {ni}, {j0}, {nj}")
    });
    let s = sg_xcorr_pair_count(p, n, i0, ni, j0, nj, cp);
    f.check("sg_xcorr_pair_count", s, &k, &[snap]);
    // The block's true pair count (from a call with no fault), if the block is valid.
    let mut truth = 0usize;
    let valid = sg_xcorr_pair_count(plan.p, n, i0, ni, j0, nj, &mut truth) == SG_OK;
    if s == SG_OK && count != truth {
        f.stats
            .findings
            .push(format!("{}: pair count {count}, then {truth}", f.origin));
    }
    let n_pairs = if valid { truth } else { 3 };
    let mut pair = if n_pairs > 0 {
        f.rng.range(0, n_pairs - 1)
    } else {
        0
    };
    if n_pairs == 0 || f.rng.chance(0.05) {
        k2.plant("pair");
        pair = n_pairs + f.rng.range(0, 2);
    }
    let (mut i, mut j) = (0x5151usize, 0x5151usize);
    let ip: *mut usize = if f.rng.chance(0.03) {
        k2.plant("`i`");
        ptr::null_mut()
    } else {
        &mut i
    };
    let snaps = [Snapshot::of("i", &i, 1), Snapshot::of("j", &j, 1)];
    f.announce("sg_xcorr_pair_stations", || {
        format!("{n}, {i0}, {ni}, {j0}, {nj}, {pair}")
    });
    let s = sg_xcorr_pair_stations(p, n, i0, ni, j0, nj, pair, ip, &mut j);
    f.check("sg_xcorr_pair_stations", s, &k2, &snaps);
    let expect = if plan.autocorrelation { i <= j } else { i < j };
    if s == SG_OK && !(i >= i0 && i < i0 + ni && j >= j0 && j < j0 + nj && expect) {
        f.stats.findings.push(format!(
            "{}: pair {pair} of block ({i0},{ni},{j0},{nj}) is ({i},{j})",
            f.origin
        ));
    }
}

fn correlate(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    if plan.days.is_empty() {
        return preprocess(f, plan);
    }
    let p = plan_or_null(f, plan.p, &mut k);
    // Days of the same station count (another count is a planted fault).
    let (_, n) = plan.days[f.rng.range(0, plan.days.len() - 1)];
    let mut days: Vec<*const sg_xcorr_spectra> = plan
        .days
        .iter()
        .filter(|&&(_, m)| m == n || f.rng.chance(0.02))
        .map(|&(d, _)| d as *const _)
        .collect();
    if plan
        .days
        .iter()
        .any(|&(d, m)| m != n && days.contains(&(d as *const _)))
    {
        k.plant("stations");
    }
    let (i0, ni, j0, nj) = block(f, n, &mut k);
    let mut n_days = days.len();
    match f.rng.range(0, 19) {
        0 => {
            k.plant("n_days");
            n_days = 0;
        }
        1 => {
            k.plant("days[");
            let d = f.rng.range(0, days.len() - 1);
            days[d] = ptr::null();
        }
        _ => {}
    }
    let mut n_lags = 0;
    sg_xcorr_plan_sizes(plan.p, NPTS, ptr::null_mut(), &mut n_lags);
    let mut n_pairs = 0;
    let counted = sg_xcorr_pair_count(plan.p, n, i0, ni, j0, nj, &mut n_pairs) == SG_OK;
    let mut stride = n_lags + f.rng.range(0, 2);
    match f.rng.range(0, 14) {
        // The stride matters only between two pairs.
        0 if n_pairs > 1 => {
            k.plant("pair_stride");
            stride = f.rng.range(0, n_lags - 1);
        }
        1 if n_pairs > 1 => {
            k.plant("stride");
            stride = usize::MAX / (n_pairs - 1) + 1;
        }
        _ => {}
    }
    let len = if k.any() || !counted || n_pairs == 0 {
        n_lags
    } else {
        (n_pairs - 1) * stride + n_lags
    };
    let mut stacks = sentinel::<f32>(len);
    let mut counts = sentinel::<u32>(n_pairs.max(1));
    let mut sp = stacks.as_mut_ptr();
    if f.rng.chance(0.03) {
        k.plant("stacks");
        sp = ptr::null_mut();
    }
    let cp = if f.rng.chance(0.5) {
        ptr::null_mut()
    } else {
        counts.as_mut_ptr()
    };
    let dp = if f.rng.chance(0.02) {
        k.plant("days");
        ptr::null()
    } else {
        days.as_ptr()
    };
    let snaps = [
        Snapshot::of_slice("stacks", &stacks),
        Snapshot::of_slice("n_windows", &counts),
    ];
    f.announce("sg_xcorr_correlate_f32", || {
        format!("{n_days}, {i0}, {ni}, {j0}, {nj}, {stride}")
    });
    let s = sg_xcorr_correlate_f32(p, dp, n_days, i0, ni, j0, nj, sp, stride, cp);
    f.check("sg_xcorr_correlate_f32", s, &k, &snaps);
}

/// A day's sizes: (n_windows, band_len), from sg_xcorr_spectra_sizes.
fn day_sizes(d: *mut sg_xcorr_spectra) -> (usize, usize) {
    let (mut nw, mut bl) = (0, 0);
    let n = ptr::null_mut();
    assert_eq!(sg_xcorr_spectra_sizes(d, n, &mut nw, n, &mut bl, n), SG_OK);
    (nw, bl)
}

fn import(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    if plan.days.is_empty() {
        return preprocess(f, plan);
    }
    let (d, mut n_sta) = plan.days[f.rng.range(0, plan.days.len() - 1)];
    let (mut nw, bl) = day_sizes(d);
    let mut values = vec![0f32; 2 * bl * n_sta * nw];
    let mut kept = vec![0u8; n_sta * nw];
    assert_eq!(
        sg_xcorr_spectra_copy(d, values.as_mut_ptr(), kept.as_mut_ptr()),
        SG_OK
    );
    let (mut vp, mut kp) = (values.as_ptr(), kept.as_ptr());
    let p = plan_or_null(f, plan.p, &mut k);
    match f.rng.range(0, 12) {
        0 => {
            k.plant("kept");
            let i = f.rng.range(0, kept.len() - 1);
            kept[i] = f.rng.pick(&[2, 255]);
        }
        1 => {
            k.plant("non-finite");
            let i = f.rng.range(0, values.len() - 1);
            values[i] = f.rng.pick(&[f32::NAN, f32::INFINITY]);
        }
        2 => {
            k.plant("n_stations");
            n_sta = 0;
        }
        3 => {
            k.plant("n_windows");
            nw = 0;
        }
        4 => {
            k.plant("values");
            vp = ptr::null();
        }
        5 => {
            k.plant("kept");
            kp = ptr::null();
        }
        _ => {}
    }
    let mut out: *mut sg_xcorr_spectra = ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_xcorr_spectra_import", || format!("{n_sta}, {nw}"));
    let s = sg_xcorr_spectra_import(p, vp, kp, n_sta, nw, out_p);
    f.check("sg_xcorr_spectra_import", s, &k, &[snap]);
    if s == SG_OK {
        if plan.days.len() < 4 {
            plan.days.push((out, n_sta));
        } else {
            sg_xcorr_spectra_destroy(out);
        }
    }
}

fn substack_groups(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    let p = plan_or_null(f, plan.p, &mut k);
    let n_days = f.rng.range(1, 3);
    let windows: Vec<usize> = (0..n_days).map(|_| f.rng.range(1, 40)).collect();
    let mut starts: Vec<f64> = (0..n_days).map(|d| 100.0 * d as f64).collect();
    let mut len = f.rng.pick(&[100.0, 12.8, 6.4, 1e9]);
    let (mut wp, mut sp) = (windows.as_ptr(), starts.as_ptr());
    let total: usize = windows.iter().sum();
    let mut labels = sentinel::<i32>(total);
    let mut lp = labels.as_mut_ptr();
    let mut n_groups = 0x5151usize;
    let mut gp: *mut usize = &mut n_groups;
    match f.rng.range(0, 11) {
        0 => {
            k.plant("substack_len");
            len = f.rng.pick(&[0.0, -1.0, f64::NAN, f64::INFINITY]);
        }
        1 => {
            k.plant("day_start");
            // Before day 0 (a fault only where there is a day 0 before it), or NaN.
            starts[n_days - 1] = match n_days {
                1 => f64::NAN,
                _ => f.rng.pick(&[-1.0, f64::NAN]),
            };
            sp = starts.as_ptr();
        }
        2 => {
            k.plant("labels");
            lp = ptr::null_mut();
        }
        3 => {
            k.plant("n_groups");
            gp = ptr::null_mut();
        }
        4 => {
            k.plant("day_windows");
            wp = ptr::null();
        }
        _ => {}
    }
    let snaps = [
        Snapshot::of_slice("labels", &labels),
        Snapshot::of("n_groups", &n_groups, 1),
    ];
    f.announce("sg_xcorr_substack_groups", || format!("{n_days}, {len}"));
    let s = sg_xcorr_substack_groups(p, n_days, wp, sp, len, lp, gp);
    f.check("sg_xcorr_substack_groups", s, &k, &snaps);
}

fn correlate_substacks(f: &mut Fuzz, plan: &mut Plan) {
    let mut k = Faults::default();
    if plan.days.is_empty() {
        return preprocess(f, plan);
    }
    let p = plan_or_null(f, plan.p, &mut k);
    let (_, n) = plan.days[f.rng.range(0, plan.days.len() - 1)];
    let days: Vec<*const sg_xcorr_spectra> = plan
        .days
        .iter()
        .filter(|&&(_, m)| m == n)
        .map(|&(d, _)| d as *const _)
        .collect();
    let (i0, ni, j0, nj) = block(f, n, &mut k);
    let total: usize = days.iter().map(|&d| day_sizes(d as *mut _).0).sum();
    let mut n_groups = f.rng.range(1, 4);
    let mut labels: Vec<i32> = (0..total)
        .map(|_| f.rng.range(0, n_groups) as i32 - 1)
        .collect();
    let mut lp = labels.as_ptr();
    match f.rng.range(0, 11) {
        0 => {
            k.plant("group label");
            let i = f.rng.range(0, total - 1);
            labels[i] = f.rng.pick(&[n_groups as i32, -2, i32::MIN]);
        }
        1 => {
            k.plant("n_groups");
            n_groups = 0;
        }
        2 => {
            k.plant("labels");
            lp = ptr::null();
        }
        _ => {}
    }
    let mut n_lags = 0;
    sg_xcorr_plan_sizes(plan.p, NPTS, ptr::null_mut(), &mut n_lags);
    let mut n_pairs = 0;
    let counted = sg_xcorr_pair_count(plan.p, n, i0, ni, j0, nj, &mut n_pairs) == SG_OK;
    let rows = if counted { n_pairs.max(1) } else { 1 };
    let mut stacks = sentinel::<f32>(rows * n_lags);
    let mut counts = sentinel::<u32>(rows);
    let mut sub = sentinel::<f32>(rows * n_groups.max(1) * n_lags);
    let mut sub_counts = sentinel::<u32>(rows * n_groups.max(1));
    let mut subp = sub.as_mut_ptr();
    if f.rng.chance(0.03) {
        k.plant("substacks");
        subp = ptr::null_mut();
    }
    let scp = if f.rng.chance(0.5) {
        ptr::null_mut()
    } else {
        sub_counts.as_mut_ptr()
    };
    let snaps = [
        Snapshot::of_slice("stacks", &stacks),
        Snapshot::of_slice("n_windows", &counts),
        Snapshot::of_slice("substacks", &sub),
        Snapshot::of_slice("substack_windows", &sub_counts),
    ];
    f.announce("sg_xcorr_correlate_substacks_f32", || {
        format!("{}, {i0}, {ni}, {j0}, {nj}, {n_groups}", days.len())
    });
    let s = sg_xcorr_correlate_substacks_f32(
        p,
        days.as_ptr(),
        days.len(),
        i0,
        ni,
        j0,
        nj,
        lp,
        n_groups,
        stacks.as_mut_ptr(),
        n_lags,
        counts.as_mut_ptr(),
        subp,
        scp,
    );
    f.check("sg_xcorr_correlate_substacks_f32", s, &k, &snaps);
}
