//! The squared angle between a unit vector and a direction, for the angular windows
//! exp(−θ²/s²): the normaliser needs one at every (frequency, lattice) pair it meets, and
//! acos took a fifth of plan creation.
//!
//! With q = |x̂ − ν|² = 2(1 − cos θ) (the squared chord), θ = 2·asin(√q/2) and
//! θ² = Σ_{n≥1} 2·q^n/(n²·C(2n, n)), whose terms fall by about q/4 each: for q ≤ 1/2
//! (θ ≤ 41°, where most pairs are) 20 terms leave under 1e-18 relative.

/// Largest q the series serves.
const Q_MAX: f64 = 0.5;
/// Series terms (a multiple of 4: four interleaved Horner chains).
const TERMS: usize = 20;
const A: [f64; TERMS] = coefficients();

/// a_n = 2/(n²·C(2n, n)), n = 1…TERMS (the binomials are exact in f64 up there).
const fn coefficients() -> [f64; TERMS] {
    let mut a = [0.0; TERMS];
    let mut binom = 2.0;
    let mut n = 1;
    while n <= TERMS {
        a[n - 1] = 2.0 / ((n * n) as f64 * binom);
        binom = binom * ((2 * n + 1) * (2 * n + 2)) as f64 / ((n + 1) * (n + 1)) as f64;
        n += 1;
    }
    a
}

/// θ² between unit x̂ and unit ν.
#[inline]
pub fn squared(unit: &[f64; 3], nu: &[f64; 3]) -> f64 {
    let d = [unit[0] - nu[0], unit[1] - nu[1], unit[2] - nu[2]];
    let q = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    if q > Q_MAX {
        let theta = (1.0 - 0.5 * q).clamp(-1.0, 1.0).acos();
        return theta * theta;
    }
    // Four chains in q⁴ (short dependency chains; no FMA is assumed).
    let q2 = q * q;
    let q4 = q2 * q2;
    let mut c = [0.0; 4];
    for j in (0..TERMS / 4).rev() {
        for (r, cr) in c.iter_mut().enumerate() {
            *cr = *cr * q4 + A[4 * j + r];
        }
    }
    q * (c[0] + q * c[1] + q2 * (c[2] + q * c[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_acos() {
        let nu = [0.0, 0.0, 1.0];
        let mut worst: f64 = 0.0;
        for i in 0..=2000 {
            let theta = std::f64::consts::FRAC_PI_2 * i as f64 / 2000.0;
            let unit = [theta.sin(), 0.0, theta.cos()];
            let err = (squared(&unit, &nu) - theta * theta).abs();
            worst = worst.max(err / theta.max(1e-3));
        }
        assert!(worst < 1e-14, "θ² off by {worst:e} (relative to θ)");
    }
}
