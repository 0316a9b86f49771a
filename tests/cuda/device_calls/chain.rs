//! The processing chain of three capabilities on one section, all device calls on the
//! application's stream: DWT denoise of the traces → F-X decon → wave-packet forward, soft
//! threshold and adjoint. Captured once into a CUDA graph (thread-local mode) and replayed on ten
//! new sections copied into the same input array, each replay equals the direct calls on
//! that section. F-X and the wave packets' adjoint add with float atomics (their order
//! follows the threads' timing), so the direct calls themselves agree only to rounding:
//! the comparison allows 1e-5 of the largest sample (a soft threshold keeps a coefficient
//! near the threshold from turning a rounding difference into a jump).

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;

/// Samples a trace, traces.
const SHAPE: [usize; 2] = [128, 64];
const SAMPLES: usize = SHAPE[0] * SHAPE[1];

fn ok(s: sg_status) {
    assert_eq!(s, SG_OK, "{}", message());
}

struct Chain {
    dwt: *mut sg_dwt_plan,
    fx: *mut sg_fxdecon_plan,
    layout: *mut sg_wavepacket_layout,
    threshold: f64,
    /// Addresses taken before a capture (reading a cudarc slice's address waits on its
    /// last write's event, which a capturing stream may not).
    addrs: [u64; 5],
    input: Dev<f32>,
    // Held for the addresses above.
    denoised: Dev<f32>,
    filtered: Dev<f32>,
    coeffs: Dev<f32>,
    out: Dev<f32>,
}

impl Chain {
    fn new(g: &Gpu) -> Chain {
        let [n, traces] = SHAPE;
        let mut dwt = std::ptr::null_mut();
        ok(sg_dwt_plan_create(
            g.ctx,
            SG_WAVELET_DAUBECHIES,
            8,
            n,
            &mut dwt,
        ));
        let mut fx = std::ptr::null_mut();
        let o = sg_fxdecon_options_default();
        ok(sg_fxdecon_plan_create_2d(g.ctx, &o, n, traces, &mut fx));
        let mut layout = std::ptr::null_mut();
        ok(sg_wavepacket_layout_create(
            g.ctx,
            2,
            SHAPE.as_ptr(),
            12,
            0,
            0.0,
            0.0,
            1e-6,
            SG_WAVEPACKET_F32,
            &mut layout,
        ));
        let (mut a, mut m, mut b, mut c, mut d) = (0, 0, 0, 0, 0);
        ok(sg_wavepacket_layout_sizes(
            layout, &mut a, &mut m, &mut b, &mut c, &mut d,
        ));
        let arrays = [g.zeros(SAMPLES), g.zeros(SAMPLES), g.zeros(SAMPLES)];
        let coeffs = g.zeros(2 * m);
        let out = g.zeros(SAMPLES);
        let [input, denoised, filtered] = arrays;
        Chain {
            dwt,
            fx,
            layout,
            threshold: 0.0,
            addrs: [
                input.addr(),
                denoised.addr(),
                filtered.addr(),
                coeffs.addr(),
                out.addr(),
            ],
            input,
            denoised,
            filtered,
            coeffs,
            out,
        }
    }

    /// The chain's device calls, queued back to back on the context's stream.
    fn queue(&self) {
        let [input, denoised, filtered, coeffs, out] = self.addrs;
        let [n, traces] = SHAPE;
        let o = sg_dwt_denoise_options_default();
        let null = std::ptr::null_mut();
        ok(sg_dwt_denoise_device_f32(
            self.dwt, &o, input, denoised, traces, n, null,
        ));
        ok(sg_fxdecon_execute_2d_device_f32(
            self.fx, denoised, filtered, n,
        ));
        ok(sg_wavepacket_forward_device_f32(
            self.layout,
            filtered,
            coeffs,
        ));
        ok(sg_wavepacket_threshold_device_f32(
            self.layout,
            coeffs,
            SG_WAVEPACKET_SOFT,
            SG_WAVEPACKET_THRESHOLD_VALUE,
            self.threshold,
        ));
        ok(sg_wavepacket_adjoint_device_f32(self.layout, coeffs, out));
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        sg_dwt_plan_destroy(self.dwt);
        sg_fxdecon_plan_destroy(self.fx);
        sg_wavepacket_layout_destroy(self.layout);
    }
}

/// Section `k`: dipping events whose slope and frequency change with `k`, and noise.
fn section(k: usize) -> Vec<f32> {
    let [n, _] = SHAPE;
    (0..SAMPLES)
        .map(|i| {
            let (t, x) = ((i % n) as f32, (i / n) as f32);
            let a = 0.25 * (t - 40.0 - (0.3 + 0.05 * k as f32) * x);
            let noise = ((i * 7919 + k * 104_729) % 1000) as f32 / 2500.0 - 0.2;
            (-a * a).exp() * (1.0 - 2.0 * a * a) + noise
        })
        .collect()
}

#[test]
fn a_captured_three_capability_chain_replays_as_the_direct_calls() {
    let Some(g) = gpu() else { return };
    let mut chain = Chain::new(&g);
    let copy_in = |k: usize, c: &mut Chain| {
        let s = section(k);
        g.stream
            .memcpy_htod(&s, &mut c.input.slice)
            .expect("copy in");
    };
    // The threshold: a tenth of the largest coefficient of the first section's chain.
    copy_in(0, &mut chain);
    chain.queue();
    let c = g.download(&chain.coeffs);
    let largest = c.chunks(2).map(|z| z[0].hypot(z[1])).fold(0f32, f32::max);
    chain.threshold = 0.1 * largest as f64;
    let mut direct = Vec::new();
    for k in 0..10 {
        copy_in(k, &mut chain);
        chain.queue();
        direct.push(g.download(&chain.out));
    }
    let graph = g.capture(|| chain.queue());
    for (k, want) in direct.iter().enumerate() {
        copy_in(k, &mut chain);
        graph.launch().expect("graph launch");
        assert_close(&format!("replay {k}"), &g.download(&chain.out), want, 1e-5);
    }
    println!(
        "graph: DWT denoise → F-X decon → wave-packet forward, soft threshold, adjoint captured once; 10 replays equal the direct calls to 1e-5"
    );
}
