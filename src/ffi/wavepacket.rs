//! `sg_wavepacket_layout`: Gaussian wave packets (Nikitin, Duchkov & Andersson 2017) in 2D
//! and 3D — a box layout of the Fourier domain, the forward transform C, its adjoint C*, the
//! inverse, and the operations on coefficients (compression by the largest coefficients or
//! the sparse approximation, thresholding at a value, per level or per box for white noise,
//! the noise estimate, POCS interpolation of missing traces).

use super::context::sg_context;
use super::status::sg_status;
use super::{arg_ref, guard, out_ptr};
use crate::error::{Error, Result};
use crate::sample::Real;
use crate::wavepacket::coeffs::{
    estimate_noise, keep_largest, threshold, threshold_noise, PocsOptions, Schedule,
    ThresholdLevel, ThresholdMode,
};
use crate::wavepacket::inverse::CorrectionFilter;
use crate::wavepacket::sparse::SparseOptions;
use crate::wavepacket::{check_finite, LayoutOptions, WavepacketPlan};
use num_complex::Complex;
use std::sync::OnceLock;

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

/// One precision's transform, with its correction filter (made at the first inverse or POCS
/// call: it costs one forward and one adjoint transform).
struct Transform<T: Real> {
    plan: WavepacketPlan<T>,
    filter: OnceLock<CorrectionFilter<T>>,
}

impl<T: Real> Transform<T> {
    fn filter(&self) -> Result<&CorrectionFilter<T>> {
        if let Some(f) = self.filter.get() {
            return Ok(f);
        }
        // Two threads may both build it; the first one kept serves everyone.
        let f = CorrectionFilter::new(&self.plan)?;
        Ok(self.filter.get_or_init(|| f))
    }
}

enum Plan {
    F32(Transform<f32>),
    F64(Transform<f64>),
}

/// A wave-packet box layout of one data shape, with its transform in one precision, on one
/// context. Opaque.
pub struct sg_wavepacket_layout(Plan);

/// The sample types of the calls, and how each finds its transform in a layout.
trait Precision: Real {
    const SUFFIX: &'static str;
    fn transform(p: &Plan) -> Option<&Transform<Self>>;
}

impl Precision for f32 {
    const SUFFIX: &'static str = "f32";
    fn transform(p: &Plan) -> Option<&Transform<f32>> {
        match p {
            Plan::F32(t) => Some(t),
            Plan::F64(_) => None,
        }
    }
}

impl Precision for f64 {
    const SUFFIX: &'static str = "f64";
    fn transform(p: &Plan) -> Option<&Transform<f64>> {
        match p {
            Plan::F64(t) => Some(t),
            Plan::F32(_) => None,
        }
    }
}

/// The layout's transform for calls on `T`, or an error naming the call to make instead.
fn transform<'a, T: Precision>(
    layout: *const sg_wavepacket_layout,
    call: &str,
) -> Result<&'a Transform<T>> {
    let l = arg_ref(layout, "layout")?;
    T::transform(&l.0).ok_or_else(|| other_precision("layout", T::SUFFIX, call))
}

/// The error of a `call`_`suffix` on a `handle` made for the other precision, naming the
/// call to make instead.
pub(super) fn other_precision(handle: &str, suffix: &str, call: &str) -> Error {
    let (made, other) = match suffix {
        "f32" => ("double", "f64"),
        _ => ("single", "f32"),
    };
    crate::invalid!("the {handle} was created for {made} precision; call {call}_{other}")
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

/// Creates a layout for data of `dim` (2 or 3) axes of `shape[0]`, `shape[1]` [, `shape[2]`]
/// samples (axis 1 fastest; each 8 … 2^20; any sizes, not only powers of two or cubes: each
/// direction's box grids are padded, along its rotated axes, by two widths of the widest
/// packet, so the data's periodic images stay apart without a padded copy being made), in
/// `precision` `SG_WAVEPACKET_F32` or `SG_WAVEPACKET_F64`. `options` (see its fields) may be
/// NULL for the defaults; a value out of range is refused with the field named. For real data
/// one direction of each antipodal pair is kept. The windows are normalised on the discrete
/// layout so that the squares of all boxes' windows sum to one over the band the layout covers.
/// A layout the host's memory cannot hold gives `SG_ERR_OUT_OF_MEMORY`. On success `*out`
/// receives a layout the caller owns (`sg_wavepacket_layout_destroy`). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_create_with_options(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    out: *mut *mut sg_wavepacket_layout,
) -> sg_status {
    guard(|| {
        let o = match options.is_null() {
            true => sg_wavepacket_layout_options_default(),
            false => *arg_ref(options, "options")?,
        };
        create(ctx, dim, shape, precision, &o, out)
    })
}

