//! F-X decon through the C ABI on degenerate input and bad arguments: zero input, constant
//! input, one trace, windows larger than the data, an operator larger than its window, NaN
//! and infinite input, strided layouts, in place, wrong calls. Finite input never gives
//! non-finite output.

use crate::common;
use crate::fxdecon_data;

use common::{last_error, ok, Ctx};
use fxdecon_data::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use std::ptr;

fn plan_2d(ctx: &Ctx, o: &sg_fxdecon_options, n: usize, traces: usize) -> *mut sg_fxdecon_plan {
    let mut p = ptr::null_mut();
    ok(sg_fxdecon_plan_create_2d(ctx.0, o, n, traces, &mut p));
    p
}

fn plan_3d(
    ctx: &Ctx,
    o: &sg_fxdecon_options,
    n: usize,
    nx: usize,
    ny: usize,
) -> *mut sg_fxdecon_plan {
    let mut p = ptr::null_mut();
    ok(sg_fxdecon_plan_create_3d(ctx.0, o, n, nx, ny, &mut p));
    p
}

fn run_2d(ctx: &Ctx, o: &sg_fxdecon_options, n: usize, input: &[f32]) -> Vec<f32> {
    let p = plan_2d(ctx, o, n, input.len() / n);
    let mut out = vec![f32::NAN; input.len()];
    ok(sg_fxdecon_execute_2d_f32(
        p,
        input.as_ptr(),
        out.as_mut_ptr(),
        n,
    ));
    sg_fxdecon_plan_destroy(p);
    assert!(out.iter().all(|v| v.is_finite()), "non-finite output");
    out
}

fn run_3d(
    ctx: &Ctx,
    o: &sg_fxdecon_options,
    shape: (usize, usize, usize),
    input: &[f32],
) -> Vec<f32> {
    let (n, nx, ny) = shape;
    let p = plan_3d(ctx, o, n, nx, ny);
    let mut out = vec![f32::NAN; input.len()];
    ok(sg_fxdecon_execute_3d_f32(
        p,
        input.as_ptr(),
        out.as_mut_ptr(),
        n,
        n * nx,
    ));
    sg_fxdecon_plan_destroy(p);
    assert!(out.iter().all(|v| v.is_finite()), "non-finite output");
    out
}

fn noisy(len: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..len).map(|_| r.normal() as f32).collect()
}

#[test]
fn zero_input_gives_zero_output_in_every_mode() {
    let ctx = Ctx::cpu();
    let d = sg_fxdecon_options_default();
    let mut fb = d;
    fb.prediction = SG_FXDECON_FORWARD_BACKWARD;
    let mut zero = d;
    zero.out_of_band = SG_FXDECON_ZERO_OUT_OF_BAND;
    let mut su = sg_fxdecon_options_seismic_unix();
    su.time_window_s = 0.4;
    for o in [d, fb, zero, su] {
        let out = run_2d(&ctx, &o, 256, &vec![0.0; 256 * 40]);
        assert!(out.iter().all(|&v| v == 0.0));
    }
    let out = run_3d(&ctx, &d, (128, 25, 22), &vec![0.0; 128 * 25 * 22]);
    assert!(out.iter().all(|&v| v == 0.0));
}

#[test]
fn muted_top_gives_finite_output_in_su_mode_and_others() {
    // Zeros in the first 200 samples of every trace, 0.3 s time windows: the first window
    // holds only zeros, where sufxdecon would write NaN. Samples that only that window
    // covers (before the second starts: 63 in SU mode, 50 here) come out exactly zero.
    let ctx = Ctx::cpu();
    let n = 500;
    let mut x = noisy(n * 60, 1);
    for t in 0..60 {
        x[t * n..t * n + 200].fill(0.0);
    }
    let mut su = sg_fxdecon_options_seismic_unix();
    su.time_window_s = 0.3;
    let mut d = sg_fxdecon_options_default();
    d.time_window_s = 0.3;
    for (o, only_first) in [(su, 63), (d, 50)] {
        let out = run_2d(&ctx, &o, n, &x);
        for t in 0..60 {
            assert!(
                out[t * n..t * n + only_first].iter().all(|&v| v == 0.0),
                "trace {t}"
            );
        }
    }
}

#[test]
fn constant_input_passes() {
    let ctx = Ctx::cpu();
    // DC is below fmin (6 Hz) and passes through; with fmin = 0 it is predicted exactly.
    let mut dc = sg_fxdecon_options_default();
    dc.fmin_hz = 0.0;
    for o in [sg_fxdecon_options_default(), dc] {
        let out = run_2d(&ctx, &o, 200, &vec![3.0; 200 * 30]);
        let err = out.iter().map(|v| (v - 3.0).abs()).fold(0.0f32, f32::max);
        assert!(err < 0.03, "max error {err}");
        let out = run_3d(&ctx, &o, (100, 20, 21), &vec![3.0; 100 * 20 * 21]);
        let err = out.iter().map(|v| (v - 3.0).abs()).fold(0.0f32, f32::max);
        assert!(err < 0.03, "max error {err}");
    }
}

