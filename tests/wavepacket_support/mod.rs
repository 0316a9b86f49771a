//! Shared helpers of the wave-packet tests.
#![allow(dead_code)]

use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use std::sync::Arc;

pub fn cpu() -> Arc<Context> {
    Context::new(BackendRequest::Cpu, 0).unwrap()
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
