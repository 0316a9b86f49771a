//! The spreading kernel: its shape, width and Fourier transform.
//!
//! The kernel is a function φ(z) of z ∈ [−1, 1] stretched over `width` fine-grid cells:
//! a point at fine-grid coordinate g puts weight φ((l − g)/(width/2)) on cell l.
//! - ES, "exponential of semicircle": φ(z) = exp(β(√(1 − z²) − 1)), FINUFFT's shape, with
//!   β and the width from `ES_TABLE`: measured, not a formula (see there).
//! - Prolate: a fit of the prolate spheroidal wave function ψ0(c, z) (`prolate.rs`), with
//!   c, the fit and the width from `PROLATE_TABLE`, measured like ES's.
//! - Gaussian (the seed's kernel): φ(z) = exp(−β z²), truncated at |z| = 1. With Greengard
//!   and Lee's τ for upsampling R = 2 and a half-width of s cells, β = π s (R − ½)/R and the
//!   error is about e^{−π s (R − ½)/R} ≈ 10^{−1.02 s}: s = ceil(log10(1/tol)/1.02) + 1, so the
//!   width 2s is about twice that of ES for the same accuracy.

use super::prolate::{chebyshev_to_monomials, prolate_fit, ProlateFit, PROLATE_TABLE};

/// The kernel family chosen in the plan options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelShape {
    ExpSemicircle,
    Gaussian,
    /// A fit of the prolate spheroidal wave function (`prolate.rs`): about half a digit more
    /// than ES at the same width.
    Prolate,
}

/// The widest kernel, in fine-grid cells (ES caps at 16; the Gaussian needs about twice as
/// many cells for the same accuracy).
const MAX_WIDTH: usize = 32;

/// The ES kernel per width w: (w, β/w, the worst relative ℓ2 error measured with that β).
///
/// Measured by `kernel_scan::es_beta_scan` (an ignored test: `cargo test --release --lib
/// usfft::kernel_scan -- --ignored --nocapture`): the CPU path in f64 against direct sums,
/// types 1 and 2, 1D (N = 400, M = 3000), 2D (40 × 36, M = 3000) and 3D (16 × 16 × 12,
/// M = 2000), fine grids of exactly 2N, β/w scanned over 1.70…2.60 in steps of 0.01; the
/// error is the worst of the six cases at the best β/w. Each cell buys about one digit:
/// width w reaches 1.0–1.7·10^{−(w−1)}, so no β makes FINUFFT's width ceil(log10(1/tol)) + 1
/// meet a power-of-ten tol (at 1e-6, w = 7 gives 1.2e-6). The old fixed β = 2.30·w was up
/// to 2.7× worse (w = 4, 11). Widths 15 and 16 stop at f64 rounding (N·ε_mach), not the
/// kernel.
pub const ES_TABLE: [(usize, f64, f64); 15] = [
    (2, 1.80, 6.88e-2),
    (3, 2.10, 8.66e-3),
    (4, 2.20, 1.01e-3),
    (5, 2.24, 1.14e-4),
    (6, 2.27, 1.16e-5),
    (7, 2.30, 1.23e-6),
    (8, 2.31, 1.35e-7),
    (9, 2.32, 1.48e-8),
    (10, 2.32, 1.67e-9),
    (11, 2.33, 1.51e-10),
    (12, 2.33, 2.27e-11),
    (13, 2.34, 1.73e-12),
    (14, 2.34, 1.91e-13),
    (15, 2.31, 3.29e-14),
    (16, 2.32, 2.57e-14),
];

/// A width is chosen when its measured error times this is within the tolerance: room for
/// the spread of the error between problems (a few % between seeds and sizes).
const ES_MARGIN: f64 = 1.1;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpreadKernel {
    pub shape: KernelShape,
    /// Cells covered per dimension.
    pub width: usize,
    pub beta: f64,
    /// Tests only: a prolate fit in place of the table's for this width
    /// (`SpreadKernel::prolate_with_fit`).
    #[cfg(test)]
    pub(crate) fit: Option<&'static ProlateFit>,
}

