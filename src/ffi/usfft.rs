//! `sg_usfft_plan`: non-uniform FFTs (types 1, 2 and 3) in 1D, 2D and 3D, in the FINUFFT
//! spirit.

pub mod device;

use super::args::{arg_mut, arg_ref};
use super::arrays::{overlap, slice, slice_mut_or_empty, slice_or_empty};
use super::context::{create_on, sg_context};
use super::guard;
use super::option_fields::or_default;
use super::precision::{ByPrecision, Codes, Generic, Precision};
use super::status::sg_status;
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::{KernelShape, ModeOrder, TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use num_complex::Complex;

/// Type 1 ("u2e"): irregular points → regular modes, f_k = Σ_j c_j e^{i·sign·k·x_j}.
pub const SG_USFFT_TYPE1: i32 = 1;
/// Type 2 ("e2u"): regular modes → irregular points, c_j = Σ_k f_k e^{i·sign·k·x_j}.
pub const SG_USFFT_TYPE2: i32 = 2;
/// Type 3: irregular points → irregular frequencies, f_k = Σ_j c_j e^{i·sign·s_k·x_j}.
pub const SG_USFFT_TYPE3: i32 = 3;
/// Single precision: float coordinates and interleaved float complex arrays.
pub const SG_USFFT_F32: i32 = 1;
/// Double precision.
pub const SG_USFFT_F64: i32 = 2;
/// Exponential-of-semicircle kernel exp(β(√(1−z²)−1)).
pub const SG_USFFT_KERNEL_ES: i32 = 0;
/// Gaussian kernel (the seed's choice; about twice as wide for the same accuracy).
pub const SG_USFFT_KERNEL_GAUSSIAN: i32 = 1;
/// Prolate spheroidal kernel (the default): a fit of the prolate spheroidal wave function ψ0
/// (ES plus its mirror image, times a polynomial in z²); about half a digit more accurate
/// than ES at a width, so one cell narrower at most tolerances.
pub const SG_USFFT_KERNEL_PROLATE: i32 = 2;
/// Modes stored centred: k = −N/2 … (N−1)/2 (the default).
pub const SG_USFFT_MODES_CENTRED: i32 = 0;
/// Modes stored in FFT order: k = 0 … (N−1)/2, then −N/2 … −1.
pub const SG_USFFT_MODES_FFT: i32 = 1;

/// The precision codes of the plans.
const PRECISIONS: Codes = Codes {
    prefix: "SG_USFFT",
    f32: SG_USFFT_F32,
    f64: SG_USFFT_F64,
};

/// Options of `sg_usfft_plan_create`. Start from `sg_usfft_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sg_usfft_options {
    /// `SG_USFFT_KERNEL_PROLATE` (default), `SG_USFFT_KERNEL_ES` or `SG_USFFT_KERNEL_GAUSSIAN`.
    pub kernel: i32,
    /// `SG_USFFT_MODES_CENTRED` (default) or `SG_USFFT_MODES_FFT`.
    pub mode_order: i32,
    /// Fine-grid size over mode count: 2.0 (the default and the only value supported;
    /// others give `SG_ERR_UNSUPPORTED`).
    pub upsampling: f64,
}

/// What an `sg_usfft_plan` holds per precision.
pub(crate) struct Usfft;

impl Generic for Usfft {
    type Of<T: Real> = UsfftPlan<T>;
}

/// A USFFT plan: one type, dimension, mode counts, sign, tolerance, precision and batch size,
/// on one context, with the points of its last `sg_usfft_set_points_*` call. Opaque.
pub struct sg_usfft_plan(ByPrecision<Usfft>);

/// The default options: prolate kernel, centred modes, upsampling 2. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_usfft_options_default() -> sg_usfft_options {
    sg_usfft_options {
        kernel: SG_USFFT_KERNEL_PROLATE,
        mode_order: SG_USFFT_MODES_CENTRED,
        upsampling: 2.0,
    }
}

