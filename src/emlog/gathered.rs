//! A problem whose A, σ₀ and data live in device memory: the searched columns of A and
//! their σ₀, gathered on the device and copied back with f₀, f_exp and δ, are all the
//! weighted problem reads. They are checked as `SensitivitySpec::validate` checks them
//! (errors name A's own columns); the other columns of A and σ₀ never leave the device
//! and are not looked at.

use super::matrix::{non_finite_element, weigh, zero_column, Data, Problem};
use crate::error::{Error, Result};

pub struct Gathered<'a> {
    pub n: usize,
    /// A's searched columns (column searched[k] of A at `columns[k·n..(k+1)·n]`).
    pub columns: &'a [f64],
    /// σ₀ of the searched columns, in the same order.
    pub sigma0: &'a [f64],
    pub data: Data<'a>,
    pub searched: &'a [usize],
}

impl Gathered<'_> {
    /// Checks the values and builds the weighted problem: the host path's Ã and d, bit
    /// for bit (the same values through the same `weigh`).
    pub fn validate(&self) -> Result<Problem> {
        let (n, s) = (self.n, self.searched);
        let p = s.len();
        let at = |i: usize, k: usize| self.columns[k * n + i];
        if let Some(k) = self.sigma0.iter().position(|x| !x.is_finite()) {
            return Err(Error::NonFinite(format!(
                "sigma0[{}] is {}; expected a finite value; nothing was written",
                s[k], self.sigma0[k]
            )));
        }
        self.data.check_finite(n)?;
        for (k, &c) in s.iter().enumerate() {
            if let Some(i) = (0..n).find(|&i| !at(i, k).is_finite()) {
                return Err(non_finite_element(i, c, at(i, k)));
            }
        }
        self.data.check_signs(n)?;
        for (k, &c) in s.iter().enumerate() {
            if (0..n).all(|i| at(i, k) == 0.0) {
                return Err(zero_column(c, k));
            }
        }
        weigh(n, p, at, |k| self.sigma0[k], &self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::super::matrix::SensitivitySpec;
    use super::*;

    /// A 5 × 4 row-major A, searching columns 3 and 1; the gathered form of its arrays.
    fn problem() -> (Vec<f64>, Vec<f64>, [Vec<f64>; 3], Vec<usize>) {
        let a = (0..20).map(|e| 0.3 + ((e * 7) % 11) as f64 * 0.1).collect();
        let sigma0 = vec![1.0, 0.7, 2.0, 1.3];
        let data = [
            vec![1.0, 1.1, 0.9, 1.2, 1.05],
            vec![1.02, 1.08, 0.93, 1.17, 1.0],
            vec![0.05; 5],
        ];
        (a, sigma0, data, vec![3, 1])
    }

    fn gathered_columns(a: &[f64], m: usize, searched: &[usize]) -> Vec<f64> {
        let n = a.len() / m;
        searched
            .iter()
            .flat_map(|&c| (0..n).map(move |i| a[i * m + c]))
            .collect()
    }

    fn check(a: &[f64], sigma0: &[f64], data: &[Vec<f64>; 3], s: &[usize]) -> Result<Problem> {
        let columns = gathered_columns(a, 4, s);
        let sigma0: Vec<f64> = s.iter().map(|&c| sigma0[c]).collect();
        Gathered {
            n: 5,
            columns: &columns,
            sigma0: &sigma0,
            data: Data {
                f0: &data[0],
                f_exp: &data[1],
                delta: &data[2],
            },
            searched: s,
        }
        .validate()
    }

    #[test]
    fn emlog_gathered_problem_equals_the_host_one_bit_for_bit() {
        let (a, sigma0, data, s) = problem();
        let host = SensitivitySpec {
            n: 5,
            m: 4,
            a: &a,
            row_stride: 4,
            col_stride: 1,
            sigma0: &sigma0,
            f0: &data[0],
            f_exp: &data[1],
            delta: &data[2],
            searched: &s,
        }
        .validate()
        .unwrap();
        let g = check(&a, &sigma0, &data, &s).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&g.a_w), bits(&host.a_w));
        assert_eq!(bits(&g.d), bits(&host.d));
        assert_eq!(bits(&g.sigma0), bits(&host.sigma0));
        assert_eq!((g.n, g.p()), (host.n, host.p()));
    }

    #[test]
    fn emlog_gathered_errors_name_the_columns_of_a() {
        let (mut a, mut sigma0, data, s) = problem();
        a[2 * 4 + 3] = f64::NAN;
        let e = check(&a, &sigma0, &data, &s).unwrap_err().to_string();
        assert!(e.contains("A[2, 3]"), "{e}");
        // The unsearched column 0 is not read.
        let (mut a, _, _, _) = problem();
        a[0] = f64::NAN;
        assert!(check(&a, &sigma0, &data, &s).is_ok());
        for i in 0..5 {
            a[i * 4 + 1] = 0.0;
        }
        let e = check(&a, &sigma0, &data, &s).unwrap_err().to_string();
        assert!(e.contains("column 1 (parameter 1)"), "{e}");
        sigma0[3] = f64::INFINITY;
        let e = check(&a, &sigma0, &data, &s).unwrap_err().to_string();
        assert!(e.contains("sigma0[3]"), "{e}");
    }
}
