//! A chain of device calls captured into a CUDA graph on the application's stream
//! (`cuStreamBeginCapture`, thread-local mode: the other tests of the process go on making
//! CUDA calls that global mode forbids while a capture is open), replayed on new data copied into the same input
//! array, equals the direct calls bit for bit.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;

const N: usize = 512;
const TRACES: usize = 256;
const M: usize = 4096;
const MODES: [usize; 2] = [32, 24];

struct Chain {
    /// The arrays' addresses, taken before a capture (reading a cudarc slice's address
    /// waits on its last write's event, which a capturing stream may not).
    addrs: [u64; 4],
    dwt: *mut sg_dwt_plan,
    usfft: *mut sg_usfft_plan,
    input: Dev<f32>,
    mid: Dev<f32>,
    out: Dev<f32>,
    strengths: Dev<f32>,
}

impl Chain {
    fn new(g: &Gpu) -> Chain {
        let mut dwt = std::ptr::null_mut();
        let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 6, N, &mut dwt);
        assert_eq!(s, SG_OK, "{}", message());
        let mut usfft = std::ptr::null_mut();
        let s = sg_usfft_plan_create(
            g.ctx,
            SG_USFFT_TYPE2,
            2,
            MODES.as_ptr(),
            -1,
            1e-4,
            SG_USFFT_F32,
            1,
            std::ptr::null(),
            &mut usfft,
        );
        assert_eq!(s, SG_OK, "{}", message());
        let x: Vec<f32> = (0..M)
            .map(|i| ((i as f32 * 0.618).fract() - 0.5) * 6.0)
            .collect();
        let y: Vec<f32> = (0..M)
            .map(|i| ((i as f32 * 0.331).fract() - 0.5) * 6.0)
            .collect();
        let null = std::ptr::null();
        assert_eq!(
            sg_usfft_set_points_f32(usfft, M, x.as_ptr(), y.as_ptr(), null),
            SG_OK
        );
        let (input, mid, out) = (
            g.zeros(N * TRACES),
            g.zeros(N * TRACES),
            g.zeros(N * TRACES),
        );
        let strengths = g.zeros(2 * M);
        Chain {
            addrs: [input.addr(), mid.addr(), out.addr(), strengths.addr()],
            dwt,
            usfft,
            input,
            mid,
            out,
            strengths,
        }
    }

    /// Denoise, forward transform of the result, and a type-2 USFFT from its first values taken
    /// as modes (interpolation: bit-identical run to run) into M strengths.
    fn queue(&self) {
        let o = sg_dwt_denoise_options_default();
        let [i, m, out, c] = self.addrs;
        let null = std::ptr::null_mut();
        let s = sg_dwt_denoise_device_f32(self.dwt, &o, i, m, TRACES, N, null);
        assert_eq!(s, SG_OK, "{}", message());
        let s = sg_dwt_execute_device_f32(self.dwt, SG_DWT_FORWARD, 0, m, out, TRACES, N);
        assert_eq!(s, SG_OK, "{}", message());
        let s = sg_usfft_execute_device_f32(self.usfft, c, out);
        assert_eq!(s, SG_OK, "{}", message());
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        sg_dwt_plan_destroy(self.dwt);
        sg_usfft_plan_destroy(self.usfft);
    }
}

fn data(k: usize) -> Vec<f32> {
    (0..N * TRACES)
        .map(|i| {
            ((i * (k + 3)) as f32 * 0.013).sin() + ((i % 97) as f32 - 48.0) / (60.0 + k as f32)
        })
        .collect()
}

#[test]
fn a_captured_chain_replays_as_the_direct_calls() {
    let Some(g) = gpu() else { return };
    let chain = Chain::new(&g);
    let copy_in = |k: usize, c: &mut Chain| {
        g.stream
            .memcpy_htod(&data(k), &mut c.input.slice)
            .expect("copy in");
    };
    let mut chain = chain;
    let mut direct = Vec::new();
    for k in 0..10 {
        copy_in(k, &mut chain);
        chain.queue();
        direct.push(bits(&g.download(&chain.strengths)));
    }
    let graph = g.capture(|| chain.queue());
    for (k, want) in direct.iter().enumerate() {
        copy_in(k, &mut chain);
        graph.launch().expect("graph launch");
        assert!(
            bits(&g.download(&chain.strengths)) == *want,
            "replay {k} differs from the direct calls"
        );
    }
    println!("graph: DWT denoise → DWT forward → USFFT type 2 captured once, 10 replays equal the direct calls");
}
