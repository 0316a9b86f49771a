//! What the threshold calls' C arguments say, host and device alike: a threshold by value or
//! per level (`sg_wavepacket_threshold_*`), or per box for white noise
//! (`sg_wavepacket_threshold_noise_*`), with its mode; checked in the calls' order.

use super::options::{non_negative, threshold_level, threshold_mode};
use crate::error::Result;
use crate::wavepacket::coeffs::{ThresholdLevel, ThresholdMode};

/// A threshold call's own arguments after `mode`.
#[derive(Clone, Copy)]
pub(super) enum Threshold {
    /// `kind` (`SG_WAVEPACKET_THRESHOLD_*`) and `value`.
    Level(i32, f64),
    /// Each box b at `k`·`sigma`·‖ψ_b‖.
    Noise { k: f64, sigma: f64 },
}

/// A threshold call's rule, its codes decoded (the values are checked by `check_values`).
#[derive(Clone, Copy)]
pub(super) enum Rule {
    Level(ThresholdLevel),
    Noise { k: f64, sigma: f64 },
}

impl Threshold {
    /// The call's name after `sg_wavepacket_` (`threshold`, `threshold_noise`).
    pub(super) fn verb(self) -> &'static str {
        match self {
            Threshold::Level(..) => "threshold",
            Threshold::Noise { .. } => "threshold_noise",
        }
    }

    /// The mode and the rule, their codes decoded (`mode` first, then `kind`).
    pub(super) fn rule(self, mode: i32) -> Result<(ThresholdMode, Rule)> {
        let mode = threshold_mode(mode)?;
        let rule = match self {
            Threshold::Level(kind, value) => Rule::Level(threshold_level(kind, value)?),
            Threshold::Noise { k, sigma } => Rule::Noise { k, sigma },
        };
        Ok((mode, rule))
    }
}

impl Rule {
    /// `Ok` when the rule's values are finite and ≥ 0, else an error naming the argument.
    pub(super) fn check_values(self) -> Result<()> {
        match self {
            Rule::Level(ThresholdLevel::Value(v) | ThresholdLevel::Sigma(v)) => {
                non_negative(v, "value")
            }
            Rule::Noise { k, sigma } => {
                non_negative(k, "k")?;
                non_negative(sigma, "sigma")
            }
        }
    }
}
