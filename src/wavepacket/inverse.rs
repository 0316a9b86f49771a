//! The inverse of the frame: the seed's correction filter, refined by conjugate gradients.
//!
//! C*C is close to the identity (the windows are a partition of unity); what is left comes
//! from sampling the spectrum on rotated lattices and from the USFFT. The correction filter
//! divides the spectrum of C*c by the spectrum of C*C's response to a unit impulse at the
//! data's centre; conjugate gradients on C*C f = C*c then reach the requested tolerance.

use super::boxfft::BoxFfts;
use super::{check_finite, WavepacketPlan};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use num_complex::Complex;

/// How an inverse went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InverseReport {
    /// Conjugate-gradient iterations (each one C then C*).
    pub iterations: usize,
    /// ‖C*C f − C*c‖ / ‖C*c‖ at the end.
    pub residual: f64,
}

/// Where an inverse stops: a relative residual ≤ `tolerance`, or `max_iterations` made.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub tolerance: f64,
    pub max_iterations: usize,
}

impl Stop {
    pub fn new(tolerance: f64, max_iterations: usize) -> Stop {
        Stop {
            tolerance,
            max_iterations,
        }
    }
}

/// What the inverse needs of a frame (a layout's transform, or a tiled volume's).
pub(crate) trait Frame<T: Real> {
    fn context(&self) -> &Context;
    /// `InvalidArgument` unless the arrays hold the frame's data and coefficients.
    fn check_sizes(&self, data: usize, coeffs: usize) -> Result<()>;
    /// C*c.
    fn adjoint_of(&self, coeffs: &[Complex<T>]) -> Result<Vec<T>>;
    /// The correction filter applied to C*c: where conjugate gradients start.
    fn filtered(&self, b: &[T]) -> Vec<T>;
    /// C*C f.
    fn normal(&self, f: &[T]) -> Result<Vec<T>>;
}

/// The data whose coefficients are closest (least squares) to `coeffs`: the correction
/// filter applied to C*c, then conjugate gradients on C*C until `stop`. Checks, in order: a
/// tolerance in (0, 1), the array sizes, finite coefficients. Reports progress to
/// `reporter` (stage "wave-packet inverse", one item per iteration); `data` is written only
/// at the end, so a stop leaves it as it was.
pub(crate) fn invert<T: Real>(
    frame: &impl Frame<T>,
    coeffs: &[Complex<T>],
    data: &mut [T],
    stop: Stop,
    reporter: &mut Reporter,
) -> Result<InverseReport> {
    let tolerance = stop.tolerance;
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(crate::invalid!(
            "inverse tolerance is {tolerance}; expected a value in (0, 1)"
        ));
    }
    frame.check_sizes(data.len(), coeffs.len())?;
    check_finite(coeffs, &frame.context().cpu)?;
    let b = frame.adjoint_of(coeffs)?;
    let start = frame.filtered(&b);
    solve(&b, start, |v| frame.normal(v), stop, reporter, data)
}

/// 1/Ĥ on the data grid (circular DFT), Ĥ the spectrum of C*C δ_centre.
pub struct CorrectionFilter<T: Real> {
    inv_response: Vec<T>,
    ffts: BoxFfts<T>,
    shape: [usize; 3],
}

impl<T: Real> CorrectionFilter<T> {
    pub fn new(plan: &WavepacketPlan<T>) -> Result<Self> {
        let l = plan.layout();
        let shape = l.shape;
        let n = l.n_samples();
        let centre = (shape[2] / 2 * shape[1] + shape[1] / 2) * shape[0] + shape[0] / 2;
        let mut delta = vec![T::zero(); n];
        delta[centre] = T::one();
        let h = plan.normal(&delta)?;
        // Circularly shift the response so the impulse sits at index 0.
        let mut u = vec![Complex::new(T::zero(), T::zero()); n];
        for (i, v) in h.iter().enumerate() {
            let (i1, i2, i3) = (
                i % shape[0],
                (i / shape[0]) % shape[1],
                i / (shape[0] * shape[1]),
            );
            let j1 = (i1 + shape[0] - shape[0] / 2) % shape[0];
            let j2 = (i2 + shape[1] - shape[1] / 2) % shape[1];
            let j3 = (i3 + shape[2] - shape[2] / 2) % shape[2];
            u[(j3 * shape[1] + j2) * shape[0] + j1] = Complex::new(*v, T::zero());
        }
        let ffts = BoxFfts::new(shape.into_iter());
        ffts.transform(&mut u, shape, false);
        // The response is real and even up to the lattice asymmetry; its real part, kept away
        // from zero, is the filter.
        let floor = T::from_f64(0.1).unwrap();
        let inv_response = u.iter().map(|z| T::one() / z.re.max(floor)).collect();
        Ok(CorrectionFilter {
            inv_response,
            ffts,
            shape,
        })
    }

