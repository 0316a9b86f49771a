//! The CPU USFFT type 3 against direct O(N·M) sums: 1D/2D/3D, f32 and f64, tolerances
//! 1e-3…1e-9 (f64) and 1e-3…1e-5 (f32), both signs, batches, spread-out and clustered
//! points and frequencies, spans off centre. Asserts the relative ℓ2 error ≤ the tolerance.

use crate::usfft3_support::*;

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use std::sync::Arc;

fn cpu() -> Arc<Context> {
    Context::new(BackendRequest::Cpu, 0).unwrap()
}

fn sweep<T: Real>(tols: &[f64]) {
    let ctx = cpu();
    let mut failures = Vec::new();
    let mut worst: f64 = 0.0;
    for dim in 1..=3 {
        for (i, &tol) in tols.iter().enumerate() {
            for clustered in [false, true] {
                let case = Case3 {
                    tol,
                    sign: if i % 2 == 0 { 1 } else { -1 },
                    nvec: if i % 3 == 1 { 2 } else { 1 },
                    // Off-centre spans on every other case: the phases carry the centres.
                    x_centre: if i % 2 == 1 { 10.0 } else { 0.0 },
                    s_centre: if i % 2 == 1 { -40.0 } else { 0.0 },
                    clustered,
                    ..base(dim)
                };
                let e = error3::<T>(&ctx, &case, (dim * 10 + i) as u64);
                println!(
                    "{dim}D tol {tol:e} sign {} nvec {} clustered {clustered}: rel l2 {e:.2e}",
                    case.sign, case.nvec
                );
                if e.is_nan() || e > tol {
                    failures.push(format!("{case:?}: {e:.3e}"));
                }
                worst = worst.max(e / tol);
            }
        }
    }
    println!("worst error/tolerance {worst:.3}");
    assert!(
        failures.is_empty(),
        "above tolerance:\n{}",
        failures.join("\n")
    );
}

#[test]
fn type3_f64_matches_direct_sums() {
    sweep::<f64>(&[1e-3, 1e-4, 1e-6, 1e-8, 1e-9]);
}

#[test]
fn type3_f32_matches_direct_sums() {
    sweep::<f32>(&[1e-3, 1e-4, 1e-5]);
}
