//! Shared by the USFFT tests: random problems, direct O(N·M) sums in f64, relative ℓ2 errors,
//! and a runner for a plan on any context.

#![allow(dead_code)]

use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{frequency, TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use seisgpu::Error;
use std::f64::consts::PI;
use std::sync::Arc;

/// Type 3 has its runner and direct sum in usfft3_support.
const TYPE3: &str = "type 3 cases run through usfft3_support";

/// `e ≤ limit`, false for NaN.
pub fn within(e: f64, limit: f64) -> bool {
    e <= limit
}

/// A plan's output in f64 and the coordinates as the plan saw them (rounded to T).
pub type Output = (Vec<Complex<f64>>, [Vec<f64>; 3]);

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [−π, π).
    pub fn angle(&mut self) -> f64 {
        (2.0 * self.next() - 1.0) * PI
    }
    pub fn complex(&mut self) -> Complex<f64> {
        Complex::new(2.0 * self.next() - 1.0, 2.0 * self.next() - 1.0)
    }
}

#[derive(Clone)]
pub struct Case {
    pub kind: TransformType,
    pub dim: usize,
    pub modes: [usize; 3],
    pub m: usize,
    pub sign: i32,
    pub tol: f64,
    pub nvec: usize,
    pub options: UsfftOptions,
}

/// Points (f64, as the plan will see them after conversion to T).
pub struct Problem {
    pub coords: [Vec<f64>; 3],
    pub input: Vec<Complex<f64>>,
}

pub fn problem(case: &Case, rng: &mut Rng) -> Problem {
    let coords = std::array::from_fn(|d| {
        if d < case.dim {
            (0..case.m).map(|_| rng.angle()).collect()
        } else {
            Vec::new()
        }
    });
    let n_in = match case.kind {
        TransformType::Type1 => case.m,
        TransformType::Type2 => case.modes[..case.dim].iter().product(),
        TransformType::Type3 => panic!("{TYPE3}"),
    } * case.nvec;
    Problem {
        coords,
        input: (0..n_in).map(|_| rng.complex()).collect(),
    }
}

/// The exact transform by direct summation, in f64, from the coordinates as rounded to T.
pub fn direct(case: &Case, coords: &[Vec<f64>; 3], input: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let n: Vec<usize> = (0..3)
        .map(|d| if d < case.dim { case.modes[d] } else { 1 })
        .collect();
    let nm = n[0] * n[1] * n[2];
    let m = case.m;
    let order = case.options.mode_order;
    let phase = |j: usize, idx: usize| -> f64 {
        let mm = [idx % n[0], (idx / n[0]) % n[1], idx / (n[0] * n[1])];
        (0..case.dim)
            .map(|d| frequency(mm[d], n[d], order) as f64 * coords[d][j])
            .sum::<f64>()
            * case.sign as f64
    };
    let mut out = Vec::new();
    for v in 0..case.nvec {
        match case.kind {
            TransformType::Type1 => {
                for k in 0..nm {
                    let s: Complex<f64> = (0..m)
                        .map(|j| input[v * m + j] * Complex::from_polar(1.0, phase(j, k)))
                        .sum();
                    out.push(s);
                }
            }
            TransformType::Type3 => panic!("{TYPE3}"),
            TransformType::Type2 => {
                for j in 0..m {
                    let s: Complex<f64> = (0..nm)
                        .map(|k| input[v * nm + k] * Complex::from_polar(1.0, phase(j, k)))
                        .sum();
                    out.push(s);
                }
            }
        }
    }
    out
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

/// The case's plan in precision T on `ctx`.
pub fn plan_for<T: Real>(ctx: &Arc<Context>, case: &Case) -> Result<UsfftPlan<T>, Error> {
    let spec = UsfftSpec::new::<T>(
        case.kind,
        case.dim,
        case.modes,
        case.sign,
        case.tol,
        case.nvec,
        case.options,
    )?;
    UsfftPlan::new(ctx.clone(), spec)
}

/// Runs the plan in precision T; returns the output in f64 and the coordinates as T saw them.
pub fn run<T: Real>(ctx: &Arc<Context>, case: &Case, p: &Problem) -> Result<Output, Error> {
    let mut plan = plan_for::<T>(ctx, case)?;
    let xs: Vec<Vec<T>> = (0..3)
        .map(|d| {
            p.coords[d]
                .iter()
                .map(|&x| T::from_f64(x).unwrap())
                .collect()
        })
        .collect();
    let opt = |d: usize| (d < case.dim).then_some(xs[d].as_slice());
    plan.set_points(case.m, &xs[0], opt(1), opt(2))?;
    let nm: usize = case.modes[..case.dim].iter().product();
    let to_t = |v: &[Complex<f64>]| -> Vec<Complex<T>> {
        v.iter()
            .map(|z| Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()))
            .collect()
    };
    let nan = Complex::new(T::nan(), T::nan());
    let (mut c, mut f) = match case.kind {
        TransformType::Type1 => (to_t(&p.input), vec![nan; nm * case.nvec]),
        TransformType::Type2 => (vec![nan; case.m * case.nvec], to_t(&p.input)),
        TransformType::Type3 => panic!("{TYPE3}"),
    };
    plan.execute(&mut c, &mut f)?;
    let out = match case.kind {
        TransformType::Type1 => f,
        TransformType::Type2 => c,
        TransformType::Type3 => panic!("{TYPE3}"),
    };
    let seen = std::array::from_fn(|d| xs[d].iter().map(|x| x.to_f64().unwrap()).collect());
    Ok((
        out.iter()
            .map(|z| Complex::new(z.re.to_f64().unwrap(), z.im.to_f64().unwrap()))
            .collect(),
        seen,
    ))
}

pub fn error_of<T: Real>(ctx: &Arc<Context>, case: &Case, seed: u64) -> f64 {
    let mut rng = Rng(seed | 1);
    let p = problem(case, &mut rng);
    let (got, seen) = run::<T>(ctx, case, &p).unwrap();
    let want = direct(case, &seen, &p.input);
    assert_eq!(got.len(), want.len());
    rel_l2(&got, &want)
}

/// The clustered-points case of `dim` dimensions: M = 6000 points, two vectors, modes
/// enough that 1 % of the period spans several kernel widths of the fine grid.
pub fn clustered_case(kind: TransformType, dim: usize, tol: f64) -> Case {
    Case {
        kind,
        dim,
        modes: [[300, 1, 1], [40, 30, 1], [16, 12, 10]][dim - 1],
        m: 6000,
        sign: 1,
        tol,
        nvec: 2,
        options: UsfftOptions::default(),
    }
}

/// A problem whose points all lie in 1 % of the periodic cube (a sub-cube of side
/// 0.01^(1/dim)·2π, straddling the −π/π seam): every point falls in a few bins, the case load
/// balancing must handle.
pub fn clustered(case: &Case, rng: &mut Rng) -> Problem {
    let mut p = problem(case, rng);
    let side = 0.01f64.powf(1.0 / case.dim as f64) * std::f64::consts::TAU;
    for c in p.coords.iter_mut().take(case.dim) {
        for x in c.iter_mut() {
            // rng.angle() is uniform in [−π, π): shrink it around π (the seam).
            *x = std::f64::consts::PI + (*x / std::f64::consts::TAU) * side;
        }
    }
    p
}
