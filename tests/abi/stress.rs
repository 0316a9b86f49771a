//! Concurrency stress (issue 15): 16 threads share one context for a bounded time, each
//! creating, executing and destroying plans of every kind, and executing plans shared by
//! all threads at once; every result is compared with the one serial calls gave.
//!
//! On the CPU the results must be bit for bit the serial ones (every CPU path sums in a
//! fixed order, whatever the thread count). On a CUDA context (SEISGPU_STRESS_BACKEND=cuda)
//! the DWT must still be bit for bit; the others may differ in rounding (atomics in the
//! USFFT spreading, GEMM tiling) and must agree to 1e-5 of the largest value.
//!
//! SEISGPU_STRESS_SECONDS (default 3) bounds the run; SEISGPU_STRESS_THREADS (16) sets
//! the threads; SEISGPU_STRESS_JOBS (e.g. "usfft,wavepacket") keeps only the named jobs, to
//! find which plan type a failure needs. Adding a plan type: one `Job` and one line in `jobs()`.
//! The long GPU soak (soak.rs) runs these same jobs, with a CPU reference and bad inputs.

use crate::common;

use common::{last_error, ok, Rng};
use seisgpu::ffi::context::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The shared context, usable from every thread (documented thread-safe).
pub(crate) struct Ctx(pub(crate) *mut sg_context);
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

/// One kind of work: makes its plans on a context and runs them on fixed data.
pub(crate) trait Job: Sync {
    fn name(&self) -> &'static str;
    /// Whether results must be bit for bit the serial ones on this backend.
    fn exact(&self, cuda: bool) -> bool {
        !cuda
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned>;
}

/// Plans ready to execute, from any number of threads at once; destroyed on drop. `Any`, so
/// that the soak's bad-input cases (soak/bad_inputs.rs) can reach the handles.
pub(crate) trait Planned: Send + Sync + std::any::Any {
    fn run(&self) -> Vec<f64>;
}

/// Raw plan pointers are shared read-only (execute calls are documented thread-safe).
pub(crate) struct Handle<T>(pub(crate) *mut T);
unsafe impl<T> Send for Handle<T> {}
unsafe impl<T> Sync for Handle<T> {}

fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.gauss()).collect()
}

// ---- DWT: denoise f64 and forward f32 of 6 traces ------------------------------------

struct Dwt {
    data: Vec<f64>,
}
pub(crate) struct DwtPlan(pub(crate) Handle<sg_dwt_plan>, Vec<f64>);

impl Job for Dwt {
    fn name(&self) -> &'static str {
        "dwt"
    }
    fn exact(&self, _cuda: bool) -> bool {
        true
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let mut p = ptr::null_mut();
        ok(sg_dwt_plan_create(
            ctx.0,
            SG_WAVELET_DAUBECHIES,
            8,
            512,
            &mut p,
        ));
        Box::new(DwtPlan(Handle(p), self.data.clone()))
    }
}

impl Planned for DwtPlan {
    fn run(&self) -> Vec<f64> {
        let (n, traces, stride) = (512, 6, 515);
        let mut out = vec![0.0f64; self.1.len()];
        let mut thr = vec![0.0f64; traces * 9];
        ok(sg_dwt_denoise_f64(
            self.0 .0,
            ptr::null(),
            self.1.as_ptr(),
            out.as_mut_ptr(),
            traces,
            stride,
            thr.as_mut_ptr(),
        ));
        let x32: Vec<f32> = self.1.iter().map(|&v| v as f32).collect();
        let mut y32 = vec![0.0f32; x32.len()];
        ok(sg_dwt_execute_f32(
            self.0 .0,
            SG_DWT_FORWARD,
            0,
            x32.as_ptr(),
            y32.as_mut_ptr(),
            traces,
            stride,
        ));
        let _ = n;
        out.into_iter()
            .chain(thr)
            .chain(y32.into_iter().map(f64::from))
            .collect()
    }
}

impl Drop for DwtPlan {
    fn drop(&mut self) {
        sg_dwt_plan_destroy(self.0 .0);
    }
}

// ---- USFFT: a 2D type 1 in f64 and a 3D type 2 in f32 ----------------------------------

struct Usfft {
    x: Vec<f64>,
    strengths: Vec<f64>,
}
pub(crate) struct UsfftPlans(
    pub(crate) Handle<sg_usfft_plan>,
    Handle<sg_usfft_plan>,
    Vec<f64>,
);

pub(crate) const M: usize = 300;

