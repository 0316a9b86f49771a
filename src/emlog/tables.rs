//! The per-axis tables of the fast mode, shared by the CPU and the GPU so that both
//! compute the same f64 quantity, operation for operation (the GPU with rounding
//! intrinsics that forbid fused multiply-adds): their decisions agree bit for bit.
//!
//! With u = R(x − x*) and R upper triangular, axis 0 only moves u₀. For a row (the
//! values of axes 1…p−1 fixed) u_i = Σ_{j=p−1…1} T_j[i] (summed in that order, from 0),
//! base = Φ_min + u₁² + … + u²_{p−1} (in that order), and each model of the row costs
//! t = u₀ + w[i₀], Φ = base + t·t.

use super::analytic::Centred;
use super::grid::Grid;

pub struct FastTables {
    pub p: usize,
    /// w[i₀] = R₀₀(v₀[i₀] − x*₀).
    pub w: Vec<f64>,
    /// Axis j ≥ 1: entry `offset[j] + idx·p + i` = R_ij (v_j[idx] − x*_j) (i ≤ j; 0 above).
    pub t: Vec<f64>,
    pub offset: Vec<usize>,
    pub phi_min: f64,
}

impl FastTables {
    pub fn new(c: &Centred, g: &Grid) -> FastTables {
        let p = c.p();
        let w = g.values[0]
            .iter()
            .map(|&v| c.r[0] * (v - c.x_star[0]))
            .collect();
        let mut t = Vec::new();
        let mut offset = vec![0; p];
        for (j, off) in offset.iter_mut().enumerate().skip(1) {
            *off = t.len();
            for &v in &g.values[j] {
                let dv = v - c.x_star[j];
                t.extend((0..p).map(|i| if i <= j { c.r[i * p + j] * dv } else { 0.0 }));
            }
        }
        FastTables {
            p,
            w,
            t,
            offset,
            phi_min: c.phi_min,
        }
    }

    /// The contribution of axis j at index idx.
    pub fn column(&self, j: usize, idx: usize) -> &[f64] {
        let o = self.offset[j] + idx * self.p;
        &self.t[o..o + self.p]
    }

    /// base from u (the row's vector).
    pub fn base(&self, u: &[f64]) -> f64 {
        let mut b = self.phi_min;
        for &x in &u[1..] {
            b += x * x;
        }
        b
    }
}
