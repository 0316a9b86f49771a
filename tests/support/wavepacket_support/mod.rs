//! Shared helpers of the wave-packet tests.
#![allow(dead_code)]

use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::wavepacket::LayoutOptions;
use std::sync::Arc;

pub fn cpu() -> Arc<Context> {
    Context::new(BackendRequest::Cpu, 0).unwrap()
}

/// Layout options with `directions` and `levels`, the cutoff `cutoff` (None: the default)
/// and the rest the defaults.
pub fn layout_options(directions: usize, levels: usize, cutoff: Option<f64>) -> LayoutOptions {
    let d = LayoutOptions::default();
    LayoutOptions {
        directions,
        levels,
        cutoff: cutoff.unwrap_or(d.cutoff),
        ..d
    }
}

/// A small xorshift generator: reproducible test data without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [−1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn gauss(&mut self) -> f64 {
        let u1 = (self.uniform() + 1.0) / 2.0 + 1e-300;
        let u2 = self.uniform() * std::f64::consts::PI;
        (-2.0 * u1.ln()).sqrt() * u2.cos()
    }
    pub fn complex(&mut self) -> Complex<f64> {
        Complex::new(self.uniform(), self.uniform())
    }
}

pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

/// 10·log10(‖reference‖² / ‖estimate − reference‖²).
pub fn snr_db(estimate: &[f64], reference: &[f64]) -> f64 {
    -20.0 * rel_l2(estimate, reference).log10()
}

/// A window of the Penobscot crossline: `samples` samples from `t0` of `traces` traces from
/// `x0` (axis 1 = time, fastest), as f64.
pub fn penobscot(t0: usize, samples: usize, x0: usize, traces: usize) -> Vec<f64> {
    const NS: usize = 1501;
    let d = std::fs::read("data/penobscot-xl1155/penobscot_xl1155.sgy").unwrap();
    assert_eq!(d.len(), 3600 + 601 * (240 + 4 * NS));
    let mut v = Vec::with_capacity(samples * traces);
    for t in x0..x0 + traces {
        for i in t0..t0 + samples {
            let o = 3600 + t * (240 + 4 * NS) + 240 + 4 * i;
            let u = u32::from_be_bytes(d[o..o + 4].try_into().unwrap());
            let mantissa = (u & 0x00ff_ffff) as f64 / (1u64 << 24) as f64;
            let exponent = ((u >> 24) & 0x7f) as i32 - 64;
            let sign = if u >> 31 == 1 { -1.0 } else { 1.0 };
            v.push(sign * mantissa * 16f64.powi(exponent));
        }
    }
    v
}

/// A crop of the F3 cube: `samples` from `t0` × `xlines` × `ilines` (time fastest), as f64.
pub fn f3(t0: usize, samples: usize, xlines: usize, ilines: usize) -> Vec<f64> {
    const NS: usize = 75;
    let d = std::fs::read("data/f3-tiny-cube/f3.sgy").unwrap();
    assert_eq!(d.len(), 3600 + 414 * (240 + 2 * NS));
    let mut v = Vec::with_capacity(samples * xlines * ilines);
    for il in 0..ilines {
        for xl in 0..xlines {
            let tr = il * 18 + xl;
            for i in t0..t0 + samples {
                let o = 3600 + tr * (240 + 2 * NS) + 240 + 2 * i;
                v.push(i16::from_be_bytes([d[o], d[o + 1]]) as f64);
            }
        }
    }
    v
}

/// A crop of the `real3d` field cube (300 samples × 100 traces × 10 lines): `samples` from
/// `t0` × `traces` from `x0` × `lines` from `y0` (time fastest), as f64.
pub fn real3d(
    (t0, samples): (usize, usize),
    (x0, traces): (usize, usize),
    (y0, lines): (usize, usize),
) -> Vec<f64> {
    let d = std::fs::read("data/aaspip-real3d/real3d.bin").unwrap();
    assert_eq!(d.len(), 4 * 300 * 100 * 10);
    let mut v = Vec::with_capacity(samples * traces * lines);
    for y in y0..y0 + lines {
        for x in x0..x0 + traces {
            for t in t0..t0 + samples {
                let o = 4 * ((y * 100 + x) * 300 + t);
                v.push(f32::from_le_bytes(d[o..o + 4].try_into().unwrap()) as f64);
            }
        }
    }
    v
}

/// Σ over the boxes and the periodic images (±2 cells along each axis of the layout) of
/// ½(ŵ_b(ξ)² + ŵ_b(−ξ)²): one where the windows are a partition of unity at ξ.
pub fn partition_sum(
    layout: &seisgpu::wavepacket::layout::Layout,
    ev: &seisgpu::wavepacket::windows::WindowEvaluator,
    xi: [f64; 3],
) -> f64 {
    let r = |d: usize| if d < layout.dim { -2..=2 } else { 0..=0 };
    let mut sum = 0.0;
    for m3 in r(2) {
        for m2 in r(1) {
            for m1 in r(0) {
                let x = [xi[0] + m1 as f64, xi[1] + m2 as f64, xi[2] + m3 as f64];
                let nx = [-x[0], -x[1], -x[2]];
                for b in 0..layout.boxes.len() {
                    let (w1, w2) = (ev.window(b, &x), ev.window(b, &nx));
                    sum += 0.5 * (w1 * w1 + w2 * w2);
                }
            }
        }
    }
    sum
}