impl Job for Usfft {
    fn name(&self) -> &'static str {
        "usfft"
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        ok(sg_usfft_plan_create(
            ctx.0,
            SG_USFFT_TYPE1,
            2,
            [24, 17].as_ptr(),
            -1,
            1e-9,
            SG_USFFT_F64,
            2,
            ptr::null(),
            &mut a,
        ));
        ok(sg_usfft_plan_create(
            ctx.0,
            SG_USFFT_TYPE2,
            3,
            [8, 9, 10].as_ptr(),
            1,
            1e-5,
            SG_USFFT_F32,
            1,
            ptr::null(),
            &mut b,
        ));
        let c = |i: usize| self.x[i * M..(i + 1) * M].to_vec();
        ok(sg_usfft_set_points_f64(
            a,
            M,
            c(0).as_ptr(),
            c(1).as_ptr(),
            ptr::null(),
        ));
        let f32s = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
        ok(sg_usfft_set_points_f32(
            b,
            M,
            f32s(c(0)).as_ptr(),
            f32s(c(1)).as_ptr(),
            f32s(c(2)).as_ptr(),
        ));
        Box::new(UsfftPlans(Handle(a), Handle(b), self.strengths.clone()))
    }
}

impl Planned for UsfftPlans {
    fn run(&self) -> Vec<f64> {
        let mut c = self.2[..2 * 2 * M].to_vec();
        let mut f = vec![0.0f64; 2 * 2 * 24 * 17];
        ok(sg_usfft_execute_f64(
            self.0 .0,
            c.as_mut_ptr(),
            f.as_mut_ptr(),
        ));
        let mut c32 = vec![0.0f32; 2 * M];
        let mut f32m: Vec<f32> = self.2[..2 * 720].iter().map(|&v| v as f32).collect();
        ok(sg_usfft_execute_f32(
            self.1 .0,
            c32.as_mut_ptr(),
            f32m.as_mut_ptr(),
        ));
        f.into_iter()
            .chain(c32.into_iter().map(f64::from))
            .collect()
    }
}

impl Drop for UsfftPlans {
    fn drop(&mut self) {
        sg_usfft_plan_destroy(self.0 .0);
        sg_usfft_plan_destroy(self.1 .0);
    }
}

// ---- F-X: a 2D section in f32 and a 3D volume in f64 -----------------------------------

struct Fx {
    section: Vec<f64>,
}
pub(crate) struct FxPlans(
    pub(crate) Handle<sg_fxdecon_plan>,
    Handle<sg_fxdecon_plan>,
    Vec<f64>,
);

impl Job for Fx {
    fn name(&self) -> &'static str {
        "fxdecon"
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        let mut o = sg_fxdecon_options_default();
        o.window_traces = 12;
        ok(sg_fxdecon_plan_create_2d(ctx.0, &o, 128, 30, &mut a));
        o.window_inline = 6;
        o.window_crossline = 6;
        o.operator_inline = 3;
        o.operator_crossline = 3;
        ok(sg_fxdecon_plan_create_3d(ctx.0, &o, 64, 7, 8, &mut b));
        Box::new(FxPlans(Handle(a), Handle(b), self.section.clone()))
    }
}

impl Planned for FxPlans {
    fn run(&self) -> Vec<f64> {
        let x32: Vec<f32> = self.2[..128 * 30].iter().map(|&v| v as f32).collect();
        let mut y32 = vec![0.0f32; x32.len()];
        ok(sg_fxdecon_execute_2d_f32(
            self.0 .0,
            x32.as_ptr(),
            y32.as_mut_ptr(),
            128,
        ));
        let x = &self.2[..64 * 56];
        let mut y = vec![0.0f64; x.len()];
        ok(sg_fxdecon_execute_3d_f64(
            self.1 .0,
            x.as_ptr(),
            y.as_mut_ptr(),
            64,
            64 * 7,
        ));
        y32.into_iter().map(f64::from).chain(y).collect()
    }
}

impl Drop for FxPlans {
    fn drop(&mut self) {
        sg_fxdecon_plan_destroy(self.0 .0);
        sg_fxdecon_plan_destroy(self.1 .0);
    }
}

// ---- Ambient noise: preprocess 4 stations, correlate every pair ------------------------

struct Xcorr {
    days: Vec<f32>,
}
pub(crate) struct XcorrPlan(pub(crate) Handle<sg_xcorr_plan>, Vec<f32>);

pub(crate) const STATIONS: usize = 4;
pub(crate) const DAY: usize = 1024;

