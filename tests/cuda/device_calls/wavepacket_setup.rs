//! What the wave-packet device tests share: the section's shape and data, a layout of it on
//! the test's context, and comparisons to rounding.

use super::*;
use seisgpu::ffi::wavepacket::*;

pub type L = sg_wavepacket_layout;

pub const SHAPE: [usize; 2] = [64, 48];

pub fn ok(s: sg_status) {
    assert_eq!(s, SG_OK, "{}", message());
}

/// A layout of `SHAPE` (12 directions) in `precision` with the USFFT's `tolerance`.
pub fn layout(g: &Gpu, precision: i32, tolerance: f64) -> *mut L {
    let mut l = std::ptr::null_mut();
    ok(sg_wavepacket_layout_create(
        g.ctx,
        2,
        SHAPE.as_ptr(),
        12,
        0,
        0.0,
        0.0,
        tolerance,
        precision,
        &mut l,
    ));
    l
}

/// Dipping events plus `texture(t, x)` (called in sample order), `shape` n1 × n2 (axis 1
/// fastest).
pub fn section<T>(
    shape: [usize; 2],
    from: fn(f64) -> T,
    mut texture: impl FnMut(f64, f64) -> f64,
) -> Vec<T> {
    let [n1, n2] = shape;
    (0..n1 * n2)
        .map(|i| {
            let (t, x) = ((i % n1) as f64, (i / n1) as f64);
            let a = 0.3 * (t - 20.0 - 0.4 * x);
            from((-a * a).exp() * (1.0 - 2.0 * a * a) + texture(t, x))
        })
        .collect()
}

/// A smooth texture: 0.05 sin(0.7 t + 1.3 x).
pub fn smooth(t: f64, x: f64) -> f64 {
    0.05 * (0.7 * t + 1.3 * x).sin()
}

/// Uniform noise in ±0.1 from a fixed seed, one value per call.
pub fn noise() -> impl FnMut(f64, f64) -> f64 {
    let mut state = 11u64;
    move |_, _| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        0.2 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    }
}

/// The largest magnitude of interleaved complex `c`.
pub fn largest<T: Copy + Into<f64>>(c: &[T]) -> f64 {
    c.chunks(2)
        .map(|z| z[0].into().hypot(z[1].into()))
        .fold(0.0, f64::max)
}

/// Runs `call` five times (twice in the sanitizer's reduced mode) and checks each output
/// lies within `tol` of the first (`assert_close`): for calls whose adjoints sum with
/// atomic additions, in an order that follows the threads' timing.
pub fn five_times_close(what: &str, tol: f64, mut call: impl FnMut() -> Vec<f64>) -> Vec<f64> {
    let first = call();
    let runs = if crate::cuda_common::sanitize_small() {
        2
    } else {
        5
    };
    for run in 1..runs {
        assert_close(&format!("{what}: run {run}"), &call(), &first, tol);
    }
    first
}