#[test]
fn one_trace_passes_through_unchanged() {
    let ctx = Ctx::cpu();
    let x = noisy(300, 2);
    let out = run_2d(&ctx, &sg_fxdecon_options_default(), 300, &x);
    assert_eq!(out, x);
    let out = run_3d(&ctx, &sg_fxdecon_options_default(), (300, 1, 1), &x);
    assert_eq!(out, x);
    // A 3D volume of one inline of 5 traces: too few for the 7-trace operator.
    let x = noisy(300 * 5, 3);
    let out = run_3d(&ctx, &sg_fxdecon_options_default(), (300, 1, 5), &x);
    assert_eq!(out, x);
}

#[test]
fn windows_larger_than_the_data_shrink_to_it() {
    // 15 traces with 20-trace windows; 2 s time windows on a 1 s trace.
    let ctx = Ctx::cpu();
    let clean: Vec<f32> = events(
        250,
        1,
        15,
        &[Event {
            t0: 0.3,
            px: 0.0,
            py: 0.002,
            amp: 1.0,
        }],
    )
    .iter()
    .map(|&v| v as f32)
    .collect();
    let mut o = sg_fxdecon_options_default();
    o.time_window_s = 2.0;
    let out = run_2d(&ctx, &o, 250, &clean);
    let err = rel_rms(&out, &clean);
    assert!(err < 0.1, "dipping event through one window: {err}");
    let mut o3 = sg_fxdecon_options_default();
    o3.window_inline = 40;
    o3.window_crossline = 40;
    let out = run_3d(&ctx, &o3, (128, 12, 9), &vec![1.0; 128 * 12 * 9]);
    assert!(out.iter().all(|v| (v - 1.0).abs() < 0.03));
}