/// The layout of `sg_wavepacket_layout_create_with_options` with `directions`, `levels`,
/// `alpha` (0 gives 3), `beta`, `tolerance` (0 gives 1e-6) and the default cutoff 1e-3. Kept,
/// unchanged, for programs built against it (the ABI policy only adds within a major
/// version); new code calls `sg_wavepacket_layout_create_with_options`, which also sets the
/// cutoff.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn sg_wavepacket_layout_create(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    directions: usize,
    levels: usize,
    alpha: f64,
    beta: f64,
    tolerance: f64,
    precision: i32,
    out: *mut *mut sg_wavepacket_layout,
) -> sg_status {
    let d = sg_wavepacket_layout_options_default();
    let o = sg_wavepacket_layout_options {
        directions,
        levels,
        alpha: if alpha == 0.0 { d.alpha } else { alpha },
        beta,
        cutoff: d.cutoff,
        tolerance: if tolerance == 0.0 {
            d.tolerance
        } else {
            tolerance
        },
    };
    guard(|| create(ctx, dim, shape, precision, &o, out))
}

/// The layout options of the C struct; Layout::new names each field it refuses (alpha,
/// beta, cutoff, tolerance, …).
pub(super) fn layout_options(o: &sg_wavepacket_layout_options) -> LayoutOptions {
    LayoutOptions {
        directions: o.directions,
        levels: o.levels,
        alpha: o.alpha,
        beta: o.beta,
        cutoff: o.cutoff,
        tolerance: o.tolerance,
    }
}

fn create(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    precision: i32,
    o: &sg_wavepacket_layout_options,
    out: *mut *mut sg_wavepacket_layout,
) -> Result<()> {
    let ctx = arg_ref(ctx, "ctx")?;
    let out = out_ptr(out, "out")?;
    if dim != 2 && dim != 3 {
        return Err(crate::invalid!("dim is {dim}; expected 2 or 3"));
    }
    let shape = slice(shape, dim as usize, "shape")?;
    let opts = layout_options(o);
    let c = ctx.0.clone();
    let plan = match precision {
        SG_WAVEPACKET_F32 => Plan::F32(Transform {
            plan: WavepacketPlan::new(c, shape, &opts)?,
            filter: OnceLock::new(),
        }),
        SG_WAVEPACKET_F64 => Plan::F64(Transform {
            plan: WavepacketPlan::new(c, shape, &opts)?,
            filter: OnceLock::new(),
        }),
        p => {
            return Err(crate::invalid!(
                "precision is {p}; expected SG_WAVEPACKET_F32 (1) or SG_WAVEPACKET_F64 (2)"
            ))
        }
    };
    // SAFETY: checked non-NULL; written only on success.
    unsafe { *out = Box::into_raw(Box::new(sg_wavepacket_layout(plan))) };
    Ok(())
}

/// Releases a layout. NULL is a no-op. Must not race with other calls on the same layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_destroy(layout: *mut sg_wavepacket_layout) {
    super::destroy(layout);
}

fn layout_of<'a>(layout: *const sg_wavepacket_layout) -> Result<&'a crate::wavepacket::Layout> {
    Ok(
        match &arg_ref::<sg_wavepacket_layout>(layout, "layout")?.0 {
            Plan::F32(t) => t.plan.layout(),
            Plan::F64(t) => t.plan.layout(),
        },
    )
}

