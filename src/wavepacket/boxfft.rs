//! Orthonormal 1D/2D/3D FFTs of one box (axis 1 fastest), with the box's lattice phase.
//!
//! A box's coefficients are c[y] = L^(−½)·Σ_i u[i]·e^{+2πi(lo+i)·y/L}: the phase e^{2πi·lo·y/L}
//! makes a coefficient the packet of the box's true frequencies (lattice index lo + i), not of
//! the rectangle's local index. A shift δ (in grid steps, per axis) moves the grid: c[y] is
//! then the packet at y − δ, by the modulation rule (the values times e^{−2πi(lo+i)·δ/L}); a
//! tiled volume uses it to put every tile's boxes on one common grid (`tiles`).

use super::layout::WaveBox;
use crate::sample::Real;
use num_complex::Complex;
use rustfft::Fft;
use std::collections::HashMap;
use std::sync::Arc;

/// Forward and inverse plans for every length a layout's boxes use.
pub struct BoxFfts<T: Real> {
    plans: HashMap<usize, [Arc<dyn Fft<T>>; 2]>,
}

impl<T: Real> BoxFfts<T> {
    pub fn new(lengths: impl Iterator<Item = usize>) -> Self {
        let mut planner = T::fft_planner();
        let mut plans = HashMap::new();
        for n in lengths {
            plans
                .entry(n)
                .or_insert_with(|| [planner.forward(n), planner.inverse(n)]);
        }
        BoxFfts { plans }
    }

    /// In place over `u` of `shape`; `inverse` = e^{+}, else e^{−}. Unnormalised.
    pub fn transform(&self, u: &mut [Complex<T>], shape: [usize; 3], inverse: bool) {
        let [n1, n2, n3] = shape;
        let which = usize::from(inverse);
        let mut line = Vec::new();
        for (a, &n) in shape.iter().enumerate() {
            if n == 1 {
                continue;
            }
            let fft = &self.plans[&n][which];
            if a == 0 {
                for row in u.chunks_exact_mut(n1) {
                    fft.process(row);
                }
                continue;
            }
            let (stride, outer, inner) = if a == 1 {
                (n1, n3, n1)
            } else {
                (n1 * n2, 1, n1 * n2)
            };
            line.resize(n, Complex::new(T::zero(), T::zero()));
            for o in 0..outer {
                let base = o * n1 * n2;
                for i in 0..inner {
                    for (k, v) in line.iter_mut().enumerate() {
                        *v = u[base + i + k * stride];
                    }
                    fft.process(&mut line);
                    for (k, v) in line.iter().enumerate() {
                        u[base + i + k * stride] = *v;
                    }
                }
            }
        }
    }

    /// Windowed lattice values of box `bx` → its coefficients on the grid shifted by `shift`
    /// (in place).
    pub fn to_coefficients(&self, u: &mut [Complex<T>], bx: &WaveBox, shift: [f64; 3]) {
        apply_shift(u, bx.shape, bx.lo, shift, -1.0);
        self.transform(u, bx.shape, true);
        apply_phase(u, bx.shape, bx.lo, 1.0);
    }

    /// The adjoint of `to_coefficients` (in place).
    pub fn from_coefficients(&self, u: &mut [Complex<T>], bx: &WaveBox, shift: [f64; 3]) {
        apply_phase(u, bx.shape, bx.lo, -1.0);
        self.transform(u, bx.shape, false);
        apply_shift(u, bx.shape, bx.lo, shift, 1.0);
    }
}

/// u[i] ·= e^{sign·2πi·Σ_a (lo_a + i_a)·δ_a/L_a}; nothing when δ = 0.
fn apply_shift<T: Real>(
    u: &mut [Complex<T>],
    shape: [usize; 3],
    lo: [i64; 3],
    delta: [f64; 3],
    sign: f64,
) {
    if delta == [0.0; 3] {
        return;
    }
    let ph: [Vec<Complex<f64>>; 3] = std::array::from_fn(|a| {
        let n = shape[a];
        (0..n)
            .map(|i| {
                let turns = (lo[a] + i as i64) as f64 * delta[a] / n as f64;
                Complex::from_polar(1.0, sign * std::f64::consts::TAU * turns.fract())
            })
            .collect()
    });
    multiply_separable(u, shape, &ph, 1.0);
}

/// u[y] ·= scale·ph₁[y₁]·ph₂[y₂]·ph₃[y₃], in f64.
fn multiply_separable<T: Real>(
    u: &mut [Complex<T>],
    shape: [usize; 3],
    ph: &[Vec<Complex<f64>>; 3],
    scale: f64,
) {
    let [n1, n2, _] = shape;
    // The factor of axes 2 and 3 once per row, not per value.
    for (r, row) in u.chunks_exact_mut(n1).enumerate() {
        let outer = ph[1][r % n2] * ph[2][r / n2] * scale;
        for (v, p1) in row.iter_mut().zip(&ph[0]) {
            let z = Complex::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap()) * (p1 * outer);
            *v = Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap());
        }
    }
}

/// u[y] ·= L^(−½)·e^{sign·2πi·Σ_a lo_a·y_a/L_a}.
fn apply_phase<T: Real>(u: &mut [Complex<T>], shape: [usize; 3], lo: [i64; 3], sign: f64) {
    let total: usize = shape.iter().product();
    let scale = 1.0 / (total as f64).sqrt();
    let ph: [Vec<Complex<f64>>; 3] = std::array::from_fn(|a| {
        let n = shape[a];
        (0..n)
            .map(|y| {
                // lo·y mod n in integers keeps the angle exact for large lo.
                let k = (lo[a].rem_euclid(n as i64) * y as i64) % n as i64;
                Complex::from_polar(1.0, sign * std::f64::consts::TAU * k as f64 / n as f64)
            })
            .collect()
    });
    multiply_separable(u, shape, &ph, scale);
}
