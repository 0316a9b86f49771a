//! The sensitivity-matrix problem: the caller's A, σ₀, f₀, f_exp, δ and searched columns,
//! validated and reduced to the weighted least-squares form the search works on.
//!
//! With f_syn = f₀ + A(σ − σ₀) and the unsearched columns fixed at σ₀, the weighted
//! residual of a model x (the searched conductivities) is d − Ãx, where
//! Ã_ij = A_i,s(j) / (f_exp_i δ_i) and d_i = (f_exp_i − f₀_i + Σ_j A_i,s(j) σ₀_s(j)) / (f_exp_i δ_i),
//! so that F² = ‖d − Ãx‖² / n (the seed's misfit).

use crate::error::{Error, Result};

/// The caller's description of the linearised forward problem. Element (i, j) of A
/// (measurement i, column j) is `a[i·row_stride + j·col_stride]`: row-major has
/// `(row_stride, col_stride) = (m, 1)`, column-major `(1, n)`.
#[derive(Clone, Copy, Debug)]
pub struct SensitivitySpec<'a> {
    pub n: usize,
    pub m: usize,
    pub a: &'a [f64],
    pub row_stride: usize,
    pub col_stride: usize,
    pub sigma0: &'a [f64],
    pub f0: &'a [f64],
    pub f_exp: &'a [f64],
    pub delta: &'a [f64],
    /// The searched columns, in the order of the grid's axes (axis 0 varies fastest).
    pub searched: &'a [usize],
}

/// The weighted problem over the searched columns only.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Measurements.
    pub n: usize,
    /// Ã, column-major: column j is `a_w[j·n .. (j+1)·n]`.
    pub a_w: Vec<f64>,
    /// The weighted data d.
    pub d: Vec<f64>,
    /// σ₀ of the searched columns (the reference model): one per searched parameter.
    pub sigma0: Vec<f64>,
}

/// Most parameters a search may have (a grid index is a u64 and every axis has ≥ 1 value;
/// the limit keeps per-row state on the stack of a GPU thread).
pub const MAX_PARAMETERS: usize = 16;

pub fn check_finite(v: &[f64], name: &str) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::NonFinite(format!(
            "{name}[{i}] is {}; expected a finite value; nothing was written",
            v[i]
        ))),
    }
}

/// What A's layout and the searched columns must satisfy before any value is read.
#[derive(Clone, Copy, Debug)]
pub struct Shape<'a> {
    pub n: usize,
    pub m: usize,
    pub row_stride: usize,
    pub col_stride: usize,
    pub searched: &'a [usize],
}

impl Shape<'_> {
    /// The counts of measurements, columns and searched parameters.
    pub fn check_sizes(&self) -> Result<()> {
        let (n, m) = (self.n, self.m);
        if n == 0 || m == 0 {
            return Err(crate::invalid!(
                "the sensitivity matrix is {n} × {m}; expected at least one measurement and one column"
            ));
        }
        let p = self.searched.len();
        if p == 0 || p > MAX_PARAMETERS {
            return Err(crate::invalid!(
                "{p} searched columns; expected 1 to {MAX_PARAMETERS}"
            ));
        }
        if p > n {
            return Err(crate::invalid!(
                "{p} searched columns but only {n} measurements: the parameters cannot be resolved"
            ));
        }
        Ok(())
    }

    /// A's strides (distinct, non-overlapping elements within the address space); the
    /// elements A spans.
    pub fn check_strides(&self) -> Result<usize> {
        let (n, m) = (self.n, self.m);
        let span = (n - 1)
            .checked_mul(self.row_stride)
            .and_then(|r| {
                (m - 1)
                    .checked_mul(self.col_stride)
                    .and_then(|c| r.checked_add(c))
            })
            .and_then(|s| s.checked_add(1))
            // The span's bytes too: A's elements are f64.
            .filter(|s| s.checked_mul(std::mem::size_of::<f64>()).is_some())
            .ok_or_else(|| crate::invalid!("the strides of A overflow the address space"))?;
        let distinct = (n == 1 || self.row_stride > 0) && (m == 1 || self.col_stride > 0);
        let disjoint = n == 1
            || m == 1
            || self.row_stride >= m.saturating_mul(self.col_stride).max(1)
            || self.col_stride >= n.saturating_mul(self.row_stride).max(1);
        if !distinct || !disjoint {
            return Err(crate::invalid!(
                "strides (row {}, column {}) make elements of the {n} × {m} matrix A coincide",
                self.row_stride,
                self.col_stride
            ));
        }
        Ok(span)
    }

    /// The searched columns: within A, each once.
    pub fn check_searched(&self) -> Result<()> {
        for (k, &c) in self.searched.iter().enumerate() {
            if c >= self.m {
                return Err(crate::invalid!(
                    "searched[{k}] is column {c}; A has columns 0 to {}",
                    self.m - 1
                ));
            }
            if self.searched[..k].contains(&c) {
                return Err(crate::invalid!("column {c} is searched twice"));
            }
        }
        Ok(())
    }
}

/// The data of the n measurements: f₀, f_exp and δ.
#[derive(Clone, Copy, Debug)]
pub struct Data<'a> {
    pub f0: &'a [f64],
    pub f_exp: &'a [f64],
    pub delta: &'a [f64],
}

