//! Ambient-noise correlation through the C ABI, against independent references:
//! the matrix-product correlation against the pairwise conjugate-product sum of the
//! spectra followed by a direct inverse DFT; gaps, spikes (max/std rejection), a dead
//! station, one station, windows longer than the data, several days, station blocks
//! split over two contexts, and the argument checks.
//!
//! `run_cases(backend)` is shared with tests/cuda/cuda_xcorr.rs, which runs it on the GPU.

use crate::xcorr_common;

use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::*;
use xcorr_common::*;

#[test]
fn matrix_product_equals_pairwise_sums() {
    let ctx = Context::new(SG_BACKEND_CPU);
    check_against_pairwise_sums(&ctx, 1e-5);
}

#[test]
fn gaps_spikes_and_dead_stations() {
    let ctx = Context::new(SG_BACKEND_CPU);
    check_gaps_spikes_dead(&ctx);
}

#[test]
fn several_days_stack_over_all_their_windows() {
    let ctx = Context::new(SG_BACKEND_CPU);
    check_several_days(&ctx, 1e-5);
}

#[test]
fn blocks_on_two_contexts_equal_the_whole() {
    let (a, b) = (Context::new(SG_BACKEND_CPU), Context::new(SG_BACKEND_CPU));
    check_blocks_two_contexts(&a, &b, 1e-6);
}

#[test]
fn nonlinear_stacks_match_direct_references() {
    let ctx = Context::new(SG_BACKEND_CPU);
    check_nonlinear_against_reference(&ctx, 1e-4);
}

#[test]
fn deconv_and_coherency_match_direct_references() {
    let ctx = Context::new(SG_BACKEND_CPU);
    methods::check_methods_against_reference(&ctx, 1e-5);
}

#[test]
fn substacks_match_their_windows_pairwise_sums() {
    let ctx = Context::new(SG_BACKEND_CPU);
    methods::check_substacks(&ctx, 1e-5);
}

#[test]
fn imported_spectra_correlate_bit_for_bit() {
    let ctx = Context::new(SG_BACKEND_CPU);
    methods::check_import(&ctx);
}

#[test]
fn one_station_and_short_days() {
    let ctx = Context::new(SG_BACKEND_CPU);
    let o = small_options();
    let plan = ctx.plan(&o);
    let data = synthetic(1, 2000, 7);
    let s = plan.preprocess(&data, 1, 2000, None).unwrap();
    // No pairs: success, nothing written.
    let mut n = usize::MAX;
    ok(sg_xcorr_pair_count(plan.0, 1, 0, 1, 0, 1, &mut n));
    assert_eq!(n, 0);
    let mut out = vec![7.5f32; 4];
    let days = [s.0 as *const sg_xcorr_spectra];
    ok(sg_xcorr_correlate_f32(
        plan.0,
        days.as_ptr(),
        1,
        0,
        1,
        0,
        1,
        out.as_mut_ptr(),
        101,
        std::ptr::null_mut(),
    ));
    assert!(out.iter().all(|&v| v == 7.5));
    // With autocorrelation: one pair, as the pairwise reference has it.
    let auto = ctx.plan(&sg_xcorr_options {
        autocorrelation: 1,
        ..o
    });
    let s2 = auto.preprocess(&data, 1, 2000, None).unwrap();
    let c = auto.correlate(&[&s2], (0, 1, 0, 1)).unwrap();
    assert_eq!(c.counts, vec![18]);
    let (want, _) = reference_pair(&[&s2.host()], 0, 0, c.n_lags, None, false);
    assert!(rel_err(&c.stacks, &want) < 1e-5);
    // A day shorter than one window.
    let status = plan.preprocess(&data[..150], 1, 150, None).err().unwrap();
    assert_eq!(status.0, SG_ERR_INVALID_ARGUMENT);
    assert!(status.1.contains("shorter than one window"), "{}", status.1);
}

#[test]
fn bad_arguments_are_refused_with_a_message() {
    let ctx = Context::new(SG_BACKEND_CPU);
    let o = small_options();
    let mut p = std::ptr::null_mut();
    // A band above Nyquist, a window that is not whole samples, maxlag too long.
    for bad in [
        sg_xcorr_options { freqmax: 0.6, ..o },
        sg_xcorr_options { cc_len: 200.5, ..o },
        sg_xcorr_options { maxlag: 150.0, ..o },
        sg_xcorr_options { time_norm: 7, ..o },
        sg_xcorr_options {
            stack_method: -1,
            ..o
        },
    ] {
        let s = sg_xcorr_plan_create(ctx.0, &bad, &mut p);
        assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{}", last_error());
        assert!(p.is_null());
        assert!(!last_error().is_empty());
    }
    assert_eq!(
        sg_xcorr_plan_create(std::ptr::null(), &o, &mut p),
        SG_ERR_NULL_POINTER
    );
    let plan = ctx.plan(&o);
    // Non-finite samples.
    let mut data = synthetic(2, 2000, 3);
    data[1234] = f32::NAN;
    let e = plan.preprocess(&data, 2, 2000, None).err().unwrap();
    assert_eq!(e.0, SG_ERR_NON_FINITE);
    // Days with different station counts; a bad block; a short stride.
    let data = synthetic(3, 2000, 3);
    let a = plan.preprocess(&data, 3, 2000, None).unwrap();
    let b = plan.preprocess(&data, 2, 2000, None).unwrap();
    let e = plan.correlate(&[&a, &b], (0, 2, 0, 2)).err().unwrap();
    assert_eq!(e.0, SG_ERR_INVALID_ARGUMENT);
    assert!(e.1.contains("stations"), "{}", e.1);
    let e = plan.correlate(&[&a], (0, 2, 1, 2)).err().unwrap();
    assert_eq!(e.0, SG_ERR_INVALID_ARGUMENT);
    let days = [a.0 as *const sg_xcorr_spectra];
    let mut out = vec![0f32; 1000];
    let s = sg_xcorr_correlate_f32(
        plan.0,
        days.as_ptr(),
        1,
        0,
        3,
        0,
        3,
        out.as_mut_ptr(),
        50,
        std::ptr::null_mut(),
    );
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("pair_stride"), "{}", last_error());
    // Destroying NULL is a no-op.
    sg_xcorr_plan_destroy(std::ptr::null_mut());
    sg_xcorr_spectra_destroy(std::ptr::null_mut());
}