/// The layout's sizes: `*n_samples` = n1·n2[·n3] (data values), `*n_coefficients` complex
/// coefficients (the redundancy is n_coefficients / n_samples), `*n_boxes` boxes (box 0 the
/// low-pass box, then per stored direction its `*levels` boxes, coarse to fine),
/// `*n_directions` the directions stored (one of each antipodal pair: half the count asked
/// for). No pointer may be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_sizes(
    layout: *const sg_wavepacket_layout,
    n_samples: *mut usize,
    n_coefficients: *mut usize,
    n_boxes: *mut usize,
    levels: *mut usize,
    n_directions: *mut usize,
) -> sg_status {
    guard(|| {
        let l = layout_of(layout)?;
        let outs = [
            (out_ptr(n_samples, "n_samples")?, l.n_samples()),
            (out_ptr(n_coefficients, "n_coefficients")?, l.n_coefficients),
            (out_ptr(n_boxes, "n_boxes")?, l.boxes.len()),
            (out_ptr(levels, "levels")?, l.levels),
            (out_ptr(n_directions, "n_directions")?, l.directions.len()),
        ];
        for (p, v) in outs {
            // SAFETY: checked non-NULL.
            unsafe { *p = v };
        }
        Ok(())
    })
}

/// Box `box_index` (< n_boxes) of the layout: `*level` (0 for the low-pass box, 1 … levels
/// coarse to fine), `*direction` (the index of its stored direction, −1 for the low-pass box),
/// `centre` (3 values: its centre frequency in cycles per sample along axes 1, 2, 3; 0 for an
/// axis a 2D layout lacks), `shape` (3 values: its coefficient grid L1 × L2 × L3, axis 1
/// fastest, 1 for an unused axis) and `*offset` (where its L1·L2·L3 coefficients start in the
/// coefficient array, in complex values). No pointer may be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_box_info(
    layout: *const sg_wavepacket_layout,
    box_index: usize,
    level: *mut i32,
    direction: *mut i32,
    centre: *mut f64,
    shape: *mut usize,
    offset: *mut usize,
) -> sg_status {
    guard(|| {
        let l = layout_of(layout)?;
        let b = l.boxes.get(box_index).ok_or_else(|| {
            crate::invalid!(
                "box_index is {box_index}; the layout has {} boxes",
                l.boxes.len()
            )
        })?;
        let ptrs = (
            out_ptr(level, "level")?,
            out_ptr(direction, "direction")?,
            out_ptr(centre, "centre")?,
            out_ptr(shape, "shape")?,
            out_ptr(offset, "offset")?,
        );
        // SAFETY: checked non-NULL; `centre` and `shape` hold 3 values by the C contract.
        unsafe {
            *ptrs.0 = b.level as i32;
            *ptrs.1 = b.direction.map_or(-1, |d| d as i32);
            std::ptr::copy_nonoverlapping(b.centre.as_ptr(), ptrs.2, 3);
            std::ptr::copy_nonoverlapping(b.shape.as_ptr(), ptrs.3, 3);
            *ptrs.4 = b.offset;
        }
        Ok(())
    })
}

/// A caller array of `len` elements; NULL is an error naming it.
pub(super) fn slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("`{name}` is NULL")));
    }
    // SAFETY: the C contract: `p` holds `len` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The data (n_samples values) and coefficient (2·n_coefficients values) arrays of a call,
/// checked non-NULL and apart.
fn arrays<T: Real>(
    plan: &WavepacketPlan<T>,
    data: *const T,
    coeffs: *const T,
) -> Result<(usize, usize)> {
    let l = plan.layout();
    let (n, m) = (l.n_samples(), l.n_coefficients);
    apart(data, n, coeffs, m)?;
    Ok((n, m))
}

/// Checks a call's `data` (n values) and `coeffs` (2·m values) non-NULL and apart.
pub(super) fn apart<T>(data: *const T, n: usize, coeffs: *const T, m: usize) -> Result<()> {
    if data.is_null() {
        return Err(Error::NullPointer("`data` is NULL".into()));
    }
    if coeffs.is_null() {
        return Err(Error::NullPointer("`coeffs` is NULL".into()));
    }
    let (a, b) = (data as usize, coeffs as usize);
    let t = std::mem::size_of::<T>();
    if a < b + 2 * m * t && b < a + n * t {
        return Err(crate::invalid!("`data` and `coeffs` overlap"));
    }
    Ok(())
}

fn forward<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: *const T,
    coeffs: *mut T,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_forward")?;
    let (n, m) = arrays(&t.plan, data, coeffs)?;
    // SAFETY: the C contract: n data values and m interleaved complex values.
    let (d, c) = unsafe {
        (
            std::slice::from_raw_parts(data, n),
            std::slice::from_raw_parts_mut(coeffs.cast::<Complex<T>>(), m),
        )
    };
    t.plan.forward(d, c)
}

