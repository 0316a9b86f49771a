//! Lebedev–Laikov directions on the unit sphere (the 3D box orientations).
//!
//! The rules come from `lebedev_table.txt`, generated once from SciPy by
//! `scripts/lebedev_table.py` and read by `lebedev_table.rs`. Every rule is antipodally
//! symmetric, so for real input one direction of each ± pair is kept: the "upper" half
//! (z > 0, or z = 0 and y > 0, or z = y = 0 and x > 0).

use super::lebedev_table::rules;
use crate::error::Result;

/// The rule sizes available (6 … 590 points).
pub fn sizes() -> Vec<usize> {
    rules().iter().map(|r| r.0).collect()
}

/// All directions of the rule with `n` points.
pub fn rule(n: usize) -> Result<&'static [[f64; 3]]> {
    rules()
        .iter()
        .find(|r| r.0 == n)
        .map(|r| r.1.as_slice())
        .ok_or_else(|| {
            crate::invalid!(
                "no Lebedev rule has {n} points; the sizes available are {:?}",
                sizes()
            )
        })
}

/// Whether `p` is the kept member of its antipodal pair.
pub fn is_upper(p: &[f64; 3]) -> bool {
    const EPS: f64 = 1e-12;
    p[2] > EPS || (p[2].abs() <= EPS && (p[1] > EPS || (p[1].abs() <= EPS && p[0] > 0.0)))
}

/// One direction of each antipodal pair of the rule with `n` points, in the rule's order.
pub fn upper_half(n: usize) -> Result<Vec<[f64; 3]>> {
    Ok(rule(n)?.iter().copied().filter(is_upper).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_unit_and_antipodal() {
        for n in sizes() {
            let r = rule(n).unwrap();
            assert_eq!(r.len(), n);
            for p in r {
                let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
                assert!((norm - 1.0).abs() < 1e-14);
                let q = [-p[0], -p[1], -p[2]];
                assert!(r
                    .iter()
                    .any(|s| (0..3).all(|d| (s[d] - q[d]).abs() < 1e-14)));
            }
            assert_eq!(upper_half(n).unwrap().len() * 2, n);
        }
        assert!(rule(351).is_err());
    }
}
