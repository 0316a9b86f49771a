//! The context's cuBLAS handles, as host correlations with linear stacks use them: each
//! call borrows one and gives it back, so calls one after another keep one handle, calls
//! at once as many as ran together, and a later call makes none; the stacks stay the same
//! call to call. Without a CUDA device the test reports "skipped", unless
//! SEISGPU_REQUIRE_CUDA=1 makes that a failure.

use crate::cuda_common::gpu_context;
use crate::xcorr_common::{small_options, synthetic};

use seisgpu::layout::TraceBatch;
use seisgpu::xcorr::options::Options;
use seisgpu::xcorr::XcorrPlan;

/// The largest difference between two stacks, relative to the first's largest value.
fn max_rel(a: &[f32], b: &[f32]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs() as f64));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs() as f64));
    diff / scale.max(f64::MIN_POSITIVE)
}

#[test]
fn host_correlations_borrow_the_contexts_cublas_handles() {
    let Some(ctx) = gpu_context() else { return };
    let gpu = ctx.cuda().expect("a CUDA context");
    // The shared small case (1 Hz, 200 s windows every 100 s, lags ±50 s) on six stations
    // of 1,000 samples, with autocorrelations (21 pairs, each written).
    let options = Options {
        autocorrelation: true,
        ..Options::try_from(&small_options()).unwrap()
    };
    let plan = XcorrPlan::new(ctx.clone(), options).unwrap();
    let (n_sta, n) = (6, 1000);
    let days = synthetic(n_sta, n, 5);
    let batch = TraceBatch::new(n, n_sta, n).unwrap();
    let spectra = plan.preprocess(&days, batch, None).unwrap();
    let m = plan.geometry().n_lags();
    let run = || {
        let mut out = vec![f32::NAN; n_sta * (n_sta + 1) / 2 * m];
        let block = (0, n_sta, 0, n_sta);
        let n_pairs = plan
            .correlate(&[&spectra], block, &mut out, m, None)
            .unwrap();
        assert_eq!(n_pairs, n_sta * (n_sta + 1) / 2);
        out
    };
    let first = run();
    assert!(first.iter().all(|v| v.is_finite()), "stacks written");
    assert_eq!(
        gpu.blas.idle_count(),
        1,
        "the first call's handle given back"
    );
    for _ in 0..3 {
        let e = max_rel(&first, &run());
        assert!(e <= 1e-6, "a later call's stacks differ by {e:.2e}");
        assert_eq!(gpu.blas.idle_count(), 1, "calls one after another reuse it");
    }
    let outs: Vec<Vec<f32>> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..4).map(|_| s.spawn(run)).collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for out in &outs {
        let e = max_rel(&first, out);
        assert!(e <= 1e-6, "a concurrent call's stacks differ by {e:.2e}");
    }
    let kept = gpu.blas.idle_count();
    assert!(
        (1..=4).contains(&kept),
        "{kept} handles kept after four calls at once"
    );
    run();
    assert_eq!(
        gpu.blas.idle_count(),
        kept,
        "a later call borrows one, makes none"
    );
}
