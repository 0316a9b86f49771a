//! The prolate spheroidal kernel: ψ0(c, z), the prolate spheroidal wave function of order 0,
//! is the function on [−1, 1] whose Fourier transform keeps the most energy in a band
//! (Slepian), so it aliases least of all shapes of a width: 1.4–2.8× less error than ES at
//! every width here, about half a digit.
//!
//! The plans do not evaluate ψ0 itself. They use φ(z) = (e^{β(s−1)} + e^{−β(s+1)})·P(1 − 2z²),
//! s = √(1 − z²): ES plus its mirror image in s, times a low-degree polynomial in z² fitted
//! to ψ0 by least squares. Both backends evaluate this same φ (the GPU at the cost of ES plus
//! a division and a few multiply-adds, the CPU through its tap polynomials), and its measured
//! error is what `PROLATE_TABLE` holds. The mirror term makes φ even in s, so smooth in z up
//! to the edge as ψ0 is: ES alone times a polynomial in s fits ψ0 as closely, but its
//! √(1 − z²) kink at the edge takes the CPU's per-tap polynomials to degree 22.

use std::sync::OnceLock;

/// The prolate kernel of one width: ψ0's band parameter c over w, the ES exponent β over c
/// and the factor's degree, and the worst relative ℓ2 error measured with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProlateWidth {
    pub width: usize,
    pub c_per_cell: f64,
    pub beta_over_c: f64,
    pub degree: usize,
    pub error: f64,
}

const fn entry(
    w: usize,
    c_per_cell: f64,
    beta_over_c: f64,
    degree: usize,
    error: f64,
) -> ProlateWidth {
    ProlateWidth {
        width: w,
        c_per_cell,
        beta_over_c,
        degree,
        error,
    }
}

/// Measured by `kernel_scan::prolate_scan` (an ignored test; `cargo test --release --lib
/// usfft::kernel_scan::prolate_scan -- --ignored --nocapture`, with SCAN_FITS and SCAN_CW
/// for the choices): the CPU path in f64 against direct sums, types 1 and 2, 1D/2D/3D, fine
/// grids of exactly 2N, as for `ES_TABLE`. c/w is the best of a scan over 2.00…2.60 for ψ0
/// itself; (β/c, degree) the cheapest fit whose error is within a few % of
/// ψ0's (the fit β/c = 0.5 of degree 14; c/w for w = 2, 3 from 1.7…2.3). The fit's own deviation
/// from ψ0 is largest at the edge, where ψ0 is about the width's error. A higher β/c leaves the
/// factor less to correct, a lower one keeps more of ψ0's edge; both show in the degree.
pub(crate) const PROLATE_TABLE: [ProlateWidth; 15] = [
    entry(2, 2.300, 0.8, 2, 6.10e-02),
    entry(3, 2.300, 0.8, 3, 6.49e-03),
    entry(4, 2.309, 0.8, 4, 7.14e-04),
    entry(5, 2.314, 0.7, 4, 7.36e-05),
    entry(6, 2.329, 0.7, 4, 7.11e-06),
    entry(7, 2.334, 0.7, 5, 6.44e-07),
    entry(8, 2.338, 0.7, 6, 6.58e-08),
    entry(9, 2.342, 0.7, 7, 7.41e-09),
    entry(10, 2.344, 0.7, 8, 7.75e-10),
    entry(11, 2.346, 0.7, 9, 7.29e-11),
    entry(12, 2.348, 0.7, 9, 6.49e-12),
    entry(13, 2.348, 0.7, 11, 6.96e-13),
    entry(14, 2.350, 0.7, 11, 9.36e-14),
    entry(15, 2.354, 0.7, 12, 2.69e-14),
    entry(16, 2.324, 0.7, 12, 2.59e-14),
];

/// The fitted φ of one width.
#[derive(Clone, Debug, PartialEq)]
pub struct ProlateFit {
    pub beta: f64,
    /// P's coefficients in x = 1 − 2z², highest power first (Horner).
    pub factor: Vec<f64>,
    /// The largest |φ − ψ0| (ψ0(0) = 1) found on a fine sampling.
    pub max_error: f64,
}

