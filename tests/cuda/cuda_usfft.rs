//! The GPU USFFT against direct sums and against the CPU backend: 1D/2D/3D, types 1 and 2,
//! f32 and f64, ES and Gaussian kernels (the widest Gaussian takes the global-atomics
//! fallback), both mode orders, both signs, batches, degenerate points; device-resident
//! execution against host-to-host; a 64³ case against the CPU. Without a CUDA device the test
//! reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.
//! SEISGPU_SANITIZE_SMALL=1 (the sanitizer's reduced mode) keeps the narrowest, next and
//! widest tolerance of each sweep (every kernel width class, both signs, batches and mode
//! orders) and makes the large case 24³ instead of 64³ (the same tiling method).

use crate::usfft_support;

use crate::cuda_common;

use cuda_common::{gpu_context, sanitize_small};
use cudarc::driver::CudaSlice;
use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{KernelShape, ModeOrder, TransformType, UsfftOptions};
use std::sync::Arc;
use usfft_support::*;

fn sizes(dim: usize) -> ([usize; 3], usize) {
    match dim {
        1 => ([67, 1, 1], 300),
        2 => ([24, 17, 1], 400),
        _ => ([10, 7, 12], 500),
    }
}

/// GPU vs direct sums (≤ tol) and GPU vs CPU (≤ 2·tol) over the same matrix as the CPU test.
fn sweep<T: Real>(
    gpu: &Arc<Context>,
    cpu: &Arc<Context>,
    tols: &[f64],
    failures: &mut Vec<String>,
) {
    for dim in 1..=3 {
        let (modes, m) = sizes(dim);
        for kind in [TransformType::Type1, TransformType::Type2] {
            for shape in [
                KernelShape::Prolate,
                KernelShape::ExpSemicircle,
                KernelShape::Gaussian,
            ] {
                for (i, &tol) in tols.iter().enumerate() {
                    if sanitize_small() && !small_keeps(i, tols.len()) {
                        continue;
                    }
                    let case = Case {
                        kind,
                        dim,
                        modes,
                        m,
                        sign: if i % 2 == 0 { 1 } else { -1 },
                        tol,
                        nvec: if i % 3 == 1 { 3 } else { 1 },
                        options: UsfftOptions {
                            kernel: shape,
                            upsampling: 2.0,
                            mode_order: if (i + dim) % 2 == 0 {
                                ModeOrder::Centred
                            } else {
                                ModeOrder::Fft
                            },
                        },
                    };
                    let mut rng = Rng((dim * 100 + i) as u64 | 1);
                    let p = problem(&case, &mut rng);
                    let label = format!(
                        "{dim}D {kind:?} {shape:?} {} tol {tol:e} nvec {}",
                        std::any::type_name::<T>(),
                        case.nvec
                    );
                    let (g, seen) = match run::<T>(gpu, &case, &p) {
                        Ok(r) => r,
                        Err(e) => {
                            failures.push(format!("{label}: {e}"));
                            continue;
                        }
                    };
                    let (c, _) = run::<T>(cpu, &case, &p).unwrap();
                    let e_direct = rel_l2(&g, &direct(&case, &seen, &p.input));
                    let e_cpu = rel_l2(&g, &c);
                    println!("{label}: vs direct {e_direct:.2e}, vs CPU {e_cpu:.2e}");
                    if !(within(e_direct, tol) && within(e_cpu, 2.0 * tol)) {
                        failures.push(format!(
                            "{label}: vs direct {e_direct:.3e}, vs CPU {e_cpu:.3e}"
                        ));
                    }
                }
            }
        }
    }
}

/// The reduced mode's tolerances of a sweep: its first two (the narrowest kernel; sign −
/// and a batch of 3) and its last (the widest, which takes the global-atomics fallback
/// with the Gaussian).
fn small_keeps(i: usize, count: usize) -> bool {
    i < 2 || i + 1 == count
}

