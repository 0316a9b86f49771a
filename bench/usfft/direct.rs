//! The accuracy reference: direct sums in f64 on a random subset of the output.

use crate::harness::random::uniform;
use num_complex::Complex;
use rayon::prelude::*;
use seisgpu::sample::Real;
use seisgpu::usfft::TransformType;

/// Relative ℓ2 error over `samples` random output entries against direct sums in f64
/// (`dim` dimensions of N modes; unused dimensions of `xs` are empty).
pub fn sampled_error<T: Real>(
    kind: TransformType,
    dim: usize,
    n: usize,
    xs: &[Vec<T>; 3],
    input: &[Complex<T>],
    output: &[Complex<T>],
    samples: usize,
) -> f64 {
    let m = xs[0].len();
    let nm = n.pow(dim as u32);
    let half = (n / 2) as i64;
    // Unused dimensions: one mode, k = 0, at coordinate 0.
    let nd = |d: usize| if d < dim { n } else { 1 };
    let coord = |d: usize, j: usize| {
        if d < dim {
            xs[d][j].to_f64().unwrap()
        } else {
            0.0
        }
    };
    let (mut num, mut den) = (0.0, 0.0);
    for s in 0..samples {
        let (got, want) = match kind {
            TransformType::Type1 => {
                let idx = (uniform(17, s) * nm as f64) as usize % nm;
                let k: [f64; 3] = std::array::from_fn(|d| {
                    let q = idx / n.pow(d as u32) % nd(d);
                    if d < dim {
                        (q as i64 - half) as f64
                    } else {
                        0.0
                    }
                });
                let want: Complex<f64> = (0..m)
                    .into_par_iter()
                    .map(|j| {
                        let ph: f64 = (0..3).map(|d| k[d] * coord(d, j)).sum();
                        let c = input[j];
                        Complex::new(c.re.to_f64().unwrap(), c.im.to_f64().unwrap())
                            * Complex::from_polar(1.0, ph)
                    })
                    .sum();
                (output[idx], want)
            }
            TransformType::Type2 => {
                let j = (uniform(19, s) * m as f64) as usize % m;
                // e^{i k x} per dimension, then the sum over modes row by row.
                let e: Vec<Vec<Complex<f64>>> = (0..3)
                    .map(|d| {
                        if d >= dim {
                            return vec![Complex::new(1.0, 0.0)];
                        }
                        (0..n)
                            .map(|q| {
                                Complex::from_polar(1.0, (q as i64 - half) as f64 * coord(d, j))
                            })
                            .collect()
                    })
                    .collect();
                let want: Complex<f64> = (0..nd(1) * nd(2))
                    .into_par_iter()
                    .map(|r| {
                        let (m2, m3) = (r % nd(1), r / nd(1));
                        let s = e[1][m2] * e[2][m3];
                        let row = &input[r * n..][..n];
                        row.iter()
                            .zip(&e[0])
                            .map(|(f, e1)| {
                                Complex::new(f.re.to_f64().unwrap(), f.im.to_f64().unwrap()) * e1
                            })
                            .sum::<Complex<f64>>()
                            * s
                    })
                    .sum();
                (output[j], want)
            }
            TransformType::Type3 => unreachable!("type 3 is sampled by `type3_error`"),
        };
        let got = Complex::new(got.re.to_f64().unwrap(), got.im.to_f64().unwrap());
        num += (got - want).norm_sqr();
        den += want.norm_sqr();
    }
    (num / den).sqrt()
}
