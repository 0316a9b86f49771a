//! Device checks (`sg_context_set_device_checks`): with them on, a device call whose input
//! holds a NaN or an infinity still returns SG_OK without waiting, and the next
//! `sg_context_synchronize` reports SG_ERR_NON_FINITE naming the call and the array, once;
//! stride padding is not scanned; off (the default), nothing is reported. Also in a CUDA
//! graph: each replay on bad data reports, one on good data does not.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;

const N: usize = 256;
const TRACES: usize = 64;
const STRIDE: usize = 260;

fn denoise(plan: *mut sg_dwt_plan, input: u64, output: u64) {
    let o = sg_dwt_denoise_options_default();
    let null = std::ptr::null_mut();
    let s = sg_dwt_denoise_device_f32(plan, &o, input, output, TRACES, STRIDE, null);
    assert_eq!(s, SG_OK, "{}", message());
}

/// Traces with padding: a NaN in the padding is not read, so not reported.
fn traces(bad: Option<(usize, f32)>, padding: f32) -> Vec<f32> {
    let mut v: Vec<f32> = (0..TRACES * STRIDE)
        .map(|i| {
            if i % STRIDE >= N {
                padding
            } else {
                (i as f32 * 0.01).sin()
            }
        })
        .collect();
    if let Some((i, x)) = bad {
        v[i] = x;
    }
    v
}

fn expect_finding(g: &Gpu, what: &str) {
    let s = sg_context_synchronize(g.ctx);
    assert_eq!(s, SG_ERR_NON_FINITE, "{what}: {}", message());
    let m = message();
    assert!(
        m.contains("DWT denoise") && m.contains("input"),
        "{what}: {m}"
    );
    assert_eq!(
        sg_context_synchronize(g.ctx),
        SG_OK,
        "{what}: reported once"
    );
}

#[test]
fn device_checks_report_non_finite_inputs_at_synchronize() {
    let Some(g) = gpu() else { return };
    let mut plan = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 4, N, &mut plan);
    assert_eq!(s, SG_OK, "{}", message());
    let output = g.zeros::<f32>(TRACES * STRIDE);
    let bad = g.upload(&traces(Some((7 * STRIDE + 100, f32::NAN)), 0.0));
    let good = g.upload(&traces(None, f32::NAN));
    let inf = g.upload(&traces(
        Some((TRACES * STRIDE - STRIDE + N - 1, f32::INFINITY)),
        0.0,
    ));
    // Off (the default): nothing reported.
    denoise(plan, bad.addr(), output.addr());
    assert_eq!(sg_context_synchronize(g.ctx), SG_OK, "checks off");
    ok(sg_context_set_device_checks(g.ctx, SG_DEVICE_CHECKS_FINITE));
    denoise(plan, good.addr(), output.addr());
    assert_eq!(
        sg_context_synchronize(g.ctx),
        SG_OK,
        "NaN in the padding only"
    );
    denoise(plan, bad.addr(), output.addr());
    denoise(plan, good.addr(), output.addr());
    expect_finding(&g, "a NaN");
    denoise(plan, inf.addr(), output.addr());
    expect_finding(&g, "an infinity in the last sample");
    fx_names_itself(&g);
    // Captured: a replay reports as the direct calls do.
    let input = g.upload(&traces(None, 0.0));
    // Addresses taken before the capture (reading a cudarc slice's address waits on its
    // last write's event, which a capturing stream may not).
    let (i, o) = (input.addr(), output.addr());
    let graph = g.capture(|| denoise(plan, i, o));
    graph.launch().expect("replay");
    assert_eq!(
        sg_context_synchronize(g.ctx),
        SG_OK,
        "a replay on good data"
    );
    let mut input = input;
    let nan = traces(Some((3 * STRIDE, f32::NAN)), 0.0);
    g.stream
        .memcpy_htod(&nan, &mut input.slice)
        .expect("copy in");
    graph.launch().expect("replay");
    expect_finding(&g, "a replay on bad data");
    ok(sg_context_set_device_checks(g.ctx, SG_DEVICE_CHECKS_OFF));
    denoise(plan, bad.addr(), output.addr());
    assert_eq!(sg_context_synchronize(g.ctx), SG_OK, "checks off again");
    sg_dwt_plan_destroy(plan);
    cost(&g);
    println!("device checks: non-finite inputs reported at synchronize (direct and replayed), padding skipped");
}

/// An F-X call's finding names F-X.
fn fx_names_itself(g: &Gpu) {
    let mut fx = std::ptr::null_mut();
    let o = sg_fxdecon_options_default();
    ok(sg_fxdecon_plan_create_2d(g.ctx, &o, N, TRACES, &mut fx));
    let mut v = traces(None, 0.0);
    v[5 * STRIDE + 9] = f32::NAN;
    let (input, output) = (g.upload(&v), g.zeros::<f32>(v.len()));
    let s = sg_fxdecon_execute_2d_device_f32(fx, input.addr(), output.addr(), STRIDE);
    assert_eq!(s, SG_OK, "{}", message());
    assert_eq!(sg_context_synchronize(g.ctx), SG_ERR_NON_FINITE);
    let m = message();
    assert!(m.contains("F-X") && m.contains("input"), "{m}");
    sg_fxdecon_plan_destroy(fx);
}

fn ok(s: sg_status) {
    assert_eq!(s, SG_OK, "{}", message());
}

/// What the checks cost: the device time of a DWT denoise of 65,536 traces of 256 samples,
/// off and on (printed; the scan reads the input once more). Skipped in the sanitizer's
/// reduced mode: a timing loop, its kernels launched by the checks above.
fn cost(g: &Gpu) {
    if crate::cuda_common::sanitize_small() {
        println!("device checks cost: not timed in the sanitizer's reduced mode");
        return;
    }
    let (n, count) = (256, 65_536);
    let mut plan = std::ptr::null_mut();
    ok(sg_dwt_plan_create(
        g.ctx,
        SG_WAVELET_DAUBECHIES,
        8,
        n,
        &mut plan,
    ));
    let (input, output) = (
        g.upload(&vec![0.5f32; n * count]),
        g.zeros::<f32>(n * count),
    );
    let o = sg_dwt_denoise_options_default();
    let null = std::ptr::null_mut();
    let mut ms = [0.0; 2];
    for (k, checks) in [SG_DEVICE_CHECKS_OFF, SG_DEVICE_CHECKS_FINITE]
        .into_iter()
        .enumerate()
    {
        ok(sg_context_set_device_checks(g.ctx, checks));
        let call =
            || sg_dwt_denoise_device_f32(plan, &o, input.addr(), output.addr(), count, n, null);
        ok(call());
        g.synchronize();
        let start = g
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        for _ in 0..20 {
            ok(call());
        }
        let end = g
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        end.synchronize().unwrap();
        ms[k] = start.elapsed_ms(&end).unwrap() as f64 / 20.0;
    }
    ok(sg_context_set_device_checks(g.ctx, SG_DEVICE_CHECKS_OFF));
    assert_eq!(sg_context_synchronize(g.ctx), SG_OK);
    println!(
        "device checks cost: DWT denoise 65,536 × 256 f32 {:.3} ms off, {:.3} ms on ({:.2}×)",
        ms[0],
        ms[1],
        ms[1] / ms[0]
    );
    sg_dwt_plan_destroy(plan);
}
