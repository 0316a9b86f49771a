//! `sg_fxdecon_plan`: F-X (2D) and F-XY (3D) prediction filtering, random-noise attenuation.

use super::args::arg_ref;
use super::arrays::{not_null, overlap, slice, slice_mut};
use super::context::{create_on, sg_context};
use super::guard;
use super::option_fields::{count, flag, or_default};
use super::status::sg_status;
use crate::error::Result;
use crate::fxdecon::options::{FxdeconOptions, OutOfBand, Prediction};
use crate::fxdecon::{FxdeconPlan, Volume};
use crate::sample::Sample;

pub mod device;

/// One noncausal operator predicting each trace from its neighbours on both sides, the
/// trace itself excluded (2D: ±1…±L traces; 3D: the Lx × Ly box less its centre). Default.
pub const SG_FXDECON_TWO_SIDED: i32 = 0;
/// Average of the forward (L previous traces) and backward (L next traces) predictions,
/// as Canales/Gulunay f-x decon and Seismic Unix `sufxdecon`. 2D only.
pub const SG_FXDECON_FORWARD_BACKWARD: i32 = 1;
/// Frequencies outside [fmin, fmax] pass through unchanged. Default.
pub const SG_FXDECON_PASS_OUT_OF_BAND: i32 = 0;
/// Frequencies outside [fmin, fmax] are set to zero (as Seismic Unix does).
pub const SG_FXDECON_ZERO_OUT_OF_BAND: i32 = 1;

/// Options of `sg_fxdecon_plan_create_2d/_3d`. Start from `sg_fxdecon_options_default()`
/// (or `sg_fxdecon_options_seismic_unix()`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_fxdecon_options {
    /// Sample interval, seconds (default 0.004).
    pub sample_interval_s: f64,
    /// Lowest frequency filtered, Hz (default 6).
    pub fmin_hz: f64,
    /// Highest frequency filtered, Hz; 0 (default) means 0.6 × Nyquist.
    pub fmax_hz: f64,
    /// Time window length, seconds, tapers included; 0 (default) means the whole trace.
    pub time_window_s: f64,
    /// Overlap of consecutive time windows, blended by linear tapers that sum to one,
    /// seconds (default 0.1).
    pub taper_s: f64,
    /// FFT length per time window (even, ≥ the window); 0 (default) picks the next power
    /// of two (SU mode: the smallest 2,3,5,7-smooth even length ≥ 2 × sufxdecon's first
    /// window; give sufxdecon's reported nfft to reproduce it exactly).
    pub fft_length: i32,
    /// 2D: spatial window in traces (default 20).
    pub window_traces: i32,
    /// 2D: overlap of consecutive spatial windows in traces (default 3).
    pub overlap_traces: i32,
    /// 2D: operator length L, traces on each side of the predicted one (default 4).
    pub operator_traces: i32,
    /// 3D: spatial window along the inline index and along the crossline index, traces
    /// (default 20 × 20).
    pub window_inline: i32,
    pub window_crossline: i32,
    /// 3D: overlaps of consecutive spatial windows, traces (default 3 × 3: windows step 17).
    pub overlap_inline: i32,
    pub overlap_crossline: i32,
    /// 3D: operator extents Lx × Ly, odd; two-sided, centre excluded (default 7 × 7).
    pub operator_inline: i32,
    pub operator_crossline: i32,
    /// Prewhitening: added to the normal equations' diagonal as a fraction of the zero-lag
    /// autocorrelation (default 0.01).
    pub damping: f64,
    /// `SG_FXDECON_TWO_SIDED` (default) or `SG_FXDECON_FORWARD_BACKWARD` (2D only).
    pub prediction: i32,
    /// `SG_FXDECON_PASS_OUT_OF_BAND` (default) or `SG_FXDECON_ZERO_OUT_OF_BAND`.
    pub out_of_band: i32,
    /// 1: reproduce Seismic Unix `sufxdecon` (2D only): its blocks of `window_traces`
    /// (ntrw) traces, its autocorrelation window offset, forward/backward averaging of
    /// `operator_traces` (ntrf)-long filters, zeroed out-of-band, no damping, its time
    /// windows (`time_window_s` = twlen, `taper_s`); other fields are ignored. Default 0.
    pub su_compatible: i32,
}