impl SpreadKernel {
    /// The kernel of `shape`, `width` and `beta`. A prolate one evaluates its width's fit
    /// in `PROLATE_TABLE`, so its β is that fit's.
    pub(crate) fn new(shape: KernelShape, width: usize, beta: f64) -> SpreadKernel {
        SpreadKernel {
            shape,
            width,
            beta,
            #[cfg(test)]
            fit: None,
        }
    }

    /// The kernel reaching relative accuracy `tol` with upsampling 2.
    pub fn for_tolerance(shape: KernelShape, tol: f64) -> SpreadKernel {
        match shape {
            KernelShape::ExpSemicircle => {
                // The narrowest width that meets tol, else the widest.
                let &(width, per_cell, _) = ES_TABLE
                    .iter()
                    .find(|&&(_, _, err)| err * ES_MARGIN <= tol)
                    .unwrap_or(&ES_TABLE[ES_TABLE.len() - 1]);
                SpreadKernel::new(shape, width, per_cell * width as f64)
            }
            KernelShape::Prolate => {
                let width = PROLATE_TABLE
                    .iter()
                    .find(|e| e.error * ES_MARGIN <= tol)
                    .unwrap_or(&PROLATE_TABLE[PROLATE_TABLE.len() - 1])
                    .width;
                SpreadKernel::new(shape, width, prolate_fit(width).beta)
            }
            KernelShape::Gaussian => {
                let half = ((1.0 / tol).log10() / 1.02).ceil().max(1.0) as usize + 1;
                let width = (2 * half).min(MAX_WIDTH);
                let half = width as f64 / 2.0;
                SpreadKernel::new(shape, width, std::f64::consts::PI * half * 0.75)
            }
        }
    }

    /// Every width a plan can choose for `shape` with tolerances down to `min_tol` (sampled
    /// at 100 tolerances per decade: each width serves about a decade).
    pub fn reachable_widths(shape: KernelShape, min_tol: f64) -> Vec<usize> {
        let steps = ((1.0 / min_tol).log10() * 100.0).round() as i32;
        let mut w: Vec<usize> = (1..=steps)
            .map(|i| SpreadKernel::for_tolerance(shape, 10f64.powf(-i as f64 / 100.0)).width)
            .collect();
        w.dedup();
        w
    }

    /// Tests only: the prolate kernel of `width` with `fit` in place of the table's (the
    /// kernel scan measures candidate fits through it). The CPU path only: the device's
    /// prelude bakes in the table's fit.
    #[cfg(test)]
    pub(crate) fn prolate_with_fit(width: usize, fit: &'static ProlateFit) -> SpreadKernel {
        SpreadKernel {
            shape: KernelShape::Prolate,
            width,
            beta: fit.beta,
            fit: Some(fit),
        }
    }

    /// φ(z) for |z| ≤ 1 (0 outside).
    pub fn eval(&self, z: f64) -> f64 {
        if z.abs() > 1.0 {
            return 0.0;
        }
        match self.shape {
            KernelShape::ExpSemicircle => (self.beta * ((1.0 - z * z).max(0.0).sqrt() - 1.0)).exp(),
            KernelShape::Gaussian => (-self.beta * z * z).exp(),
            KernelShape::Prolate => self.prolate().eval(z),
        }
    }

    /// The fit a prolate kernel evaluates: the table's for its width.
    fn prolate(&self) -> &'static ProlateFit {
        #[cfg(test)]
        if let Some(fit) = self.fit {
            return fit;
        }
        prolate_fit(self.width)
    }

    /// The Fourier transform of the stretched kernel ψ(t) = φ(2t/width) at frequency k of a
    /// fine grid of `nf` cells: ∫ ψ(t) cos(2π k t / nf) dt, by Gauss–Legendre quadrature
    /// over z ∈ [0, 1] (ψ is even). One value per k in `ks`.
    pub fn fourier(&self, nf: usize, ks: impl Iterator<Item = i64>) -> Vec<f64> {
        let q = self.transform();
        ks.map(|k| q.at(2.0 * std::f64::consts::PI * k as f64 / nf as f64))
            .collect()
    }

    /// The quadrature of ψ̂ at any real frequency (type 3's targets fall between modes).
    pub fn transform(&self) -> KernelTransform {
        let half = self.width as f64 / 2.0;
        let (nodes, weights) = gauss_legendre(2 * self.width + 24);
        // On [0, 1]: z = (x + 1)/2, dz = dx/2.
        let samples = nodes
            .iter()
            .zip(&weights)
            .map(|(&x, &w)| {
                let z = 0.5 * (x + 1.0);
                (z, 0.5 * w * self.eval(z))
            })
            .collect();
        KernelTransform { half, samples }
    }
}

