//! The codes and option structs of the wave-packet calls, their defaults, and what they
//! mean to the core.

use crate::error::Result;
use crate::ffi::args::options_or;
use crate::ffi::precision::Codes;
use crate::wavepacket::coeffs::{PocsOptions, Schedule, ThresholdLevel, ThresholdMode};
use crate::wavepacket::sparse::SparseOptions;
use crate::wavepacket::LayoutOptions;

/// Single precision: float data and interleaved float complex coefficients.
pub const SG_WAVEPACKET_F32: i32 = 1;
/// Double precision.
pub const SG_WAVEPACKET_F64: i32 = 2;
/// Hard thresholding: coefficients of magnitude ≤ the threshold become 0, the others stay.
pub const SG_WAVEPACKET_HARD: i32 = 0;
/// Soft thresholding: as hard, and the magnitude of the others shrinks by the threshold.
pub const SG_WAVEPACKET_SOFT: i32 = 1;
/// The threshold is `value` itself, for every coefficient.
pub const SG_WAVEPACKET_THRESHOLD_VALUE: i32 = 0;
/// The threshold is `value`·σ per level, σ = median(|c|)/0.6745 over the level's
/// coefficients (the noise level when most coefficients are noise).
pub const SG_WAVEPACKET_THRESHOLD_SIGMA: i32 = 1;
/// POCS thresholds fall linearly from `first` to `last`.
pub const SG_WAVEPACKET_SCHEDULE_LINEAR: i32 = 0;
/// POCS thresholds fall geometrically from `first` to `last` (the default).
pub const SG_WAVEPACKET_SCHEDULE_EXPONENTIAL: i32 = 1;

/// Options of `sg_wavepacket_pocs_f32/_f64`. Start from `sg_wavepacket_pocs_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_wavepacket_pocs_options {
    /// Iterations, ≥ 1 (default 40); each is one forward transform and one reconstruction.
    pub iterations: usize,
    /// `SG_WAVEPACKET_SCHEDULE_EXPONENTIAL` (default) or `SG_WAVEPACKET_SCHEDULE_LINEAR`.
    pub schedule: i32,
    /// The hard threshold of the first and of the last iteration, as fractions of the largest
    /// |c|/‖ψ_b‖ (a coefficient over its packet's norm) of the first guess (the gaps filled by
    /// linear interpolation between the nearest live traces): 0 < last ≤ first ≤ 1 (default
    /// 0.003 and 0.003: a fixed threshold).
    pub first: f64,
    pub last: f64,
}

/// Options of `sg_wavepacket_sparse_approximation_f32/_f64`. Start from
/// `sg_wavepacket_sparse_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_wavepacket_sparse_options {
    /// Stages in which the support grows to its final size, in equal shares, ≥ 1 (default 12);
    /// each costs one forward transform and the refit.
    pub stages: usize,
    /// Conjugate-gradient (CGLS) iterations of the least-squares refit after each stage and
    /// each half of the two exchange rounds, ≥ 1 (default 8); each costs one forward and one
    /// adjoint transform.
    pub refit_iterations: usize,
}

/// The options `sg_wavepacket_pocs_f32/_f64` use when given NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_options_default() -> sg_wavepacket_pocs_options {
    let d = PocsOptions::default();
    sg_wavepacket_pocs_options {
        iterations: d.iterations,
        schedule: SG_WAVEPACKET_SCHEDULE_EXPONENTIAL,
        first: d.first,
        last: d.last,
    }
}

/// Options of `sg_wavepacket_layout_create_with_options`. Start from
/// `sg_wavepacket_layout_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_wavepacket_layout_options {
    /// 2D: any even count 2 … 4096 (uniform in angle); 3D: the size of a Lebedev rule (6, 14,
    /// 26, 38, 50, 74, 86, 110, 146, 170, 194, 230, 266, 302, 350, 434, 590); 0 (default): 32
    /// in 2D, 350 in 3D.
    pub directions: usize,
    /// Directional levels 1 … 12, the finest centred at 0.375 cycles/sample and each coarser
    /// one an octave lower; 0 (default): max(1, ⌊log2 min(shape)⌋ − 3).
    pub levels: usize,
    /// Radial sharpness, 0.5 … 20: a level's radial width is about its centre frequency over
    /// alpha (default 3).
    pub alpha: f64,
    /// Radial over lateral width, ≥ 0; 0 (default): an angular width of half the mean spacing
    /// of the directions.
    pub beta: f64,
    /// Each box's rectangle covers where its window exceeds `cutoff` times its peak, in
    /// (0, 0.5) (default 1e-3). Larger values give smaller boxes, so fewer coefficients (less
    /// redundancy) and a looser partition of unity.
    pub cutoff: f64,
    /// The USFFT's relative accuracy, in (0, 1), at least 1e-6 in single precision (default
    /// 1e-6).
    pub tolerance: f64,
}

