//! Operations on coefficients: compression (keep the S largest), hard/soft thresholding at a
//! value or at k·σ per level, and POCS interpolation of missing traces.

use super::inverse::CorrectionFilter;
use super::layout::Layout;
use super::WavepacketPlan;
use crate::error::Result;
use crate::usfft::Real;
use num_complex::Complex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdMode {
    /// Zero below the threshold, keep above.
    Hard,
    /// Zero below, shrink the magnitude by the threshold above (phase kept).
    Soft,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThresholdLevel {
    /// One threshold for every coefficient.
    Value(f64),
    /// k·σ_level, σ_level = median(|c|)/0.6745 over the level's coefficients (the median
    /// absolute value of mostly-noise coefficients, as in wavelet denoising).
    Sigma(f64),
}

/// Keeps the `s` coefficients of largest magnitude, zeroes the others (ties: any of them).
pub fn keep_largest<T: Real>(coeffs: &mut [Complex<T>], s: usize) {
    if s >= coeffs.len() {
        return;
    }
    if s == 0 {
        coeffs.fill(Complex::new(T::zero(), T::zero()));
        return;
    }
    let mut mags: Vec<T> = coeffs.iter().map(|z| z.norm_sqr()).collect();
    let k = coeffs.len() - s;
    let (_, &mut cut, _) = mags.select_nth_unstable_by(k, |a, b| a.partial_cmp(b).unwrap());
    let mut kept = 0;
    for z in coeffs.iter_mut() {
        if z.norm_sqr() > cut {
            kept += 1;
        }
    }
    let mut ties = s - kept;
    for z in coeffs.iter_mut() {
        let m = z.norm_sqr();
        if m < cut || (m == cut && ties == 0) {
            *z = Complex::new(T::zero(), T::zero());
        } else if m == cut {
            ties -= 1;
        }
    }
}

/// σ of each level (index = level): median(|c|)/0.6745 over its boxes' coefficients.
pub fn level_sigmas<T: Real>(layout: &Layout, coeffs: &[Complex<T>]) -> Vec<f64> {
    (0..=layout.levels)
        .map(|k| {
            let mut m: Vec<f64> = layout
                .boxes
                .iter()
                .filter(|b| b.level == k)
                .flat_map(|b| &coeffs[b.offset..b.offset + b.n_coefficients()])
                .map(|z| z.norm().to_f64().unwrap())
                .collect();
            if m.is_empty() {
                return 0.0;
            }
            let mid = m.len() / 2;
            let (_, med, _) = m.select_nth_unstable_by(mid, |a, b| a.partial_cmp(b).unwrap());
            *med / 0.6745
        })
        .collect()
}

/// Thresholds `coeffs` in place.
pub fn threshold<T: Real>(
    layout: &Layout,
    coeffs: &mut [Complex<T>],
    mode: ThresholdMode,
    level: ThresholdLevel,
) -> Result<()> {
    if coeffs.len() != layout.n_coefficients {
        return Err(crate::invalid!(
            "coefficient array has {} values; the layout has {}",
            coeffs.len(),
            layout.n_coefficients
        ));
    }
    let per_level: Vec<f64> = match level {
        ThresholdLevel::Value(t) if t.is_finite() && t >= 0.0 => vec![t; layout.levels + 1],
        ThresholdLevel::Sigma(k) if k.is_finite() && k >= 0.0 => level_sigmas(layout, coeffs)
            .into_iter()
            .map(|s| k * s)
            .collect(),
        other => {
            return Err(crate::invalid!(
                "threshold {other:?} is not a finite value ≥ 0"
            ))
        }
    };
    for b in &layout.boxes {
        let t = per_level[b.level];
        for z in &mut coeffs[b.offset..b.offset + b.n_coefficients()] {
            shrink(z, t, mode);
        }
    }
    Ok(())
}

fn shrink<T: Real>(z: &mut Complex<T>, t: f64, mode: ThresholdMode) {
    let m = z.norm().to_f64().unwrap();
    if m <= t {
        *z = Complex::new(T::zero(), T::zero());
    } else if mode == ThresholdMode::Soft {
        *z = *z * T::from_f64(1.0 - t / m).unwrap();
    }
}

/// How the POCS threshold falls from its first to its last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    Linear,
    Exponential,
}

