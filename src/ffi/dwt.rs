//! `sg_dwt_plan`: batched, GSL-compatible wavelet transforms and denoising.

pub mod device;

use super::args::arg_ref;
use super::arrays::{check, optional_mut, overlap, slice, slice_mut};
use super::context::{create_on, sg_context};
use super::device_arrays::{in_out, InOut};
use super::guard;
use super::option_fields::{or_default, pick};
use super::status::sg_status;
use crate::dwt::cuda::DeviceIo;
use crate::dwt::denoise::{DenoiseOptions, NoiseEstimate, ThresholdMode, ThresholdRule};
use crate::dwt::wavelet::Family;
use crate::dwt::{Direction, DwtPlan, Traces};
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::sample::Sample;

/// GSL `gsl_wavelet_daubechies`: members 4, 6, …, 20 (GSL's member 8 is PyWavelets' `db4`).
pub const SG_WAVELET_DAUBECHIES: i32 = 1;
/// GSL `gsl_wavelet_daubechies_centered`.
pub const SG_WAVELET_DAUBECHIES_CENTERED: i32 = 2;
/// GSL `gsl_wavelet_haar`: member 2.
pub const SG_WAVELET_HAAR: i32 = 3;
/// GSL `gsl_wavelet_haar_centered`.
pub const SG_WAVELET_HAAR_CENTERED: i32 = 4;
/// GSL `gsl_wavelet_bspline`: members 103, 105, 202, 204, 206, 208, 301, 303, 305, 307, 309.
pub const SG_WAVELET_BSPLINE: i32 = 5;
/// GSL `gsl_wavelet_bspline_centered`.
pub const SG_WAVELET_BSPLINE_CENTERED: i32 = 6;

/// Forward transform (GSL's `gsl_wavelet_forward`).
pub const SG_DWT_FORWARD: i32 = 1;
/// Inverse transform (GSL's `gsl_wavelet_backward`).
pub const SG_DWT_INVERSE: i32 = -1;

/// Universal threshold σ·√(2 ln n), n the trace length (VisuShrink).
pub const SG_THRESHOLD_UNIVERSAL: i32 = 0;
/// The caller's `fixed_threshold`, for every thresholded level.
pub const SG_THRESHOLD_FIXED: i32 = 1;
/// Soft thresholding: sign(d)·max(|d| − λ, 0).
pub const SG_THRESHOLD_SOFT: i32 = 0;
/// Hard thresholding: d where |d| > λ, else 0.
pub const SG_THRESHOLD_HARD: i32 = 1;
/// σ = median(|d₁|)/0.6745 from the finest detail level, for all levels.
pub const SG_NOISE_FINEST_LEVEL: i32 = 0;
/// σⱼ = median(|dⱼ|)/0.6745 from each level's own coefficients.
pub const SG_NOISE_PER_LEVEL: i32 = 1;

/// Options of `sg_dwt_denoise_*`. Start from `sg_dwt_denoise_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_dwt_denoise_options {
    /// `SG_THRESHOLD_UNIVERSAL` (default) or `SG_THRESHOLD_FIXED`.
    pub threshold_rule: i32,
    /// `SG_THRESHOLD_SOFT` (default) or `SG_THRESHOLD_HARD`.
    pub threshold_mode: i32,
    /// `SG_NOISE_FINEST_LEVEL` (default) or `SG_NOISE_PER_LEVEL`.
    pub noise_estimate: i32,
    /// Transform depth; 0 (default) means all levels, log2(n_samples).
    pub n_levels: u32,
    /// The threshold of `SG_THRESHOLD_FIXED` (≥ 0); ignored otherwise.
    pub fixed_threshold: f64,
    /// Bit j−1 set: detail level j (1 = finest) is thresholded. Default: all bits set.
    pub level_mask: u64,
}

/// A DWT plan: one wavelet, one trace length, on one context. Opaque.
pub struct sg_dwt_plan(DwtPlan);