fn adjoint<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *const T,
    data: *mut T,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_adjoint")?;
    let (n, m) = arrays(&t.plan, data, coeffs)?;
    // SAFETY: as in `forward`.
    let (c, d) = unsafe {
        (
            std::slice::from_raw_parts(coeffs.cast::<Complex<T>>(), m),
            std::slice::from_raw_parts_mut(data, n),
        )
    };
    t.plan.adjoint(c, d)
}

fn inverse<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *const T,
    data: *mut T,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_inverse")?;
    let (n, m) = arrays(&t.plan, data, coeffs)?;
    // SAFETY: as in `forward`.
    let (c, d) = unsafe {
        (
            std::slice::from_raw_parts(coeffs.cast::<Complex<T>>(), m),
            std::slice::from_raw_parts_mut(data, n),
        )
    };
    // Checked here too, before the correction filter may be built (one C and one C*).
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(crate::invalid!(
            "tolerance is {tolerance}; expected a value in (0, 1)"
        ));
    }
    check_finite(c, &t.plan.context().cpu)?;
    let report = t
        .plan
        .inverse(t.filter()?, c, d, tolerance, max_iterations)?;
    // SAFETY: NULL or a caller variable.
    unsafe {
        if let Some(p) = iterations.as_mut() {
            *p = report.iterations;
        }
        if let Some(p) = residual.as_mut() {
            *p = report.residual;
        }
    }
    Ok(())
}

/// The layout's coefficients in the caller's array, checked non-NULL and finite.
fn coefficients_in<'a, T: Precision>(
    t: &Transform<T>,
    coeffs: *const T,
) -> Result<&'a [Complex<T>]> {
    if coeffs.is_null() {
        return Err(Error::NullPointer("`coeffs` is NULL".into()));
    }
    let m = t.plan.layout().n_coefficients;
    // SAFETY: the C contract: 2·n_coefficients values.
    let c = unsafe { std::slice::from_raw_parts(coeffs.cast::<Complex<T>>(), m) };
    check_finite(c, &t.plan.context().cpu)?;
    Ok(c)
}

/// `coefficients_in`, writable.
fn coefficients<'a, T: Precision>(
    t: &Transform<T>,
    coeffs: *mut T,
) -> Result<&'a mut [Complex<T>]> {
    let m = coefficients_in(t, coeffs)?.len();
    // SAFETY: as in `coefficients_in`; the caller's array is writable.
    Ok(unsafe { std::slice::from_raw_parts_mut(coeffs.cast::<Complex<T>>(), m) })
}

fn keep<T: Precision>(layout: *const sg_wavepacket_layout, coeffs: *mut T, s: usize) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_keep_largest")?;
    keep_largest(coefficients(t, coeffs)?, s);
    Ok(())
}

fn threshold_mode(mode: i32) -> Result<ThresholdMode> {
    match mode {
        SG_WAVEPACKET_HARD => Ok(ThresholdMode::Hard),
        SG_WAVEPACKET_SOFT => Ok(ThresholdMode::Soft),
        v => Err(crate::invalid!(
            "mode is {v}; expected SG_WAVEPACKET_HARD (0) or SG_WAVEPACKET_SOFT (1)"
        )),
    }
}

/// `Ok` when `v` is finite and ≥ 0, else an error naming `name`.
fn non_negative(v: f64, name: &str) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(crate::invalid!(
            "{name} is {v}; expected a finite value ≥ 0"
        ))
    }
}

fn shrink<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut T,
    mode: i32,
    kind: i32,
    value: f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_threshold")?;
    let mode = threshold_mode(mode)?;
    let level = match kind {
        SG_WAVEPACKET_THRESHOLD_VALUE => ThresholdLevel::Value(value),
        SG_WAVEPACKET_THRESHOLD_SIGMA => ThresholdLevel::Sigma(value),
        v => return Err(crate::invalid!(
            "kind is {v}; expected SG_WAVEPACKET_THRESHOLD_VALUE (0) or SG_WAVEPACKET_THRESHOLD_SIGMA (1)"
        )),
    };
    non_negative(value, "value")?;
    threshold(t.plan.layout(), coefficients(t, coeffs)?, mode, level)
}

