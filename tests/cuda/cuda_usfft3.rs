//! The GPU USFFT type 3 against direct sums (≤ tol) and against the CPU backend (≤ 2·tol):
//! 1D/2D/3D, f32 and f64, both signs, batches, spread-out and clustered points and
//! frequencies, off-centre spans; a larger 3D case (M = N = 20,000) against the CPU; and the
//! type's refusals on a CUDA context (device-array calls, non-finite values, absurd spans).
//! Without a CUDA device the test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes
//! that a failure.

use crate::cuda_common::{gpu_context, sanitize_small};
use crate::usfft3_support::*;

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use seisgpu::Error;
use std::sync::Arc;

/// One case on both backends: GPU vs the direct sum and GPU vs CPU.
fn check<T: Real>(
    gpu: &Arc<Context>,
    cpu: &Arc<Context>,
    case: &Case3,
    seed: u64,
    failures: &mut Vec<String>,
) {
    let p = problem3(case, seed);
    let label = format!("{case:?} {}", std::any::type_name::<T>());
    let (got, x, s) = match run3::<T>(gpu, case, &p) {
        Ok(r) => r,
        Err(e) => return failures.push(format!("{label}: {e}")),
    };
    let want = direct3(case, &x, &s, &p.c);
    let (on_cpu, _, _) = run3::<T>(cpu, case, &p).unwrap();
    let (e_direct, e_cpu) = (rel_l2(&got, &want), rel_l2(&got, &on_cpu));
    println!("{label}: vs direct {e_direct:.2e}, vs CPU {e_cpu:.2e}");
    if e_direct.is_nan() || e_direct > case.tol || e_cpu.is_nan() || e_cpu > 2.0 * case.tol {
        failures.push(format!(
            "{label}: vs direct {e_direct:.3e}, vs CPU {e_cpu:.3e}"
        ));
    }
}

fn sweep<T: Real>(
    gpu: &Arc<Context>,
    cpu: &Arc<Context>,
    tols: &[f64],
    failures: &mut Vec<String>,
) {
    for dim in 1..=3 {
        for (i, &tol) in tols.iter().enumerate() {
            for clustered in [false, true] {
                let case = Case3 {
                    tol,
                    sign: if i % 2 == 0 { 1 } else { -1 },
                    nvec: if i % 3 == 1 { 2 } else { 1 },
                    x_centre: if i % 2 == 1 { 10.0 } else { 0.0 },
                    s_centre: if i % 2 == 1 { -40.0 } else { 0.0 },
                    clustered,
                    ..base(dim)
                };
                check::<T>(gpu, cpu, &case, (dim * 10 + i) as u64, failures);
            }
        }
    }
}

#[test]
fn gpu_type3_matches_direct_sums_and_the_cpu() {
    let Some(gpu) = gpu_context() else { return };
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    let mut failures = Vec::new();
    // The sanitizer's reduced mode keeps one tolerance per precision past the first (signs,
    // batches and off-centre spans all still met): the kernels are the same, fewer cases.
    let (f64_tols, f32_tols): (&[f64], &[f64]) = if sanitize_small() {
        (&[1e-3, 1e-9], &[1e-5])
    } else {
        (&[1e-3, 1e-6, 1e-9], &[1e-3, 1e-5])
    };
    sweep::<f64>(&gpu, &cpu, f64_tols, &mut failures);
    sweep::<f32>(&gpu, &cpu, f32_tols, &mut failures);
    // Larger 3D sets (register-row spreading and staged-tile interpolation), GPU vs CPU only.
    for (tol, f64_plan) in [(1e-6, false), (1e-9, true)] {
        let case = Case3 {
            m: 20_000,
            n: 20_000,
            tol,
            x_half: 6.0,
            s_half: 30.0,
            ..base(3)
        };
        let p = problem3(&case, 5);
        let label = format!("3D M = N = 20,000 tol {tol:e}");
        let (got, want) = if f64_plan {
            (
                run3::<f64>(&gpu, &case, &p).unwrap().0,
                run3::<f64>(&cpu, &case, &p).unwrap().0,
            )
        } else {
            (
                run3::<f32>(&gpu, &case, &p).unwrap().0,
                run3::<f32>(&cpu, &case, &p).unwrap().0,
            )
        };
        let e = rel_l2(&got, &want);
        println!("{label}: GPU vs CPU {e:.2e}");
        if e.is_nan() || e > 2.0 * tol {
            failures.push(format!("{label}: GPU vs CPU {e:.3e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn gpu_type3_refusals() {
    let Some(gpu) = gpu_context() else { return };
    let spec = UsfftSpec::new::<f32>(
        TransformType::Type3,
        1,
        [0; 3],
        1,
        1e-5,
        1,
        UsfftOptions::default(),
    )
    .unwrap();
    let mut plan = UsfftPlan::<f32>::new(gpu.clone(), spec).unwrap();
    let x = [0.0f32, 1.0, 2.0];
    let s = [-3.0f32, 4.0];
    plan.set_points3(3, [Some(&x), None, None], 2, [Some(&s), None, None])
        .unwrap();
    let bad = [0.0f32, f32::NAN, 2.0];
    assert!(matches!(
        plan.set_points3(3, [Some(&bad), None, None], 2, [Some(&s), None, None]),
        Err(Error::NonFinite(_))
    ));
    let wide = [-1e8f32, 1e8];
    assert!(matches!(
        plan.set_points3(2, [Some(&wide), None, None], 2, [Some(&wide), None, None]),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        plan.set_points(3, &x, None, None),
        Err(Error::InvalidArgument(_))
    ));
    let s0 = gpu.cuda().unwrap().stream().unwrap();
    let (mut c, mut f) = (
        s0.alloc_zeros::<f32>(6).unwrap(),
        s0.alloc_zeros::<f32>(4).unwrap(),
    );
    assert!(matches!(
        plan.execute_device(&mut c, &mut f),
        Err(Error::Unsupported(_))
    ));
    // The points set first are still there.
    let mut cs = vec![num_complex::Complex::new(1.0f32, 0.0); 3];
    let mut fs = vec![num_complex::Complex::new(f32::NAN, 0.0); 2];
    plan.execute(&mut cs, &mut fs).unwrap();
    // f = Σ_j e^{i s x_j}: at s = −3, |f| = |1 + e^{−3i} + e^{−6i}|.
    let want: num_complex::Complex<f64> = x
        .iter()
        .map(|&xj| num_complex::Complex::from_polar(1.0, -3.0 * xj as f64))
        .sum();
    assert!(
        (fs[0].re as f64 - want.re).abs() < 1e-4 && (fs[0].im as f64 - want.im).abs() < 1e-4,
        "{:?} vs {want}",
        fs[0]
    );
}