fn options(o: &sg_usfft_options) -> Result<UsfftOptions> {
    Ok(UsfftOptions {
        kernel: match o.kernel {
            SG_USFFT_KERNEL_ES => KernelShape::ExpSemicircle,
            SG_USFFT_KERNEL_GAUSSIAN => KernelShape::Gaussian,
            SG_USFFT_KERNEL_PROLATE => KernelShape::Prolate,
            k => {
                return Err(crate::invalid!(
                "options.kernel is {k}; expected SG_USFFT_KERNEL_ES (0), SG_USFFT_KERNEL_GAUSSIAN (1) or SG_USFFT_KERNEL_PROLATE (2)"
            ))
            }
        },
        mode_order: match o.mode_order {
            SG_USFFT_MODES_CENTRED => ModeOrder::Centred,
            SG_USFFT_MODES_FFT => ModeOrder::Fft,
            m => {
                return Err(crate::invalid!(
                "options.mode_order is {m}; expected SG_USFFT_MODES_CENTRED (0) or SG_USFFT_MODES_FFT (1)"
            ))
            }
        },
        upsampling: o.upsampling,
    })
}

/// Creates a plan. `type`: `SG_USFFT_TYPE1`, `SG_USFFT_TYPE2` or `SG_USFFT_TYPE3`; `dim`: 1,
/// 2 or 3; `n_modes`: `dim` mode counts N1, N2, N3 (dimension 1 fastest in the mode array),
/// each ≥ 1 — type 3 has no modes and ignores it (NULL allowed): its points and frequencies
/// come with `sg_usfft_set_points3_*`, which sizes the plan's grid from their spans;
/// `sign`: +1 or −1, the exponent's sign; `tolerance`: the relative ℓ2 accuracy wanted, from
/// just below 1 down to 1e-6 (f32) or 1e-14 (f64) — smaller values give
/// `SG_ERR_INVALID_ARGUMENT` (rounding leaves errors of order N·ε_mach); `precision`:
/// `SG_USFFT_F32` or `SG_USFFT_F64`; `n_vectors`: vectors transformed by each execute (≥ 1),
/// sharing the points; `options` may be NULL for the defaults. On success `*out` receives a
/// plan the caller owns (`sg_usfft_plan_destroy`). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_usfft_plan_create(
    ctx: *const sg_context,
    r#type: i32,
    dim: i32,
    n_modes: *const usize,
    sign: i32,
    tolerance: f64,
    precision: i32,
    n_vectors: usize,
    options: *const sg_usfft_options,
    out: *mut *mut sg_usfft_plan,
) -> sg_status {
    create_on(ctx, out, |ctx| {
        let kind = match r#type {
            SG_USFFT_TYPE1 => TransformType::Type1,
            SG_USFFT_TYPE2 => TransformType::Type2,
            SG_USFFT_TYPE3 => TransformType::Type3,
            t => {
                return Err(crate::invalid!(
                    "type is {t}; expected SG_USFFT_TYPE1 (1), SG_USFFT_TYPE2 (2) or SG_USFFT_TYPE3 (3)"
                ))
            }
        };
        if !(1..=3).contains(&dim) {
            return Err(crate::invalid!("dim is {dim}; expected 1, 2 or 3"));
        }
        let mut modes = [1usize; 3];
        if kind != TransformType::Type3 {
            modes[..dim as usize].copy_from_slice(slice(n_modes, dim as usize, "n_modes")?);
        }
        let opts = or_default(options, self::options)?;
        let (c, d, n) = (ctx, dim as usize, n_vectors);
        ByPrecision::create(
            precision,
            PRECISIONS,
            || {
                UsfftPlan::new(
                    c.clone(),
                    UsfftSpec::new::<f32>(kind, d, modes, sign, tolerance, n, opts)?,
                )
            },
            || {
                UsfftPlan::new(
                    c.clone(),
                    UsfftSpec::new::<f64>(kind, d, modes, sign, tolerance, n, opts)?,
                )
            },
        )
        .map(sg_usfft_plan)
    })
}