fn pocs<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: *mut T,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_pocs")?;
    let l = t.plan.layout();
    let traces = l.n_samples() / l.shape[0];
    if n_traces != traces {
        return Err(crate::invalid!(
            "n_traces is {n_traces}; the layout's data has {traces} traces"
        ));
    }
    let mask = slice(live, n_traces, "live")?
        .iter()
        .enumerate()
        .map(|(i, &v)| match v {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(crate::invalid!("live[{i}] is {v}; expected 0 or 1")),
        })
        .collect::<Result<Vec<bool>>>()?;
    // SAFETY: the C contract: NULL or a valid options struct.
    let o = unsafe { options.as_ref() }
        .copied()
        .unwrap_or_else(|| sg_wavepacket_pocs_options_default());
    let opts = PocsOptions {
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
    };
    if data.is_null() {
        return Err(Error::NullPointer("`data` is NULL".into()));
    }
    // SAFETY: the C contract: n_samples values.
    let d = unsafe { std::slice::from_raw_parts_mut(data, l.n_samples()) };
    t.plan.pocs_interpolate(t.filter()?, d, &mask, &opts)
}

fn noise_shrink<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut T,
    mode: i32,
    k: f64,
    sigma: f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_threshold_noise")?;
    let mode = threshold_mode(mode)?;
    non_negative(k, "k")?;
    non_negative(sigma, "sigma")?;
    let c = coefficients(t, coeffs)?;
    threshold_noise(t.plan.layout(), &t.plan.packet_norms(), c, mode, k, sigma)
}

fn noise_level<T: Precision>(
    layout: *const sg_wavepacket_layout,
    coeffs: *const T,
    sigma: *mut f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_estimate_noise")?;
    let sigma = out_ptr(sigma, "sigma")?;
    let c = coefficients_in(t, coeffs)?;
    let v = estimate_noise(t.plan.layout(), &t.plan.packet_norms(), c);
    // SAFETY: checked non-NULL.
    unsafe { *sigma = v };
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn sparse<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: *const T,
    coeffs: *mut T,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_sparse_approximation")?;
    let (n, m) = arrays(&t.plan, data, coeffs)?;
    // SAFETY: the C contract: NULL or a valid options struct.
    let o = unsafe { options.as_ref() }
        .copied()
        .unwrap_or_else(|| sg_wavepacket_sparse_options_default());
    let opts = SparseOptions {
        stages: o.stages,
        refit_iterations: o.refit_iterations,
    };
    // SAFETY: the C contract: n data values.
    let d = unsafe { std::slice::from_raw_parts(data, n) };
    let (c, report) = t.plan.sparse_approximation(d, s, &opts)?;
    // SAFETY: the C contract: m interleaved complex values; NULL or caller variables.
    unsafe {
        std::slice::from_raw_parts_mut(coeffs.cast::<Complex<T>>(), m).copy_from_slice(&c);
        if let Some(p) = kept.as_mut() {
            *p = report.kept;
        }
        if let Some(p) = residual.as_mut() {
            *p = report.residual;
        }
    }
    Ok(())
}

/// C: real data (n_samples values, axis 1 fastest) → `coeffs` (2·n_coefficients floats,
/// interleaved re, im; box after box at their offsets, each L1 × L2 × L3, axis 1 fastest).
/// The arrays must not overlap. Non-finite data gives `SG_ERR_NON_FINITE`. With a progress
/// callback on the context (`sg_context_set_progress`) reports stages "wave-packet spectrum"
/// and "wave-packet boxes"; a stop gives `SG_ERR_CANCELLED`. On any failure `coeffs` is not
/// written. Several threads may use one layout at once.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_f32(
    layout: *const sg_wavepacket_layout,
    data: *const f32,
    coeffs: *mut f32,
) -> sg_status {
    guard(|| forward(layout, data, coeffs))
}

/// `sg_wavepacket_forward_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_forward_f64(
    layout: *const sg_wavepacket_layout,
    data: *const f64,
    coeffs: *mut f64,
) -> sg_status {
    guard(|| forward(layout, data, coeffs))
}

/// C*: `coeffs` (as `sg_wavepacket_forward_f32` writes them) → real `data` (the real part of
/// the exact adjoint: ⟨C f, c⟩ = ⟨f, C* c⟩ for real f). Non-finite coefficients give
/// `SG_ERR_NON_FINITE`. Progress and stops as the forward call; on failure `data` is not
/// written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    data: *mut f32,
) -> sg_status {
    guard(|| adjoint(layout, coeffs, data))
}