/// The default denoising options: universal threshold, soft, σ from the finest level,
/// all levels transformed and thresholded. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_dwt_denoise_options_default() -> sg_dwt_denoise_options {
    let d = DenoiseOptions::default();
    sg_dwt_denoise_options {
        threshold_rule: SG_THRESHOLD_UNIVERSAL,
        threshold_mode: SG_THRESHOLD_SOFT,
        noise_estimate: SG_NOISE_FINEST_LEVEL,
        n_levels: d.levels,
        fixed_threshold: d.fixed_threshold,
        level_mask: d.level_mask,
    }
}

fn family(code: i32) -> Result<Family> {
    Ok(match code {
        SG_WAVELET_DAUBECHIES => Family::Daubechies,
        SG_WAVELET_DAUBECHIES_CENTERED => Family::DaubechiesCentered,
        SG_WAVELET_HAAR => Family::Haar,
        SG_WAVELET_HAAR_CENTERED => Family::HaarCentered,
        SG_WAVELET_BSPLINE => Family::Bspline,
        SG_WAVELET_BSPLINE_CENTERED => Family::BsplineCentered,
        other => {
            return Err(crate::invalid!(
                "family is {other}; expected one of SG_WAVELET_* (1 to 6)"
            ))
        }
    })
}

/// The caller's denoising options; NULL for the defaults.
fn options(opts: *const sg_dwt_denoise_options) -> Result<DenoiseOptions> {
    or_default(opts, |o| {
        Ok(DenoiseOptions {
            rule: pick(
                o.threshold_rule,
                "threshold_rule",
                ThresholdRule::Universal,
                ThresholdRule::Fixed,
            )?,
            mode: pick(
                o.threshold_mode,
                "threshold_mode",
                ThresholdMode::Soft,
                ThresholdMode::Hard,
            )?,
            noise: pick(
                o.noise_estimate,
                "noise_estimate",
                NoiseEstimate::FinestLevel,
                NoiseEstimate::PerLevel,
            )?,
            fixed_threshold: o.fixed_threshold,
            levels: o.n_levels,
            level_mask: o.level_mask,
        })
    })
}

/// Creates a plan for `n_samples`-sample traces (a power of two ≥ 2) with the wavelet
/// `family` (`SG_WAVELET_*`) and `member` (as GSL numbers them). `SG_ERR_UNSUPPORTED`
/// for a length or member the wavelet does not allow. On success `*out` receives a plan
/// the caller owns (`sg_dwt_plan_destroy`); it holds its own reference to `ctx`. `ctx`
/// and `out` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_dwt_plan_create(
    ctx: *const sg_context,
    family: i32,
    member: i32,
    n_samples: usize,
    out: *mut *mut sg_dwt_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        let family = self::family(family)?;
        let member = u32::try_from(member)
            .map_err(|_| Error::Unsupported(format!("member {member} is negative")))?;
        DwtPlan::new(ctx.clone(), family, member, n_samples).map(sg_dwt_plan)
    })
}

/// Releases a plan. NULL is a no-op. Must not race with other calls on the same plan.
#[no_mangle]
pub extern "C" fn sg_dwt_plan_destroy(plan: *mut sg_dwt_plan) {
    super::destroy(plan);
}

/// Device bytes `plan` holds, into `*bytes` (0 on a CPU context): the workspace of its
/// device calls (`sg_dwt_*_device_*`), which holds a denoise's medians and the work arrays
/// of traces too long for one block's shared memory. It is made by `sg_dwt_plan_reserve`,
/// or by the first device call that needs more than it holds, from the context's
/// allocator, and kept until the plan is destroyed. Host calls (`sg_dwt_execute_f32`, …)
/// take their chunk buffers from the allocator per call (chunks of at most a few hundred
/// MB) and give them back when they return.
/// `plan` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_dwt_plan_workspace_bytes(
    plan: *const sg_dwt_plan,
    bytes: *mut usize,
) -> sg_status {
    super::workspace_bytes(plan, "plan", bytes, |p| p.0.device_bytes())
}

