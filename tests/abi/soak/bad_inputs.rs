//! The soak's bad inputs, per capability: wrong calls (a NaN in the input, a NULL array,
//! a wrong length or stride, an out-of-range enum) made through the C ABI on the very plans
//! the stress jobs share with the other threads, each with the status it must return.
//!
//! Outputs are filled with `SENTINEL` (handles: a dangling pointer) before the call; a
//! refused call must leave them as they were.

use crate::common::last_error;
use crate::stress::{
    coefficient_count, Ctx, DwtPlan, EmlogPlan, FxPlans, Planned, UsfftPlans, WavepacketLayouts,
    XcorrPlan, DAY, M, STATIONS, WP,
};
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::xcorr::*;
use std::any::Any;
use std::ptr::{self, NonNull};

/// What a refused call's outputs are filled with: finite, so in-place inputs stay valid.
const SENTINEL: f64 = -7777.25;

/// One wrong call and what came of it.
pub(crate) struct Outcome {
    pub(crate) what: &'static str,
    pub(crate) want: sg_status,
    pub(crate) got: sg_status,
    /// `sg_last_error_message()` right after the call.
    pub(crate) message: String,
    /// Whether every output of the caller still holds the sentinel.
    pub(crate) untouched: bool,
}

impl Outcome {
    /// `Err` unless the call returned `want`, left a message and touched no output.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.got != self.want || self.message.is_empty() || !self.untouched {
            return Err(format!(
                "{}: status {} (expected {}), message {:?}, outputs untouched: {}",
                self.what, self.got, self.want, self.message, self.untouched
            ));
        }
        Ok(())
    }
}

/// Reads the last-error message at once (before any other `sg_` call on this thread).
fn outcome(what: &'static str, want: sg_status, got: sg_status, untouched: bool) -> Outcome {
    let message = last_error();
    Outcome {
        what,
        want,
        got,
        message,
        untouched,
    }
}

fn sentinels<T: Copy>(n: usize, of: fn(f64) -> T) -> Vec<T> {
    vec![of(SENTINEL); n]
}
fn untouched<T: Copy + Into<f64>>(v: &[T]) -> bool {
    v.iter().all(|&x| x.into() == SENTINEL)
}
fn wave(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}
fn dangling<T>() -> *mut T {
    NonNull::dangling().as_ptr()
}

/// One wrong call, chosen by `pick`, on `plan` (a stress job's plan) or on `ctx`.
pub(crate) fn bad_call(plan: &dyn Planned, ctx: &Ctx, pick: u64) -> Outcome {
    let any = plan as &dyn Any;
    if let Some(p) = any.downcast_ref::<DwtPlan>() {
        dwt(p.0 .0, pick)
    } else if let Some(p) = any.downcast_ref::<UsfftPlans>() {
        usfft(p.0 .0, ctx, pick)
    } else if let Some(p) = any.downcast_ref::<FxPlans>() {
        fxdecon(p.0 .0, pick)
    } else if let Some(p) = any.downcast_ref::<XcorrPlan>() {
        xcorr(p.0 .0, pick)
    } else if let Some(p) = any.downcast_ref::<EmlogPlan>() {
        emlog(p.0 .0, pick)
    } else if let Some(p) = any.downcast_ref::<WavepacketLayouts>() {
        wavepacket(p.0 .0, pick)
    } else {
        panic!("a job without bad-input cases: add them to soak/bad_inputs.rs")
    }
}