/// Releases a plan. NULL is a no-op. Must not race with other calls on the same plan.
#[no_mangle]
pub extern "C" fn sg_usfft_plan_destroy(plan: *mut sg_usfft_plan) {
    super::destroy(plan);
}

/// Device bytes `plan` holds, into `*bytes` (0 on a CPU context): on a CUDA context the fine
/// grids, the cuFFT plan's work area and the mode tables made at creation, the point buffers
/// sized by the largest `sg_usfft_set_points_*` so far (made there), and the staging buffers
/// a host execute makes on its first use; a device execute allocates nothing.
/// `plan` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_usfft_plan_workspace_bytes(
    plan: *const sg_usfft_plan,
    bytes: *mut usize,
) -> sg_status {
    super::workspace_bytes(plan, "plan", bytes, |p| match &p.0 {
        ByPrecision::F32(p) => p.device_bytes(),
        ByPrecision::F64(p) => p.device_bytes(),
    })
}

fn set_points<T: Precision>(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: *const T,
    y: *const T,
    z: *const T,
) -> Result<()> {
    let plan = arg_mut(plan, "plan")?;
    let plan = plan.0.get_mut::<T>("plan", "sg_usfft_set_points")?;
    let dim = plan.spec().dim;
    let x = slice_or_empty(x, m, "x")?;
    let y = (dim >= 2).then(|| slice_or_empty(y, m, "y")).transpose()?;
    let z = (dim >= 3).then(|| slice_or_empty(z, m, "z")).transpose()?;
    plan.set_points(m, x, y, z)
}

/// Sets the plan's `m` points (replacing earlier ones): coordinates `x` (and `y` for 2D and
/// up, `z` for 3D; the others are ignored and may be NULL) in radians, period 2π — points
/// are expected in [−π, π) and any finite value is folded back into it. For the seed's
/// convention (x ∈ [−½, ½), e^{−2πixn}) pass 2π·x and sign −1. Non-finite coordinates give
/// `SG_ERR_NON_FINITE` and keep the previous points. The points are sorted once here for
/// every later execute. A type-3 plan refuses it (`SG_ERR_INVALID_ARGUMENT`: it needs its
/// frequencies too, `sg_usfft_set_points3_f32`). Must not race with other calls on the same
/// plan.
#[no_mangle]
pub extern "C" fn sg_usfft_set_points_f32(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: *const f32,
    y: *const f32,
    z: *const f32,
) -> sg_status {
    guard(|| set_points::<f32>(plan, m, x, y, z))
}

/// `sg_usfft_set_points_f32` for a double-precision plan.
#[no_mangle]
pub extern "C" fn sg_usfft_set_points_f64(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: *const f64,
    y: *const f64,
    z: *const f64,
) -> sg_status {
    guard(|| set_points::<f64>(plan, m, x, y, z))
}

fn set_points3<T: Precision>(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: [*const T; 3],
    n: usize,
    s: [*const T; 3],
) -> Result<()> {
    let plan = arg_mut(plan, "plan")?;
    let plan = plan.0.get_mut::<T>("plan", "sg_usfft_set_points3")?;
    let dim = plan.spec().dim;
    let used = |p: [*const T; 3], count: usize, names: [&str; 3]| -> Result<[Option<&[T]>; 3]> {
        let mut out = [None; 3];
        for d in 0..dim {
            out[d] = Some(slice_or_empty(p[d], count, names[d])?);
        }
        Ok(out)
    };
    let xs = used(x, m, ["x", "y", "z"])?;
    let ss = used(s, n, ["s", "t", "u"])?;
    plan.set_points3(m, xs, n, ss)
}

