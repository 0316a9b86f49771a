//! How far one output is from a reference.

use rayon::prelude::*;

/// max |a − b| / max |b| (max |a − b| where b is all zeros); ∞ where `a` holds a
/// non-finite value or the lengths differ.
pub fn max_rel_err(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let (num, den) = a
        .par_iter()
        .zip(b.par_iter())
        .map(|(&x, &y)| (abs_diff(x as f64, y as f64), (y as f64).abs()))
        .reduce(|| (0.0, 0.0), |p, q| (p.0.max(q.0), p.1.max(q.1)));
    ratio(num, den)
}

/// The same measure in f64.
pub fn max_rel_err_f64(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let (num, den) = a.iter().zip(b).fold((0.0f64, 0.0f64), |(n, d), (&x, &y)| {
        (n.max(abs_diff(x, y)), d.max(y.abs()))
    });
    ratio(num, den)
}

/// ‖a − b‖₂ / ‖b‖₂.
pub fn rel_rms(a: &[f32], b: &[f32]) -> f64 {
    let (d, r) = a.iter().zip(b).fold((0.0f64, 0.0f64), |(d, r), (&x, &y)| {
        (d + (x as f64 - y as f64).powi(2), r + (y as f64).powi(2))
    });
    (d / r).sqrt()
}

fn abs_diff(x: f64, y: f64) -> f64 {
    if x.is_finite() {
        (x - y).abs()
    } else {
        f64::INFINITY
    }
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        num
    }
}