    pub fn apply(&self, g: &[T]) -> Vec<T> {
        let n = g.len() as f64;
        let mut u: Vec<Complex<T>> = g.iter().map(|&v| Complex::new(v, T::zero())).collect();
        self.ffts.transform(&mut u, self.shape, false);
        for (z, &r) in u.iter_mut().zip(&self.inv_response) {
            *z = *z * r;
        }
        self.ffts.transform(&mut u, self.shape, true);
        let s = T::from_f64(1.0 / n).unwrap();
        u.iter().map(|z| z.re * s).collect()
    }
}

fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.to_f64().unwrap() * y.to_f64().unwrap())
        .sum()
}

impl<T: Real> WavepacketPlan<T> {
    /// C*C f.
    pub fn normal(&self, f: &[T]) -> Result<Vec<T>> {
        if let Some(out) = self.synthesis_on_device(f, None)? {
            return Ok(out);
        }
        let mut c = crate::error::try_vec(
            self.layout().n_coefficients,
            Complex::new(T::zero(), T::zero()),
            "wave-packet coefficients",
        )?;
        self.forward_unchecked(f, &mut c)?;
        let mut out = vec![T::zero(); f.len()];
        self.adjoint_unchecked(&c, &mut out)?;
        Ok(out)
    }

    /// The data whose coefficients are closest (least squares) to `coeffs`: the correction
    /// filter applied to C*c, then conjugate gradients on C*C until the relative residual is
    /// ≤ `tolerance` or `max_iterations` were made. Reports progress to the context's
    /// callback (stage "wave-packet inverse", one item per iteration); `data` is written only
    /// at the end, so a stop leaves it as it was.
    pub fn inverse(
        &self,
        filter: &CorrectionFilter<T>,
        coeffs: &[Complex<T>],
        data: &mut [T],
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<InverseReport> {
        let frame = Filtered { plan: self, filter };
        let stop = Stop::new(tolerance, max_iterations);
        invert(&frame, coeffs, data, stop, &mut self.context().reporter())
    }
}

/// A layout's transform with the correction filter its inverse starts from.
struct Filtered<'a, T: Real> {
    plan: &'a WavepacketPlan<T>,
    filter: &'a CorrectionFilter<T>,
}

impl<T: Real> Frame<T> for Filtered<'_, T> {
    fn context(&self) -> &Context {
        self.plan.context()
    }
    fn check_sizes(&self, data: usize, coeffs: usize) -> Result<()> {
        self.plan.check_sizes(data, coeffs)
    }
    fn adjoint_of(&self, coeffs: &[Complex<T>]) -> Result<Vec<T>> {
        let mut b = vec![T::zero(); self.plan.layout().n_samples()];
        self.plan.adjoint_unchecked(coeffs, &mut b)?;
        Ok(b)
    }
    fn filtered(&self, b: &[T]) -> Vec<T> {
        self.filter.apply(b)
    }
    fn normal(&self, f: &[T]) -> Result<Vec<T>> {
        self.plan.normal(f)
    }
}

/// Conjugate gradients on `normal` x = b (normal symmetric positive definite) from `start`,
/// until ‖b − normal x‖/‖b‖ ≤ `stop.tolerance` or `stop.max_iterations` were made; reports
/// stage "wave-packet inverse" with one item per iteration (a stop ends with `Cancelled`)
/// and writes x into `data` only at the end.
pub(crate) fn solve<T: Real>(
    b: &[T],
    start: Vec<T>,
    normal: impl Fn(&[T]) -> Result<Vec<T>>,
    stop: Stop,
    reporter: &mut Reporter,
    data: &mut [T],
) -> Result<InverseReport> {
    let Stop {
        tolerance,
        max_iterations,
    } = stop;
    let n = b.len();
    let bb = dot(b, b);
    if bb == 0.0 {
        data.fill(T::zero());
        reporter.finish();
        return Ok(InverseReport {
            iterations: 0,
            residual: 0.0,
        });
    }
    reporter.stage("wave-packet inverse", 1.0, max_iterations.saturating_add(1));
    let mut x = start;
    let ax = normal(&x)?;
    reporter.advance(1)?;
    let mut r: Vec<T> = b.iter().zip(&ax).map(|(&b, &a)| b - a).collect();
    let mut p = r.clone();
    let mut rr = dot(&r, &r);
    let mut it = 0;
    while (rr / bb).sqrt() > tolerance && it < max_iterations {
        let ap = normal(&p)?;
        let pap = dot(&p, &ap);
        if pap <= 0.0 {
            break;
        }
        let a = rr / pap;
        let at = T::from_f64(a).unwrap();
        for i in 0..n {
            x[i] = x[i] + at * p[i];
            r[i] = r[i] - at * ap[i];
        }
        let rr_new = dot(&r, &r);
        let beta = T::from_f64(rr_new / rr).unwrap();
        for i in 0..n {
            p[i] = r[i] + beta * p[i];
        }
        rr = rr_new;
        it += 1;
        reporter.advance(1)?;
    }
    if !x.iter().all(|v| v.is_finite()) {
        return Err(Error::NonFinite("the inverse diverged".into()));
    }
    data.copy_from_slice(&x);
    reporter.finish();
    Ok(InverseReport {
        iterations: it,
        residual: (rr / bb).sqrt(),
    })
}
