//! The denoising rules and per-level shrinkage as kernel arguments.

use crate::dwt::denoise::{self, DenoiseOptions, NoiseEstimate, ThresholdMode, ThresholdRule};

use crate::sample::Sample;

/// The denoising rules as kernel arguments.
pub(super) struct Rules<T> {
    pub(super) flags: i32,
    pub(super) mask: u64,
    /// Segments whose median is wanted: bit li for level li + 1 (finest: bit 0 only).
    pub(super) seg_mask: u64,
    pub(super) seg_levels: i32,
    pub(super) fixed: T,
    pub(super) factor: f64,
}

impl<T: Sample> Rules<T> {
    pub(super) fn new(options: &DenoiseOptions, levels: u32, n: usize) -> Rules<T> {
        let universal = options.rule == ThresholdRule::Universal;
        let per_level = universal && options.noise == NoiseEstimate::PerLevel;
        let wanted = (1..=levels).fold(0u64, |m, l| {
            if options.thresholds_level(l) {
                m | 1 << (l - 1)
            } else {
                m
            }
        });
        let (seg_mask, seg_levels) = match (universal, per_level) {
            (false, _) => (0, 1),
            (true, false) => (u64::from(wanted != 0), 1),
            (true, true) => (wanted, levels as i32),
        };
        Rules {
            flags: i32::from(universal)
                | i32::from(per_level) << 1
                | i32::from(options.mode == ThresholdMode::Hard) << 2,
            mask: options.level_mask,
            seg_mask,
            seg_levels,
            fixed: T::from_f64(options.fixed_threshold).unwrap_or_else(T::zero),
            factor: denoise::universal_threshold(1.0, n),
        }
    }

    pub(super) fn universal(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// The thresholds the CPU backend reports (n_traces × levels), from the medians the kernels
/// wrote (traces × seg_levels), by the same f64 arithmetic.
pub(super) fn thresholds_from_medians<T: Sample>(
    options: &DenoiseOptions,
    levels: u32,
    n: usize,
    traces: usize,
    medians: &[T],
) -> Vec<f64> {
    let per_level = options.noise == NoiseEstimate::PerLevel;
    let mut out = Vec::with_capacity(traces * levels as usize);
    for t in 0..traces {
        for l in 1..=levels {
            out.push(if !options.thresholds_level(l) {
                0.0
            } else if options.rule == ThresholdRule::Fixed {
                options.fixed_threshold
            } else {
                let med = if per_level {
                    medians[t * levels as usize + l as usize - 1]
                } else {
                    medians[t]
                };
                denoise::universal_threshold(med.to_f64().unwrap() / denoise::MAD_TO_SIGMA, n)
            });
        }
    }
    out
}