/// The options `sg_wavepacket_layout_create_with_options` uses when given NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_options_default() -> sg_wavepacket_layout_options {
    let d = LayoutOptions::default();
    sg_wavepacket_layout_options {
        directions: d.directions,
        levels: d.levels,
        alpha: d.alpha,
        beta: d.beta,
        cutoff: d.cutoff,
        tolerance: d.tolerance,
    }
}

/// The options `sg_wavepacket_sparse_approximation_f32/_f64` use when given NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_options_default() -> sg_wavepacket_sparse_options {
    let d = SparseOptions::default();
    sg_wavepacket_sparse_options {
        stages: d.stages,
        refit_iterations: d.refit_iterations,
    }
}

/// The layout options of the C struct; Layout::new names each field it refuses (alpha,
/// beta, cutoff, tolerance, …).
pub(crate) fn layout_options(o: &sg_wavepacket_layout_options) -> LayoutOptions {
    LayoutOptions {
        directions: o.directions,
        levels: o.levels,
        alpha: o.alpha,
        beta: o.beta,
        cutoff: o.cutoff,
        tolerance: o.tolerance,
    }
}

/// The precision codes of layouts and tiled volumes.
pub(crate) const PRECISIONS: Codes = Codes {
    prefix: "SG_WAVEPACKET",
    f32: SG_WAVEPACKET_F32,
    f64: SG_WAVEPACKET_F64,
};

/// The POCS options behind `options`, NULL meaning the defaults.
pub(crate) fn pocs_options(options: *const sg_wavepacket_pocs_options) -> Result<PocsOptions> {
    let o = options_or(options, sg_wavepacket_pocs_options_default())?;
    Ok(PocsOptions {
        iterations: o.iterations,
        schedule: match o.schedule {
            SG_WAVEPACKET_SCHEDULE_LINEAR => Schedule::Linear,
            SG_WAVEPACKET_SCHEDULE_EXPONENTIAL => Schedule::Exponential,
            v => return Err(crate::invalid!(
                "options.schedule is {v}; expected SG_WAVEPACKET_SCHEDULE_LINEAR (0) or SG_WAVEPACKET_SCHEDULE_EXPONENTIAL (1)"
            )),
        },
        first: o.first,
        last: o.last,
    })
}

/// The sparse-approximation options behind `options`, NULL meaning the defaults.
pub(crate) fn sparse_options(
    options: *const sg_wavepacket_sparse_options,
) -> Result<SparseOptions> {
    let o = options_or(options, sg_wavepacket_sparse_options_default())?;
    Ok(SparseOptions {
        stages: o.stages,
        refit_iterations: o.refit_iterations,
    })
}

pub(crate) fn threshold_mode(mode: i32) -> Result<ThresholdMode> {
    match mode {
        SG_WAVEPACKET_HARD => Ok(ThresholdMode::Hard),
        SG_WAVEPACKET_SOFT => Ok(ThresholdMode::Soft),
        v => Err(crate::invalid!(
            "mode is {v}; expected SG_WAVEPACKET_HARD (0) or SG_WAVEPACKET_SOFT (1)"
        )),
    }
}

/// The threshold of a `kind` (`SG_WAVEPACKET_THRESHOLD_*`) and `value`.
pub(crate) fn threshold_level(kind: i32, value: f64) -> Result<ThresholdLevel> {
    match kind {
        SG_WAVEPACKET_THRESHOLD_VALUE => Ok(ThresholdLevel::Value(value)),
        SG_WAVEPACKET_THRESHOLD_SIGMA => Ok(ThresholdLevel::Sigma(value)),
        v => Err(crate::invalid!(
            "kind is {v}; expected SG_WAVEPACKET_THRESHOLD_VALUE (0) or SG_WAVEPACKET_THRESHOLD_SIGMA (1)"
        )),
    }
}

/// `Ok` when `v` is finite and ≥ 0, else an error naming `name`.
pub(crate) fn non_negative(v: f64, name: &str) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(crate::invalid!(
            "{name} is {v}; expected a finite value ≥ 0"
        ))
    }
}