/// The stress plan: Daubechies 8 on 512 samples.
fn dwt(p: *mut sg_dwt_plan, pick: u64) -> Outcome {
    let n = 512;
    let mut x = wave(2 * n);
    let mut y = sentinels(2 * n, |v| v as f32);
    let fwd = SG_DWT_FORWARD;
    match pick % 5 {
        0 => {
            x[n + 17] = f32::NAN;
            let s = sg_dwt_execute_f32(p, fwd, 0, x.as_ptr(), y.as_mut_ptr(), 2, n);
            outcome("dwt: NaN in the input", SG_ERR_NON_FINITE, s, untouched(&y))
        }
        1 => {
            let s = sg_dwt_execute_f32(p, fwd, 0, ptr::null(), y.as_mut_ptr(), 2, n);
            outcome("dwt: NULL input", SG_ERR_NULL_POINTER, s, untouched(&y))
        }
        2 => {
            let s = sg_dwt_execute_f32(p, 7, 0, x.as_ptr(), y.as_mut_ptr(), 2, n);
            outcome(
                "dwt: direction 7",
                SG_ERR_INVALID_ARGUMENT,
                s,
                untouched(&y),
            )
        }
        3 => {
            let s = sg_dwt_execute_f32(p, fwd, 0, x.as_ptr(), y.as_mut_ptr(), 2, n - 1);
            outcome(
                "dwt: stride < length",
                SG_ERR_INVALID_ARGUMENT,
                s,
                untouched(&y),
            )
        }
        _ => {
            let mut x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
            x[3] = f64::INFINITY;
            let mut y = sentinels(2 * n, |v| v);
            let mut thr = sentinels(2 * 16, |v| v);
            let s = sg_dwt_denoise_f64(
                p,
                ptr::null(),
                x.as_ptr(),
                y.as_mut_ptr(),
                2,
                n,
                thr.as_mut_ptr(),
            );
            let clean = untouched(&y) && untouched(&thr);
            outcome("dwt denoise: inf in the input", SG_ERR_NON_FINITE, s, clean)
        }
    }
}

/// The stress plan: type 1, 2D 24 × 17, f64, 2 vectors of M points.
fn usfft(p: *mut sg_usfft_plan, ctx: &Ctx, pick: u64) -> Outcome {
    let mut c = sentinels(2 * 2 * M, |v| v);
    let mut f = sentinels(2 * 2 * 24 * 17, |v| v);
    match pick % 4 {
        0 => {
            let s = sg_usfft_execute_f64(p, c.as_mut_ptr(), ptr::null_mut());
            outcome("usfft: NULL modes", SG_ERR_NULL_POINTER, s, untouched(&c))
        }
        1 => {
            let s = sg_usfft_execute_f64(p, ptr::null_mut(), f.as_mut_ptr());
            outcome(
                "usfft: NULL strengths",
                SG_ERR_NULL_POINTER,
                s,
                untouched(&f),
            )
        }
        k => {
            let (kind, dim, what) = match k {
                // Types 1–3 exist; 4 is outside them.
                2 => (4, 2, "usfft: type 4"),
                _ => (SG_USFFT_TYPE1, 4, "usfft: 4 dimensions"),
            };
            let mut out = dangling();
            let modes = [24usize, 17, 5, 5];
            let s = sg_usfft_plan_create(
                ctx.0,
                kind,
                dim,
                modes.as_ptr(),
                -1,
                1e-9,
                SG_USFFT_F64,
                1,
                ptr::null(),
                &mut out,
            );
            if s == SG_OK && out != dangling() {
                sg_usfft_plan_destroy(out); // a wrong outcome, reported below; not leaked
            }
            outcome(what, SG_ERR_INVALID_ARGUMENT, s, out == dangling())
        }
    }
}

/// The stress plan: a 2D section of 30 traces × 128 samples, in f32.
fn fxdecon(p: *mut sg_fxdecon_plan, pick: u64) -> Outcome {
    let n = 128;
    let mut x = wave(n * 30);
    let mut y = sentinels(n * 30, |v| v as f32);
    match pick % 3 {
        0 => {
            x[5 * n + 3] = f32::NAN;
            let s = sg_fxdecon_execute_2d_f32(p, x.as_ptr(), y.as_mut_ptr(), n);
            outcome(
                "fxdecon: NaN in the input",
                SG_ERR_NON_FINITE,
                s,
                untouched(&y),
            )
        }
        1 => {
            let s = sg_fxdecon_execute_2d_f32(p, x.as_ptr(), y.as_mut_ptr(), n - 1);
            outcome(
                "fxdecon: stride < length",
                SG_ERR_INVALID_ARGUMENT,
                s,
                untouched(&y),
            )
        }
        _ => {
            let s = sg_fxdecon_execute_2d_f32(p, ptr::null(), y.as_mut_ptr(), n);
            outcome("fxdecon: NULL input", SG_ERR_NULL_POINTER, s, untouched(&y))
        }
    }
}