/// A plan: one shape (2D section or 3D volume) and one set of options, on one context.
/// Opaque.
pub struct sg_fxdecon_plan(FxdeconPlan);

fn to_c(o: &FxdeconOptions) -> sg_fxdecon_options {
    let i = |v: usize| v as i32;
    sg_fxdecon_options {
        sample_interval_s: o.sample_interval,
        fmin_hz: o.fmin,
        fmax_hz: o.fmax,
        time_window_s: o.time_window,
        taper_s: o.taper,
        fft_length: i(o.fft_length),
        window_traces: i(o.window_traces),
        overlap_traces: i(o.overlap_traces),
        operator_traces: i(o.operator_traces),
        window_inline: i(o.window[0]),
        window_crossline: i(o.window[1]),
        overlap_inline: i(o.overlap[0]),
        overlap_crossline: i(o.overlap[1]),
        operator_inline: i(o.operator[0]),
        operator_crossline: i(o.operator[1]),
        damping: o.damping,
        prediction: match o.prediction {
            Prediction::TwoSided => SG_FXDECON_TWO_SIDED,
            Prediction::ForwardBackward => SG_FXDECON_FORWARD_BACKWARD,
        },
        out_of_band: match o.out_of_band {
            OutOfBand::Pass => SG_FXDECON_PASS_OUT_OF_BAND,
            OutOfBand::Zero => SG_FXDECON_ZERO_OUT_OF_BAND,
        },
        su_compatible: o.su_compatible as i32,
    }
}

fn from_c(o: &sg_fxdecon_options) -> Result<FxdeconOptions> {
    Ok(FxdeconOptions {
        sample_interval: o.sample_interval_s,
        fmin: o.fmin_hz,
        fmax: o.fmax_hz,
        time_window: o.time_window_s,
        taper: o.taper_s,
        fft_length: count(o.fft_length, "fft_length")?,
        window_traces: count(o.window_traces, "window_traces")?,
        overlap_traces: count(o.overlap_traces, "overlap_traces")?,
        operator_traces: count(o.operator_traces, "operator_traces")?,
        window: [
            count(o.window_inline, "window_inline")?,
            count(o.window_crossline, "window_crossline")?,
        ],
        overlap: [
            count(o.overlap_inline, "overlap_inline")?,
            count(o.overlap_crossline, "overlap_crossline")?,
        ],
        operator: [
            count(o.operator_inline, "operator_inline")?,
            count(o.operator_crossline, "operator_crossline")?,
        ],
        damping: o.damping,
        prediction: match o.prediction {
            SG_FXDECON_TWO_SIDED => Prediction::TwoSided,
            SG_FXDECON_FORWARD_BACKWARD => Prediction::ForwardBackward,
            v => {
                return Err(crate::invalid!(
                    "options.prediction is {v}; expected SG_FXDECON_TWO_SIDED (0) or SG_FXDECON_FORWARD_BACKWARD (1)"
                ))
            }
        },
        out_of_band: match o.out_of_band {
            SG_FXDECON_PASS_OUT_OF_BAND => OutOfBand::Pass,
            SG_FXDECON_ZERO_OUT_OF_BAND => OutOfBand::Zero,
            v => {
                return Err(crate::invalid!(
                    "options.out_of_band is {v}; expected SG_FXDECON_PASS_OUT_OF_BAND (0) or SG_FXDECON_ZERO_OUT_OF_BAND (1)"
                ))
            }
        },
        su_compatible: flag(o.su_compatible, "su_compatible")?,
    })
}

