//! Progress and cancellation on the GPU (see tests/support/progress_common): DWT transform and
//! denoise batches, which run chunk by chunk through the CUDA backend when a callback is
//! set; F-X 2D in slabs; xcorr preprocessing and correlation in chunks and tiles; the
//! EM-logging search in groups of launches; USFFT at its one cancellation point, before
//! the download; the wave packets' forward and adjoint at their stages, the inverse at each
//! iteration. Small slab sizes and memory budgets make
//! these small calls take many steps. SEISGPU_SANITIZE_SMALL=1 (the sanitizer's reduced
//! mode) makes the wave-packet section 128×64. Without a CUDA device the tests report "skipped",
//! unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.

use crate::progress_common;

use crate::cuda_common::sanitize_small;
use progress_common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use std::ptr;

fn gpu() -> Option<Context> {
    let mut c = ptr::null_mut();
    match sg_context_create(SG_BACKEND_CUDA, 0, &mut c) {
        SG_OK => Some(Context(c)),
        s => {
            let required = std::env::var("SEISGPU_REQUIRE_CUDA").is_ok_and(|v| v.trim() == "1");
            assert!(
                !required,
                "SEISGPU_REQUIRE_CUDA=1 but no CUDA device ({s}): {}",
                last_error()
            );
            println!("skipped: no CUDA device: {}", last_error());
            None
        }
    }
}

#[test]
fn gpu_dwt_batches_report_and_cancel() {
    let Some(ctx) = gpu() else { return };
    dwt_batches(&ctx, sanitizing());
}

/// A section filtered in many slabs: a stop at the first report leaves the output
/// untouched, a later one may leave the slabs already written filtered (the message says
/// so); either way the next call is right. The slab size is process-wide: one test.
#[test]
fn gpu_fx_decon_slabs_report_and_cancel() {
    let Some(ctx) = gpu() else { return };
    let (n, ntr) = (500, 400);
    let data: Vec<f32> = (0..n * ntr)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    // 2 kB per trace: slabs of about 20 traces (a plan sizes its slabs when it is made).
    seisgpu::fxdecon::cuda::set_slab_bytes(Some(40_000));
    let mut plan = ptr::null_mut();
    ok(sg_fxdecon_plan_create_2d(
        ctx.0,
        ptr::null(),
        n,
        ntr,
        &mut plan,
    ));
    let sentinel = vec![1234.5f32; n * ntr];
    let untouched = exercise_slabs(&ctx, "GPU F-X slabs", 8, &sentinel, true, 3, || {
        let mut out = sentinel.clone();
        let s = sg_fxdecon_execute_2d_f32(plan, data.as_ptr(), out.as_mut_ptr(), n);
        (s, out)
    });
    seisgpu::fxdecon::cuda::set_slab_bytes(None);
    println!("{untouched} of 8 stops before the first slab was written");
    sg_fxdecon_plan_destroy(plan);
}

#[test]
fn gpu_xcorr_preprocessing_and_correlation_report_and_cancel() {
    let Some(ctx) = gpu() else { return };
    // About 15 stations per preprocessing chunk, correlation tiles of about 35 stations;
    // the stacks kept on the device until the call is done, then (a 2 MB cap on them) sent
    // to the host chunk by chunk.
    seisgpu::xcorr::cuda::set_memory_budget(Some(2 << 20));
    xcorr_preprocess_and_correlate(&ctx, sanitizing());
    seisgpu::xcorr::cuda::set_result_budget(Some(2 << 20));
    xcorr_preprocess_and_correlate(&ctx, sanitizing());
    seisgpu::xcorr::cuda::set_result_budget(None);
    seisgpu::xcorr::cuda::set_memory_budget(None);
}

#[test]
fn gpu_em_search_reports_and_cancels() {
    let Some(ctx) = gpu() else { return };
    em_search(&ctx, sanitizing());
}

#[test]
fn gpu_usfft_reports_and_cancels() {
    let Some(ctx) = gpu() else { return };
    usfft_types(&ctx, 2, true);
}

#[test]
fn gpu_wavepackets_report_and_cancel() {
    use seisgpu::ffi::wavepacket::*;
    let Some(ctx) = gpu() else { return };
    // Large enough that each stage outlasts the report interval (a stop must find its report);
    // the sanitizer's reduced mode slows every kernel enough for a sixteenth of the samples.
    let (nt, nx) = if sanitize_small() {
        (128usize, 64usize)
    } else {
        (512usize, 256usize)
    };
    let shape = [nt, nx];
    let mut l = ptr::null_mut();
    ok(sg_wavepacket_layout_create(
        ctx.0,
        2,
        shape.as_ptr(),
        16,
        2,
        0.0,
        0.0,
        1e-6,
        SG_WAVEPACKET_F32,
        &mut l,
    ));
    let (mut n, mut m, mut boxes, mut levels, mut dirs) = (0, 0, 0, 0, 0);
    ok(sg_wavepacket_layout_sizes(
        l,
        &mut n,
        &mut m,
        &mut boxes,
        &mut levels,
        &mut dirs,
    ));
    // Dipping events: a smooth section the inverse reconstructs in a few iterations.
    let f: Vec<f32> = (0..n)
        .map(|i| {
            let (t, x) = ((i % nt) as f32, (i / nt) as f32);
            (-((t - 30.0 - 0.4 * x) / 4.0).powi(2)).exp()
                - 0.5 * (-((t - 70.0) / 5.0).powi(2)).exp()
        })
        .collect();
    wavepacket_transforms(&ctx, l, &f, m, 2);
    sg_wavepacket_layout_destroy(l);
}
