//! Type-3 rows: M points uniform in [−π, π)^3 and N = M frequencies uniform in [−S, S)^3
//! with S = M^{1/3}/2 (the frequencies a type 1 of M^{1/3} modes per dimension would
//! cover, so X·S = π·S), set-points timed once, execute the median of the reps after one
//! untimed call, the error against direct sums at `samples` random frequencies.

use crate::config::{Config, Mode};
use crate::harness::cpu_threads;
use crate::harness::random::uniform;
use crate::harness::report::thousands;
use crate::harness::timing::{measure, ms_since, Measured, Reps, Sample};
use crate::rows::{On, Row};
use num_complex::Complex;
use rayon::prelude::*;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use std::sync::Arc;
use std::time::Instant;

/// The 3D type-3 rows of M = N = `m` in precision T at `tol`, on the CPU and the GPU
/// (host-to-host; type 3 has no device-array execute).
pub fn run_type3<T: Real>(cfg: &Config, on: On, m: usize, tol: f64, rows: &mut Vec<Row>) {
    let half_s = 0.5 * (m as f64).cbrt();
    let x: [Vec<T>; 3] = std::array::from_fn(|d| values(d as u64 + 1, m, std::f64::consts::PI));
    let s: [Vec<T>; 3] = std::array::from_fn(|d| values(d as u64 + 21, m, half_s));
    let c: Vec<Complex<T>> = (0..m)
        .into_par_iter()
        .map(|i| {
            let v = |k: u64| T::from_f64(2.0 * uniform(k, i) - 1.0).unwrap();
            Complex::new(v(11), v(13))
        })
        .collect();
    let prec = std::any::type_name::<T>();
    let name = format!(
        "3D type 3 M=N={} S={half_s:.0} {prec} prolate tol {tol:e}",
        thousands(m)
    );
    for &mode in &cfg.modes {
        let ctx = match (mode, on.gpu) {
            (Mode::Cpu, _) if m > cfg.max_cpu_points => continue,
            (Mode::Cpu, _) => on.cpu.clone(),
            (Mode::GpuHost, Some(g)) => g.ctx.clone(),
            _ => continue,
        };
        let mut row = Row {
            case: name.clone(),
            mode: mode.label(cpu_threads(on.cpu)),
            dim: 3,
            kind: TransformType::Type3,
            prec,
            tol,
            clustered: false,
            n: m,
            m,
            set_ms: f64::NAN,
            exec_ms: f64::NAN,
            err: f64::NAN,
            seed: None,
            notes: String::new(),
        };
        if let Err(e) = time(cfg, &ctx, tol, (&x, &s, &c), &mut row) {
            row.notes = format!("error: {e}");
        }
        eprintln!(
            "{} | {} | set {:.1} ms | exec {:.2} ms | err {:.2e} {}",
            row.case, row.mode, row.set_ms, row.exec_ms, row.err, row.notes
        );
        rows.push(row);
    }
}

/// `m` values uniform in ±half (stream `key`).
fn values<T: Real>(key: u64, m: usize, half: f64) -> Vec<T> {
    (0..m)
        .into_par_iter()
        .map(|j| T::from_f64((2.0 * uniform(key, j) - 1.0) * half).unwrap())
        .collect()
}

type Sets<'a, T> = (&'a [Vec<T>; 3], &'a [Vec<T>; 3], &'a [Complex<T>]);

fn time<T: Real>(
    cfg: &Config,
    ctx: &Arc<Context>,
    tol: f64,
    (x, s, c): Sets<'_, T>,
    row: &mut Row,
) -> Result<(), String> {
    let err = |e: seisgpu::Error| e.to_string();
    let opts = UsfftOptions::default();
    let mut plan = UsfftSpec::new::<T>(TransformType::Type3, 3, [0; 3], 1, tol, 1, opts)
        .and_then(|s| UsfftPlan::<T>::new(ctx.clone(), s))
        .map_err(err)?;
    let (m, n) = (c.len(), s[0].len());
    let t0 = Instant::now();
    plan.set_points3(m, all(x), n, all(s)).map_err(err)?;
    row.set_ms = ms_since(t0);
    let mut cin = c.to_vec();
    let mut out = vec![Complex::new(T::zero(), T::zero()); n];
    let timed: Measured<()> = measure(Reps::fixed(1, cfg.reps), |_| {
        let t = Instant::now();
        plan.execute(&mut cin, &mut out).map_err(err)?;
        Ok((Sample::since(t), None))
    })?;
    row.exec_ms = timed.median_ms;
    row.notes = format!("w={}", plan.spec().kernel.width);
    row.err = sampled_error(x, s, c, &out, cfg.samples);
    Ok(())
}

/// The three arrays of a 3D set.
fn all<T>(v: &[Vec<T>; 3]) -> [Option<&[T]>; 3] {
    std::array::from_fn(|d| Some(v[d].as_slice()))
}

/// Relative ℓ2 error at `samples` random frequencies against direct sums in f64.
fn sampled_error<T: Real>(
    x: &[Vec<T>; 3],
    s: &[Vec<T>; 3],
    c: &[Complex<T>],
    out: &[Complex<T>],
    samples: usize,
) -> f64 {
    let f = |v: T| v.to_f64().unwrap();
    let (mut num, mut den) = (0.0, 0.0);
    for q in 0..samples {
        let k = (uniform(31, q) * out.len() as f64) as usize % out.len();
        let want: Complex<f64> = (0..c.len())
            .into_par_iter()
            .map(|j| {
                let ph: f64 = (0..3).map(|d| f(s[d][k]) * f(x[d][j])).sum();
                Complex::new(f(c[j].re), f(c[j].im)) * Complex::from_polar(1.0, ph)
            })
            .sum();
        let got = Complex::new(f(out[k].re), f(out[k].im));
        num += (got - want).norm_sqr();
        den += want.norm_sqr();
    }
    (num / den).sqrt()
}