impl Job for Xcorr {
    fn name(&self) -> &'static str {
        "xcorr"
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let mut o = sg_xcorr_options_default();
        o.sampling_rate = 10.0;
        o.cc_len = 25.6;
        o.step = 12.8;
        o.freqmin = 0.3;
        o.freqmax = 3.0;
        o.maxlag = 5.0;
        o.whiten_taper_bins = 5;
        o.stack_method = SG_XCORR_STACK_PWS;
        let mut p = ptr::null_mut();
        ok(sg_xcorr_plan_create(ctx.0, &o, &mut p));
        Box::new(XcorrPlan(Handle(p), self.days.clone()))
    }
}

impl Planned for XcorrPlan {
    fn run(&self) -> Vec<f64> {
        let p = self.0 .0;
        let mut spectra = ptr::null_mut();
        ok(sg_xcorr_preprocess_f32(
            p,
            self.1.as_ptr(),
            STATIONS,
            DAY,
            DAY,
            ptr::null(),
            &mut spectra,
        ));
        let (mut n_lags, mut n_pairs) = (0, 0);
        ok(sg_xcorr_plan_sizes(p, DAY, ptr::null_mut(), &mut n_lags));
        ok(sg_xcorr_pair_count(
            p,
            STATIONS,
            0,
            STATIONS,
            0,
            STATIONS,
            &mut n_pairs,
        ));
        let mut stacks = vec![0.0f32; n_pairs * n_lags];
        let days = [spectra as *const sg_xcorr_spectra];
        ok(sg_xcorr_correlate_f32(
            p,
            days.as_ptr(),
            1,
            0,
            STATIONS,
            0,
            STATIONS,
            stacks.as_mut_ptr(),
            n_lags,
            ptr::null_mut(),
        ));
        sg_xcorr_spectra_destroy(spectra);
        stacks.into_iter().map(f64::from).collect()
    }
}

impl Drop for XcorrPlan {
    fn drop(&mut self) {
        sg_xcorr_plan_destroy(self.0 .0);
    }
}

// ---- EM logging: a 12 × 4 plan searched on 8³ models, fast and direct ------------------

struct Emlog {
    a: Vec<f64>,
}
pub(crate) struct EmlogPlan(pub(crate) Handle<sg_emlog_plan>);

const EM_N: usize = 12;
const EM_M: usize = 4;

impl Job for Emlog {
    fn name(&self) -> &'static str {
        "emlog"
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let sigma0 = [0.2, 0.5, 0.1, 0.3];
        let f0: Vec<f64> = (0..EM_N)
            .map(|i| {
                (0..EM_M)
                    .map(|j| self.a[i * EM_M + j] * sigma0[j])
                    .sum::<f64>()
                    + 1.0
            })
            .collect();
        let f_exp: Vec<f64> = f0
            .iter()
            .enumerate()
            .map(|(i, v)| v * (1.0 + 0.01 * (i % 3) as f64))
            .collect();
        let delta = [0.05; EM_N];
        let mut p = ptr::null_mut();
        ok(sg_emlog_plan_create(
            ctx.0,
            EM_N,
            EM_M,
            self.a.as_ptr(),
            EM_M,
            1,
            sigma0.as_ptr(),
            f0.as_ptr(),
            f_exp.as_ptr(),
            delta.as_ptr(),
            3,
            [0, 1, 2].as_ptr(),
            &mut p,
        ));
        Box::new(EmlogPlan(Handle(p)))
    }
}

impl Planned for EmlogPlan {
    fn run(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for (mode, norm) in [
            (SG_EMLOG_FAST, SG_EMLOG_NORM_L2),
            (SG_EMLOG_DIRECT, SG_EMLOG_NORM_L1),
        ] {
            let mut o = sg_emlog_options_default();
            o.criterion = SG_EMLOG_MAX_MISFIT;
            o.level = 2.0;
            o.mode = mode;
            o.norm = norm;
            let mut r = ptr::null_mut();
            ok(sg_emlog_search(
                self.0 .0,
                [SG_EMLOG_AXIS_LINEAR; 3].as_ptr(),
                [8usize; 3].as_ptr(),
                [0.0, 0.3, 0.0].as_ptr(),
                [0.4, 0.7, 0.2].as_ptr(),
                ptr::null(),
                0,
                1,
                [0, 2].as_ptr(),
                &o,
                &mut r,
            ));
            let (mut total, mut count, mut best) = (0u64, 0u64, 0u64);
            let (mut model, mut misfit, mut lo, mut hi) = ([0.0; 3], 0.0, [0.0; 3], [0.0; 3]);
            let (mut listed, mut more) = (0usize, 0i32);
            ok(sg_emlog_result_summary(
                r,
                &mut total,
                &mut count,
                &mut best,
                model.as_mut_ptr(),
                &mut misfit,
                lo.as_mut_ptr(),
                hi.as_mut_ptr(),
                &mut listed,
                &mut more,
            ));
            let mut pair = [0u64; 64];
            ok(sg_emlog_result_pair(r, 0, pair.as_mut_ptr(), 64));
            sg_emlog_result_destroy(r);
            out.extend([total as f64, count as f64, best as f64, misfit]);
            out.extend(model.into_iter().chain(lo).chain(hi));
            out.extend(pair.iter().map(|&c| c as f64));
        }
        out
    }
}

