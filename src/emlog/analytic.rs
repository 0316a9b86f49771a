//! The closed-form answer of the linear problem, in f64 on the host: the least-squares
//! model σ*, the minimum misfit, the centred form of the misfit, the ellipsoid of
//! equivalent models and the SVD of Ã.
//!
//! Householder QR gives Ã = QR (R p × p, upper triangular), so that
//! Φ(x) = ‖d − Ãx‖² = Φ_min + ‖R(x − x*)‖² with R x* = Qᵀd: a sum of squares, free of the
//! cancellation of the expanded form c − 2bᵀx + xᵀGx. The region Φ ≤ Φ_thr is the
//! ellipsoid (x − x*)ᵀG(x − x*) ≤ Φ_thr − Φ_min, G = ÃᵀÃ = RᵀR; its extent along axis k
//! is x*_k ± √((Φ_thr − Φ_min)(G⁻¹)_kk) (the projection, not the slice).

use super::criterion::Criterion;
use super::matrix::Problem;
use crate::error::Result;

/// The centred form of the misfit.
#[derive(Clone, Debug)]
pub struct Centred {
    /// Measurements.
    pub n: usize,
    /// R, row-major, upper triangular (p × p).
    pub r: Vec<f64>,
    pub x_star: Vec<f64>,
    /// Φ_min = ‖d − Ãx*‖².
    pub phi_min: f64,
}

/// A column whose part outside the span of the columns before it is at most this fraction
/// of its own norm (the sine of its angle to that span) counts as dependent on them.
const RANK_TOL: f64 = 1e-12;

impl Centred {
    pub fn new(pb: &Problem) -> Result<Centred> {
        let (n, p) = (pb.n, pb.p());
        let mut a = pb.a_w.clone();
        let mut qtd = pb.d.clone();
        for k in 0..p {
            // Householder reflector zeroing column k below the diagonal. The reflections
            // before it kept the column's norm, and what is left below the diagonal is its
            // part outside the span of columns 0…k−1: compared with the column's own norm,
            // the test does not depend on how the parameters are scaled.
            let col = &a[k * n + k..(k + 1) * n];
            let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
            let own = pb.column(k).iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm <= RANK_TOL * own {
                return Err(crate::invalid!(
                    "searched column {k} is a combination of the ones before it (rank-deficient Ã: \
                     its part outside their span is {:.1e} of its norm, at most {RANK_TOL:e}): \
                     the data cannot tell these parameters apart; search fewer",
                    norm / own
                ));
            }
            let alpha = if col[0] > 0.0 { -norm } else { norm };
            let mut v: Vec<f64> = col.to_vec();
            v[0] -= alpha;
            let vv: f64 = v.iter().map(|x| x * x).sum();
            let apply = |x: &mut [f64]| {
                let s = 2.0 * v.iter().zip(x.iter()).map(|(a, b)| a * b).sum::<f64>() / vv;
                x.iter_mut().zip(&v).for_each(|(x, v)| *x -= s * v);
            };
            for j in k..p {
                apply(&mut a[j * n + k..(j + 1) * n]);
            }
            apply(&mut qtd[k..]);
        }
        let r: Vec<f64> = (0..p * p)
            .map(|e| {
                let (i, j) = (e / p, e % p);
                if j >= i {
                    a[j * n + i]
                } else {
                    0.0
                }
            })
            .collect();
        let mut x_star = vec![0.0; p];
        for i in (0..p).rev() {
            let s: f64 = (i + 1..p).map(|j| r[i * p + j] * x_star[j]).sum();
            x_star[i] = (qtd[i] - s) / r[i * p + i];
        }
        // Φ_min from the residual itself (no cancellation).
        let mut res = pb.d.clone();
        for (j, &x) in x_star.iter().enumerate() {
            res.iter_mut()
                .zip(pb.column(j))
                .for_each(|(r, a)| *r -= a * x);
        }
        let phi_min = res.iter().map(|v| v * v).sum();
        Ok(Centred {
            n,
            r,
            x_star,
            phi_min,
        })
    }

    /// Searched parameters (the length of x*).
    pub fn p(&self) -> usize {
        self.x_star.len()
    }

    /// Φ_thr of an L2 criterion: a model is equivalent when Φ ≤ Φ_thr.
    pub fn phi_threshold(&self, c: Criterion) -> f64 {
        let n = self.n as f64;
        match c {
            Criterion::FitWithinErrors => n,
            Criterion::MaxMisfit(l) => n * l * l,
            Criterion::DeltaChiSquare(d) => self.phi_min + n * d,
        }
    }

