//! Shared by the type-3 USFFT tests: random point and frequency sets (spread out or
//! clustered), the direct O(N·M) sum in f64, and a runner for a type-3 plan on any context.

#![allow(dead_code)]

use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use seisgpu::Error;
use std::sync::Arc;

/// xorshift in [0, 1).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    pub fn complex(&mut self) -> Complex<f64> {
        Complex::new(2.0 * self.next() - 1.0, 2.0 * self.next() - 1.0)
    }
}

#[derive(Clone, Debug)]
pub struct Case3 {
    pub dim: usize,
    pub m: usize,
    pub n: usize,
    pub sign: i32,
    pub tol: f64,
    pub nvec: usize,
    /// Points in centre ± half-width per dimension, frequencies likewise.
    pub x_centre: f64,
    pub x_half: f64,
    pub s_centre: f64,
    pub s_half: f64,
    /// Points (and frequencies) in a few tight clusters instead of uniform.
    pub clustered: bool,
}

pub struct Problem3 {
    pub x: [Vec<f64>; 3],
    pub s: [Vec<f64>; 3],
    pub c: Vec<Complex<f64>>,
}

/// `count` values in centre ± half: uniform, or in four clusters of 1 % of the span.
fn values(rng: &mut Rng, count: usize, centre: f64, half: f64, clustered: bool) -> Vec<f64> {
    let seeds: Vec<f64> = (0..4).map(|_| rng.uniform(-0.99, 0.99)).collect();
    (0..count)
        .map(|j| {
            let u = if clustered {
                seeds[j % 4] + rng.uniform(-0.01, 0.01)
            } else {
                rng.uniform(-1.0, 1.0)
            };
            centre + half * u
        })
        .collect()
}

/// The base case per dimension count: sizes and spans with X·S from ~30 (3D) to ~2000
/// (1D), tol 1e-6, one vector, spread-out points and frequencies centred at 0.
pub fn base(dim: usize) -> Case3 {
    let (m, n, x_half, s_half) = match dim {
        1 => (300, 280, 7.0, 300.0),
        2 => (300, 250, 3.0, 25.0),
        _ => (250, 200, 2.0, 12.0),
    };
    Case3 {
        dim,
        m,
        n,
        sign: 1,
        tol: 1e-6,
        nvec: 1,
        x_centre: 0.0,
        x_half,
        s_centre: 0.0,
        s_half,
        clustered: false,
    }
}

pub fn problem3(case: &Case3, seed: u64) -> Problem3 {
    let mut rng = Rng(seed | 1);
    let x = std::array::from_fn(|d| {
        if d < case.dim {
            values(&mut rng, case.m, case.x_centre, case.x_half, case.clustered)
        } else {
            Vec::new()
        }
    });
    let s = std::array::from_fn(|d| {
        if d < case.dim {
            values(&mut rng, case.n, case.s_centre, case.s_half, case.clustered)
        } else {
            Vec::new()
        }
    });
    let c = (0..case.m * case.nvec).map(|_| rng.complex()).collect();
    Problem3 { x, s, c }
}

/// f_k = Σ_j c_j e^{i·sign·s_k·x_j} per vector, in f64, from the values as the plan saw them.
pub fn direct3(
    case: &Case3,
    x: &[Vec<f64>; 3],
    s: &[Vec<f64>; 3],
    c: &[Complex<f64>],
) -> Vec<Complex<f64>> {
    let (m, n) = (case.m, case.n);
    let value = |v: usize, k: usize| -> Complex<f64> {
        (0..m)
            .map(|j| {
                let phase: f64 = (0..case.dim).map(|d| s[d][k] * x[d][j]).sum();
                c[v * m + j] * Complex::from_polar(1.0, case.sign as f64 * phase)
            })
            .sum()
    };
    (0..case.nvec)
        .flat_map(|v| (0..n).map(move |k| (v, k)))
        .map(|(v, k)| value(v, k))
        .collect()
}

pub fn rel_l2(a: &[Complex<f64>], b: &[Complex<f64>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// A plan's output in f64, and the points and frequencies as T saw them.
pub type Output3 = (Vec<Complex<f64>>, [Vec<f64>; 3], [Vec<f64>; 3]);

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&a| T::from_f64(a).unwrap()).collect()
}

fn back<T: Real>(v: &[T]) -> Vec<f64> {
    v.iter().map(|a| a.to_f64().unwrap()).collect()
}

/// The first `dim` arrays of `v`.
pub fn used<T>(v: &[Vec<T>], dim: usize) -> [Option<&[T]>; 3] {
    std::array::from_fn(|d| (d < dim).then_some(v[d].as_slice()))
}

/// Runs a type-3 plan in precision T on `ctx`.
pub fn run3<T: Real>(ctx: &Arc<Context>, case: &Case3, p: &Problem3) -> Result<Output3, Error> {
    let mut plan = UsfftPlan::<T>::new(
        ctx.clone(),
        UsfftSpec::new::<T>(
            TransformType::Type3,
            case.dim,
            [0; 3],
            case.sign,
            case.tol,
            case.nvec,
            UsfftOptions::default(),
        )?,
    )?;
    let xs: Vec<Vec<T>> = p.x.iter().map(|v| to_t(v)).collect();
    let ss: Vec<Vec<T>> = p.s.iter().map(|v| to_t(v)).collect();
    plan.set_points3(case.m, used(&xs, case.dim), case.n, used(&ss, case.dim))?;
    let mut c: Vec<Complex<T>> =
        p.c.iter()
            .map(|z| Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()))
            .collect();
    let mut f = vec![Complex::new(T::nan(), T::nan()); case.n * case.nvec];
    plan.execute(&mut c, &mut f)?;
    let out = f
        .iter()
        .map(|z| Complex::new(z.re.to_f64().unwrap(), z.im.to_f64().unwrap()))
        .collect();
    let seen = |v: &[Vec<T>]| -> [Vec<f64>; 3] { std::array::from_fn(|d| back(&v[d])) };
    Ok((out, seen(&xs), seen(&ss)))
}

/// The relative ℓ2 error of a type-3 plan in T on `ctx` against the direct sum.
pub fn error3<T: Real>(ctx: &Arc<Context>, case: &Case3, seed: u64) -> f64 {
    let p = problem3(case, seed);
    let (got, x, s) = run3::<T>(ctx, case, &p).unwrap();
    let want = direct3(case, &x, &s, &p.c);
    assert_eq!(got.len(), want.len());
    rel_l2(&got, &want)
}