/// Makes `plan`'s workspace (`sg_dwt_plan_workspace_bytes`) hold what any device call of
/// up to `n_traces` traces needs (any depth, rule and precision), from the context's
/// allocator, and loads their kernels, so that such calls allocate and load nothing. An
/// application that captures device calls into a CUDA graph calls it first: a call that
/// would need more than the workspace holds, or kernels not loaded yet, while its stream is
/// captured is refused with `SG_ERR_INVALID_ARGUMENT`, as nothing may be allocated or
/// loaded during a capture; and a graph holds the workspace's address,
/// so it must not be replayed after a larger call or reserve has replaced the workspace.
/// Uses the context's stream (`sg_context_set_stream`) for the allocation, without
/// waiting. `SG_ERR_DEVICE_OUT_OF_MEMORY` (the message gives the sizes) when the memory is
/// not there; the plan then holds no workspace (the smaller one it held went first, so
/// that its bytes could be reused) and stays usable. On a CPU context it does nothing and
/// returns `SG_OK`. `plan` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_dwt_plan_reserve(plan: *const sg_dwt_plan, n_traces: usize) -> sg_status {
    guard(|| arg_ref(plan, "plan")?.0.reserve(n_traces))
}

/// The caller's arrays as slices: the same pointer means in place; any other overlap
/// is refused (the result would depend on the order of work).
fn traces<'a, T: Sample>(
    input: *const T,
    output: *mut T,
    batch: &TraceBatch,
) -> Result<Traces<'a, T>> {
    let len = batch.span();
    check(input, len, "input")?;
    check(output.cast_const(), len, "output")?;
    if std::ptr::eq(input, output) {
        return Ok(Traces::InPlace(slice_mut(output, len, "output")?));
    }
    if overlap(input, len, output, len) {
        return Err(crate::invalid!(
            "`input` and `output` overlap without being the same array; pass the same pointer for in place"
        ));
    }
    Ok(Traces::Separate {
        input: slice(input, len, "input")?,
        output: slice_mut(output, len, "output")?,
    })
}

/// The caller's `thresholds` (NULL: none wanted): n_traces × levels doubles.
fn thresholds_out<'a>(
    plan: &DwtPlan,
    options: &DenoiseOptions,
    thresholds: *mut f64,
    n_traces: usize,
) -> Result<Option<&'a mut [f64]>> {
    let levels = plan.resolve_levels(options.levels)? as usize;
    optional_mut(thresholds, n_traces.saturating_mul(levels), "thresholds")
}

fn direction(code: i32) -> Result<Direction> {
    match code {
        SG_DWT_FORWARD => Ok(Direction::Forward),
        SG_DWT_INVERSE => Ok(Direction::Inverse),
        d => Err(crate::invalid!(
            "direction is {d}; expected SG_DWT_FORWARD (1) or SG_DWT_INVERSE (-1)"
        )),
    }
}

/// Where a call's input and output are: `input == output` works in place, any other
/// overlap is refused (the result would depend on the order of work).
pub(super) enum Arrays<T> {
    /// The caller's host arrays.
    Host(*const T, *mut T),
    /// Device memory of the plan's context (`CUdeviceptr` values).
    Device([u64; 2]),
}

/// A batch's traces as the plan takes them.
enum Io<'a, T> {
    Host(Traces<'a, T>),
    Device(DeviceIo<'a, T>),
}

impl<T: Sample> Arrays<T> {
    /// `body` on the traces of `n_traces` traces `trace_stride` apart, checked against
    /// `plan`; a device call (`call`) is first refused on a context without a GPU.
    fn with_io(
        self,
        plan: &DwtPlan,
        call: &str,
        (n_traces, trace_stride): (usize, usize),
        body: impl FnOnce(Io<T>, TraceBatch) -> Result<()>,
    ) -> Result<()> {
        let batch = || TraceBatch::new(plan.n_samples(), n_traces, trace_stride);
        match self {
            Arrays::Host(input, output) => {
                let batch = batch()?;
                body(Io::Host(traces(input, output, &batch)?), batch)
            }
            Arrays::Device(addresses) => {
                let gpu = plan.context().gpu_for(call)?;
                let batch = batch()?;
                match in_out::<T>(gpu, addresses, batch.span())? {
                    InOut::InPlace(mut a) => body(Io::Device(DeviceIo::in_place(&mut a)), batch),
                    InOut::Apart(i, mut o) => body(Io::Device(DeviceIo::apart(&i, &mut o)), batch),
                }
            }
        }
    }
}

/// The body of the transform calls, host and device.
fn execute<T: Sample>(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    arrays: Arrays<T>,
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let direction = self::direction(direction)?;
        let call = "sg_dwt_execute_device";
        arrays.with_io(plan, call, (n_traces, trace_stride), |io, batch| match io {
            Io::Host(traces) => plan.transform(direction, n_levels, traces, batch),
            Io::Device(io) => plan.transform_device(direction, n_levels, io, batch),
        })
    })
}

