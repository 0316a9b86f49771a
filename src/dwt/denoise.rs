//! Donoho–Johnstone wavelet shrinkage: the rules, shared by every backend.
//!
//! Detail level j (1 = finest) of an n-sample transform occupies coefficients
//! [n >> j, n >> (j−1)). σ is estimated as median(|d|)/0.6745 (the median of an even
//! count is the mean of the two middle values, as NumPy's), from the finest level for
//! all levels or from each level separately; the universal threshold is σ·√(2 ln n)
//! with n the trace length. The approximation coefficients are never thresholded.

use crate::error::Result;
use crate::sample::Sample;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdRule {
    /// σ·√(2 ln n) (VisuShrink).
    Universal,
    /// The caller's value, for every thresholded level.
    Fixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdMode {
    /// sign(d)·max(|d| − λ, 0)
    Soft,
    /// d where |d| > λ, else 0
    Hard,
}

/// Which coefficients σ is estimated from. σ = median(|d|)/0.6745; the median of an even
/// count of coefficients is the mean of the two middle values (as NumPy's `median`), of an
/// odd count the middle value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoiseEstimate {
    /// σ from the finest detail level, used for all levels (Donoho–Johnstone).
    FinestLevel,
    /// σ_j from each level's own coefficients (level-dependent noise).
    PerLevel,
}

/// The 0.6745 of the MAD estimator: the third quartile of the standard normal.
pub(crate) const MAD_TO_SIGMA: f64 = 0.6745;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DenoiseOptions {
    pub rule: ThresholdRule,
    pub mode: ThresholdMode,
    /// Where σ = median(|d|)/0.6745 comes from (an even count's median is the mean of
    /// its two middle values).
    pub noise: NoiseEstimate,
    /// The threshold of the `Fixed` rule.
    pub fixed_threshold: f64,
    /// Transform depth; 0 means all levels (log2 n).
    pub levels: u32,
    /// Bit j−1 set: detail level j is thresholded.
    pub level_mask: u64,
}

impl Default for DenoiseOptions {
    fn default() -> Self {
        DenoiseOptions {
            rule: ThresholdRule::Universal,
            mode: ThresholdMode::Soft,
            noise: NoiseEstimate::FinestLevel,
            fixed_threshold: 0.0,
            levels: 0,
            level_mask: u64::MAX,
        }
    }
}

impl DenoiseOptions {
    pub fn validate(&self) -> Result<()> {
        if self.rule == ThresholdRule::Fixed
            && !(self.fixed_threshold.is_finite() && self.fixed_threshold >= 0.0)
        {
            return Err(crate::invalid!(
                "fixed_threshold is {}; expected a finite value ≥ 0",
                self.fixed_threshold
            ));
        }
        Ok(())
    }

    pub fn thresholds_level(&self, level: u32) -> bool {
        level <= 64 && self.level_mask >> (level - 1) & 1 == 1
    }
}

/// Median of |d|, using `scratch` (resized) so the coefficients stay in place.
pub fn median_abs<T: Sample>(d: &[T], scratch: &mut Vec<T>) -> T {
    scratch.clear();
    scratch.extend(d.iter().map(|x| x.abs()));
    let m = scratch.len();
    let cmp = |a: &T, b: &T| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal);
    let (lower, upper, _) = scratch.select_nth_unstable_by(m / 2, cmp);
    let upper = *upper;
    if m % 2 == 1 {
        upper
    } else {
        let below = lower.iter().copied().fold(T::neg_infinity(), T::max);
        (below + upper) / (T::one() + T::one())
    }
}

/// σ·√(2 ln n).
pub fn universal_threshold(sigma: f64, n_samples: usize) -> f64 {
    sigma * (2.0 * (n_samples as f64).ln()).sqrt()
}

/// Shrinks coefficients in place by λ.
pub fn shrink<T: Sample>(d: &mut [T], lambda: f64, mode: ThresholdMode) {
    let l = T::from_f64(lambda).unwrap();
    match mode {
        ThresholdMode::Soft => d.iter_mut().for_each(|x| {
            let m = x.abs() - l;
            *x = if m > T::zero() {
                x.signum() * m
            } else {
                T::zero()
            };
        }),
        ThresholdMode::Hard => d.iter_mut().for_each(|x| {
            if x.abs() <= l {
                *x = T::zero()
            }
        }),
    }
}

/// The threshold of every level (index j−1 for level j) for one transformed trace,
/// 0 for levels left alone. `coefficients` is the whole transform of `levels` levels.
pub fn level_thresholds<T: Sample>(
    options: &DenoiseOptions,
    coefficients: &[T],
    levels: u32,
    scratch: &mut Vec<T>,
) -> Vec<f64> {
    let n = coefficients.len();
    let detail = |j: u32| &coefficients[n >> j..n >> (j - 1)];
    let sigma_of = |j: u32, scratch: &mut Vec<T>| {
        median_abs(detail(j), scratch).to_f64().unwrap() / MAD_TO_SIGMA
    };
    let finest_sigma = match (options.rule, options.noise) {
        (ThresholdRule::Universal, NoiseEstimate::FinestLevel) => sigma_of(1, scratch),
        _ => 0.0,
    };
    (1..=levels)
        .map(|j| {
            if !options.thresholds_level(j) {
                return 0.0;
            }
            match (options.rule, options.noise) {
                (ThresholdRule::Fixed, _) => options.fixed_threshold,
                (ThresholdRule::Universal, NoiseEstimate::FinestLevel) => {
                    universal_threshold(finest_sigma, n)
                }
                (ThresholdRule::Universal, NoiseEstimate::PerLevel) => {
                    universal_threshold(sigma_of(j, scratch), n)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_count_is_mean_of_middle_pair() {
        let mut s = Vec::new();
        assert_eq!(median_abs(&[4.0f64, -1.0, 3.0, -2.0], &mut s), 2.5);
        assert_eq!(median_abs(&[5.0f32, -1.0, 3.0], &mut Vec::new()), 3.0);
    }

    #[test]
    fn soft_and_hard_shrinkage() {
        let mut d = [3.0f64, -0.5, -2.0, 1.0];
        shrink(&mut d, 1.0, ThresholdMode::Soft);
        assert_eq!(d, [2.0, 0.0, -1.0, 0.0]);
        let mut d = [3.0f64, -0.5, -2.0, 1.0];
        shrink(&mut d, 1.0, ThresholdMode::Hard);
        assert_eq!(d, [3.0, 0.0, -2.0, 0.0]);
    }
}