impl Data<'_> {
    pub fn check_finite(&self, n: usize) -> Result<()> {
        check_finite(&self.f0[..n], "f0")?;
        check_finite(&self.f_exp[..n], "f_exp")?;
        check_finite(&self.delta[..n], "delta")
    }

    /// Nonzero measurements, positive errors.
    pub fn check_signs(&self, n: usize) -> Result<()> {
        if let Some(i) = self.f_exp[..n].iter().position(|&f| f == 0.0) {
            return Err(crate::invalid!(
                "f_exp[{i}] is 0: the misfit is relative to the measured value, which must not be 0"
            ));
        }
        if let Some(i) = self.delta[..n].iter().position(|&d| d <= 0.0) {
            return Err(crate::invalid!(
                "delta[{i}] is {}; relative errors must be > 0",
                self.delta[i]
            ));
        }
        Ok(())
    }
}

/// A non-finite element of A, named by its row and column.
pub fn non_finite_element(i: usize, j: usize, v: f64) -> Error {
    Error::NonFinite(format!(
        "A[{i}, {j}] is {v}; expected a finite value; nothing was written"
    ))
}

/// A searched column of zeros, named by its column and parameter.
pub fn zero_column(c: usize, k: usize) -> Error {
    crate::invalid!(
        "searched column {c} (parameter {k}) is all zeros: the data do not depend on it"
    )
}

/// Ã and d of checked values: `at(i, k)` is A's element (i, searched[k]) and
/// `sigma0_at(k)` σ₀ of that column.
pub fn weigh(
    n: usize,
    p: usize,
    at: impl Fn(usize, usize) -> f64,
    sigma0_at: impl Fn(usize) -> f64,
    data: &Data,
) -> Result<Problem> {
    let w: Vec<f64> = (0..n)
        .map(|i| 1.0 / (data.f_exp[i] * data.delta[i]))
        .collect();
    let mut a_w = Vec::with_capacity(n * p);
    for k in 0..p {
        a_w.extend((0..n).map(|i| at(i, k) * w[i]));
    }
    let d = (0..n)
        .map(|i| {
            let shift: f64 = (0..p).map(|k| at(i, k) * sigma0_at(k)).sum();
            (data.f_exp[i] - data.f0[i] + shift) * w[i]
        })
        .collect();
    if let Some(i) = a_w.iter().chain(&d).position(|x: &f64| !x.is_finite()) {
        return Err(crate::invalid!(
            "weighting by 1/(f_exp·delta) overflows (value {i} of Ã and d); rescale the data"
        ));
    }
    Ok(Problem {
        n,
        a_w,
        d,
        sigma0: (0..p).map(sigma0_at).collect(),
    })
}

impl SensitivitySpec<'_> {
    /// Checks every argument and builds the weighted problem.
    pub fn validate(&self) -> Result<Problem> {
        let shape = self.shape();
        shape.check_sizes()?;
        let span = shape.check_strides()?;
        self.check_lengths(span)?;
        shape.check_searched()?;
        self.check_values()?;
        self.weighted()
    }

    pub fn shape(&self) -> Shape<'_> {
        Shape {
            n: self.n,
            m: self.m,
            row_stride: self.row_stride,
            col_stride: self.col_stride,
            searched: self.searched,
        }
    }

    fn data(&self) -> Data<'_> {
        Data {
            f0: self.f0,
            f_exp: self.f_exp,
            delta: self.delta,
        }
    }

    /// Element (i, j) of A.
    fn at(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.row_stride + j * self.col_stride]
    }

    /// The lengths of every array (A spans `span` elements).
    fn check_lengths(&self, span: usize) -> Result<()> {
        let (n, m) = (self.n, self.m);
        for (len, need, name) in [
            (self.a.len(), span, "a"),
            (self.sigma0.len(), m, "sigma0"),
            (self.f0.len(), n, "f0"),
            (self.f_exp.len(), n, "f_exp"),
            (self.delta.len(), n, "delta"),
        ] {
            if len < need {
                return Err(crate::invalid!(
                    "`{name}` holds {len} values; {need} needed"
                ));
            }
        }
        Ok(())
    }

    /// Finite values, nonzero measurements, positive errors, no all-zero searched column.
    fn check_values(&self) -> Result<()> {
        let (n, m) = (self.n, self.m);
        check_finite(&self.sigma0[..m], "sigma0")?;
        self.data().check_finite(n)?;
        for j in 0..m {
            for i in 0..n {
                if !self.at(i, j).is_finite() {
                    return Err(non_finite_element(i, j, self.at(i, j)));
                }
            }
        }
        self.data().check_signs(n)?;
        for (k, &c) in self.searched.iter().enumerate() {
            if (0..n).all(|i| self.at(i, c) == 0.0) {
                return Err(zero_column(c, k));
            }
        }
        Ok(())
    }

    /// Ã and d of the checked arguments.
    fn weighted(&self) -> Result<Problem> {
        let s = self.searched;
        weigh(
            self.n,
            s.len(),
            |i, k| self.at(i, s[k]),
            |k| self.sigma0[s[k]],
            &self.data(),
        )
    }
}

impl Problem {
    /// Searched parameters (the columns of Ã).
    pub fn p(&self) -> usize {
        self.sigma0.len()
    }

    /// Column j of Ã.
    pub fn column(&self, j: usize) -> &[f64] {
        &self.a_w[j * self.n..(j + 1) * self.n]
    }
}

#[cfg(test)]
mod tests {
    use super::Shape;

    #[test]
    fn strides_whose_bytes_overflow_are_named_as_strides() {
        let searched = [0];
        let shape = |row_stride| Shape {
            n: 2,
            m: 1,
            row_stride,
            col_stride: 1,
            searched: &searched,
        };
        // The span (stride + 1 elements) fits a usize, its bytes do not.
        let e = shape(usize::MAX / 4)
            .check_strides()
            .unwrap_err()
            .to_string();
        assert!(e.contains("strides of A overflow"), "{e}");
        assert_eq!(shape(3).check_strides().unwrap(), 4);
    }
}
