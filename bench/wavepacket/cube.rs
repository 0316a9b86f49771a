//! The test cube: a synthetic seismic volume, deterministic for each N. Axis 1 (fastest) is
//! time or depth; about N/8 reflectors, each a Ricker wavelet (peak 0.1 cycles/sample)
//! along a dipping, curved, gently undulating surface, random amplitudes and polarities,
//! offset by a fault across the cube; plus 5 % uniform noise (of the largest reflection).

use crate::harness::random::uniform;
use rayon::prelude::*;
use std::f64::consts::{PI, TAU};

/// Ricker peak frequency, cycles per sample.
const PEAK: f64 = 0.1;
/// The fault's throw, as a fraction of N.
const THROW: f64 = 0.03;

struct Reflector {
    depth: f64,
    dip: [f64; 2],
    bend: f64,
    wave: f64,
    k: [f64; 2],
    phase: f64,
    amp: f64,
}

fn ricker(s: f64) -> f64 {
    let a = (PI * PEAK * s).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The N × N × N cube, axis 1 fastest.
pub fn seismic_cube(n: usize) -> Vec<f32> {
    let count = (n / 8).max(3);
    let reflectors: Vec<Reflector> = (0..count)
        .map(|j| {
            let r = |m: usize| uniform(0x5e15, 8 * j + m);
            let sign = if r(6) < 0.5 { -1.0 } else { 1.0 };
            Reflector {
                depth: 0.05 + 0.9 * (j as f64 + r(0)) / count as f64,
                dip: [0.6 * (r(1) - 0.5), 0.6 * (r(2) - 0.5)],
                bend: 0.4 * (r(3) - 0.5),
                wave: 0.015 * r(4),
                k: [1.0 + 2.0 * r(5), 1.0 + 2.0 * r(7)],
                phase: TAU * r(4),
                amp: sign * (0.3 + 0.7 * r(7)),
            }
        })
        .collect();
    // Beyond this many samples from its centre a Ricker wavelet is below e^-20.
    let half = 20f64.sqrt() / (PI * PEAK);
    let mut v = vec![0f32; n * n * n];
    v.par_chunks_mut(n).enumerate().for_each(|(t, trace)| {
        let x = (t % n) as f64 / n as f64 - 0.5;
        let y = (t / n) as f64 / n as f64 - 0.5;
        let fault = if x + 0.4 * y > 0.1 { THROW } else { 0.0 };
        for r in &reflectors {
            let u = r.depth
                + r.dip[0] * x
                + r.dip[1] * y
                + r.bend * (x * x + y * y)
                + r.wave * (TAU * (r.k[0] * x + r.k[1] * y) + r.phase).sin()
                + fault;
            let z = u * n as f64;
            let lo = (z - half).ceil().max(0.0) as usize;
            let hi = ((z + half).floor().min(n as f64 - 1.0)).max(-1.0);
            if hi < 0.0 {
                continue;
            }
            for (i, s) in trace.iter_mut().enumerate().take(hi as usize + 1).skip(lo) {
                *s += (r.amp * ricker(i as f64 - z)) as f32;
            }
        }
        for (i, s) in trace.iter_mut().enumerate() {
            *s += (0.1 * (uniform(0x0015e, t * n + i) - 0.5)) as f32;
        }
    });
    v
}

/// N samples of L × L traces (axis 1 fastest): the first N samples of each of the first L ×
/// L traces of the cube of side max(N, L); the cube itself when L = N.
pub fn seismic_volume(n: usize, lateral: usize) -> Vec<f32> {
    let side = n.max(lateral);
    let big = seismic_cube(side);
    if side == n && lateral == n {
        return big;
    }
    big.chunks_exact(side)
        .enumerate()
        .filter(|(t, _)| t % side < lateral && t / side < lateral)
        .flat_map(|(_, trace)| trace[..n].to_vec())
        .collect()
}