/// The default options (see each field). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_fxdecon_options_default() -> sg_fxdecon_options {
    to_c(&FxdeconOptions::default())
}

/// Options that reproduce Seismic Unix `sufxdecon` with its defaults (su_compatible = 1,
/// ntrw = 10, ntrf = 4, taper 0.1 s, fmin 6 Hz, fmax 0.6 × Nyquist, whole-trace window);
/// set `sample_interval_s` to the data's. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_fxdecon_options_seismic_unix() -> sg_fxdecon_options {
    to_c(&FxdeconOptions::seismic_unix())
}

fn options(o: *const sg_fxdecon_options) -> Result<FxdeconOptions> {
    or_default(o, from_c)
}

/// Creates a plan for 2D sections of `n_traces` traces of `n_samples` samples. `options`
/// may be NULL for the defaults. Bad options (an operator that does not fit in the spatial
/// window, fmin > fmax, …) give `SG_ERR_INVALID_ARGUMENT`. On success `*out` receives a
/// plan the caller owns (`sg_fxdecon_plan_destroy`); it holds its own reference to `ctx`.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn sg_fxdecon_plan_create_2d(
    ctx: *const sg_context,
    options: *const sg_fxdecon_options,
    n_samples: usize,
    n_traces: usize,
    out: *mut *mut sg_fxdecon_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        FxdeconPlan::new_2d(ctx.clone(), &self::options(options)?, n_samples, n_traces)
            .map(sg_fxdecon_plan)
    })
}

/// Creates a plan for 3D volumes of `n_inline × n_crossline` traces of `n_samples`
/// samples (F-XY, two-sided operator). As `sg_fxdecon_plan_create_2d` otherwise; the SU
/// mode and forward/backward averaging give `SG_ERR_UNSUPPORTED`.
#[no_mangle]
pub extern "C" fn sg_fxdecon_plan_create_3d(
    ctx: *const sg_context,
    options: *const sg_fxdecon_options,
    n_samples: usize,
    n_inline: usize,
    n_crossline: usize,
    out: *mut *mut sg_fxdecon_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        let options = self::options(options)?;
        FxdeconPlan::new_3d(ctx.clone(), &options, n_samples, n_inline, n_crossline)
            .map(sg_fxdecon_plan)
    })
}

/// Releases a plan. NULL is a no-op. Must not race with other calls on the same plan.
#[no_mangle]
pub extern "C" fn sg_fxdecon_plan_destroy(plan: *mut sg_fxdecon_plan) {
    super::destroy(plan);
}

/// Device bytes `plan` holds, into `*bytes` (0 on a CPU context, and for a plan the GPU does
/// not run): on a CUDA context the slab buffers, tables, streams' work and FFT plans made at
/// creation (slabs sized to a quarter of the device's free memory then), so that a device call
/// allocates nothing, except a copy of the input for an in-place call; a host call adds its
/// staging buffers on first use, and calls running at once on the plan a set each, kept.
/// `plan` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_fxdecon_plan_workspace_bytes(
    plan: *const sg_fxdecon_plan,
    bytes: *mut usize,
) -> sg_status {
    super::workspace_bytes(plan, "plan", bytes, |p| p.0.device_bytes())
}

/// Filters a 2D section: `n_traces` traces (the plan's), trace t starting at element
/// `t * trace_stride` (≥ n_samples) of `input`, into the same positions of `output`
/// (`input == output` filters in place, at the cost of a copy; other overlaps are refused).
/// Samples between traces are not touched. Non-finite input is refused
/// (`SG_ERR_NON_FINITE`) and nothing is written; finite input always gives finite output,
/// also where a time window holds only zeros (where `sufxdecon` writes NaN, seisgpu writes
/// the zero operator's output, 0 in band). Several threads may execute one plan at once.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_2d_f32(
    plan: *const sg_fxdecon_plan,
    input: *const f32,
    output: *mut f32,
    trace_stride: usize,
) -> sg_status {
    execute::<f32>(plan, 2, input, output, |p| p.layout_2d(trace_stride))
}

