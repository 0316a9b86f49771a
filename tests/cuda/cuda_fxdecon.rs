//! The GPU F-X / F-XY filter against the CPU reference (f32 on both): the Penobscot section
//! in several modes, the SU-compatible mode against Seismic Unix's outputs, 3D volumes with
//! the seed's parameters, strided layouts and many slabs on two streams; relative RMS
//! difference ≤ 1e-4 (SU mode, without damping: ≤ 1e-3 against sufxdecon). Zero input gives
//! zero output; NaN input is refused; plans give their device memory back. Without a CUDA device the test reports "skipped",
//! unless SEISGPU_REQUIRE_CUDA=1 makes that a failure. SEISGPU_SANITIZING=1
//! (scripts/gpu_sanitize.sh) runs each path once on small data instead (`sanitizer_cases`).

use crate::fxdecon_data;

use crate::cuda_common;

use cuda_common::{gpu_context, sanitizing};
use fxdecon_data::*;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::fxdecon::cuda as gpu_fx;
use seisgpu::fxdecon::options::{FxdeconOptions, OutOfBand, Prediction};
use seisgpu::fxdecon::{FxdeconPlan, Volume};
use seisgpu::Error;
use std::sync::Arc;
use std::time::Instant;

const SENTINEL: f32 = 12345.5;

/// Runs `plan` on `ctx` over a volume in caller layout; returns the output and the time.
fn run(
    ctx: &Arc<Context>,
    o: &FxdeconOptions,
    dims: usize,
    shape: (usize, usize, usize),
    strides: (usize, usize),
    input: &[f32],
) -> (Vec<f32>, f64) {
    let (n, nx, ny) = shape;
    let plan = if dims == 2 {
        FxdeconPlan::new_2d(ctx.clone(), o, n, ny).unwrap()
    } else {
        FxdeconPlan::new_3d(ctx.clone(), o, n, nx, ny).unwrap()
    };
    let layout = Volume::new(n, nx, ny, strides.0, strides.1).unwrap();
    let mut out = vec![SENTINEL; input.len()];
    let t = Instant::now();
    plan.execute(input, &mut out, layout).unwrap();
    (out, t.elapsed().as_secs_f64())
}

/// Dense layout (trace after trace) of a volume in a strided array with SENTINEL padding.
fn strided(dense: &[f64], shape: (usize, usize, usize), strides: (usize, usize)) -> Vec<f32> {
    let (n, nx, ny) = shape;
    let span = (nx - 1) * strides.0 + (ny - 1) * strides.1 + n;
    let mut v = vec![SENTINEL; span];
    for iy in 0..ny {
        for ix in 0..nx {
            let o = ix * strides.0 + iy * strides.1;
            for i in 0..n {
                v[o + i] = dense[(ix + nx * iy) * n + i] as f32;
            }
        }
    }
    v
}

fn check_padding(v: &[f32], shape: (usize, usize, usize), strides: (usize, usize), what: &str) {
    let (n, nx, ny) = shape;
    let mut inside = vec![false; v.len()];
    for iy in 0..ny {
        for ix in 0..nx {
            let o = ix * strides.0 + iy * strides.1;
            inside[o..o + n].fill(true);
        }
    }
    for (i, (&x, &t)) in v.iter().zip(&inside).enumerate() {
        assert!(
            t || x == SENTINEL,
            "{what}: padding element {i} changed to {x}"
        );
        assert!(!t || x.is_finite(), "{what}: non-finite output at {i}");
    }
}

struct Report {
    rows: Vec<String>,
    failures: Vec<String>,
}

impl Report {
    fn case(&mut self, name: &str, err: f64, tol: f64, cpu_s: f64, gpu_s: f64) {
        let pass = err <= tol;
        let row = format!(
            "| {name} | {err:.2e} | {tol:.0e} | {:.1} | {:.1} | {} |",
            cpu_s * 1e3,
            gpu_s * 1e3,
            if pass { "ok" } else { "FAIL" }
        );
        println!("{row}");
        self.rows.push(row);
        if !pass {
            self.failures.push(format!("{name}: {err:.3e} > {tol:.0e}"));
        }
    }

