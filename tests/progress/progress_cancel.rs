//! Progress and cancellation on the CPU backend (see tests/support/progress_common): F-X 2D and
//! F-XY 3D decon, DWT transform and denoise batches (also in place), xcorr preprocessing
//! and correlation, the EM-logging search (fast and direct), USFFT types 1 and 2; and the
//! argument checks of `sg_context_set_progress`.

use crate::progress_common;

use crate::FX_SLABS;
use progress_common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::fxdecon::cpu as cpu_fxdecon;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;

#[test]
fn fx_decon_2d_reports_and_cancels() {
    let _slabs = FX_SLABS.lock().unwrap_or_else(|e| e.into_inner());
    fx_decon_2d(&Context::new(SG_BACKEND_CPU));
}

/// Stops once the fraction reaches 0.6 (`user` unused).
unsafe extern "C" fn stop_late(_: *mut c_void, _: *const c_char, fraction: f64) -> c_int {
    c_int::from((0.6..1.0).contains(&fraction))
}

/// One test for both, since the slab size is process-wide: a volume filtered in one slab
/// (as common), then one filtered in many, which a stop may leave partly written.
#[test]
fn fx_decon_3d_reports_and_cancels() {
    let _slabs = FX_SLABS.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new(SG_BACKEND_CPU);
    fx_decon_3d(&ctx);

    let (n, nx, ny) = (128, 24, 40);
    let input: Vec<f64> = (0..n * nx * ny)
        .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let mut plan = ptr::null_mut();
    ok(sg_fxdecon_plan_create_3d(
        ctx.0,
        ptr::null(),
        n,
        nx,
        ny,
        &mut plan,
    ));
    let run = || {
        let mut out = vec![0.0f64; n * nx * ny];
        let s = sg_fxdecon_execute_3d_f64(plan, input.as_ptr(), out.as_mut_ptr(), n, n * nx);
        (s, out)
    };
    // About 65 kB per crossline line: slabs of a few lines.
    cpu_fxdecon::set_slab_bytes(Some(400_000));
    let (s, reference) = run();
    ok(s);
    ok(sg_context_set_progress(
        ctx.0,
        Some(stop_late),
        ptr::null_mut(),
    ));
    let (s, _) = run();
    let message = last_error();
    ok(sg_context_set_progress(ctx.0, None, ptr::null_mut()));
    cpu_fxdecon::set_slab_bytes(None);
    assert_eq!(s, SG_ERR_CANCELLED, "{message}");
    assert!(message.contains("partly filtered"), "{message}");
    cpu_fxdecon::set_slab_bytes(Some(400_000));
    let (s, again) = run();
    cpu_fxdecon::set_slab_bytes(None);
    ok(s);
    assert_eq!(again, reference, "the call after a cancel differs");
    sg_fxdecon_plan_destroy(plan);
}

#[test]
fn dwt_batches_report_and_cancel() {
    dwt_batches(&Context::new(SG_BACKEND_CPU), false);
}

#[test]
fn xcorr_preprocessing_and_correlation_report_and_cancel() {
    xcorr_preprocess_and_correlate(&Context::new(SG_BACKEND_CPU), false);
}

#[test]
fn em_search_reports_and_cancels() {
    em_search(&Context::new(SG_BACKEND_CPU), false);
}

#[test]
fn usfft_reports_and_cancels() {
    usfft_types(&Context::new(SG_BACKEND_CPU), 3, false);
}

#[test]
fn setting_the_callback_checks_its_context() {
    assert_eq!(
        sg_context_set_progress(ptr::null_mut(), Some(record), ptr::null_mut()),
        SG_ERR_NULL_POINTER
    );
    assert!(last_error().contains("ctx"), "{}", last_error());
    let ctx = Context::new(SG_BACKEND_CPU);
    ok(sg_context_set_progress(ctx.0, None, ptr::null_mut()));
}