impl Drop for EmlogPlan {
    fn drop(&mut self) {
        sg_emlog_plan_destroy(self.0 .0);
    }
}

// ---- Wave packets: forward and POCS in f32, inverse and soft threshold in f64 ----------

struct Wavepacket {
    section: Vec<f64>,
}
pub(crate) struct WavepacketLayouts(
    pub(crate) Handle<sg_wavepacket_layout>,
    Handle<sg_wavepacket_layout>,
    Vec<f64>,
);

pub(crate) const WP: [usize; 2] = [32, 24];

impl Job for Wavepacket {
    fn name(&self) -> &'static str {
        "wavepacket"
    }
    fn plan(&self, ctx: &Ctx) -> Box<dyn Planned> {
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        ok(sg_wavepacket_layout_create(
            ctx.0,
            2,
            WP.as_ptr(),
            8,
            0,
            0.0,
            0.0,
            1e-6,
            SG_WAVEPACKET_F32,
            &mut a,
        ));
        ok(sg_wavepacket_layout_create(
            ctx.0,
            2,
            WP.as_ptr(),
            6,
            2,
            0.0,
            0.0,
            1e-10,
            SG_WAVEPACKET_F64,
            &mut b,
        ));
        Box::new(WavepacketLayouts(
            Handle(a),
            Handle(b),
            self.section.clone(),
        ))
    }
}

pub(crate) fn coefficient_count(l: *mut sg_wavepacket_layout) -> usize {
    let mut z = [0usize; 5];
    let [a, b, c, d, e] = &mut z;
    ok(sg_wavepacket_layout_sizes(l, a, b, c, d, e));
    z[1]
}

impl Planned for WavepacketLayouts {
    fn run(&self) -> Vec<f64> {
        let n = WP[0] * WP[1];
        let x32: Vec<f32> = self.2.iter().map(|&v| v as f32).collect();
        let mut c32 = vec![0.0f32; 2 * coefficient_count(self.0 .0)];
        ok(sg_wavepacket_forward_f32(
            self.0 .0,
            x32.as_ptr(),
            c32.as_mut_ptr(),
        ));
        let live: Vec<i32> = (0..WP[1]).map(|t| i32::from(t % 3 != 1)).collect();
        let mut filled = x32.clone();
        let mut o = sg_wavepacket_pocs_options_default();
        o.iterations = 3;
        ok(sg_wavepacket_pocs_f32(
            self.0 .0,
            filled.as_mut_ptr(),
            live.as_ptr(),
            WP[1],
            &o,
        ));
        let mut c64 = vec![0.0f64; 2 * coefficient_count(self.1 .0)];
        ok(sg_wavepacket_forward_f64(
            self.1 .0,
            self.2.as_ptr(),
            c64.as_mut_ptr(),
        ));
        ok(sg_wavepacket_threshold_f64(
            self.1 .0,
            c64.as_mut_ptr(),
            SG_WAVEPACKET_SOFT,
            SG_WAVEPACKET_THRESHOLD_SIGMA,
            2.0,
        ));
        let mut y = vec![0.0f64; n];
        let mut it = 0usize;
        ok(sg_wavepacket_inverse_f64(
            self.1 .0,
            c64.as_ptr(),
            y.as_mut_ptr(),
            1e-8,
            4,
            &mut it,
            ptr::null_mut(),
        ));
        c32.into_iter()
            .chain(filled)
            .map(f64::from)
            .chain(y)
            .chain([it as f64])
            .collect()
    }
}

impl Drop for WavepacketLayouts {
    fn drop(&mut self) {
        sg_wavepacket_layout_destroy(self.0 .0);
        sg_wavepacket_layout_destroy(self.1 .0);
    }
}

pub(crate) fn jobs() -> Vec<Box<dyn Job>> {
    vec![
        Box::new(Dwt {
            data: noise(1, 5 * 515 + 512),
        }),
        Box::new(Usfft {
            x: noise(2, 3 * M).into_iter().map(|v| v * 2.0).collect(),
            strengths: noise(3, 2 * 2 * M.max(720)),
        }),
        Box::new(Fx {
            section: noise(4, 128 * 30),
        }),
        Box::new(Xcorr {
            days: noise(5, STATIONS * DAY)
                .into_iter()
                .map(|v| v as f32)
                .collect(),
        }),
        Box::new(Emlog {
            a: noise(6, EM_N * EM_M).into_iter().map(f64::abs).collect(),
        }),
        Box::new(Wavepacket {
            section: noise(7, WP[0] * WP[1]),
        }),
    ]
}

