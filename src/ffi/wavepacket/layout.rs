//! The `sg_wavepacket_layout` object: its creation, its sizes and boxes, and how each call
//! finds the transform of its precision.

use super::arrays::sizes;
use super::calls::{TransformHandle, Transforms};
use super::options::{
    layout_options, sg_wavepacket_layout_options, sg_wavepacket_layout_options_default, PRECISIONS,
};
use crate::context::Context;
use crate::error::Result;
use crate::ffi::args::{arg_ref, options_or, out_ptr};
use crate::ffi::arrays::{out_slice, slice};
use crate::ffi::context::sg_context;
use crate::ffi::guard;
use crate::ffi::precision::{ByPrecision, Generic, Precision};
use crate::ffi::status::sg_status;
use crate::sample::Real;
use crate::wavepacket::footprint::Footprint;
use crate::wavepacket::inverse::{CorrectionFilter, InverseReport, Stop};
use crate::wavepacket::{check_finite, check_tolerance, Layout, LayoutOptions, WavepacketPlan};
use num_complex::Complex;
use std::sync::{Arc, OnceLock};

/// One precision's transform, with its correction filter (made at the first inverse or POCS
/// call: it costs one forward and one adjoint transform).
pub(crate) struct Transform<T: Real> {
    pub(crate) plan: WavepacketPlan<T>,
    filter: OnceLock<CorrectionFilter<T>>,
}

impl<T: Real> Transform<T> {
    fn new(ctx: &Arc<Context>, shape: &[usize], opts: &LayoutOptions, cap: usize) -> Result<Self> {
        Ok(Transform {
            plan: WavepacketPlan::with_cap(ctx.clone(), shape, opts, cap)?,
            filter: OnceLock::new(),
        })
    }

    pub(crate) fn filter(&self) -> Result<&CorrectionFilter<T>> {
        if let Some(f) = self.filter.get() {
            return Ok(f);
        }
        // Two threads may both build it; the first one kept serves everyone.
        let f = CorrectionFilter::new(&self.plan)?;
        Ok(self.filter.get_or_init(|| f))
    }
}

impl<T: Real> Transforms<T> for Transform<T> {
    fn sizes(&self) -> (usize, usize) {
        sizes(&self.plan)
    }
    fn forward(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()> {
        self.plan.forward(data, coeffs)
    }
    fn adjoint(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()> {
        self.plan.adjoint(coeffs, data)
    }
    fn inverse(&self, coeffs: &[Complex<T>], data: &mut [T], stop: Stop) -> Result<InverseReport> {
        // Checked here too, before the correction filter may be built (one C and one C*).
        check_tolerance(stop.tolerance)?;
        check_finite(coeffs, &self.plan.context().cpu)?;
        let filter = self.filter()?;
        self.plan
            .inverse(filter, coeffs, data, stop.tolerance, stop.max_iterations)
    }
}

/// What an `sg_wavepacket_layout` holds per precision.
pub(crate) struct Layouts;

impl Generic for Layouts {
    type Of<T: Real> = Transform<T>;
}

/// A wave-packet box layout of one data shape, with its transform in one precision, on one
/// context. Opaque.
pub struct sg_wavepacket_layout(ByPrecision<Layouts>);

/// The layout's transform for calls on `T`, or an error naming `call` for the other one.
pub(crate) fn transform<'a, T: Precision>(
    layout: *const sg_wavepacket_layout,
    call: &str,
) -> Result<&'a Transform<T>> {
    arg_ref(layout, "layout")?.0.get::<T>("layout", call)
}

impl TransformHandle for sg_wavepacket_layout {
    const CALLS: &'static str = "sg_wavepacket";
    type Plan<T: Real> = Transform<T>;
    fn plan<'a, T: Precision>(layout: *const Self, call: &str) -> Result<&'a Transform<T>> {
        transform(layout, call)
    }
}

/// What the layout's two precisions share: its boxes, and their packets' norms.
pub(crate) fn layout_of<'a>(layout: *const sg_wavepacket_layout) -> Result<&'a Layout> {
    Ok(match &arg_ref(layout, "layout")?.0 {
        ByPrecision::F32(t) => t.plan.layout(),
        ByPrecision::F64(t) => t.plan.layout(),
    })
}

/// The ‖ψ_b‖ of every box of the layout (see `sg_wavepacket_packet_norms`).
pub(crate) fn packet_norms_of(layout: *const sg_wavepacket_layout) -> Result<Vec<f64>> {
    Ok(match &arg_ref(layout, "layout")?.0 {
        ByPrecision::F32(t) => t.plan.packet_norms(),
        ByPrecision::F64(t) => t.plan.packet_norms(),
    })
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
    sg_wavepacket_layout_create_capped(ctx, dim, shape, precision, options, 0, out)
}