/// ψ̂(κ) = ∫ ψ(t) cos(κ t) dt of the stretched kernel ψ(t) = φ(2t/width), t in fine-grid
/// cells and κ in radians per cell, by a fixed Gauss–Legendre rule over z = 2t/width ∈ [0, 1].
#[derive(Clone, Debug)]
pub struct KernelTransform {
    half: f64,
    /// (z, weight·φ(z)) per node.
    samples: Vec<(f64, f64)>,
}

impl KernelTransform {
    pub fn at(&self, kappa: f64) -> f64 {
        let omega = kappa * self.half;
        2.0 * self.half
            * self
                .samples
                .iter()
                .map(|&(z, wphi)| wphi * (omega * z).cos())
                .sum::<f64>()
    }
}

/// Chebyshev terms of ψ̂ over |κ| ≤ κ_max: ψ̂ is even and entire, so a series in
/// u = 2(κ/κ_max)² − 1 of this many terms reaches f64 rounding for every kernel width
/// (24 already do at widths up to 16 and σ down to 1.25).
const SERIES_TERMS: usize = 32;

impl KernelTransform {
    /// ψ̂ on |κ| ≤ `kappa_max` as a Chebyshev series, for many evaluations (type 3's
    /// post-factor takes one per frequency and dimension): a few dozen multiply-adds a value
    /// in place of the quadrature's cosines, equal to it to rounding.
    pub fn series(&self, kappa_max: f64) -> TransformSeries {
        let n = SERIES_TERMS;
        let node = |j: usize| (std::f64::consts::PI * (j as f64 + 0.5) / n as f64).cos();
        let values: Vec<f64> = (0..n)
            .map(|j| self.at(kappa_max * (0.5 * (node(j) + 1.0)).sqrt()))
            .collect();
        let coef = (0..n)
            .map(|k| {
                let sum: f64 = (0..n)
                    .map(|j| {
                        let angle = std::f64::consts::PI * k as f64 * (j as f64 + 0.5) / n as f64;
                        values[j] * angle.cos()
                    })
                    .sum();
                if k == 0 {
                    sum / n as f64
                } else {
                    2.0 * sum / n as f64
                }
            })
            .collect();
        TransformSeries {
            inv_kappa_max: 1.0 / kappa_max,
            coef,
        }
    }
}

/// ψ̂(κ) = Σ_k c_k T_k(2(κ/κ_max)² − 1), summed by Clenshaw's recurrence.
#[derive(Clone, Debug)]
pub struct TransformSeries {
    inv_kappa_max: f64,
    coef: Vec<f64>,
}

impl TransformSeries {
    /// c_0, c_1, … (the device sums the same series: usfft_type3_post).
    pub fn coef(&self) -> &[f64] {
        &self.coef
    }

    pub fn inv_kappa_max(&self) -> f64 {
        self.inv_kappa_max
    }

    pub fn at(&self, kappa: f64) -> f64 {
        let r = kappa * self.inv_kappa_max;
        let u = 2.0 * r * r - 1.0;
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coef[1..].iter().rev() {
            (b1, b2) = (2.0 * u * b1 - b2 + c, b1);
        }
        u * b1 - b2 + self.coef[0]
    }
}

/// The kernel as one polynomial per tap, for evaluation in Horner form: a point with offset
/// d (`points.rs`) puts weight φ((d + i)/(w/2)) on its tap i, and with t = 2d + w − 1 ∈ [−1, 1)
/// that is p_i(t). `coef[k·w + i]` is the coefficient of t^{degree−k} of p_i (highest first),
/// so the w taps advance together, one multiply-add per tap and degree.
#[derive(Clone, Debug)]
pub struct TapPolynomials {
    pub width: usize,
    pub degree: usize,
    pub coef: Vec<f64>,
    /// The largest |p_i(t) − φ| found on a fine sampling of every tap.
    pub max_error: f64,
}

