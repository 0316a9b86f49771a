//! Data shared by the F-X decon tests: the bundled Penobscot crossline, the Seismic Unix
//! reference subsets, synthetic sections and volumes with known linear events, measures.

#![allow(dead_code)]

use std::path::PathBuf;

pub const PENOBSCOT_SAMPLES: usize = 1501;
pub const PENOBSCOT_TRACES: usize = 601;

/// Relative to the package root: cargo runs tests there, and so does the GPU run script.
fn root() -> PathBuf {
    PathBuf::from(".")
}

/// IBM System/360 single precision to f64 (exact).
fn ibm_to_f64(b: [u8; 4]) -> f64 {
    let u = u32::from_be_bytes(b);
    let mantissa = (u & 0x00ff_ffff) as f64 / (1u64 << 24) as f64;
    let exponent = ((u >> 24) & 0x7f) as i32 - 64;
    let sign = if u >> 31 == 1 { -1.0 } else { 1.0 };
    sign * mantissa * 16f64.powi(exponent)
}

/// The Penobscot crossline 1155 (601 traces × 1501 samples, dt 4 ms), trace after trace,
/// decoded from the bundled SEG-Y (IBM float, the exact input of the SU references).
pub fn penobscot() -> Vec<f32> {
    let d = std::fs::read(root().join("data/penobscot-xl1155/penobscot_xl1155.sgy")).unwrap();
    let row = 240 + 4 * PENOBSCOT_SAMPLES;
    assert_eq!(d.len(), 3600 + PENOBSCOT_TRACES * row);
    let mut v = Vec::with_capacity(PENOBSCOT_TRACES * PENOBSCOT_SAMPLES);
    for t in 0..PENOBSCOT_TRACES {
        for i in 0..PENOBSCOT_SAMPLES {
            let o = 3600 + t * row + 240 + 4 * i;
            v.push(ibm_to_f64(d[o..o + 4].try_into().unwrap()) as f32);
        }
    }
    v
}

/// The traces of `tests/data/sufxdecon/NAME.f32` and which section traces they are.
pub fn su_reference(name: &str) -> (Vec<usize>, Vec<f32>) {
    let traces: Vec<usize> = (0..80).chain(290..330).chain(561..601).collect();
    let bytes = std::fs::read(root().join(format!("tests/data/sufxdecon/{name}.f32"))).unwrap();
    let v: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(v.len(), traces.len() * PENOBSCOT_SAMPLES);
    (traces, v)
}

/// Relative RMS difference of `out` against `reference` over the finite reference samples,
/// and how many were excluded.
pub fn rel_rms_finite(out: &[f32], reference: &[f32]) -> (f64, usize) {
    let (mut d, mut r, mut excluded) = (0.0f64, 0.0f64, 0);
    for (&a, &b) in out.iter().zip(reference) {
        if !b.is_finite() {
            excluded += 1;
            continue;
        }
        d += (a as f64 - b as f64).powi(2);
        r += (b as f64).powi(2);
    }
    ((d / r).sqrt(), excluded)
}

pub fn rel_rms<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    let (mut d, mut r) = (0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y): (f64, f64) = (x.into(), y.into());
        d += (x - y).powi(2);
        r += y * y;
    }
    if r == 0.0 {
        d.sqrt()
    } else {
        (d / r).sqrt()
    }
}

/// SNR in dB of `x` against the clean signal.
pub fn snr_db(x: &[f64], clean: &[f64]) -> f64 {
    let s: f64 = clean.iter().map(|v| v * v).sum();
    let n: f64 = x.iter().zip(clean).map(|(a, b)| (a - b).powi(2)).sum();
    10.0 * (s / n).log10()
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // SplitMix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A Ricker wavelet of peak frequency `f` (Hz) at time `t` (s).
pub fn ricker(f: f64, t: f64) -> f64 {
    let a = (std::f64::consts::PI * f * t).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// A plane event: time at the first trace (s), dips in s/trace along x and y, amplitude.
#[derive(Clone, Copy)]
pub struct Event {
    pub t0: f64,
    pub px: f64,
    pub py: f64,
    pub amp: f64,
}

/// Clean traces (ix fastest, then iy) with 25 Hz Ricker plane events, dt 4 ms.
pub fn events(n: usize, nx: usize, ny: usize, evs: &[Event]) -> Vec<f64> {
    let dt = 0.004;
    let mut v = vec![0.0; n * nx * ny];
    for iy in 0..ny {
        for ix in 0..nx {
            let tr = &mut v[(ix + nx * iy) * n..][..n];
            for e in evs {
                let te = e.t0 + e.px * ix as f64 + e.py * iy as f64;
                for (i, s) in tr.iter_mut().enumerate() {
                    *s += e.amp * ricker(25.0, i as f64 * dt - te);
                }
            }
        }
    }
    v
}

/// Adds Gaussian noise of standard deviation `sigma`.
pub fn with_noise(clean: &[f64], sigma: f64, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    clean.iter().map(|&c| c + sigma * rng.normal()).collect()
}