/// `sg_wavepacket_layout_create_with_options` with the transform's device memory capped at
/// `max_device_bytes` (0: no cap) on a CUDA context: a layout whose transform would need
/// more (`sg_wavepacket_device_bytes`) is refused with `SG_ERR_DEVICE_OUT_OF_MEMORY` and a
/// message naming what each part would hold, before anything is allocated, and no later call
/// of the layout allocates past the cap (a call that would gives
/// `SG_ERR_DEVICE_OUT_OF_MEMORY`). Under a cap the transform holds its lattice values one
/// group of directions at a time, the fewest groups that fit, with the same results. A CPU
/// context holds no device memory: the cap does not apply there. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_create_capped(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    max_device_bytes: usize,
    out: *mut *mut sg_wavepacket_layout,
) -> sg_status {
    guard(|| {
        let o = options_or(options, sg_wavepacket_layout_options_default())?;
        create(ctx, dim, shape, precision, &o, max_device_bytes, out)
    })
}

/// The most device memory the transform of a layout of these arguments (as
/// `sg_wavepacket_layout_create_capped` takes them) would hold at once, into `*bytes`,
/// without making it: its USFFT plan, windows, box FFT plans, tables and work arrays, the
/// data array of its first host call, and, while it is made, the sort of its points and its
/// windows' tables; under a cap, with its lattice values in the fewest groups that fit. On a
/// CUDA context cuFFT's work areas are asked of cuFFT; on a CPU context they are estimated
/// (none for lengths that are products of 2, 3, 5 and 7). Where the answer exceeds
/// `max_device_bytes` (0: no cap) the call gives `SG_ERR_DEVICE_OUT_OF_MEMORY`, each part
/// named in the message, and leaves `*bytes` untouched. `ctx`, `shape` and `bytes` must not be
/// NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_device_bytes(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    max_device_bytes: usize,
    bytes: *mut usize,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?;
        let bytes = out_ptr(bytes, "bytes")?;
        let shape = shape_arg(dim, shape)?;
        let o = options_or(options, sg_wavepacket_layout_options_default())?;
        let opts = layout_options(&o);
        let cap = max_device_bytes;
        let found = ByPrecision::<Footprints>::create(
            precision,
            PRECISIONS,
            || WavepacketPlan::<f32>::footprint(&ctx.0, shape, &opts, cap),
            || WavepacketPlan::<f64>::footprint(&ctx.0, shape, &opts, cap),
        )?;
        bytes.set(match found {
            ByPrecision::F32(f) | ByPrecision::F64(f) => f.peak(),
        });
        Ok(())
    })
}

/// A transform's footprint in either precision.
struct Footprints;
impl Generic for Footprints {
    type Of<T: Real> = Footprint;
}

/// The `dim` (2 or 3) lengths at `shape`.
fn shape_arg<'a>(dim: i32, shape: *const usize) -> Result<&'a [usize]> {
    if dim != 2 && dim != 3 {
        return Err(crate::invalid!("dim is {dim}; expected 2 or 3"));
    }
    slice(shape, dim as usize, "shape")
}

/// The layout of `sg_wavepacket_layout_create_with_options` with `directions`, `levels`,
/// `alpha` (0 gives 3), `beta`, `tolerance` (0 gives 1e-6) and the default cutoff 1e-3. Kept,
/// unchanged, for programs built against it (the ABI policy only adds within a major
/// version); new code calls `sg_wavepacket_layout_create_with_options`, which also sets the
/// cutoff.
#[no_mangle]
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
    guard(|| create(ctx, dim, shape, precision, &o, 0, out))
}

fn create(
    ctx: *const sg_context,
    dim: i32,
    shape: *const usize,
    precision: i32,
    o: &sg_wavepacket_layout_options,
    cap: usize,
    out: *mut *mut sg_wavepacket_layout,
) -> Result<()> {
    let ctx = arg_ref(ctx, "ctx")?;
    let out = out_ptr(out, "out")?;
    let shape = shape_arg(dim, shape)?;
    let opts = layout_options(o);
    out.hand_over(sg_wavepacket_layout(ByPrecision::create(
        precision,
        PRECISIONS,
        || Transform::new(&ctx.0, shape, &opts, cap),
        || Transform::new(&ctx.0, shape, &opts, cap),
    )?));
    Ok(())
}

/// Releases a layout. NULL is a no-op. Must not race with other calls on the same layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_destroy(layout: *mut sg_wavepacket_layout) {
    crate::ffi::destroy(layout);
}

/// Device bytes the layout's transform holds, into `*bytes` (0 on a CPU context): on a CUDA
/// context its tables, windows, box work arrays and USFFT plan (points set), made at
/// creation; the data array of host calls and the grid-shift tables of shifted calls, made on
/// their first use and kept.
/// `layout` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_layout_workspace_bytes(
    layout: *const sg_wavepacket_layout,
    bytes: *mut usize,
) -> sg_status {
    crate::ffi::workspace_bytes(layout, "layout", bytes, |l| match &l.0 {
        ByPrecision::F32(t) => t.plan.device_bytes(),
        ByPrecision::F64(t) => t.plan.device_bytes(),
    })
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
            p.set(v);
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
        let outs = (
            out_ptr(level, "level")?,
            out_ptr(direction, "direction")?,
            out_slice(centre, 3, "centre")?,
            out_slice(shape, 3, "shape")?,
            out_ptr(offset, "offset")?,
        );
        outs.0.set(b.level as i32);
        outs.1.set(b.direction.map_or(-1, |d| d as i32));
        outs.2.copy_from_slice(&b.centre);
        outs.3.copy_from_slice(&b.shape);
        outs.4.set(b.offset);
        Ok(())
    })
}