/// Degenerate points on the GPU: coincident, on the boundary, far outside; M = 0; N = 1.
fn degenerate(gpu: &Arc<Context>, failures: &mut Vec<String>) {
    for kind in [TransformType::Type1, TransformType::Type2] {
        for (dim, modes, m) in [
            (1, [1, 1, 1], 40),
            (2, [1, 5, 1], 40),
            (3, [3, 1, 5], 40),
            (3, [6, 6, 6], 0),
        ] {
            let case = Case {
                kind,
                dim,
                modes,
                m,
                sign: -1,
                tol: 1e-9,
                nvec: 2,
                options: UsfftOptions::default(),
            };
            let mut rng = Rng(11);
            let mut p = problem(&case, &mut rng);
            if m > 0 {
                for d in 0..dim {
                    for j in 0..10 {
                        p.coords[d][j] = 0.3;
                    }
                    p.coords[d][10] = -std::f64::consts::PI;
                    p.coords[d][11] = std::f64::consts::PI;
                    p.coords[d][13] = 7.0 * std::f64::consts::PI + 0.1;
                    p.coords[d][14] = -1e5;
                }
            }
            match run::<f64>(gpu, &case, &p) {
                Ok((got, seen)) => {
                    let e = rel_l2(&got, &direct(&case, &seen, &p.input));
                    println!("degenerate {kind:?} {dim}D {modes:?} M={m}: {e:.2e}");
                    if !within(e, 1e-9) {
                        failures.push(format!(
                            "degenerate {kind:?} {dim}D {modes:?} M={m}: {e:.3e}"
                        ));
                    }
                }
                Err(e) => failures.push(format!("degenerate {kind:?} {dim}D M={m}: {e}")),
            }
        }
    }
}

/// A 96³-mode, 96³-point problem (register rows; 13,824 bins, so the bins' counts are
/// scanned in several tiles) against the CPU, host-to-host and device-resident; 24³ in the
/// reduced mode.
fn large<T: Real>(gpu: &Arc<Context>, cpu: &Arc<Context>, tol: f64, failures: &mut Vec<String>) {
    let n = if sanitize_small() { 24 } else { 96 };
    for kind in [TransformType::Type1, TransformType::Type2] {
        let case = Case {
            kind,
            dim: 3,
            modes: [n, n, n],
            m: n * n * n,
            sign: 1,
            tol,
            nvec: 2,
            options: UsfftOptions::default(),
        };
        let mut rng = Rng(77);
        let p = problem(&case, &mut rng);
        let label = format!("{n}³ {kind:?} {} tol {tol:e}", std::any::type_name::<T>());
        let (g, _) = match run::<T>(gpu, &case, &p) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let (c, _) = run::<T>(cpu, &case, &p).unwrap();
        let e = rel_l2(&g, &c);
        // Device-resident: the same plan, inputs and outputs in CudaSlices.
        let dev = device_resident::<T>(gpu, &case, &p);
        let e_dev = match &dev {
            Ok(d) => rel_l2(d, &g),
            Err(msg) => {
                failures.push(format!("{label} device-resident: {msg}"));
                f64::NAN
            }
        };
        println!("{label}: GPU vs CPU {e:.2e}, device-resident vs host-to-host {e_dev:.2e}");
        if !within(e, 2.0 * tol) || (dev.is_ok() && !within(e_dev, tol)) {
            failures.push(format!(
                "{label}: GPU vs CPU {e:.3e}, device vs host {e_dev:.3e}"
            ));
        }
    }
}

fn device_resident<T: Real>(
    gpu: &Arc<Context>,
    case: &Case,
    p: &Problem,
) -> Result<Vec<Complex<f64>>, String> {
    let mut plan = plan_for::<T>(gpu, case).map_err(|e| e.to_string())?;
    let xs: Vec<Vec<T>> = (0..3)
        .map(|d| {
            p.coords[d]
                .iter()
                .map(|&x| T::from_f64(x).unwrap())
                .collect()
        })
        .collect();
    // The coordinates go up first and are sorted on the device (set_points_device).
    // (Device 0's primary context: the one the library's context uses.)
    let s = cudarc::driver::CudaContext::new(0)
        .map_err(|e| format!("{e:?}"))?
        .default_stream();
    let xd: Vec<CudaSlice<T>> = xs
        .iter()
        .map(|x| s.clone_htod(x).map_err(|e| format!("{e:?}")))
        .collect::<Result<_, _>>()?;
    let set = |plan: &mut seisgpu::usfft::UsfftPlan<T>, m: usize| {
        plan.set_points_device(m, &xd[0], Some(&xd[1]), Some(&xd[2]))
            .map_err(|e| e.to_string())
    };
    // Half the points first: the first set-points frees the sort's scratch, the second
    // keeps it (and grows it for all the points), the third sorts in the kept scratch.
    set(&mut plan, case.m / 2)?;
    // A non-finite coordinate is refused and the points just set stay.
    let mut bad = xs[1].clone();
    bad[case.m / 4] = T::nan();
    let bad = s.clone_htod(&bad).unwrap();
    match plan.set_points_device(case.m, &xd[0], Some(&bad), Some(&xd[2])) {
        Err(seisgpu::Error::NonFinite(msg)) if msg.contains("coordinate y") => {}
        other => return Err(format!("NaN coordinate: {other:?}")),
    }
    set(&mut plan, case.m)?;
    set(&mut plan, case.m)?;
    let pts = plan.device_points().ok_or("no device points")?;
    let s = pts.stream().clone();
    let reals: Vec<T> = p
        .input
        .iter()
        .flat_map(|z| [T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()])
        .collect();
    let nm: usize = case.modes.iter().product::<usize>() * case.nvec;
    let nc = case.m * case.nvec;
    let (mut c, mut f): (CudaSlice<T>, CudaSlice<T>) = match case.kind {
        TransformType::Type1 => (
            s.clone_htod(&reals).unwrap(),
            s.alloc_zeros(2 * nm).unwrap(),
        ),
        TransformType::Type2 => (
            s.alloc_zeros(2 * nc).unwrap(),
            s.clone_htod(&reals).unwrap(),
        ),
        TransformType::Type3 => return Err("type 3 runs through usfft3_support".into()),
    };
    plan.execute_device(&mut c, &mut f)
        .map_err(|e| e.to_string())?;
    let out = match case.kind {
        TransformType::Type1 => s.clone_dtoh(&f),
        TransformType::Type2 | TransformType::Type3 => s.clone_dtoh(&c),
    }
    .map_err(|e| format!("{e:?}"))?;
    s.synchronize().map_err(|e| format!("{e:?}"))?;
    Ok(out
        .chunks(2)
        .map(|z| Complex::new(z[0].to_f64().unwrap(), z[1].to_f64().unwrap()))
        .collect())
}