/// `sg_wavepacket_adjoint_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_adjoint_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    data: *mut f64,
) -> sg_status {
    guard(|| adjoint(layout, coeffs, data))
}

/// The inverse: the data whose coefficients are closest (least squares) to `coeffs` — C*
/// followed by the correction filter (the inverse of C*C's response to a unit impulse, built
/// at the first inverse or POCS call on the layout), refined by conjugate gradients on C*C
/// until the relative residual is ≤ `tolerance` (in (0, 1)) or `max_iterations` (0: the
/// filter alone) were made. `*iterations` and `*residual` (each may be NULL) receive the
/// iterations made and the residual reached. Progress: stage "wave-packet inverse", one item
/// per iteration. On failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    data: *mut f32,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| {
        inverse(
            layout,
            coeffs,
            data,
            tolerance,
            max_iterations,
            iterations,
            residual,
        )
    })
}

/// `sg_wavepacket_inverse_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_inverse_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    data: *mut f64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| {
        inverse(
            layout,
            coeffs,
            data,
            tolerance,
            max_iterations,
            iterations,
            residual,
        )
    })
}

/// Compression, in place: keeps the `s` coefficients of largest magnitude and sets the
/// others to 0 (`s` ≥ n_coefficients keeps them all). Non-finite coefficients give
/// `SG_ERR_NON_FINITE` and nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    s: usize,
) -> sg_status {
    guard(|| keep(layout, coeffs, s))
}

/// `sg_wavepacket_keep_largest_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_keep_largest_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    s: usize,
) -> sg_status {
    guard(|| keep(layout, coeffs, s))
}

/// Denoising, in place: `mode` `SG_WAVEPACKET_HARD` or `SG_WAVEPACKET_SOFT`, at a threshold
/// given by `kind`: `SG_WAVEPACKET_THRESHOLD_VALUE` (`value` itself) or
/// `SG_WAVEPACKET_THRESHOLD_SIGMA` (`value`·σ of each level). `value` finite and ≥ 0.
/// Non-finite coefficients give `SG_ERR_NON_FINITE`; on failure nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    guard(|| shrink(layout, coeffs, mode, kind, value))
}

/// `sg_wavepacket_threshold_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    mode: i32,
    kind: i32,
    value: f64,
) -> sg_status {
    guard(|| shrink(layout, coeffs, mode, kind, value))
}

/// Interpolation of missing traces by POCS, in place: `data` (n_samples values) holds
/// `n_traces` = n_samples / n1 traces of n1 samples (numbered over axes 2[, 3]); `live[t]` is
/// 1 where trace t was recorded, 0 where it is missing (its samples are not read and may be
/// anything). The iteration starts from linear interpolation between the nearest live traces
/// (beyond the outermost ones, their copies); padding the section with a few missing traces on
/// each side helps the packets at its edges. Each iteration takes the coefficients c of the
/// current estimate, ranks them by
/// |c|/‖ψ_b‖, and removes from the missing traces what the coefficients at or below the
/// iteration's threshold carry (the inverse's correction filter applied to C* of them); the
/// recorded traces come out unchanged. `options` may be NULL for the defaults.
/// A non-finite sample in a recorded trace gives `SG_ERR_NON_FINITE`. Progress: stage
/// "wave-packet POCS", one item per iteration. On failure `data` is not written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_f32(
    layout: *const sg_wavepacket_layout,
    data: *mut f32,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    guard(|| pocs(layout, data, live, n_traces, options))
}

/// `sg_wavepacket_pocs_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_f64(
    layout: *const sg_wavepacket_layout,
    data: *mut f64,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    guard(|| pocs(layout, data, live, n_traces, options))
}

/// Denoising of white noise, in place: each box b is thresholded at `k`·`sigma`·‖ψ_b‖ (‖ψ_b‖
/// its packet norm, `sg_wavepacket_packet_norms`), `mode` `SG_WAVEPACKET_HARD` or
/// `SG_WAVEPACKET_SOFT`. `sigma` is the noise's standard deviation in the data (known, or from
/// `sg_wavepacket_estimate_noise_f32`): a coefficient of such noise has E|c|² = σ²‖ψ_b‖², and
/// exceeds k·σ‖ψ_b‖ with probability e^(−k²) (k ≈ 2.5, hard, removes all but 0.2 % of the
/// noise's coefficients). `k` and `sigma` finite and ≥ 0. Non-finite coefficients give
/// `SG_ERR_NON_FINITE`; on failure nothing is changed.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f32,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    guard(|| noise_shrink(layout, coeffs, mode, k, sigma))
}

