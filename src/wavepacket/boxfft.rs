//! Orthonormal 1D/2D/3D FFTs of one box (axis 1 fastest), with the box's lattice phase.
//!
//! A box's coefficients are c[y] = L^(−½)·Σ_i u[i]·e^{+2πi(lo+i)·y/L}: the phase e^{2πi·lo·y/L}
//! makes a coefficient the packet of the box's true frequencies (lattice index lo + i), not of
//! the rectangle's local index.

use crate::usfft::Real;
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::collections::HashMap;
use std::sync::Arc;

/// Forward and inverse plans for every length a layout's boxes use.
pub struct BoxFfts<T: Real> {
    plans: HashMap<usize, [Arc<dyn Fft<T>>; 2]>,
}

impl<T: Real> BoxFfts<T> {
    pub fn new(lengths: impl Iterator<Item = usize>) -> Self {
        let mut planner = FftPlanner::<T>::new();
        let mut plans = HashMap::new();
        for n in lengths {
            plans
                .entry(n)
                .or_insert_with(|| [planner.plan_fft_forward(n), planner.plan_fft_inverse(n)]);
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

    /// Windowed lattice values → coefficients (in place).
    pub fn to_coefficients(&self, u: &mut [Complex<T>], shape: [usize; 3], lo: [i64; 3]) {
        self.transform(u, shape, true);
        apply_phase(u, shape, lo, 1.0);
    }

    /// The adjoint of `to_coefficients` (in place).
    pub fn from_coefficients(&self, u: &mut [Complex<T>], shape: [usize; 3], lo: [i64; 3]) {
        apply_phase(u, shape, lo, -1.0);
        self.transform(u, shape, false);
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
    let [n1, n2, _] = shape;
    for (idx, v) in u.iter_mut().enumerate() {
        let (y1, y2, y3) = (idx % n1, (idx / n1) % n2, idx / (n1 * n2));
        let p = ph[0][y1] * ph[1][y2] * ph[2][y3] * scale;
        let z = Complex::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap()) * p;
        *v = Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap());
    }
}