    fn assert_passed(&self) {
        assert!(
            self.failures.is_empty(),
            "failures:\n{}",
            self.failures.join("\n")
        );
    }
}

/// The synthetic plane events of the 3D cases.
const EVENTS: [Event; 3] = [
    Event {
        t0: 0.2,
        px: 0.002,
        py: -0.001,
        amp: 1.0,
    },
    Event {
        t0: 0.5,
        px: -0.003,
        py: 0.002,
        amp: 0.7,
    },
    Event {
        t0: 0.8,
        px: 0.0,
        py: 0.0,
        amp: 0.5,
    },
];

/// One 3D case: plane events plus noise in a strided volume, GPU (in slabs of `slab`
/// bytes, if any) against CPU.
fn case_3d(
    report: &mut Report,
    (gpu, cpu): (&Arc<Context>, &Arc<Context>),
    name: &str,
    shape: (usize, usize, usize),
    strides: (usize, usize),
    slab: Option<usize>,
    o: &FxdeconOptions,
) {
    let (n, nx, ny) = shape;
    let clean = events(n, nx, ny, &EVENTS);
    let noisy = with_noise(&clean, 0.3, 7);
    let input = strided(&noisy, shape, strides);
    gpu_fx::set_slab_bytes(slab);
    let (g, tg) = run(gpu, o, 3, shape, strides, &input);
    gpu_fx::set_slab_bytes(None);
    let (c, tc) = run(cpu, o, 3, shape, strides, &input);
    check_padding(&g, shape, strides, name);
    report.case(name, rel_rms(&g, &c), 1e-4, tc, tg);
}

/// Under the sanitizer: every path of the full test once, on small data. 200 samples ×
/// 60 traces of the Penobscot section in 2D (two-sided and forward/backward, passed and
/// zeroed out-of-band, whole-trace and time windows, SU mode, strided in 3 slabs); small
/// volumes in 3D (strided in slabs, the 9×9 operator's large shared memory, the 11×11 one
/// on the CPU threads).
fn sanitizer_cases(
    report: &mut Report,
    (gpu, cpu): (&Arc<Context>, &Arc<Context>),
    section: &[f32],
) {
    let (n, ntr) = (200, 60);
    let small: Vec<f32> = (0..ntr)
        .flat_map(|t| section[t * PENOBSCOT_SAMPLES + 400..][..n].iter().copied())
        .collect();
    let (shape2, dense2) = ((n, 1, ntr), (0, n));
    let su = FxdeconOptions {
        time_window: 0.5,
        window_traces: 20,
        operator_traces: 5,
        fmin: 5.0,
        fmax: 60.0,
        fft_length: 280,
        ..FxdeconOptions::seismic_unix()
    };
    for (name, o, tol) in [
        ("2D 200×60 defaults", FxdeconOptions::default(), 1e-4),
        (
            "2D 200×60 0.6 s windows, fwd/bwd, zero out of band",
            FxdeconOptions {
                time_window: 0.6,
                prediction: Prediction::ForwardBackward,
                out_of_band: OutOfBand::Zero,
                ..Default::default()
            },
            1e-4,
        ),
        ("2D 200×60 SU mode (su_w20_f5)", su, 1e-3),
    ] {
        let (c, tc) = run(cpu, &o, 2, shape2, dense2, &small);
        let (g, tg) = run(gpu, &o, 2, shape2, dense2, &small);
        assert!(
            g.iter().all(|v| v.is_finite()),
            "{name}: non-finite GPU output"
        );
        report.case(name, rel_rms(&g, &c), tol, tc, tg);
    }
    {
        let stride = n + 7;
        let dense: Vec<f64> = small.iter().map(|&v| v as f64).collect();
        let input = strided(&dense, shape2, (0, stride));
        let o = FxdeconOptions {
            time_window: 0.5,
            ..Default::default()
        };
        // 800 bytes per trace: 3 slabs.
        gpu_fx::set_slab_bytes(Some(20 * 800));
        let (g, tg) = run(gpu, &o, 2, shape2, (0, stride), &input);
        gpu_fx::set_slab_bytes(None);
        let (c, tc) = run(cpu, &o, 2, shape2, (0, stride), &input);
        check_padding(&g, shape2, (0, stride), "strided 2D");
        report.case(
            "2D 200×60 strided, 16 kB slabs",
            rel_rms(&g, &c),
            1e-4,
            tc,
            tg,
        );
    }
    for (name, shape, strides, slab, o) in [
        (
            "3D 30×24×128 strided, 0.3 s windows, 128 kB slabs",
            (128, 30, 24),
            (131, 131 * 30 + 5),
            Some(128 << 10), // 15 kB per crossline: 3 slabs
            FxdeconOptions {
                time_window: 0.3,
                ..Default::default()
            },
        ),
        (
            "3D 30×25×64 operator 9×9",
            (64, 30, 25),
            (64, 64 * 30),
            None,
            FxdeconOptions {
                operator: [9, 9],
                ..Default::default()
            },
        ),
        (
            "3D 30×25×64 operator 11×11 (CPU threads)",
            (64, 30, 25),
            (64, 64 * 30),
            None,
            FxdeconOptions {
                operator: [11, 11],
                ..Default::default()
            },
        ),
    ] {
        case_3d(report, (gpu, cpu), name, shape, strides, slab, &o);
    }
}