/// The stress plan: 10 Hz, 25.6 s windows; STATIONS station-days of DAY samples.
fn xcorr(p: *mut sg_xcorr_plan, pick: u64) -> Outcome {
    let mut days = wave(STATIONS * DAY);
    let mut out = dangling();
    let (what, want, s) = match pick % 4 {
        0 => {
            days[2 * DAY + 100] = f32::NAN;
            let s = sg_xcorr_preprocess_f32(
                p,
                days.as_ptr(),
                STATIONS,
                DAY,
                DAY,
                ptr::null(),
                &mut out,
            );
            ("xcorr: NaN in a station-day", SG_ERR_NON_FINITE, s)
        }
        1 => {
            let s = sg_xcorr_preprocess_f32(
                p,
                days.as_ptr(),
                STATIONS,
                100,
                100,
                ptr::null(),
                &mut out,
            );
            (
                "xcorr: day shorter than a window",
                SG_ERR_INVALID_ARGUMENT,
                s,
            )
        }
        2 => {
            let s = sg_xcorr_preprocess_f32(
                p,
                days.as_ptr(),
                STATIONS,
                DAY,
                DAY - 1,
                ptr::null(),
                &mut out,
            );
            ("xcorr: stride < day", SG_ERR_INVALID_ARGUMENT, s)
        }
        _ => {
            let s =
                sg_xcorr_preprocess_f32(p, ptr::null(), STATIONS, DAY, DAY, ptr::null(), &mut out);
            ("xcorr: NULL station-days", SG_ERR_NULL_POINTER, s)
        }
    };
    outcome(what, want, s, out == dangling())
}

/// The stress plan: 12 data × 4 parameters, 3 searched; grids of 8³ models.
fn emlog(p: *mut sg_emlog_plan, pick: u64) -> Outcome {
    let mut kinds = [SG_EMLOG_AXIS_LINEAR; 3];
    let mut counts = [8usize; 3];
    let mut o = sg_emlog_options_default();
    let mut out = dangling();
    let (what, want) = match pick % 4 {
        0 => {
            kinds[1] = 9;
            ("emlog: axis kind 9", SG_ERR_INVALID_ARGUMENT)
        }
        1 => {
            o.norm = 7;
            ("emlog: norm 7", SG_ERR_INVALID_ARGUMENT)
        }
        2 => {
            counts[2] = 0;
            ("emlog: an axis of 0 values", SG_ERR_INVALID_ARGUMENT)
        }
        _ => ("emlog: NULL axis counts", SG_ERR_NULL_POINTER),
    };
    let counts = if want == SG_ERR_NULL_POINTER {
        ptr::null()
    } else {
        counts.as_ptr()
    };
    let s = sg_emlog_search(
        p,
        kinds.as_ptr(),
        counts,
        [0.0, 0.3, 0.0].as_ptr(),
        [0.4, 0.7, 0.2].as_ptr(),
        ptr::null(),
        0,
        1,
        [0, 2].as_ptr(),
        &o,
        &mut out,
    );
    outcome(what, want, s, out == dangling())
}

/// The stress layout: 32 × 24 samples, f32.
fn wavepacket(l: *mut sg_wavepacket_layout, pick: u64) -> Outcome {
    let mut x = wave(WP[0] * WP[1]);
    let mut c = sentinels(2 * coefficient_count(l), |v| v as f32);
    match pick % 4 {
        0 => {
            x[WP[0] + 5] = f32::INFINITY;
            let s = sg_wavepacket_forward_f32(l, x.as_ptr(), c.as_mut_ptr());
            outcome(
                "wavepacket: inf in the data",
                SG_ERR_NON_FINITE,
                s,
                untouched(&c),
            )
        }
        1 => {
            let s = sg_wavepacket_forward_f32(l, ptr::null(), c.as_mut_ptr());
            outcome(
                "wavepacket: NULL data",
                SG_ERR_NULL_POINTER,
                s,
                untouched(&c),
            )
        }
        2 => {
            let kind = SG_WAVEPACKET_THRESHOLD_VALUE;
            let s = sg_wavepacket_threshold_f32(l, c.as_mut_ptr(), 9, kind, 1.0);
            outcome(
                "wavepacket: threshold mode 9",
                SG_ERR_INVALID_ARGUMENT,
                s,
                untouched(&c),
            )
        }
        _ => {
            let kind = SG_WAVEPACKET_THRESHOLD_VALUE;
            let s = sg_wavepacket_threshold_f32(l, c.as_mut_ptr(), SG_WAVEPACKET_SOFT, kind, -1.0);
            outcome(
                "wavepacket: threshold −1",
                SG_ERR_INVALID_ARGUMENT,
                s,
                untouched(&c),
            )
        }
    }
}
