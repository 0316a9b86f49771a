//! Two application streams tied by an event: device calls queued on stream A (the DWT's
//! kernels go straight onto it), then on stream B (the USFFT's run on the plan's own stream,
//! ordered after B) once B waits for A's event. The host queues B's call long before A's
//! work is done, so a call that ignored the order would read a half-written array; the
//! result equals the host calls' bit for bit. A switch of the context's stream between calls
//! is what an application with a stream per thread of work does.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;

const N: usize = 1024;
const TRACES: usize = 4096;
const M: usize = 8192;
const MODES: [usize; 2] = [64, 64];

fn ok(s: sg_status) {
    assert_eq!(s, SG_OK, "{}", message());
}

fn plans(g: &Gpu) -> (*mut sg_dwt_plan, *mut sg_usfft_plan) {
    let mut dwt = std::ptr::null_mut();
    ok(sg_dwt_plan_create(
        g.ctx,
        SG_WAVELET_DAUBECHIES,
        6,
        N,
        &mut dwt,
    ));
    let mut usfft = std::ptr::null_mut();
    ok(sg_usfft_plan_create(
        g.ctx,
        SG_USFFT_TYPE2,
        2,
        MODES.as_ptr(),
        -1,
        1e-5,
        SG_USFFT_F32,
        1,
        std::ptr::null(),
        &mut usfft,
    ));
    let point = |k: f32| (0..M).map(move |i| ((i as f32 * k).fract() - 0.5) * 6.0);
    let (x, y): (Vec<f32>, Vec<f32>) = (point(0.618).collect(), point(0.331).collect());
    ok(sg_usfft_set_points_f32(
        usfft,
        M,
        x.as_ptr(),
        y.as_ptr(),
        std::ptr::null(),
    ));
    (dwt, usfft)
}

fn traces() -> Vec<f32> {
    (0..N * TRACES)
        .map(|i| (i as f32 * 0.0137).sin() + ((i * 7919) % 1000) as f32 / 2000.0 - 0.25)
        .collect()
}

#[test]
fn calls_on_two_streams_follow_their_events() {
    let Some(g) = gpu() else { return };
    let (dwt, usfft) = plans(&g);
    let o = sg_dwt_denoise_options_default();
    let modes = 2 * MODES[0] * MODES[1];
    // The host calls: denoise, then the first values of the result taken as modes.
    let x = traces();
    let mut denoised = vec![0f32; x.len()];
    let null = std::ptr::null_mut();
    let (xp, dp) = (x.as_ptr(), denoised.as_mut_ptr());
    ok(sg_dwt_denoise_f32(dwt, &o, xp, dp, TRACES, N, null));
    let mut want = vec![0f32; 2 * M];
    let mut f = denoised[..modes].to_vec();
    ok(sg_usfft_execute_f32(
        usfft,
        want.as_mut_ptr(),
        f.as_mut_ptr(),
    ));

    let a = g.stream.clone();
    let b = g.cuda.new_stream().expect("a second stream");
    let input = g.upload(&x);
    let mut out = g.zeros::<f32>(x.len());
    let strengths = g.zeros::<f32>(2 * M);
    let (i, d, c) = (input.addr(), out.addr(), strengths.addr());
    a.synchronize().unwrap();
    // The sanitizer's reduced mode: 2 rounds of 2 denoises (each one already far slower).
    let (rounds, denoises) = if crate::cuda_common::sanitize_small() {
        (2, 2)
    } else {
        (5, 10)
    };
    for _ in 0..rounds {
        // Stream A: ten denoises (milliseconds of work) into `out`, then its event.
        ok(sg_context_set_stream(g.ctx, a.cu_stream() as u64));
        for _ in 0..denoises {
            ok(sg_dwt_denoise_device_f32(dwt, &o, i, d, TRACES, N, null));
        }
        b.wait(&a.record_event(None).unwrap()).unwrap();
        // Stream B: the USFFT reads `out` once A's work is done.
        ok(sg_context_set_stream(g.ctx, b.cu_stream() as u64));
        ok(sg_usfft_execute_device_f32(usfft, c, d));
        b.synchronize().unwrap();
        let got = b.clone_dtoh(&strengths.slice).unwrap();
        b.synchronize().unwrap();
        assert!(
            bits(&got) == bits(&want),
            "the USFFT on stream B differs from the host calls"
        );
        // Clear the result for the next round, on A, after B's read.
        a.wait(&b.record_event(None).unwrap()).unwrap();
        ok(sg_context_set_stream(g.ctx, a.cu_stream() as u64));
        a.memset_zeros(&mut out.slice).unwrap();
        g.synchronize();
    }
    ok(sg_context_set_stream(g.ctx, a.cu_stream() as u64));
    sg_dwt_plan_destroy(dwt);
    sg_usfft_plan_destroy(usfft);
    println!("streams: DWT denoise on stream A, USFFT on stream B after A's event: equal the host calls, {rounds} rounds");
}