/// All points in 1 % of the period's length, square or cube (thousands per bin): GPU vs
/// direct sums (≤ tol) and vs the CPU (≤ 2·tol), 1D to 3D.
fn clustered_points(gpu: &Arc<Context>, cpu: &Arc<Context>, failures: &mut Vec<String>) {
    for dim in 1..=3 {
        for kind in [TransformType::Type1, TransformType::Type2] {
            for (tol, f64_plan) in [(1e-9, true), (1e-5, false)] {
                let case = clustered_case(kind, dim, tol);
                let mut rng = Rng(91);
                let p = clustered(&case, &mut rng);
                let label = format!("clustered {dim}D {kind:?} tol {tol:e}");
                let runs = if f64_plan {
                    run::<f64>(gpu, &case, &p).and_then(|g| Ok((g, run::<f64>(cpu, &case, &p)?)))
                } else {
                    run::<f32>(gpu, &case, &p).and_then(|g| Ok((g, run::<f32>(cpu, &case, &p)?)))
                };
                match runs {
                    Ok(((g, seen), (c, _))) => {
                        let e = rel_l2(&g, &direct(&case, &seen, &p.input));
                        let e_cpu = rel_l2(&g, &c);
                        println!("{label}: vs direct {e:.2e}, vs CPU {e_cpu:.2e}");
                        if !(within(e, tol) && within(e_cpu, 2.0 * tol)) {
                            failures
                                .push(format!("{label}: vs direct {e:.3e}, vs CPU {e_cpu:.3e}"));
                        }
                    }
                    Err(e) => failures.push(format!("{label}: {e}")),
                }
            }
        }
    }
}

#[test]
fn gpu_usfft_matches_direct_sums_and_the_cpu() {
    let Some(gpu) = gpu_context() else { return };
    println!("{}", gpu.describe());
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    let mut failures = Vec::new();
    sweep::<f64>(&gpu, &cpu, &[1e-2, 1e-4, 1e-6, 1e-9, 1e-12], &mut failures);
    sweep::<f32>(&gpu, &cpu, &[1e-2, 1e-3, 1e-4, 1e-5], &mut failures);
    degenerate(&gpu, &mut failures);
    clustered_points(&gpu, &cpu, &mut failures);
    large::<f32>(&gpu, &cpu, 1e-5, &mut failures);
    large::<f64>(&gpu, &cpu, 1e-9, &mut failures);
    // Type 2 again without shared-memory tiles: a warp (w ≤ 10) or a thread per point
    // gathering from the grid, as on GPUs whose shared memory cannot hold a bin's tile.
    seisgpu::usfft::cuda::set_interp_tile_bytes(Some(1));
    sweep::<f64>(&gpu, &cpu, &[1e-6, 1e-12], &mut failures);
    sweep::<f32>(&gpu, &cpu, &[1e-5], &mut failures);
    seisgpu::usfft::cuda::set_interp_tile_bytes(None);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