impl ProlateFit {
    /// φ(z) for |z| ≤ 1.
    pub fn eval(&self, z: f64) -> f64 {
        let x = 1.0 - 2.0 * z * z;
        even_es(self.beta, z) * self.factor.iter().fold(0.0, |v, &a| v * x + a)
    }
}

/// The fit of width `width` (2…16), made once per process.
pub fn prolate_fit(width: usize) -> &'static ProlateFit {
    static FITS: [OnceLock<ProlateFit>; 17] = [const { OnceLock::new() }; 17];
    FITS[width].get_or_init(|| {
        let e = prolate_width(width);
        let c = e.c_per_cell * width as f64;
        fit_degree(c, e.beta_over_c * c, e.degree)
    })
}

/// ψ0(c, ·) fitted as ES(β)·P with P of `degree`.
pub fn fit_degree(c: f64, beta: f64, degree: usize) -> ProlateFit {
    let psi = Pswf::new(c);
    let zs = samples();
    let want: Vec<f64> = zs.iter().map(|&z| psi.eval(z)).collect();
    let mut f = ProlateFit {
        beta,
        factor: least_squares(&zs, &want, beta, degree),
        max_error: 0.0,
    };
    f.max_error = zs
        .iter()
        .zip(&want)
        .map(|(&z, &w)| (f.eval(z) - w).abs())
        .fold(0.0, f64::max);
    f
}

/// The table's entry for `width`.
pub(crate) fn prolate_width(width: usize) -> &'static ProlateWidth {
    PROLATE_TABLE
        .iter()
        .find(|e| e.width == width)
        .expect("a width of the table")
}

/// z ∈ [0, 1] uniform in z and in θ (z = sin θ): the middle and the edge both resolved.
fn samples() -> Vec<f64> {
    let n = 1500;
    (0..=n)
        .flat_map(|i| {
            let t = i as f64 / n as f64;
            [t, (0.5 * std::f64::consts::PI * t).sin()]
        })
        .collect()
}

/// min Σ (even_es(z)·P(x(z)) − ψ0(z))² over P of `degree` (Chebyshev basis in x, Householder QR),
/// returned as monomials in x, highest first.
fn least_squares(zs: &[f64], want: &[f64], beta: f64, degree: usize) -> Vec<f64> {
    let n = degree + 1;
    // Rows even_es(z)·T_k(x(z)), k < n, with the right side ψ0(z) as column n.
    let mut a: Vec<Vec<f64>> = zs
        .iter()
        .zip(want)
        .map(|(&z, &psi)| {
            let (x, es) = (1.0 - 2.0 * z * z, even_es(beta, z));
            let mut row = vec![1.0; n + 1];
            for k in 1..n {
                row[k] = if k == 1 {
                    x
                } else {
                    2.0 * x * row[k - 1] - row[k - 2]
                };
            }
            row.iter_mut().take(n).for_each(|t| *t *= es);
            row[n] = psi;
            row
        })
        .collect();
    let rows = a.len();
    for j in 0..n {
        let norm = (j..rows).map(|i| a[i][j] * a[i][j]).sum::<f64>().sqrt();
        let alpha = if a[j][j] > 0.0 { -norm } else { norm };
        let mut u: Vec<f64> = (j..rows).map(|i| a[i][j]).collect();
        u[0] -= alpha;
        let uu: f64 = u.iter().map(|x| x * x).sum();
        if uu == 0.0 {
            continue;
        }
        for k in j..=n {
            let f = 2.0 * (j..rows).map(|i| u[i - j] * a[i][k]).sum::<f64>() / uu;
            for (row, ui) in a[j..].iter_mut().zip(&u) {
                row[k] -= f * ui;
            }
        }
    }
    let mut cheb = vec![0.0; n];
    for j in (0..n).rev() {
        let s: f64 = (j + 1..n).map(|k| a[j][k] * cheb[k]).sum();
        cheb[j] = (a[j][n] - s) / a[j][j];
    }
    let mut mono = chebyshev_to_monomials(&cheb);
    mono.reverse();
    mono
}

/// ES plus its mirror image in s, e^{β(s − 1)} + e^{−β(s + 1)} = 2e^{−β} cosh(βs): even in s,
/// so a smooth function of z² up to the kernel's edge, as ψ0 is (ES alone has a √(1 − z²)
/// kink there that per-tap polynomials converge to slowly).
pub(crate) fn even_es(beta: f64, z: f64) -> f64 {
    let s = (1.0 - z * z).max(0.0).sqrt();
    (beta * (s - 1.0)).exp() + (-beta * (s + 1.0)).exp()
}