/// Highest degree tried: beyond it the monomial coefficients' cancellation costs more in
/// f64 than the fit gains.
const MAX_DEGREE: usize = 22;

impl SpreadKernel {
    /// The lowest-degree tap polynomials (Chebyshev interpolants, rewritten in monomials)
    /// whose error is at most `target`, or the degree-`MAX_DEGREE` ones.
    pub fn tap_polynomials(&self, target: f64) -> TapPolynomials {
        let w = self.width;
        let tap = |i: usize, t: f64| {
            self.eval((0.5 * (t + 1.0) - w as f64 / 2.0 + i as f64) * 2.0 / w as f64)
        };
        let mut best: Option<TapPolynomials> = None;
        for degree in 2..=MAX_DEGREE {
            let n = degree + 1;
            let mut coef = vec![0.0; n * w];
            for i in 0..w {
                // Chebyshev coefficients a_k from the n Chebyshev nodes.
                let nodes: Vec<f64> = (0..n)
                    .map(|j| {
                        tap(
                            i,
                            (std::f64::consts::PI * (j as f64 + 0.5) / n as f64).cos(),
                        )
                    })
                    .collect();
                let a: Vec<f64> = (0..n)
                    .map(|k| {
                        let s: f64 = (0..n)
                            .map(|j| {
                                nodes[j]
                                    * (std::f64::consts::PI * k as f64 * (j as f64 + 0.5)
                                        / n as f64)
                                        .cos()
                            })
                            .sum();
                        s * if k == 0 { 1.0 } else { 2.0 } / n as f64
                    })
                    .collect();
                let mono = chebyshev_to_monomials(&a);
                for p in 0..n {
                    coef[(degree - p) * w + i] = mono[p];
                }
            }
            let horner = |i: usize, t: f64| (0..n).fold(0.0, |v, k| v * t + coef[k * w + i]);
            let samples = 16 * n;
            let max_error = (0..w)
                .flat_map(|i| {
                    (0..=samples).map(move |s| (i, -1.0 + 2.0 * s as f64 / samples as f64))
                })
                .map(|(i, t)| (horner(i, t) - tap(i, t)).abs())
                .fold(0.0, f64::max);
            let fit = TapPolynomials {
                width: w,
                degree,
                coef,
                max_error,
            };
            if max_error <= target {
                return fit;
            }
            if best.as_ref().is_none_or(|b| max_error < b.max_error) {
                best = Some(fit);
            }
        }
        best.expect("at least one degree is tried")
    }
}