#[test]
fn gpu_matches_cpu() {
    let Some(gpu) = gpu_context() else { return };
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    println!("{}", gpu.describe());
    println!("| case | relative RMS | limit | CPU ms | GPU ms | |");
    println!("|---|---|---|---|---|---|");
    let mut report = Report {
        rows: vec![],
        failures: vec![],
    };
    // Compile once before timing.
    let _ = run(
        &gpu,
        &FxdeconOptions::default(),
        2,
        (64, 1, 30),
        (0, 64),
        &vec![0.5; 64 * 30],
    );

    let section = penobscot();
    if sanitizing() {
        println!("thinned for the sanitizer: small 2D and 3D cases, each path once");
        sanitizer_cases(&mut report, (&gpu, &cpu), &section);
        zero_nan_and_empty_band(&gpu);
        report.assert_passed();
        return;
    }
    let shape2 = (PENOBSCOT_SAMPLES, 1, PENOBSCOT_TRACES);
    let dense2 = (0, PENOBSCOT_SAMPLES);
    let mut cases2: Vec<(&str, FxdeconOptions)> = vec![
        ("2D penobscot defaults", FxdeconOptions::default()),
        (
            "2D penobscot 0.6 s windows, fwd/bwd, zero out of band",
            FxdeconOptions {
                time_window: 0.6,
                prediction: Prediction::ForwardBackward,
                out_of_band: OutOfBand::Zero,
                ..Default::default()
            },
        ),
        (
            "2D penobscot 150-sample windows nfft 256, L=7, 30-trace windows",
            FxdeconOptions {
                time_window: 0.6,
                fft_length: 256,
                operator_traces: 7,
                window_traces: 30,
                overlap_traces: 6,
                ..Default::default()
            },
        ),
    ];
    for (name, o) in cases2.drain(..) {
        let (c, tc) = run(&cpu, &o, 2, shape2, dense2, &section);
        let (g, tg) = run(&gpu, &o, 2, shape2, dense2, &section);
        assert!(
            g.iter().all(|v| v.is_finite()),
            "{name}: non-finite GPU output"
        );
        report.case(name, rel_rms(&g, &c), 1e-4, tc, tg);
    }

    // Strided section, several slabs.
    {
        let stride = PENOBSCOT_SAMPLES + 7;
        let dense: Vec<f64> = section.iter().map(|&v| v as f64).collect();
        let input = strided(&dense, shape2, (0, stride));
        let o = FxdeconOptions {
            time_window: 0.5,
            ..Default::default()
        };
        gpu_fx::set_slab_bytes(Some(1 << 20));
        let (g, tg) = run(&gpu, &o, 2, shape2, (0, stride), &input);
        gpu_fx::set_slab_bytes(None);
        let (c, tc) = run(&cpu, &o, 2, shape2, (0, stride), &input);
        check_padding(&g, shape2, (0, stride), "strided 2D");
        report.case(
            "2D penobscot strided, 1 MB slabs",
            rel_rms(&g, &c),
            1e-4,
            tc,
            tg,
        );
    }

    // SU mode on the GPU against sufxdecon itself.
    for (name, nfft, o) in [
        ("su_defaults", 3080, FxdeconOptions::seismic_unix()),
        (
            "su_w20_f5",
            280,
            FxdeconOptions {
                time_window: 0.5,
                window_traces: 20,
                operator_traces: 5,
                fmin: 5.0,
                fmax: 60.0,
                ..FxdeconOptions::seismic_unix()
            },
        ),
    ] {
        let o = FxdeconOptions {
            fft_length: nfft,
            ..o
        };
        let (g, tg) = run(&gpu, &o, 2, shape2, dense2, &section);
        let (c, tc) = run(&cpu, &o, 2, shape2, dense2, &section);
        assert!(
            g.iter().all(|v| v.is_finite()),
            "{name}: non-finite GPU output"
        );
        let (traces, reference) = su_reference(name);
        let sub: Vec<f32> = traces
            .iter()
            .flat_map(|&t| {
                g[t * PENOBSCOT_SAMPLES..][..PENOBSCOT_SAMPLES]
                    .iter()
                    .copied()
            })
            .collect();
        let (err, excluded) = rel_rms_finite(&sub, &reference);
        report.case(
            &format!("SU {name} GPU vs sufxdecon ({excluded} NaN excluded)"),
            err,
            1e-3,
            tc,
            tg,
        );
        report.case(
            &format!("SU {name} GPU vs CPU"),
            rel_rms(&g, &c),
            1e-3,
            tc,
            tg,
        );
    }

    // Volumes: synthetic plane events plus noise.
    let seed_options = FxdeconOptions {
        time_window: 0.6,
        taper: 0.08,
        fft_length: 256,
        ..Default::default()
    };
    for (name, shape, strides, slab, o) in [
        (
            "3D 60×45×300 defaults",
            (300, 60, 45),
            (300, 300 * 60),
            None,
            FxdeconOptions::default(),
        ),
        (
            "3D 60×45×300 strided, 0.6 s windows, 256 kB slabs",
            (300, 60, 45),
            (303, 303 * 60 + 5),
            Some(256 << 10),
            FxdeconOptions {
                time_window: 0.6,
                ..Default::default()
            },
        ),
        (
            "3D 120×100×1001 seed parameters",
            (1001, 120, 100),
            (1001, 1001 * 120),
            None,
            seed_options.clone(),
        ),
        (
            "3D 120×100×1001 seed parameters, 16 MB slabs",
            (1001, 120, 100),
            (1001, 1001 * 120),
            Some(16 << 20),
            seed_options.clone(),
        ),
        (
            "3D 50×45×200 operator 9×9 (80 coefficients, 118 kB of shared memory)",
            (200, 50, 45),
            (200, 200 * 50),
            None,
            FxdeconOptions {
                operator: [9, 9],
                ..Default::default()
            },
        ),
        (
            "3D 50×45×200 operator 11×11 (too large: runs on the CPU threads)",
            (200, 50, 45),
            (200, 200 * 50),
            None,
            FxdeconOptions {
                operator: [11, 11],
                ..Default::default()
            },
        ),
        (
            "3D 40×30×400 operator 5×3, windows 12×9 overlap 4×2, zero out of band",
            (400, 40, 30),
            (400, 400 * 40),
            None,
            FxdeconOptions {
                operator: [5, 3],
                window: [12, 9],
                overlap: [4, 2],
                out_of_band: OutOfBand::Zero,
                ..Default::default()
            },
        ),
    ] {
        case_3d(&mut report, (&gpu, &cpu), name, shape, strides, slab, &o);
    }

    // One plan, called again (its cached buffers and FFT plans) and from two threads at once.
    {
        let shape = (300, 60, 45);
        let clean = events(shape.0, shape.1, shape.2, &EVENTS);
        let input: Vec<f32> = with_noise(&clean, 0.3, 9)
            .iter()
            .map(|&v| v as f32)
            .collect();
        let o = FxdeconOptions {
            time_window: 0.6,
            ..Default::default()
        };
        gpu_fx::set_slab_bytes(Some(512 << 10));
        let plan = FxdeconPlan::new_3d(gpu.clone(), &o, 300, 60, 45).unwrap();
        let layout = plan.layout_3d(300, 300 * 60).unwrap();
        let mut first = vec![0f32; input.len()];
        plan.execute(&input, &mut first, layout).unwrap();
        let outs: Vec<Vec<f32>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    sc.spawn(|| {
                        let mut out = vec![0f32; input.len()];
                        plan.execute(&input, &mut out, layout).unwrap();
                        out
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        gpu_fx::set_slab_bytes(None);
        let (c, _) = run(&cpu, &o, 3, shape, (300, 300 * 60), &input);
        let worst = outs
            .iter()
            .map(|out| rel_rms(out, &first))
            .fold(0.0, f64::max);
        report.case(
            "3D plan reused, 3 threads at once (vs first call)",
            worst,
            1e-6,
            0.0,
            0.0,
        );
        report.case(
            "3D plan reused (first call vs CPU)",
            rel_rms(&first, &c),
            1e-4,
            0.0,
            0.0,
        );
    }

    zero_nan_and_empty_band(&gpu);
    // Plans give their device memory back: five more plans (FFT plans, slabs, tables)
    // created, run and dropped leave free device memory where it was. The first run above
    // paid cuFFT's own one-time allocations and the kernel modules.
    {
        let cu = cudarc::driver::CudaContext::new(0).unwrap();
        let free = || cu.mem_get_info().unwrap().0;
        let before = free();
        for _ in 0..5 {
            let _ = run(
                &gpu,
                &FxdeconOptions::default(),
                2,
                shape2,
                dense2,
                &section,
            );
        }
        let after = free();
        println!(
            "| 5 plans created, run, dropped: free device memory {:+.1} MiB | | | | | {} |",
            (after as f64 - before as f64) / (1u64 << 20) as f64,
            if after + (1 << 20) >= before {
                "ok"
            } else {
                "LEAK"
            }
        );
        assert!(
            after + (1 << 20) >= before,
            "device memory not returned: {before} bytes free before, {after} after"
        );
    }
    report.assert_passed();
}

/// Zero input: zero output; NaN input: refused, output untouched; an empty band.
fn zero_nan_and_empty_band(gpu: &Arc<Context>) {
    let shape = (200, 30, 25);
    let zeros = vec![0f32; 200 * 30 * 25];
    let (g, _) = run(
        gpu,
        &FxdeconOptions::default(),
        3,
        shape,
        (200, 6000),
        &zeros,
    );
    assert!(
        g.iter().all(|&v| v == 0.0),
        "zero input gave non-zero output"
    );
    let mut bad = zeros.clone();
    bad[4321] = f32::NAN;
    let plan = FxdeconPlan::new_3d(gpu.clone(), &FxdeconOptions::default(), 200, 30, 25).unwrap();
    let mut out = vec![SENTINEL; bad.len()];
    let e = plan
        .execute(&bad, &mut out, plan.layout_3d(200, 6000).unwrap())
        .unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)), "{e}");
    assert!(out.iter().all(|&v| v == SENTINEL));
    // An empty band (7.3 Hz between bins): the input, or zeros.
    let x: Vec<f32> = with_noise(&vec![0.0; 256 * 40], 1.0, 4)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let o = FxdeconOptions {
        fmin: 7.3,
        fmax: 7.3,
        ..Default::default()
    };
    let (g, _) = run(gpu, &o, 2, (256, 1, 40), (0, 256), &x);
    assert!(rel_rms(&g, &x) < 1e-6);
    let o = FxdeconOptions {
        out_of_band: OutOfBand::Zero,
        ..o
    };
    let (g, _) = run(gpu, &o, 2, (256, 1, 40), (0, 256), &x);
    assert!(g.iter().all(|&v| v == 0.0));
    println!("| zero input → zero output; NaN input refused; empty band | | | | | ok |");
}
