//! The CPU USFFT against direct O(N·M) sums: 1D/2D/3D, types 1 and 2, f32 and f64,
//! tolerances 1e-2…1e-12 (f64) and 1e-2…1e-5 (f32), both kernels, both mode orderings, both
//! signs, batches. Asserts relative ℓ2 error over the whole output ≤ the tolerance. Also
//! adjointness, and the degenerate inputs (M = 0, coincident points, points on the period
//! boundary and far outside it, N = 1 and odd N).

use crate::usfft_support;

use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{KernelShape, ModeOrder, TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use seisgpu::Error;
use std::f64::consts::PI;
use std::sync::Arc;
use usfft_support::*;

fn cpu() -> Arc<Context> {
    Context::new(BackendRequest::Cpu, 0).unwrap()
}

fn sizes(dim: usize) -> ([usize; 3], usize) {
    match dim {
        1 => ([67, 1, 1], 300),
        2 => ([24, 17, 1], 400),
        _ => ([10, 7, 12], 500),
    }
}

/// Every (dim, type, kernel) at each tolerance, with orderings, signs and batch sizes varied.
fn sweep<T: Real>(tols: &[f64]) {
    let ctx = cpu();
    let mut worst: f64 = 0.0;
    let mut n = 0;
    let mut failures = Vec::new();
    for dim in 1..=3 {
        let (modes, m) = sizes(dim);
        for kind in [TransformType::Type1, TransformType::Type2] {
            for shape in [
                KernelShape::Prolate,
                KernelShape::ExpSemicircle,
                KernelShape::Gaussian,
            ] {
                for (i, &tol) in tols.iter().enumerate() {
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
                    let e = error_of::<T>(&ctx, &case, (dim * 100 + i) as u64);
                    n += 1;
                    println!(
                        "{dim}D {kind:?} {shape:?} tol {tol:e} sign {} nvec {} {:?}: rel l2 {e:.2e}",
                        case.sign, case.nvec, case.options.mode_order
                    );
                    if !within(e, tol) {
                        failures.push(format!("{dim}D {kind:?} {shape:?} tol {tol:e}: {e:.3e}"));
                    }
                    worst = worst.max(e / tol);
                }
            }
        }
    }
    println!("{n} cases, worst error/tolerance {worst:.3}");
    assert!(
        failures.is_empty(),
        "errors above tolerance:\n{}",
        failures.join("\n")
    );
}

#[test]
fn f64_matches_direct_sums_at_every_tolerance() {
    sweep::<f64>(&[1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-9, 1e-10, 1e-12]);
}

#[test]
fn f32_matches_direct_sums_at_every_tolerance() {
    sweep::<f32>(&[1e-2, 1e-3, 1e-4, 1e-5]);
}

/// ⟨type2(f), c⟩ = ⟨f, type1(c)⟩ with the same sign (type 1 is the adjoint of type 2 with
/// the conjugate exponent): here type 1 uses −sign, so Σ_j conj(c_j)·(A f)_j = Σ_k conj((A^H c)_k)·f_k.
#[test]
fn type1_is_the_adjoint_of_type2() {
    let ctx = cpu();
    for dim in 1..=3 {
        let (modes, m) = sizes(dim);
        let mut rng = Rng(99 + dim as u64);
        let coords: [Vec<f64>; 3] = std::array::from_fn(|d| {
            if d < dim {
                (0..m).map(|_| rng.angle()).collect()
            } else {
                vec![]
            }
        });
        let nm: usize = modes[..dim].iter().product();
        let f: Vec<Complex<f64>> = (0..nm).map(|_| rng.complex()).collect();
        let c: Vec<Complex<f64>> = (0..m).map(|_| rng.complex()).collect();
        let mk = |kind, sign| Case {
            kind,
            dim,
            modes,
            m,
            sign,
            tol: 1e-12,
            nvec: 1,
            options: UsfftOptions::default(),
        };
        let (af, _) = run::<f64>(
            &ctx,
            &mk(TransformType::Type2, 1),
            &Problem {
                coords: coords.clone(),
                input: f.clone(),
            },
        )
        .unwrap();
        let (ahc, _) = run::<f64>(
            &ctx,
            &mk(TransformType::Type1, -1),
            &Problem {
                coords: coords.clone(),
                input: c.clone(),
            },
        )
        .unwrap();
        let lhs: Complex<f64> = af.iter().zip(&c).map(|(a, c)| c.conj() * a).sum();
        let rhs: Complex<f64> = ahc.iter().zip(&f).map(|(a, f)| a.conj() * f).sum();
        let scale = lhs.norm().max(1.0);
        println!("{dim}D: <Af, c> = {lhs:.6e}, <f, A^H c> = {rhs:.6e}");
        // The plans are each accurate to ~1e-12; the adjoint identity holds to that level.
        assert!((lhs - rhs).norm() < 1e-10 * scale, "{dim}D: {lhs} vs {rhs}");
    }
}

fn case(kind: TransformType, dim: usize, modes: [usize; 3], m: usize, tol: f64) -> Case {
    Case {
        kind,
        dim,
        modes,
        m,
        sign: 1,
        tol,
        nvec: 2,
        options: UsfftOptions::default(),
    }
}

#[test]
fn degenerate_inputs() {
    let ctx = cpu();
    for kind in [TransformType::Type1, TransformType::Type2] {
        // M = 0: type 1 gives zeros, type 2 an empty output.
        let c0 = case(kind, 2, [8, 6, 1], 0, 1e-6);
        let mut rng = Rng(5);
        let p = problem(&c0, &mut rng);
        let (out, _) = run::<f64>(&ctx, &c0, &p).unwrap();
        assert!(out.iter().all(|z| *z == Complex::new(0.0, 0.0)));
        assert_eq!(
            out.len(),
            if kind == TransformType::Type1 {
                2 * 48
            } else {
                0
            }
        );
        // N = 1 and odd N, coincident points, points on and beyond the period boundary.
        for (dim, modes) in [
            (1, [1, 1, 1]),
            (2, [1, 5, 1]),
            (3, [3, 1, 5]),
            (1, [2, 1, 1]),
        ] {
            let cs = case(kind, dim, modes, 40, 1e-9);
            let mut rng = Rng(11);
            let mut p = problem(&cs, &mut rng);
            for d in 0..dim {
                for j in 0..10 {
                    p.coords[d][j] = 0.3; // ten coincident points
                }
                p.coords[d][10] = -PI;
                p.coords[d][11] = PI; // the same point as −π
                p.coords[d][12] = PI * (1.0 - 1e-16);
                p.coords[d][13] = 7.0 * PI + 0.1; // far outside: periodic
                p.coords[d][14] = -1e5;
            }
            let (got, seen) = run::<f64>(&ctx, &cs, &p).unwrap();
            let want = direct(&cs, &seen, &p.input);
            let e = rel_l2(&got, &want);
            assert!(e < 1e-9, "{kind:?} {dim}D {modes:?}: {e}");
        }
        // All points at one location.
        let cs = case(kind, 3, [6, 6, 6], 64, 1e-6);
        let mut rng = Rng(12);
        let mut p = problem(&cs, &mut rng);
        for d in 0..3 {
            p.coords[d].iter_mut().for_each(|x| *x = -2.5);
        }
        let (got, seen) = run::<f64>(&ctx, &cs, &p).unwrap();
        assert!(rel_l2(&got, &direct(&cs, &seen, &p.input)) < 1e-6);
    }
}

#[test]
fn bad_arguments_give_clear_statuses() {
    let ctx = cpu();
    let opts = UsfftOptions::default();
    let new32 = |tol: f64| {
        UsfftSpec::new::<f32>(TransformType::Type1, 2, [8, 8, 1], 1, tol, 1, opts)
            .and_then(|s| UsfftPlan::<f32>::new(ctx.clone(), s))
    };
    let new64 = |tol: f64| {
        UsfftSpec::new::<f64>(TransformType::Type1, 2, [8, 8, 1], 1, tol, 1, opts)
            .and_then(|s| UsfftPlan::<f64>::new(ctx.clone(), s))
    };
    for tol in [1e-7, 1e-9] {
        match new32(tol) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("N·ε_mach"), "{m}"),
            other => panic!("f32 tol {tol}: {:?}", other.map(|_| ())),
        }
    }
    assert!(matches!(new64(1e-15), Err(Error::InvalidArgument(_))));
    for tol in [0.0, -1.0, 1.0, f64::NAN] {
        assert!(
            matches!(new64(tol), Err(Error::InvalidArgument(_))),
            "tol {tol}"
        );
    }
    assert!(new32(1e-6).is_ok() && new64(1e-14).is_ok());
    // A spec checked for f64 does not carry its tolerance into an f32 plan.
    let spec64 =
        UsfftSpec::new::<f64>(TransformType::Type1, 2, [8, 8, 1], 1, 1e-9, 1, opts).unwrap();
    assert!(matches!(
        UsfftPlan::<f32>::new(ctx.clone(), spec64),
        Err(Error::InvalidArgument(_))
    ));
    let bad_up = UsfftOptions {
        upsampling: 1.25,
        ..opts
    };
    assert!(matches!(
        UsfftSpec::new::<f64>(TransformType::Type1, 1, [8, 1, 1], 1, 1e-6, 1, bad_up)
            .and_then(|s| UsfftPlan::<f64>::new(ctx.clone(), s)),
        Err(Error::Unsupported(_))
    ));
    for (dim, modes, sign, nvec) in [
        (0, [8, 1, 1], 1, 1),
        (4, [8, 1, 1], 1, 1),
        (2, [8, 0, 1], 1, 1),
        (1, [8, 1, 1], 0, 1),
        (1, [8, 1, 1], 1, 0),
    ] {
        assert!(matches!(
            UsfftSpec::new::<f64>(TransformType::Type2, dim, modes, sign, 1e-6, nvec, opts)
                .and_then(|s| UsfftPlan::<f64>::new(ctx.clone(), s)),
            Err(Error::InvalidArgument(_))
        ));
    }
    // NaN coordinates: refused, the previous points stay.
    let mut plan = new64(1e-6).unwrap();
    let mut c = vec![Complex::new(1.0, 0.0); 3];
    let mut f = vec![Complex::new(0.0, 0.0); 64];
    assert!(
        matches!(plan.execute(&mut c, &mut f), Err(Error::InvalidArgument(_))),
        "execute before set_points"
    );
    plan.set_points(3, &[0.1, 0.2, 0.3], Some(&[0.0, 1.0, 2.0]), None)
        .unwrap();
    let e = plan.set_points(3, &[0.1, f64::NAN, 0.3], Some(&[0.0, 1.0, 2.0]), None);
    assert!(matches!(e, Err(Error::NonFinite(_))));
    let e = plan.set_points(3, &[0.1, 0.2, 0.3], Some(&[0.0, f64::INFINITY, 2.0]), None);
    assert!(matches!(e, Err(Error::NonFinite(_))));
    assert!(matches!(
        plan.set_points(3, &[0.1, 0.2, 0.3], None, None),
        Err(Error::NullPointer(_))
    ));
    assert_eq!(plan.n_points(), 3);
    plan.execute(&mut c, &mut f).unwrap();
    // f_k = Σ_j e^{i k·x_j}: at k = 0 (centred index (4, 4)) that is 3.
    assert!((f[4 * 8 + 4] - Complex::new(3.0, 0.0)).norm() < 1e-6);
    assert!(matches!(
        plan.execute(&mut c[..2], &mut f),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn clustered_points_match_direct_sums() {
    // All points in 1 % of the period's length, square or cube: thousands per bin, and
    // most bins empty (1D: an interval of 6 fine cells in 600).
    for dim in 1..=3 {
        for kind in [TransformType::Type1, TransformType::Type2] {
            for (tol, f64_plan) in [(1e-9, true), (1e-5, false)] {
                let c = clustered_case(kind, dim, tol);
                let mut rng = Rng(91);
                let p = clustered(&c, &mut rng);
                let (got, seen) = if f64_plan {
                    run::<f64>(&cpu(), &c, &p).unwrap()
                } else {
                    run::<f32>(&cpu(), &c, &p).unwrap()
                };
                let e = rel_l2(&got, &direct(&c, &seen, &p.input));
                println!("clustered {dim}D {kind:?} tol {tol:e}: {e:.2e}");
                assert!(
                    within(e, tol),
                    "clustered {dim}D {kind:?} tol {tol:e}: {e:.3e}"
                );
            }
        }
    }
}
