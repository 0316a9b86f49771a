//! Progress and cancellation on the CPU backend (see tests/progress_common): F-X 2D and
//! F-XY 3D decon, DWT transform and denoise batches (also in place), xcorr preprocessing
//! and correlation; and the argument checks of `sg_context_set_progress`.

mod progress_common;

use progress_common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use std::ptr;

#[test]
fn fx_decon_2d_reports_and_cancels() {
    fx_decon_2d(&Context::new(SG_BACKEND_CPU));
}

#[test]
fn fx_decon_3d_reports_and_cancels() {
    fx_decon_3d(&Context::new(SG_BACKEND_CPU));
}

#[test]
fn dwt_batches_report_and_cancel() {
    dwt_batches(&Context::new(SG_BACKEND_CPU));
}

#[test]
fn xcorr_preprocessing_and_correlation_report_and_cancel() {
    xcorr_preprocess_and_correlate(&Context::new(SG_BACKEND_CPU));
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
