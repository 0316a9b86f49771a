//! The SU-compatible mode against Seismic Unix `sufxdecon`'s own outputs on the real
//! Penobscot crossline (tests/data/sufxdecon/), through the C ABI, f32 and f64: relative RMS
//! difference ≤ 1e-3 over the finite reference samples (sufxdecon writes NaN where a time
//! window holds only muted samples; seisgpu must write finite values everywhere).

use crate::common;
use crate::fxdecon_data;

use common::{ok, Ctx};
use fxdecon_data::*;
use seisgpu::ffi::fxdecon::*;
use std::ptr;

struct Case {
    name: &'static str,
    options: sg_fxdecon_options,
    /// NaN samples the reference subset holds (sufxdecon's singular windows).
    nan_samples: usize,
}

fn cases() -> Vec<Case> {
    let mut defaults = sg_fxdecon_options_seismic_unix();
    defaults.fft_length = 3080; // what sufxdecon reported (its prime-factor size table)
    let mut w20 = sg_fxdecon_options_seismic_unix();
    w20.time_window_s = 0.5;
    w20.window_traces = 20;
    w20.operator_traces = 5;
    w20.fmin_hz = 5.0;
    w20.fmax_hz = 60.0;
    w20.fft_length = 280;
    vec![
        Case {
            name: "su_defaults",
            options: defaults,
            nan_samples: 0,
        },
        Case {
            name: "su_w20_f5",
            options: w20,
            nan_samples: 13380,
        },
    ]
}

fn run<T: Copy + Default>(
    ctx: &Ctx,
    o: &sg_fxdecon_options,
    input: &[T],
    exec: extern "C" fn(*const sg_fxdecon_plan, *const T, *mut T, usize) -> i32,
) -> Vec<T> {
    let mut plan = ptr::null_mut();
    ok(sg_fxdecon_plan_create_2d(
        ctx.0,
        o,
        PENOBSCOT_SAMPLES,
        PENOBSCOT_TRACES,
        &mut plan,
    ));
    let mut out = vec![T::default(); input.len()];
    ok(exec(
        plan,
        input.as_ptr(),
        out.as_mut_ptr(),
        PENOBSCOT_SAMPLES,
    ));
    sg_fxdecon_plan_destroy(plan);
    out
}

fn subset<T: Copy>(out: &[T], traces: &[usize]) -> Vec<T> {
    traces
        .iter()
        .flat_map(|&t| {
            out[t * PENOBSCOT_SAMPLES..][..PENOBSCOT_SAMPLES]
                .iter()
                .copied()
        })
        .collect()
}

#[test]
fn su_mode_matches_sufxdecon_f32_and_f64() {
    let ctx = Ctx::cpu();
    let input = penobscot();
    let input64: Vec<f64> = input.iter().map(|&v| v as f64).collect();
    for case in cases() {
        let (traces, reference) = su_reference(case.name);
        let out = run(&ctx, &case.options, &input, sg_fxdecon_execute_2d_f32);
        assert!(
            out.iter().all(|v| v.is_finite()),
            "{}: non-finite output",
            case.name
        );
        let (err, excluded) = rel_rms_finite(&subset(&out, &traces), &reference);
        println!(
            "{}: f32 relative RMS difference {err:.3e} over {} finite samples ({excluded} NaN reference samples excluded)",
            case.name,
            reference.len() - excluded
        );
        assert_eq!(excluded, case.nan_samples, "{}", case.name);
        assert!(err <= 1e-3, "{}: relative RMS {err:.3e}", case.name);

        let out64 = run(&ctx, &case.options, &input64, sg_fxdecon_execute_2d_f64);
        let out64: Vec<f32> = subset(&out64, &traces).iter().map(|&v| v as f32).collect();
        let (err64, _) = rel_rms_finite(&out64, &reference);
        println!("{}: f64 relative RMS difference {err64:.3e}", case.name);
        assert!(err64 <= 1e-3, "{}: relative RMS {err64:.3e}", case.name);
    }
}

#[test]
fn su_mode_writes_zero_where_sufxdecon_writes_nan() {
    // Traces 0–59 of the w20 case: sufxdecon's operator is singular in the first time
    // windows; seisgpu's robust solve gives the zero operator there, and the muted input
    // is zero, so the output is exactly zero before the second window (sample 113) starts.
    let ctx = Ctx::cpu();
    let input = penobscot();
    let case = &cases()[1];
    let out = run(&ctx, &case.options, &input, sg_fxdecon_execute_2d_f32);
    let (traces, reference) = su_reference(case.name);
    for (k, &t) in traces.iter().enumerate().take(60) {
        for i in 0..PENOBSCOT_SAMPLES {
            let r = reference[k * PENOBSCOT_SAMPLES + i];
            let o = out[t * PENOBSCOT_SAMPLES + i];
            if r.is_nan() && i < 113 {
                assert_eq!(o, 0.0, "trace {t} sample {i}");
            }
        }
    }
}

#[test]
fn su_mode_picks_a_valid_fft_length_by_itself() {
    // Without sufxdecon's nfft the default is a 2,3,5,7-smooth length ≥ 2 × the first
    // window (here 3072 for 1514 samples): close to, but not, sufxdecon's result.
    let ctx = Ctx::cpu();
    let input = penobscot();
    let o = sg_fxdecon_options_seismic_unix();
    let out = run(&ctx, &o, &input, sg_fxdecon_execute_2d_f32);
    let (traces, reference) = su_reference("su_defaults");
    let (err, _) = rel_rms_finite(&subset(&out, &traces), &reference);
    println!("su_defaults with the automatic FFT length: relative RMS {err:.3e}");
    assert!(err < 0.05, "{err}");
}
