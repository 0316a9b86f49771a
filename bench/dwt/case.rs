//! A case (T traces of N samples) and its input: a deterministic noisy signal.

use crate::harness::random::{splitmix64, unit};
use crate::harness::report::thousands;
use rayon::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub traces: usize,
    pub n: usize,
}

impl Case {
    pub fn single(log2: u32) -> Case {
        Case {
            traces: 1,
            n: 1 << log2,
        }
    }

    pub fn total(&self) -> usize {
        self.traces * self.n
    }

    pub fn label(&self) -> String {
        if self.traces == 1 {
            format!("1 × 2^{}", self.n.trailing_zeros())
        } else {
            format!("{} × {}", thousands(self.traces), thousands(self.n))
        }
    }

    /// `K` (one signal of 2^K samples) or `TxN`.
    pub fn parse(s: &str) -> Result<Case, String> {
        let bad = || format!("--cases: {s:?} is neither K (2^K samples) nor TxN");
        let case = match s.split_once(['x', 'X', '*']) {
            Some((t, n)) => Case {
                traces: t.trim().replace('_', "").parse().map_err(|_| bad())?,
                n: n.trim().replace('_', "").parse().map_err(|_| bad())?,
            },
            None => {
                let k: u32 = s
                    .trim()
                    .trim_start_matches("2^")
                    .parse()
                    .map_err(|_| bad())?;
                if !(1..=30).contains(&k) {
                    return Err(format!("--cases: 2^{k} is outside 2^1..2^30"));
                }
                Case::single(k)
            }
        };
        if case.traces == 0 || case.n < 2 || !case.n.is_power_of_two() {
            return Err(format!(
                "--cases: {s:?} needs ≥ 1 trace of a power-of-two length ≥ 2"
            ));
        }
        Ok(case)
    }

    /// Sines, a chirp, blocks and Gaussian noise (σ = 0.3), the same on every run.
    pub fn input(&self) -> Vec<f32> {
        const CHUNK: usize = 1 << 14;
        let n = self.n;
        let mut v = vec![0.0f32; self.total()];
        v.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
            let mut state = 0x5EED_0000_0000_0000u64 ^ c as u64;
            let mut spare: Option<f64> = None;
            // Box–Muller, both values used.
            let mut normal = || {
                if let Some(z) = spare.take() {
                    return z;
                }
                let u1 = unit(splitmix64(&mut state)) + 1.0 / (1u64 << 53) as f64;
                let u2 = unit(splitmix64(&mut state));
                let r = (-2.0 * u1.ln()).sqrt();
                let (s, co) = (std::f64::consts::TAU * u2).sin_cos();
                spare = Some(r * s);
                r * co
            };
            for (i, o) in out.iter_mut().enumerate() {
                let g = c * CHUNK + i;
                let (t, s) = ((g / n) as f64, (g % n) as f64);
                let phase = 0.37 * t;
                let u = s / n as f64;
                let clean = 0.8 * (std::f64::consts::TAU * s / 97.3 + phase).sin()
                    + 0.5 * (std::f64::consts::TAU * s / 23.1).sin()
                    + 0.6 * (std::f64::consts::TAU * (8.0 + 40.0 * u) * u + phase).sin()
                    + if ((g % n) / 4096 + g / n) % 3 == 0 {
                        1.0
                    } else {
                        0.0
                    };
                *o = (clean + 0.3 * normal()) as f32;
            }
        });
        v
    }
}