    /// R⁻¹ (upper triangular, row-major).
    fn r_inverse(&self) -> Vec<f64> {
        let p = self.p();
        let mut inv = vec![0.0; p * p];
        for c in 0..p {
            for i in (0..=c).rev() {
                let e = if i == c { 1.0 } else { 0.0 };
                let s: f64 = (i + 1..=c)
                    .map(|j| self.r[i * p + j] * inv[j * p + c])
                    .sum();
                inv[i * p + c] = (e - s) / self.r[i * p + i];
            }
        }
        inv
    }
}

/// The analytic region and the resolution of the parameters.
#[derive(Clone, Debug)]
pub struct AnalyticRegion {
    pub sigma_star: Vec<f64>,
    /// F at σ* (the least misfit of any real model).
    pub f_min: f64,
    /// Φ_thr of the criterion.
    pub phi_threshold: f64,
    /// The criterion cannot be met (F_min above its level).
    pub empty: bool,
    /// The ellipsoid's extent per parameter, x*_k ∓ half-width (NaN when empty).
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// Singular values of Ã, decreasing.
    pub singular_values: Vec<f64>,
    /// Right singular vectors, column c (for singular value c) at `[k·p + c]`.
    pub right_vectors: Vec<f64>,
}

impl AnalyticRegion {
    pub fn new(c: &Centred, criterion: Criterion) -> AnalyticRegion {
        let p = c.p();
        let phi_thr = c.phi_threshold(criterion);
        let room = phi_thr - c.phi_min;
        let empty = room < 0.0;
        let inv = c.r_inverse();
        let (mut lower, mut upper) = (vec![f64::NAN; p], vec![f64::NAN; p]);
        if !empty {
            for k in 0..p {
                let gkk: f64 = (0..p).map(|j| inv[k * p + j] * inv[k * p + j]).sum();
                let h = (room * gkk).sqrt();
                lower[k] = c.x_star[k] - h;
                upper[k] = c.x_star[k] + h;
            }
        }
        let (singular_values, right_vectors) = jacobi_svd(&c.r, p);
        AnalyticRegion {
            sigma_star: c.x_star.clone(),
            f_min: (c.phi_min / c.n as f64).sqrt(),
            phi_threshold: phi_thr,
            empty,
            lower,
            upper,
            singular_values,
            right_vectors,
        }
    }

    /// The extent clipped to the box [lo_k, hi_k]; None for a parameter whose extent misses
    /// the box (or when the region is empty).
    pub fn clipped(&self, lo: &[f64], hi: &[f64]) -> Vec<Option<(f64, f64)>> {
        (0..self.lower.len())
            .map(|k| {
                let (a, b) = (self.lower[k].max(lo[k]), self.upper[k].min(hi[k]));
                (!self.empty && a <= b).then_some((a, b))
            })
            .collect()
    }
}

/// Singular values (decreasing) and right singular vectors of the p × p row-major matrix
/// `m`, by one-sided Jacobi rotations of its columns (which converge to U·Σ while the
/// same rotations of the identity give V). Those of Ã = QR are R's.
pub fn jacobi_svd(m: &[f64], p: usize) -> (Vec<f64>, Vec<f64>) {
    let mut w = m.to_vec();
    let mut v: Vec<f64> = (0..p * p).map(|e| (e / p == e % p) as u8 as f64).collect();
    let col_dot =
        |w: &[f64], a: usize, b: usize| (0..p).map(|i| w[i * p + a] * w[i * p + b]).sum::<f64>();
    for _sweep in 0..60 {
        let mut rotated = false;
        for a in 0..p {
            for b in a + 1..p {
                let (alpha, beta, gamma) =
                    (col_dot(&w, a, a), col_dot(&w, b, b), col_dot(&w, a, b));
                if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let cs = 1.0 / (1.0 + t * t).sqrt();
                let sn = cs * t;
                for x in [&mut w, &mut v] {
                    for i in 0..p {
                        let (xa, xb) = (x[i * p + a], x[i * p + b]);
                        x[i * p + a] = cs * xa - sn * xb;
                        x[i * p + b] = sn * xa + cs * xb;
                    }
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let sv: Vec<f64> = (0..p).map(|c| col_dot(&w, c, c).sqrt()).collect();
    let mut order: Vec<usize> = (0..p).collect();
    order.sort_by(|&a, &b| sv[b].total_cmp(&sv[a]));
    let values = order.iter().map(|&c| sv[c]).collect();
    let mut vectors = vec![0.0; p * p];
    for (c, &o) in order.iter().enumerate() {
        for k in 0..p {
            vectors[k * p + c] = v[k * p + o];
        }
    }
    (values, vectors)
}