/// Sets a type-3 plan's `m` points and `n` target frequencies (replacing earlier ones), both
/// any finite reals: points `x` (and `y` for 2D and up, `z` for 3D) and frequencies `s` (and
/// `t`, `u` likewise); the arrays of unused dimensions are ignored and may be NULL, and an
/// empty set (m or n = 0) may be NULL. The transform is then f_k = Σ_j c_j
/// e^{i·sign·(s_k x_j + t_k y_j + u_k z_j)}. Both sets come in one call because the plan's
/// grid is sized from both spans: per dimension about 4·X·S/π cells plus the kernel's width
/// (X, S the half-widths of the points and of the frequencies), so the cost grows with X·S.
/// Non-finite values give `SG_ERR_NON_FINITE`; spans whose grid would exceed 2^30 cells along
/// a dimension give `SG_ERR_UNSUPPORTED`, and those the host (or device) could not hold
/// `SG_ERR_OUT_OF_MEMORY`, naming the sizes, before anything is allocated; a type-1 or type-2
/// plan gives `SG_ERR_INVALID_ARGUMENT`. On any error the previous points stay. The points
/// and frequencies are sorted once here for every later execute. Must not race with other
/// calls on the same plan.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn sg_usfft_set_points3_f32(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: *const f32,
    y: *const f32,
    z: *const f32,
    n: usize,
    s: *const f32,
    t: *const f32,
    u: *const f32,
) -> sg_status {
    guard(|| set_points3::<f32>(plan, m, [x, y, z], n, [s, t, u]))
}

/// `sg_usfft_set_points3_f32` for a double-precision plan.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn sg_usfft_set_points3_f64(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: *const f64,
    y: *const f64,
    z: *const f64,
    n: usize,
    s: *const f64,
    t: *const f64,
    u: *const f64,
) -> sg_status {
    guard(|| set_points3::<f64>(plan, m, [x, y, z], n, [s, t, u]))
}

fn execute<T: Precision>(plan: *const sg_usfft_plan, c: *mut T, f: *mut T) -> Result<()> {
    let plan = arg_ref(plan, "plan")?
        .0
        .get::<T>("plan", "sg_usfft_execute")?;
    let nv = plan.spec().n_vectors;
    let (nc, nf) = (nv * plan.n_points(), nv * plan.n_modes_or_targets());
    // Interleaved (re, im) values: n_vectors·M and n_vectors·N1N2N3 (type 3: n_vectors·N)
    // complex values.
    let (c, f) = (c.cast::<Complex<T>>(), f.cast::<Complex<T>>());
    if overlap(c, nc, f, nf) {
        return Err(crate::invalid!("`c` and `f` overlap"));
    }
    let cs = slice_mut_or_empty(c, nc, "c")?;
    let fs = slice_mut_or_empty(f, nf, "f")?;
    plan.execute(cs, fs)
}

/// Runs the transform on every vector of the batch. `c`: n_vectors × M complex strengths,
/// `f`: n_vectors × N1·N2·N3 complex modes (dimension 1 fastest, in the plan's mode order),
/// both interleaved (re, im) floats, vector v starting at complex element v·M resp. v·N1N2N3.
/// Type 1 reads `c` and writes `f`; type 2 reads `f` and writes `c`; type 3 reads `c` and
/// writes `f`: n_vectors × N complex values, one per frequency in the order given to
/// `sg_usfft_set_points3_f32`. The arrays must not overlap; an empty one (M = 0, or type 3's
/// N = 0) may be NULL. Non-finite strengths or modes are not checked:
/// they propagate to the output. Several threads may execute one plan at once (on the GPU
/// they take turns).
#[no_mangle]
pub extern "C" fn sg_usfft_execute_f32(
    plan: *const sg_usfft_plan,
    c: *mut f32,
    f: *mut f32,
) -> sg_status {
    guard(|| execute::<f32>(plan, c, f))
}

/// `sg_usfft_execute_f32` for a double-precision plan.
#[no_mangle]
pub extern "C" fn sg_usfft_execute_f64(
    plan: *const sg_usfft_plan,
    c: *mut f64,
    f: *mut f64,
) -> sg_status {
    guard(|| execute::<f64>(plan, c, f))
}