/// `sg_wavepacket_threshold_noise_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_threshold_noise_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *mut f64,
    mode: i32,
    k: f64,
    sigma: f64,
) -> sg_status {
    guard(|| noise_shrink(layout, coeffs, mode, k, sigma))
}

/// `*sigma` receives the standard deviation of white noise in the data whose coefficients
/// (from `sg_wavepacket_forward_f32`) are `coeffs`: the median of |c|/‖ψ_b‖ over the finest
/// level's coefficients whose packets lie inside the data, over √ln 2 (the median of a
/// complex Gaussian's magnitude); the finest level holds the least signal. 0 when that level
/// holds no such coefficient. Non-finite coefficients give `SG_ERR_NON_FINITE`; on failure
/// `*sigma` is not written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_f32(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f32,
    sigma: *mut f64,
) -> sg_status {
    guard(|| noise_level(layout, coeffs, sigma))
}

/// `sg_wavepacket_estimate_noise_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_estimate_noise_f64(
    layout: *const sg_wavepacket_layout,
    coeffs: *const f64,
    sigma: *mut f64,
) -> sg_status {
    guard(|| noise_level(layout, coeffs, sigma))
}

/// `norms[b]` receives ‖ψ_b‖ of every box b (`n_boxes` must be the layout's box count): the ℓ2
/// norm of one of its complex packets where it lies inside the data (less near the edges), from
/// its window. A coefficient of white noise of variance σ² has E|c|² = σ²‖ψ_b‖², so |c|/‖ψ_b‖
/// compares coefficients across boxes. Any precision; on failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_packet_norms(
    layout: *const sg_wavepacket_layout,
    norms: *mut f64,
    n_boxes: usize,
) -> sg_status {
    guard(|| {
        let l = layout_of(layout)?;
        if n_boxes != l.boxes.len() {
            return Err(crate::invalid!(
                "n_boxes is {n_boxes}; the layout has {} boxes",
                l.boxes.len()
            ));
        }
        let out = out_ptr(norms, "norms")?;
        let v = match &arg_ref::<sg_wavepacket_layout>(layout, "layout")?.0 {
            Plan::F32(t) => t.plan.packet_norms(),
            Plan::F64(t) => t.plan.packet_norms(),
        };
        // SAFETY: checked non-NULL; the C contract: n_boxes values.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, n_boxes) };
        Ok(())
    })
}

/// The S-term approximation (compression): `coeffs` (as `sg_wavepacket_forward_f32` writes
/// them) receives at most `s` (≤ n_coefficients) non-zero coefficients whose synthesis C*c
/// (`sg_wavepacket_adjoint_f32`) approximates `data` (n_samples values). The frame is
/// redundant, so the largest coefficients of C f (`sg_wavepacket_keep_largest_f32`) are a poor
/// choice; here the support grows in `options.stages` stages, each adding the coefficients
/// whose packets correlate best with the residual (|(C r)_i|/‖ψ_i‖; only local maxima on
/// their box's grid while there are enough), and the kept ones are refitted by least squares
/// on ‖C*c − f‖ after each stage; two exchange rounds then each add S/4 more and drop the S/4
/// weakest (|c_i|·‖ψ_i‖). `options` may be NULL for the defaults. `*kept` (the non-zero
/// coefficients) and `*residual` (‖f − C*c‖/‖f‖) may each be NULL. The arrays must not
/// overlap. Non-finite data gives `SG_ERR_NON_FINITE`. Progress: stage "wave-packet sparse
/// approximation", one item per stage and per exchange round. On failure nothing is
/// written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_f32(
    layout: *const sg_wavepacket_layout,
    data: *const f32,
    coeffs: *mut f32,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| sparse(layout, data, coeffs, s, options, kept, residual))
}

/// `sg_wavepacket_sparse_approximation_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_f64(
    layout: *const sg_wavepacket_layout,
    data: *const f64,
    coeffs: *mut f64,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| sparse(layout, data, coeffs, s, options, kept, residual))
}
