//! Shared by the EM-logging tests: problems, a brute-force misfit, contexts.
#![allow(dead_code)] // each test file uses part of it

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::emlog::grid::Axis;
use seisgpu::emlog::matrix::SensitivitySpec;
use seisgpu::emlog::synthetic::{reservoir, vikiz_like, with_noise};
use seisgpu::emlog::EmlogPlan;
use std::sync::Arc;

pub fn cpu() -> Arc<Context> {
    Context::new(BackendRequest::Cpu, 0).unwrap()
}

/// An owned problem (row-major A).
#[derive(Clone)]
pub struct Owned {
    pub n: usize,
    pub m: usize,
    pub a: Vec<f64>,
    pub sigma0: Vec<f64>,
    pub f0: Vec<f64>,
    pub f_exp: Vec<f64>,
    pub delta: Vec<f64>,
    pub searched: Vec<usize>,
}

impl Owned {
    pub fn spec(&self) -> SensitivitySpec<'_> {
        SensitivitySpec {
            n: self.n,
            m: self.m,
            a: &self.a,
            row_stride: self.m,
            col_stride: 1,
            sigma0: &self.sigma0,
            f0: &self.f0,
            f_exp: &self.f_exp,
            delta: &self.delta,
            searched: &self.searched,
        }
    }

    pub fn plan(&self, ctx: &Arc<Context>) -> EmlogPlan {
        EmlogPlan::new(ctx.clone(), &self.spec()).unwrap()
    }

    /// The weighted residuals of a model (values of the searched columns), straight from
    /// the definition: r_i = (f_exp − f₀ − A(σ − σ₀))_i / (f_exp_i δ_i).
    pub fn residuals(&self, x: &[f64]) -> Vec<f64> {
        let mut sigma = self.sigma0.clone();
        for (k, &c) in self.searched.iter().enumerate() {
            sigma[c] = x[k];
        }
        (0..self.n)
            .map(|i| {
                let f_syn = self.f0[i]
                    + (0..self.m)
                        .map(|j| self.a[i * self.m + j] * (sigma[j] - self.sigma0[j]))
                        .sum::<f64>();
                (self.f_exp[i] - f_syn) / (self.f_exp[i] * self.delta[i])
            })
            .collect()
    }

    /// F² (L2) of a model.
    pub fn f2(&self, x: &[f64]) -> f64 {
        self.residuals(x).iter().map(|r| r * r).sum::<f64>() / self.n as f64
    }
}

/// The VIKIZ-like log of `layers` reservoir layers, `depths` points, δ = `delta`,
/// noise of `noise`·δ, searching `searched`; σ₀ the truth, 3 % off on the searched columns.
pub fn vikiz(layers: usize, depths: usize, delta: f64, noise: f64, searched: Vec<usize>) -> Owned {
    let log = vikiz_like(
        &reservoir(layers),
        (0.25, 0.3),
        depths,
        -1.0,
        1.2 * layers as f64 + 1.0,
    );
    let sigma0: Vec<f64> = log
        .sigma
        .iter()
        .enumerate()
        .map(|(j, s)| {
            if searched.contains(&j) {
                s * (1.0 + 0.03 * ((j % 3) as f64 - 1.0))
            } else {
                *s
            }
        })
        .collect();
    let f0: Vec<f64> = (0..log.n)
        .map(|i| (0..log.m).map(|j| log.a[i * log.m + j] * sigma0[j]).sum())
        .collect();
    Owned {
        n: log.n,
        m: log.m,
        f_exp: with_noise(&log.f, noise * delta, 7),
        a: log.a,
        sigma0,
        f0,
        delta: vec![delta; log.n],
        searched,
    }
}

/// A linear axis of `count` values centred on `c` with half-span `h`.
pub fn around(c: f64, h: f64, count: usize) -> Axis {
    Axis::Linear {
        min: c - h,
        max: c + h,
        count,
    }
}

/// Every model of a grid (axis 0 fastest) through `f`.
pub fn for_each_model(values: &[Vec<f64>], mut f: impl FnMut(u64, &[f64])) {
    let total: usize = values.iter().map(|v| v.len()).product();
    let mut x = vec![0.0; values.len()];
    for idx in 0..total {
        let mut rest = idx;
        for (k, v) in values.iter().enumerate() {
            x[k] = v[rest % v.len()];
            rest /= v.len();
        }
        f(idx as u64, &x);
    }
}