/// `sg_fxdecon_execute_2d_f32` for `double` traces (computed in double on the CPU; a CUDA
/// context runs f64 data on its CPU threads).
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_2d_f64(
    plan: *const sg_fxdecon_plan,
    input: *const f64,
    output: *mut f64,
    trace_stride: usize,
) -> sg_status {
    execute::<f64>(plan, 2, input, output, |p| p.layout_2d(trace_stride))
}

/// Filters a 3D volume: trace (il, xl), 0 ≤ il < n_inline, 0 ≤ xl < n_crossline, starts at
/// element `il * inline_stride + xl * crossline_stride` (a dense volume has inline_stride =
/// n_samples and crossline_stride = n_samples × n_inline). Otherwise as
/// `sg_fxdecon_execute_2d_f32`.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_3d_f32(
    plan: *const sg_fxdecon_plan,
    input: *const f32,
    output: *mut f32,
    inline_stride: usize,
    crossline_stride: usize,
) -> sg_status {
    execute_3d::<f32>(plan, input, output, inline_stride, crossline_stride)
}

/// `sg_fxdecon_execute_3d_f32` for `double` traces.
#[no_mangle]
pub extern "C" fn sg_fxdecon_execute_3d_f64(
    plan: *const sg_fxdecon_plan,
    input: *const f64,
    output: *mut f64,
    inline_stride: usize,
    crossline_stride: usize,
) -> sg_status {
    execute_3d::<f64>(plan, input, output, inline_stride, crossline_stride)
}

/// The body of `sg_fxdecon_execute_3d_f32/_f64`.
fn execute_3d<T: Sample>(
    plan: *const sg_fxdecon_plan,
    input: *const T,
    output: *mut T,
    inline_stride: usize,
    crossline_stride: usize,
) -> sg_status {
    execute(plan, 3, input, output, |p| {
        p.layout_3d(inline_stride, crossline_stride)
    })
}

/// The plan behind `plan`, refused unless it has `dims` dimensions.
fn plan_of_dims<'a>(plan: *const sg_fxdecon_plan, dims: usize) -> Result<&'a FxdeconPlan> {
    let plan = &arg_ref(plan, "plan")?.0;
    if plan.dims() != dims {
        return Err(crate::invalid!(
            "the plan is {}D; call sg_fxdecon_execute_{}d_*",
            plan.dims(),
            plan.dims()
        ));
    }
    Ok(plan)
}

/// The body of the execute calls: the plan of `dims` dimensions, `input` and `output` laid
/// out by `layout`, in place when they are the same array.
fn execute<T: Sample>(
    plan: *const sg_fxdecon_plan,
    dims: usize,
    input: *const T,
    output: *mut T,
    layout: impl FnOnce(&FxdeconPlan) -> Result<Volume>,
) -> sg_status {
    guard(|| {
        let plan = plan_of_dims(plan, dims)?;
        not_null(input, "input")?;
        not_null(output.cast_const(), "output")?;
        let layout = layout(plan)?;
        let len = layout.span();
        if std::ptr::eq(input, output) {
            let out = slice_mut(output, len, "output")?;
            // In place: every window reads its neighbours' input, so keep a copy.
            let mut copy = crate::error::try_vec(len, T::zero(), "a copy of the input")?;
            copy.copy_from_slice(out);
            return plan.execute(&copy, out, layout);
        }
        if overlap(input, len, output, len) {
            return Err(crate::invalid!(
                "`input` and `output` overlap without being the same array; pass the same pointer for in place"
            ));
        }
        let (input, out) = (
            slice(input, len, "input")?,
            slice_mut(output, len, "output")?,
        );
        plan.execute(input, out, layout)
    })
}