#[test]
fn bad_options_are_refused_with_a_message() {
    let ctx = Ctx::cpu();
    let d = sg_fxdecon_options_default();
    let mut p = ptr::null_mut();
    let try2 = |o: &sg_fxdecon_options, p: &mut *mut sg_fxdecon_plan| {
        sg_fxdecon_plan_create_2d(ctx.0, o, 100, 50, p)
    };
    let try3 = |o: &sg_fxdecon_options, p: &mut *mut sg_fxdecon_plan| {
        sg_fxdecon_plan_create_3d(ctx.0, o, 100, 30, 30, p)
    };
    let cases: Vec<(sg_fxdecon_options, bool, i32, &str)> = vec![
        (
            {
                let mut o = d;
                o.operator_traces = 10;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "fit in the window",
        ),
        (
            {
                let mut o = d;
                o.window_traces = 8;
                o.overlap_traces = 2;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "fit in the window",
        ),
        (
            {
                let mut o = d;
                o.overlap_traces = 20;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "overlap",
        ),
        (
            {
                let mut o = d;
                o.operator_traces = 0;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "operator_traces",
        ),
        (
            {
                let mut o = d;
                o.operator_inline = 21;
                o
            },
            true,
            SG_ERR_INVALID_ARGUMENT,
            "fit in the window",
        ),
        (
            {
                let mut o = d;
                o.operator_inline = 6;
                o
            },
            true,
            SG_ERR_INVALID_ARGUMENT,
            "odd",
        ),
        (
            {
                let mut o = d;
                o.operator_inline = 1;
                o.operator_crossline = 1;
                o
            },
            true,
            SG_ERR_INVALID_ARGUMENT,
            "no coefficients",
        ),
        (
            {
                let mut o = d;
                o.prediction = SG_FXDECON_FORWARD_BACKWARD;
                o
            },
            true,
            SG_ERR_UNSUPPORTED,
            "2D only",
        ),
        (
            sg_fxdecon_options_seismic_unix(),
            true,
            SG_ERR_UNSUPPORTED,
            "2D only",
        ),
        (
            {
                let mut o = sg_fxdecon_options_seismic_unix();
                o.operator_traces = 10;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "ntrf",
        ),
        (
            {
                let mut o = d;
                o.fmin_hz = 80.0;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "fmin",
        ),
        (
            {
                let mut o = d;
                o.sample_interval_s = 0.0;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "sample_interval",
        ),
        (
            {
                let mut o = d;
                o.damping = f64::NAN;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "damping",
        ),
        (
            {
                let mut o = d;
                o.prediction = 7;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "prediction",
        ),
        (
            {
                let mut o = d;
                o.out_of_band = -1;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "out_of_band",
        ),
        (
            {
                let mut o = d;
                o.su_compatible = 2;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "su_compatible",
        ),
        (
            {
                let mut o = d;
                o.window_traces = -3;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "window_traces",
        ),
        (
            {
                let mut o = d;
                o.fft_length = 64;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "fft_length",
        ),
        (
            {
                let mut o = d;
                o.fft_length = 129;
                o
            },
            false,
            SG_ERR_INVALID_ARGUMENT,
            "odd",
        ),
    ];
    for (o, three, want, words) in cases {
        let s = if three {
            try3(&o, &mut p)
        } else {
            try2(&o, &mut p)
        };
        let msg = last_error();
        assert_eq!(s, want, "{msg}");
        assert!(msg.contains(words), "message {msg:?} lacks {words:?}");
        assert!(p.is_null(), "a plan was written on failure");
    }
    assert_eq!(
        sg_fxdecon_plan_create_2d(ctx.0, &d, 0, 10, &mut p),
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sg_fxdecon_plan_create_2d(ptr::null(), &d, 10, 10, &mut p),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        sg_fxdecon_plan_create_2d(ctx.0, &d, 10, 10, ptr::null_mut()),
        SG_ERR_NULL_POINTER
    );
    sg_fxdecon_plan_destroy(ptr::null_mut());
}

#[test]
fn non_finite_input_is_refused_and_nothing_is_written() {
    let ctx = Ctx::cpu();
    let p = plan_2d(&ctx, &sg_fxdecon_options_default(), 100, 30);
    for bad in [f32::NAN, f32::INFINITY] {
        let mut x = noisy(100 * 30, 4);
        x[17 * 100 + 42] = bad;
        let mut out = vec![7.0f32; x.len()];
        let s = sg_fxdecon_execute_2d_f32(p, x.as_ptr(), out.as_mut_ptr(), 100);
        assert_eq!(s, SG_ERR_NON_FINITE);
        assert!(
            last_error().contains("trace 17, sample 42"),
            "{}",
            last_error()
        );
        assert!(out.iter().all(|&v| v == 7.0));
    }
    sg_fxdecon_plan_destroy(p);
}

#[test]
fn strided_in_place_and_wrong_calls() {
    let ctx = Ctx::cpu();
    let o = sg_fxdecon_options_default();
    let (n, nx, ny) = (120, 23, 21);
    let dense = noisy(n * nx * ny, 6);
    let p = plan_3d(&ctx, &o, n, nx, ny);
    let mut want = vec![0f32; dense.len()];
    ok(sg_fxdecon_execute_3d_f32(
        p,
        dense.as_ptr(),
        want.as_mut_ptr(),
        n,
        n * nx,
    ));
    // Crossline fastest, with padding: the same traces elsewhere in memory.
    let (sx, sy) = (ny * (n + 2), n + 2);
    let span = (nx - 1) * sx + (ny - 1) * sy + n;
    let mut strided = vec![-99.0f32; span];
    for iy in 0..ny {
        for ix in 0..nx {
            strided[ix * sx + iy * sy..][..n].copy_from_slice(&dense[(ix + nx * iy) * n..][..n]);
        }
    }
    let mut out = vec![-99.0f32; span];
    ok(sg_fxdecon_execute_3d_f32(
        p,
        strided.as_ptr(),
        out.as_mut_ptr(),
        sx,
        sy,
    ));
    // In place gives the same result.
    let mut inplace = strided.clone();
    ok(sg_fxdecon_execute_3d_f32(
        p,
        inplace.as_ptr(),
        inplace.as_mut_ptr(),
        sx,
        sy,
    ));
    assert_eq!(inplace, out);
    for iy in 0..ny {
        for ix in 0..nx {
            let o = ix * sx + iy * sy;
            assert_eq!(&out[o..o + n], &want[(ix + nx * iy) * n..][..n]);
            assert!(out[o + n..(o + sy).min(span)].iter().all(|&v| v == -99.0));
        }
    }
    // Wrong entry point, overlapping strides, overlapping arrays, NULLs.
    assert_eq!(
        sg_fxdecon_execute_2d_f32(p, dense.as_ptr(), want.as_mut_ptr(), n),
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sg_fxdecon_execute_3d_f32(p, dense.as_ptr(), want.as_mut_ptr(), n, n),
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(last_error().contains("overlap"));
    let mut buf = vec![0f32; dense.len() + 1];
    assert_eq!(
        sg_fxdecon_execute_3d_f32(p, buf.as_ptr(), buf[1..].as_mut_ptr(), n, n * nx),
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sg_fxdecon_execute_3d_f32(p, ptr::null(), want.as_mut_ptr(), n, n * nx),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        sg_fxdecon_execute_3d_f32(ptr::null(), dense.as_ptr(), want.as_mut_ptr(), n, n * nx),
        SG_ERR_NULL_POINTER
    );
    sg_fxdecon_plan_destroy(p);
}

#[test]
fn an_empty_band_passes_or_zeroes_everything() {
    // 7.3 Hz lies between two frequency bins (0.98 Hz apart): nothing is filtered.
    let ctx = Ctx::cpu();
    let x = noisy(250 * 30, 8);
    let mut o = sg_fxdecon_options_default();
    o.fmin_hz = 7.3;
    o.fmax_hz = 7.3;
    let out = run_2d(&ctx, &o, 250, &x);
    assert!(rel_rms(&out, &x) < 1e-6, "{}", rel_rms(&out, &x));
    o.out_of_band = SG_FXDECON_ZERO_OUT_OF_BAND;
    let out = run_2d(&ctx, &o, 250, &x);
    assert!(out.iter().all(|&v| v == 0.0));
}