/// POCS interpolation settings. The threshold of iteration i runs from
/// `first`·max|c| to `last`·max|c| (c the coefficients of the data with its gaps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PocsOptions {
    pub iterations: usize,
    pub schedule: Schedule,
    pub first: f64,
    pub last: f64,
}

impl Default for PocsOptions {
    fn default() -> Self {
        PocsOptions {
            iterations: 30,
            schedule: Schedule::Exponential,
            first: 0.5,
            last: 1e-3,
        }
    }
}

impl PocsOptions {
    /// The relative threshold of iteration i.
    pub fn threshold(&self, i: usize) -> f64 {
        let u = if self.iterations > 1 {
            i as f64 / (self.iterations - 1) as f64
        } else {
            1.0
        };
        match self.schedule {
            Schedule::Linear => self.first + (self.last - self.first) * u,
            Schedule::Exponential => self.first * (self.last / self.first).powf(u),
        }
    }
}

impl<T: Real> WavepacketPlan<T> {
    /// Fills the dead traces of `data` (in place): `live[t]` says whether trace t (the data
    /// columns along axis 1, numbered over axes 2[, 3]) was recorded. Each iteration
    /// hard-thresholds the coefficients of the current estimate, reconstructs (correction
    /// filter applied to C*), and re-inserts the recorded traces. Reports progress to the
    /// context's callback (stage "wave-packet POCS", one item per iteration); `data` is
    /// written only at the end, so a stop leaves it as it was.
    pub fn pocs_interpolate(
        &self,
        filter: &CorrectionFilter<T>,
        data: &mut [T],
        live: &[bool],
        opts: &PocsOptions,
    ) -> Result<()> {
        let l = self.layout();
        let n1 = l.shape[0];
        let traces = l.n_samples() / n1;
        if live.len() != traces {
            return Err(crate::invalid!(
                "trace mask has {} entries; the data has {traces} traces",
                live.len()
            ));
        }
        if data.len() != l.n_samples() {
            return Err(crate::invalid!(
                "data array has {} samples; expected {}",
                data.len(),
                l.n_samples()
            ));
        }
        if opts.iterations == 0
            || !(opts.first > 0.0
                && opts.first <= 1.0
                && opts.last > 0.0
                && opts.last <= opts.first)
        {
            return Err(crate::invalid!(
                "POCS options {opts:?}: need iterations ≥ 1 and 0 < last ≤ first ≤ 1"
            ));
        }
        let mut c = vec![Complex::new(T::zero(), T::zero()); l.n_coefficients];
        let mut x: Vec<T> = data.to_vec();
        for (t, &ok) in live.iter().enumerate() {
            if !ok {
                x[t * n1..(t + 1) * n1].fill(T::zero());
            }
        }
        // The recorded samples must be finite (the dead ones are not read).
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(crate::error::Error::NonFinite(format!(
                "data sample {i} (a live trace) is not finite; nothing was written"
            )));
        }
        self.forward_unchecked(&x, &mut c)?;
        let cmax = c
            .iter()
            .map(|z| z.norm().to_f64().unwrap())
            .fold(0.0, f64::max);
        let mut y = vec![T::zero(); x.len()];
        let mut reporter = self.context().reporter();
        reporter.stage("wave-packet POCS", 1.0, opts.iterations);
        for i in 0..opts.iterations {
            if i > 0 {
                self.forward_unchecked(&x, &mut c)?;
            }
            threshold(
                l,
                &mut c,
                ThresholdMode::Hard,
                ThresholdLevel::Value(opts.threshold(i) * cmax),
            )?;
            self.adjoint_unchecked(&c, &mut y)?;
            let y = filter.apply(&y);
            for (t, &ok) in live.iter().enumerate() {
                if !ok {
                    x[t * n1..(t + 1) * n1].copy_from_slice(&y[t * n1..(t + 1) * n1]);
                }
            }
            reporter.advance(1)?;
        }
        data.copy_from_slice(&x);
        reporter.finish();
        Ok(())
    }
}