/// Σ a_k T_k(t) as monomials (index = power), by T_{k+1} = 2t·T_k − T_{k−1}.
pub(crate) fn chebyshev_to_monomials(a: &[f64]) -> Vec<f64> {
    let n = a.len();
    let mut mono = vec![0.0; n];
    let (mut prev, mut cur) = (vec![0.0; n], vec![0.0; n]);
    cur[0] = 1.0;
    for (k, &ak) in a.iter().enumerate() {
        for p in 0..n {
            mono[p] += ak * cur[p];
        }
        let mut next = vec![0.0; n];
        for p in 0..n - 1 {
            next[p + 1] += if k == 0 { 1.0 } else { 2.0 } * cur[p];
        }
        if k > 0 {
            for p in 0..n {
                next[p] -= prev[p];
            }
        }
        prev = std::mem::replace(&mut cur, next);
    }
    mono
}

/// ψ0(c, z)/ψ0(c, 0) = Σ_k a_k P_{2k}(z): the even Legendre coefficients are the eigenvector
/// of the prolate operator's symmetric tridiagonal matrix for its smallest eigenvalue.
pub struct Pswf {
    coef: Vec<f64>,
}

impl Pswf {
    pub fn new(c: f64) -> Pswf {
        // The coefficients fall off super-exponentially once 2k exceeds about c: c + 40 even
        // terms reach f64 rounding with room.
        let k = c.ceil() as usize + 40;
        let c2 = c * c;
        let diag: Vec<f64> = (0..k)
            .map(|i| {
                let n = (2 * i) as f64;
                n * (n + 1.0)
                    + c2 * (2.0 * n * n + 2.0 * n - 1.0) / ((2.0 * n - 1.0) * (2.0 * n + 3.0))
            })
            .collect();
        let off: Vec<f64> = (0..k - 1)
            .map(|i| {
                let n = (2 * i) as f64;
                c2 * (n + 1.0) * (n + 2.0)
                    / ((2.0 * n + 3.0) * ((2.0 * n + 1.0) * (2.0 * n + 5.0)).sqrt())
            })
            .collect();
        let chi0 = smallest_eigenvalue(&diag, &off);
        let v = inverse_iteration(&diag, &off, chi0 - 1e-10 * chi0.abs().max(1.0));
        // Normalised basis √(n + ½)·P_n → coefficients of P_n, then ψ(0) = 1.
        let mut p = Pswf {
            coef: v
                .iter()
                .enumerate()
                .map(|(i, &a)| a * ((2 * i) as f64 + 0.5).sqrt())
                .collect(),
        };
        let at0 = p.eval(0.0);
        p.coef.iter_mut().for_each(|a| *a /= at0);
        p
    }

    /// Σ a_k P_{2k}(z), P_n by its three-term recurrence.
    pub fn eval(&self, z: f64) -> f64 {
        let (mut p0, mut p1) = (1.0, z);
        let mut sum = self.coef[0];
        for n in 1..2 * (self.coef.len() - 1) {
            let p2 = ((2 * n + 1) as f64 * z * p1 - n as f64 * p0) / (n + 1) as f64;
            (p0, p1) = (p1, p2);
            if n % 2 == 1 {
                sum += self.coef[n.div_ceil(2)] * p1;
            }
        }
        sum
    }
}

