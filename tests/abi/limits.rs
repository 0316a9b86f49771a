//! Requests the machine cannot serve (issue 15) fail cleanly on the CPU path: a status,
//! the sizes in the message, nothing written, and the context still usable afterwards.

use crate::common;

use common::{last_error, ok, status_name, Ctx};
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;

/// Asserts the status and that the message holds each of `words`.
#[track_caller]
fn refused(s: sg_status, want: sg_status, words: &[&str]) {
    let msg = last_error();
    assert_eq!(status_name(s), status_name(want), "message: {msg}");
    for w in words {
        assert!(msg.contains(w), "message lacks {w:?}: {msg}");
    }
}

/// The context still serves a small request, with the right numbers (Haar of [1, 3]).
fn still_usable(ctx: &Ctx) {
    let plan = ctx.plan(SG_WAVELET_HAAR, 2, 2);
    let x = [1.0f64, 3.0];
    let mut y = [0.0f64; 2];
    ok(sg_dwt_execute_f64(
        plan.0,
        SG_DWT_FORWARD,
        0,
        x.as_ptr(),
        y.as_mut_ptr(),
        1,
        2,
    ));
    let r = std::f64::consts::SQRT_2;
    assert!(
        (y[0] - 4.0 / r).abs() < 1e-12 && (y[1] - -2.0 / r).abs() < 1e-12,
        "{y:?}"
    );
}

#[test]
fn fxdecon_volumes_beyond_the_host_are_out_of_memory() {
    let ctx = Ctx::cpu();
    for (n, il, xl) in [
        (1000, 1_000_000, 1_000_000),
        (64, usize::MAX, 2),
        (1 << 62, 1, 1),
    ] {
        let mut plan: *mut sg_fxdecon_plan = 0x5151 as *mut _;
        let s = sg_fxdecon_plan_create_3d(ctx.0, ptr::null(), n, il, xl, &mut plan);
        refused(s, SG_ERR_OUT_OF_MEMORY, &[&il.to_string(), "bytes"]);
        assert_eq!(plan as usize, 0x5151, "output written on failure");
        still_usable(&ctx);
    }
    let mut plan = ptr::null_mut();
    let s = sg_fxdecon_plan_create_2d(ctx.0, ptr::null(), 1 << 40, 1 << 30, &mut plan);
    refused(s, SG_ERR_OUT_OF_MEMORY, &["1099511627776 × 1 × 1073741824"]);
    // A 1,000³ layout (4 GB of f32) is a plan this host can serve.
    ok(sg_fxdecon_plan_create_3d(
        ctx.0,
        ptr::null(),
        1000,
        1000,
        1000,
        &mut plan,
    ));
    sg_fxdecon_plan_destroy(plan);
}

#[test]
fn usfft_grids_beyond_the_host_are_out_of_memory() {
    let ctx = Ctx::cpu();
    // 1,000³ modes: a 2000³ fine grid of complex doubles per vector, 128 GB each.
    let modes = [1000usize, 1000, 1000];
    for n_vectors in [4, usize::MAX / 2] {
        let mut plan: *mut sg_usfft_plan = 0x5151 as *mut _;
        let s = sg_usfft_plan_create(
            ctx.0,
            SG_USFFT_TYPE1,
            3,
            modes.as_ptr(),
            1,
            1e-6,
            SG_USFFT_F64,
            n_vectors,
            ptr::null(),
            &mut plan,
        );
        refused(
            s,
            SG_ERR_OUT_OF_MEMORY,
            &["2000 × 2000 × 2000", &n_vectors.to_string()],
        );
        assert_eq!(plan as usize, 0x5151, "output written on failure");
        still_usable(&ctx);
    }
}

#[test]
fn pair_blocks_are_addressed_without_listing_them() {
    let ctx = Ctx::cpu();
    let mut o = sg_xcorr_options_default();
    o.autocorrelation = 1;
    let mut plan = ptr::null_mut();
    ok(sg_xcorr_plan_create(ctx.0, &o, &mut plan));
    // Ten million stations: 5·10^13 pairs, found by arithmetic (a list would need 800 TB).
    let n = 10_000_000usize;
    let (mut count, mut i, mut j) = (0usize, 0usize, 0usize);
    ok(sg_xcorr_pair_count(plan, n, 0, n, 0, n, &mut count));
    assert_eq!(count, n * (n + 1) / 2);
    ok(sg_xcorr_pair_stations(
        plan,
        n,
        0,
        n,
        0,
        n,
        count - 1,
        &mut i,
        &mut j,
    ));
    assert_eq!((i, j), (n - 1, n - 1));
    // Row a starts at pair a·n − a(a−1)/2: pair (a, a) of row a = 12345.
    let a = 12345usize;
    ok(sg_xcorr_pair_stations(
        plan,
        n,
        0,
        n,
        0,
        n,
        a * n - a * (a - 1) / 2,
        &mut i,
        &mut j,
    ));
    assert_eq!((i, j), (a, a));
    // A block whose pair indices overflow size_t is refused, the outputs untouched.
    let big = usize::MAX / 2;
    let mut c = 7usize;
    let s = sg_xcorr_pair_count(plan, usize::MAX, 0, big, big, big, &mut c);
    refused(s, SG_ERR_INVALID_ARGUMENT, &["overflow", &big.to_string()]);
    assert_eq!(c, 7);
    sg_xcorr_plan_destroy(plan);
    still_usable(&ctx);
}