/// The body of the denoise calls, host and device.
fn denoise<T: Sample>(
    plan: *const sg_dwt_plan,
    opts: *const sg_dwt_denoise_options,
    arrays: Arrays<T>,
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let options = self::options(opts)?;
        let call = "sg_dwt_denoise_device";
        arrays.with_io(plan, call, (n_traces, trace_stride), |io, batch| {
            let thresholds = thresholds_out(plan, &options, thresholds, n_traces)?;
            match io {
                Io::Host(traces) => plan.denoise(&options, traces, batch, thresholds),
                Io::Device(io) => plan.denoise_device(&options, io, batch, thresholds),
            }
        })
    })
}

/// Transforms `n_traces` traces of `plan`'s length, trace t starting at element
/// `t * trace_stride` (≥ n_samples) of `input`, into the same positions of `output`.
/// `direction`: `SG_DWT_FORWARD` or `SG_DWT_INVERSE`. `n_levels`: depth, 0 for all
/// (log2 n). The coefficient layout is GSL's: [a_L | d_L | … | d_1]. `input == output`
/// transforms in place; other overlaps are refused. Samples between traces are not
/// touched. Non-finite input is refused (`SG_ERR_NON_FINITE`) and nothing is written.
/// No pointer may be NULL. Several threads may execute one plan at once.
#[no_mangle]
pub extern "C" fn sg_dwt_execute_f32(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    input: *const f32,
    output: *mut f32,
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    let arrays = Arrays::<f32>::Host(input, output);
    execute(plan, direction, n_levels, arrays, n_traces, trace_stride)
}

/// `sg_dwt_execute_f32` for `double` traces.
#[no_mangle]
pub extern "C" fn sg_dwt_execute_f64(
    plan: *const sg_dwt_plan,
    direction: i32,
    n_levels: u32,
    input: *const f64,
    output: *mut f64,
    n_traces: usize,
    trace_stride: usize,
) -> sg_status {
    let arrays = Arrays::<f64>::Host(input, output);
    execute(plan, direction, n_levels, arrays, n_traces, trace_stride)
}

/// Denoises `n_traces` traces (layout as in `sg_dwt_execute_f32`) by wavelet shrinkage:
/// forward transform, thresholding of the detail levels chosen by `options`, inverse
/// transform, in one call. `options` may be NULL for the defaults. `thresholds` may be
/// NULL; otherwise it receives n_traces × levels doubles, trace by trace, the threshold
/// applied to each level (finest first), 0 for levels left alone. Non-finite input is
/// refused (`SG_ERR_NON_FINITE`) and nothing is written. Several threads may use one
/// plan at once.
#[no_mangle]
pub extern "C" fn sg_dwt_denoise_f32(
    plan: *const sg_dwt_plan,
    options: *const sg_dwt_denoise_options,
    input: *const f32,
    output: *mut f32,
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    let arrays = Arrays::<f32>::Host(input, output);
    denoise(plan, options, arrays, n_traces, trace_stride, thresholds)
}

/// `sg_dwt_denoise_f32` for `double` traces.
#[no_mangle]
pub extern "C" fn sg_dwt_denoise_f64(
    plan: *const sg_dwt_plan,
    options: *const sg_dwt_denoise_options,
    input: *const f64,
    output: *mut f64,
    n_traces: usize,
    trace_stride: usize,
    thresholds: *mut f64,
) -> sg_status {
    let arrays = Arrays::<f64>::Host(input, output);
    denoise(plan, options, arrays, n_traces, trace_stride, thresholds)
}