/// Bit for bit, or (inexact jobs) within 1e-5 of the largest serial value.
pub(crate) fn agree(exact: bool, got: &[f64], want: &[f64]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, serial {}", got.len(), want.len()));
    }
    let scale = want
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let bad = if exact {
            g.to_bits() != w.to_bits()
        } else {
            (g - w).abs() > 1e-5 * scale
        };
        if bad {
            return Err(format!("value {i}: {g:e}, serial {w:e}"));
        }
    }
    Ok(())
}

pub(crate) fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn sixteen_threads_share_one_context() {
    let backend = match std::env::var("SEISGPU_STRESS_BACKEND").as_deref() {
        Ok("cuda") => SG_BACKEND_CUDA,
        _ => SG_BACKEND_CPU,
    };
    let mut c = ptr::null_mut();
    ok(sg_context_create(backend, 0, &mut c));
    let ctx = Ctx(c);
    let cuda = backend == SG_BACKEND_CUDA;
    let jobs: Vec<Box<dyn Job>> = match std::env::var("SEISGPU_STRESS_JOBS") {
        Ok(names) => jobs()
            .into_iter()
            .filter(|j| names.split(',').any(|n| n.trim() == j.name()))
            .collect(),
        Err(_) => jobs(),
    };
    assert!(!jobs.is_empty(), "SEISGPU_STRESS_JOBS names no job");
    // Serial results, and plans shared by every thread.
    let shared: Vec<Box<dyn Planned>> = jobs.iter().map(|j| j.plan(&ctx)).collect();
    let serial: Vec<Vec<f64>> = shared.iter().map(|p| p.run()).collect();
    for (j, s) in jobs.iter().zip(&serial) {
        assert!(
            s.iter().all(|v| v.is_finite()) && s.iter().any(|&v| v != 0.0),
            "{}: degenerate serial result",
            j.name()
        );
    }
    let threads = env_or("SEISGPU_STRESS_THREADS", 16) as usize;
    let budget = Duration::from_secs(env_or("SEISGPU_STRESS_SECONDS", 3));
    let runs: Vec<AtomicU64> = jobs.iter().map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (jobs, shared, serial, runs, ctx) = (&jobs, &shared, &serial, &runs, &ctx);
            s.spawn(move || {
                let mut rng = Rng::new(100 + t as u64);
                let mut own: Vec<Option<Box<dyn Planned>>> = jobs.iter().map(|_| None).collect();
                while start.elapsed() < budget {
                    let k = (rng.next_u64() % jobs.len() as u64) as usize;
                    let got = match rng.next_u64() % 3 {
                        // Shared plans, executed by many threads at once.
                        0 => shared[k].run(),
                        // A fresh plan, made and destroyed while others run.
                        1 => jobs[k].plan(ctx).run(),
                        // A plan of this thread, kept or replaced.
                        _ => {
                            if own[k].is_none() || rng.next_u64() % 4 == 0 {
                                own[k] = Some(jobs[k].plan(ctx));
                            }
                            own[k].as_ref().unwrap().run()
                        }
                    };
                    if let Err(e) = agree(jobs[k].exact(cuda), &got, &serial[k]) {
                        panic!("thread {t}, {}: {e}", jobs[k].name());
                    }
                    // A failure on this thread keeps its own message while others succeed.
                    let mut out = ptr::null_mut();
                    let bad = 1000 + t as i32;
                    assert_eq!(sg_context_create(bad, 0, &mut out), SG_ERR_INVALID_ARGUMENT);
                    assert!(
                        last_error().contains(&format!("backend is {bad};")),
                        "thread {t}: {}",
                        last_error()
                    );
                    runs[k].fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    drop(shared);
    sg_context_destroy(ctx.0);
    let counts: Vec<String> = jobs
        .iter()
        .zip(&runs)
        .map(|(j, r)| format!("{} {}", j.name(), r.load(Ordering::Relaxed)))
        .collect();
    eprintln!(
        "stress: {threads} threads, {:.1} s: {}",
        start.elapsed().as_secs_f64(),
        counts.join(", ")
    );
    for (j, r) in jobs.iter().zip(&runs) {
        assert!(r.load(Ordering::Relaxed) > 0, "{} never ran", j.name());
    }
}