/// Nodes and weights of the n-point Gauss–Legendre rule on [−1, 1], by Newton's method on
/// the Legendre recurrence from Chebyshev-like starting points.
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut nodes = vec![0.0; n];
    let mut weights = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            // p1 = P_n(x), p0 = P_{n−1}(x).
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let step = p1 / dp;
            x -= step;
            if step.abs() < 1e-16 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        nodes[i] = -x;
        nodes[n - 1 - i] = x;
        weights[i] = w;
        weights[n - 1 - i] = w;
    }
    (nodes, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transform_series_equals_the_quadrature() {
        // Every width at the tolerance that picks it, and the widest band an upsampling
        // factor gives (κ_max = π/σ), within a few units of rounding of ψ̂(0) (the
        // quadrature's own rounding: its terms are of that size).
        for tol in [1e-2, 1e-4, 1e-6, 1e-9, 1e-12, 1e-14] {
            for shape in [
                KernelShape::ExpSemicircle,
                KernelShape::Gaussian,
                KernelShape::Prolate,
            ] {
                let q = SpreadKernel::for_tolerance(shape, tol).transform();
                for sigma in [1.25, 2.0] {
                    let kmax = std::f64::consts::PI / sigma;
                    let series = q.series(kmax);
                    let peak = q.at(0.0);
                    for i in 0..=1000 {
                        let k = kmax * (i as f64 / 1000.0) * if i % 2 == 0 { 1.0 } else { -1.0 };
                        let (want, got) = (q.at(k), series.at(k));
                        let err = (got - want).abs() / peak;
                        assert!(
                            err < 1e-14,
                            "tol {tol:e} {shape:?} σ {sigma} κ {k}: {err:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        let (x, w) = gauss_legendre(10);
        // ∫_{−1}^{1} t^18 dt = 2/19 (degree 2n − 2 is within reach).
        let s: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(18)).sum();
        assert!((s - 2.0 / 19.0).abs() < 1e-14, "{s}");
        let total: f64 = w.iter().sum();
        assert!((total - 2.0).abs() < 1e-14);
    }

    #[test]
    fn widths_follow_the_measured_tables() {
        let widths = |shape| {
            let w = |tol: f64| SpreadKernel::for_tolerance(shape, tol).width;
            let powers = [w(1e-2), w(1e-3), w(1e-6), w(1e-9), w(1e-12)];
            (powers, SpreadKernel::reachable_widths(shape, 1e-6))
        };
        // ES: width w reaches ~1.2·10^{−(w−1)}, so powers of ten below 1e-2 still need
        // ceil(log10(1/tol)) + 2 cells; a tolerance just above a width's error takes it.
        let es = widths(KernelShape::ExpSemicircle);
        assert_eq!(es, ([3, 5, 8, 11, 14], (2..=8).collect()));
        let w = |tol: f64| SpreadKernel::for_tolerance(KernelShape::ExpSemicircle, tol).width;
        assert_eq!([w(0.1), w(2e-6), w(2e-9), w(1e-14)], [2, 7, 10, 16]);
        let k = SpreadKernel::for_tolerance(KernelShape::ExpSemicircle, 1e-6);
        assert!((k.beta - 2.31 * 8.0).abs() < 1e-12);
        let reach = SpreadKernel::reachable_widths(KernelShape::ExpSemicircle, 1e-14);
        assert_eq!(reach, (2..=16).collect::<Vec<_>>());
        // Prolate: one cell fewer, FINUFFT's ceil(log10(1/tol)) + 1 (powers from 1e-3 on).
        let prolate = widths(KernelShape::Prolate);
        assert_eq!(prolate, ([3, 4, 7, 10, 13], (2..=7).collect()));
    }

    #[test]
    fn tap_polynomials_reproduce_the_kernel() {
        let mut failures = Vec::new();
        for tol in [1e-2, 1e-4, 1e-6, 1e-9, 1e-12, 1e-14] {
            for shape in [
                KernelShape::ExpSemicircle,
                KernelShape::Gaussian,
                KernelShape::Prolate,
            ] {
                let k = SpreadKernel::for_tolerance(shape, tol);
                // As the CPU path asks: 1 % of tol, down to the f64 rounding of the sums.
                let p = k.tap_polynomials(0.01 * tol);
                // Check away from the fit's own samples: a point with offset d.
                let w = k.width;
                let mut worst: f64 = 0.0;
                for s in 0..1000 {
                    let d = -(w as f64) / 2.0 + (s as f64 + 0.37) / 1000.0;
                    let t = 2.0 * d + w as f64 - 1.0;
                    for i in 0..w {
                        let got = (0..=p.degree).fold(0.0, |v, q| v * t + p.coef[q * w + i]);
                        let want = k.eval((d + i as f64) * 2.0 / w as f64);
                        worst = worst.max((got - want).abs());
                    }
                }
                println!(
                    "{shape:?} tol {tol:e}: w {w} degree {} error {worst:.1e}",
                    p.degree
                );
                if worst > (0.01 * tol).max(2e-14) {
                    failures.push(format!("{shape:?} tol {tol:e}: {worst:e}"));
                }
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn fourier_transform_matches_a_riemann_sum() {
        let k = SpreadKernel::for_tolerance(KernelShape::ExpSemicircle, 1e-6);
        let nf = 64;
        let got = k.fourier(nf, [0i64, 5, 16].into_iter());
        let half = k.width as f64 / 2.0;
        for (i, &kk) in [0i64, 5, 16].iter().enumerate() {
            let steps = 200_000;
            let h = 2.0 * half / steps as f64;
            let sum: f64 = (0..steps)
                .map(|s| {
                    let t = -half + (s as f64 + 0.5) * h;
                    k.eval(t / half)
                        * (2.0 * std::f64::consts::PI * kk as f64 * t / nf as f64).cos()
                        * h
                })
                .sum();
            assert!(
                (got[i] - sum).abs() < 1e-8 * sum.abs(),
                "{} vs {sum}",
                got[i]
            );
        }
    }
}