/// The smallest eigenvalue of a symmetric tridiagonal matrix, by bisection on the Sturm count.
fn smallest_eigenvalue(diag: &[f64], off: &[f64]) -> f64 {
    let below = |x: f64| -> usize {
        let mut d = diag[0] - x;
        let mut count = (d < 0.0) as usize;
        for i in 1..diag.len() {
            let dd = if d == 0.0 { 1e-300 } else { d };
            d = diag[i] - x - off[i - 1] * off[i - 1] / dd;
            count += (d < 0.0) as usize;
        }
        count
    };
    // Gershgorin: every eigenvalue is at least min(diag − |off| on both sides).
    let lower = (0..diag.len())
        .map(|i| {
            diag[i]
                - off.get(i).map_or(0.0, |o| o.abs())
                - i.checked_sub(1).map_or(0.0, |j| off[j].abs())
        })
        .fold(f64::INFINITY, f64::min);
    let (mut lo, mut hi) = (lower, diag[0]);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) >= 1 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The unit eigenvector for the eigenvalue just above `shift` (T − shift·I positive
/// definite: the Thomas algorithm needs no pivoting).
fn inverse_iteration(diag: &[f64], off: &[f64], shift: f64) -> Vec<f64> {
    let k = diag.len();
    let mut v = vec![1.0; k];
    for _ in 0..4 {
        let (mut cp, mut dp) = (vec![0.0; k], vec![0.0; k]);
        let mut piv = diag[0] - shift;
        cp[0] = off.first().map_or(0.0, |o| o / piv);
        dp[0] = v[0] / piv;
        for i in 1..k {
            piv = diag[i] - shift - off[i - 1] * cp[i - 1];
            cp[i] = off.get(i).map_or(0.0, |o| o / piv);
            dp[i] = (v[i] - off[i - 1] * dp[i - 1]) / piv;
        }
        let mut x = vec![0.0; k];
        x[k - 1] = dp[k - 1];
        for i in (0..k - 1).rev() {
            x[i] = dp[i] - cp[i] * x[i + 1];
        }
        let norm = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        v = x.into_iter().map(|a| a / norm).collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pswf_solves_the_prolate_equation() {
        // ((1 − z²)ψ')' + (χ − c²z²)ψ = 0 with χ unknown: the residual's ratio to ψ is the
        // same constant −χ at every z, by finite differences.
        for c in [5.0, 16.0, 37.0] {
            let p = Pswf::new(c);
            let h = 1e-4;
            let chi = |z: f64| {
                let f = |z: f64| p.eval(z);
                let d1 = (f(z + h) - f(z - h)) / (2.0 * h);
                let d2 = (f(z + h) - 2.0 * f(z) + f(z - h)) / (h * h);
                -((1.0 - z * z) * d2 - 2.0 * z * d1 - c * c * z * z * f(z)) / f(z)
            };
            let at0 = chi(0.0);
            assert!(at0 > 0.0 && at0 < c + 1.0, "c {c}: χ {at0}");
            // (Farther out ψ is below 1e-9 at c = 37 and the differences are all rounding.)
            for z in [0.2, 0.4, 0.6] {
                assert!((chi(z) - at0).abs() < 1e-4 * (c * c), "c {c} z {z}");
            }
        }
    }

    #[test]
    fn pswf_is_its_own_band_limited_transform() {
        // ∫ e^{icxt} ψ(t) dt = λ ψ(x): the ratio is the same at every x.
        for c in [12.0, 37.0] {
            let p = Pswf::new(c);
            // Composite Simpson over [−1, 1]: the integrand is smooth, 4000 panels are plenty.
            let f = |x: f64| -> f64 {
                let n = 4000;
                let h = 2.0 / n as f64;
                (0..=n)
                    .map(|i| {
                        let t = -1.0 + i as f64 * h;
                        let w = if i == 0 || i == n {
                            1.0
                        } else {
                            (2 + 2 * (i % 2)) as f64
                        };
                        w * h / 3.0 * (c * x * t).cos() * p.eval(t)
                    })
                    .sum()
            };
            let lambda = f(0.0);
            for x in [0.2, 0.5, 0.8, 1.0] {
                let r = f(x) / (lambda * p.eval(x));
                assert!((r - 1.0).abs() < 1e-9 / p.eval(x), "c {c} x {x}: {r}");
            }
        }
    }

    #[test]
    fn every_fit_is_near_the_prolate_function() {
        // The fit's largest deviation from ψ0 sits at the kernel's edge, where ψ0 is about
        // the width's error: it stays below that (a wrong fit is off by orders more).
        for e in &PROLATE_TABLE {
            let f = prolate_fit(e.width);
            assert_eq!(f.factor.len(), e.degree + 1);
            assert!(
                f.max_error <= 2.0 * e.error,
                "w {}: {:e}",
                e.width,
                f.max_error
            );
            assert!((f.eval(0.0) - 1.0).abs() <= 2.0 * e.error);
        }
    }
}
