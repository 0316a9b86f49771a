//! `sg_wavepacket_volume`: the wave packets of a volume larger than one layout (the seed's
//! §3.5) — cut into tiles of one layout, each decomposed on its own, every box's grid shifted
//! onto one grid common to all tiles, where the coefficients of overlapping tile windows add.

use super::args::{arg_ref, options_or, out_ptr};
use super::arrays::{out_slice, slice};
use super::context::sg_context;
use super::guard;
use super::precision::{ByPrecision, Generic, Precision};
use super::status::sg_status;
use super::wavepacket::calls::{inverse, transform, TransformHandle, Transforms};
use super::wavepacket::{
    layout_options, sg_wavepacket_layout_options, sg_wavepacket_layout_options_default, PRECISIONS,
};
use crate::error::{Error, Result};
use crate::sample::Real;
use crate::wavepacket::inverse::{InverseReport, Stop};
use crate::wavepacket::tiles::TiledPlan;
use crate::wavepacket::Layout;
use crate::wavepacket::Pass::*;
use num_complex::Complex;
use std::ops::Range;

/// What an `sg_wavepacket_volume` holds per precision.
pub(crate) struct Tiled;

impl Generic for Tiled {
    type Of<T: Real> = TiledPlan<T>;
}

/// A tiled volume: a volume shape, a tile shape and one precision, on one context. Opaque.
pub struct sg_wavepacket_volume(pub(super) ByPrecision<Tiled>);

impl TransformHandle for sg_wavepacket_volume {
    const CALLS: &'static str = "sg_wavepacket_volume";
    type Plan<T: Real> = TiledPlan<T>;
    fn plan<'a, T: Precision>(volume: *const Self, call: &str) -> Result<&'a TiledPlan<T>> {
        arg_ref(volume, "volume")?.0.get::<T>("volume", call)
    }
}

/// What the size queries need, whatever the precision.
struct Shape<'a> {
    layout: &'a Layout,
    tiles: [usize; 3],
    samples: usize,
    coefficients: usize,
    /// The queried box's coefficients on the common grid (None past the last box).
    box_range: Option<Range<usize>>,
}

fn shape_of<'a>(volume: *const sg_wavepacket_volume, b: usize) -> Result<Shape<'a>> {
    fn parts<T: Real>(p: &TiledPlan<T>, b: usize) -> Shape<'_> {
        Shape {
            layout: p.layout(),
            tiles: p.tiles(),
            samples: p.volume().iter().product(),
            coefficients: p.n_coefficients(),
            box_range: p.box_range(b),
        }
    }
    Ok(match &arg_ref(volume, "volume")?.0 {
        ByPrecision::F32(p) => parts(p, b),
        ByPrecision::F64(p) => parts(p, b),
    })
}

impl<T: Real> Transforms<T> for TiledPlan<T> {
    fn sizes(&self) -> (usize, usize) {
        (self.volume().iter().product(), self.n_coefficients())
    }
    fn forward(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()> {
        TiledPlan::forward(self, data, coeffs)
    }
    fn adjoint(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()> {
        TiledPlan::adjoint(self, coeffs, data)
    }
    fn inverse(&self, coeffs: &[Complex<T>], data: &mut [T], stop: Stop) -> Result<InverseReport> {
        TiledPlan::inverse(self, coeffs, data, stop.tolerance, stop.max_iterations)
    }
}

/// Creates a tiled volume of `dim` (2 or 3) axes: `volume_shape` samples per axis (axis 1
/// fastest, any sizes ≥ 1), cut into tiles of `tile_shape` (each 8 … 2^20; the last tile along
/// an axis is zero-padded past the volume's end), each tile a layout of `options` (NULL: the
/// defaults; see `sg_wavepacket_layout_options`) in `precision` `SG_WAVEPACKET_F32` or
/// `SG_WAVEPACKET_F64`. The coefficients of all tiles lie on one grid per box (each tile's box
/// grid shifted onto it by the modulation rule), where overlapping tile windows add, so an
/// event that crosses a tile border is represented as inside a tile. On success `*out`
/// receives a volume the caller owns (`sg_wavepacket_volume_destroy`). Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_create(
    ctx: *const sg_context,
    dim: i32,
    volume_shape: *const usize,
    tile_shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    out: *mut *mut sg_wavepacket_volume,
) -> sg_status {
    guard(|| {
        let ctx = arg_ref(ctx, "ctx")?.0.clone();
        let shapes = (volume_shape, tile_shape);
        create(vec![ctx], dim, shapes, precision, options, 0, out)
    })
}

/// `sg_wavepacket_volume_create` with the tiles dealt out over `n_contexts` contexts (1 … 1024;
/// e.g. one per GPU, or the same context twice): tile i runs on context i mod n_contexts,
/// one thread per context, all at once; the coefficients are added in tile order, so results
/// equal those of one context (forward bit for bit; on GPUs the adjoint to rounding).
/// Progress reports go to the first context's callback. The contexts must outlive the volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_create_on_contexts(
    contexts: *const *const sg_context,
    n_contexts: usize,
    dim: i32,
    volume_shape: *const usize,
    tile_shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    out: *mut *mut sg_wavepacket_volume,
) -> sg_status {
    sg_wavepacket_volume_create_capped(
        contexts,
        n_contexts,
        dim,
        volume_shape,
        tile_shape,
        precision,
        options,
        0,
        out,
    )
}

/// `sg_wavepacket_volume_create_on_contexts` with each context's device memory capped at
/// `max_device_bytes` (0: no cap), as `sg_wavepacket_layout_create_capped` caps a layout's
/// transform: each context's tile transform is made under the cap (or refused with
/// `SG_ERR_DEVICE_OUT_OF_MEMORY` before anything is allocated), and what the cap leaves no
/// room for runs through the host, with the same results: on one CUDA context the device
/// calls' tables (device calls then copy through the host, as over several contexts), and in
/// each host call the common grids, which a volume on one CUDA context keeps on the device
/// for the call where they fit beside the tile transform (much faster: no tile's
/// coefficients pass through the host). A CPU context holds no device memory: the cap does
/// not apply there. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_create_capped(
    contexts: *const *const sg_context,
    n_contexts: usize,
    dim: i32,
    volume_shape: *const usize,
    tile_shape: *const usize,
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    max_device_bytes: usize,
    out: *mut *mut sg_wavepacket_volume,
) -> sg_status {
    guard(|| {
        let ctxs = context_list(contexts, n_contexts)?;
        let shapes = (volume_shape, tile_shape);
        create(ctxs, dim, shapes, precision, options, max_device_bytes, out)
    })
}

/// The `n_contexts` contexts of a C list (1 … 1024, none NULL).
fn context_list(
    contexts: *const *const sg_context,
    n_contexts: usize,
) -> Result<Vec<std::sync::Arc<crate::context::Context>>> {
    if n_contexts == 0 || n_contexts > MAX_CONTEXTS {
        return Err(crate::invalid!(
            "n_contexts is {n_contexts}; expected 1 … {MAX_CONTEXTS}"
        ));
    }
    let list = slice(contexts, n_contexts, "contexts")?;
    let mut ctxs = Vec::with_capacity(n_contexts);
    for (i, &c) in list.iter().enumerate() {
        if c.is_null() {
            return Err(Error::NullPointer(format!("contexts[{i}] is NULL")));
        }
        ctxs.push(arg_ref(c, &format!("contexts[{i}]"))?.0.clone());
    }
    Ok(ctxs)
}

/// More contexts than any host has GPUs: a larger count is a caller's mistake.
const MAX_CONTEXTS: usize = 1024;

fn create(
    contexts: Vec<std::sync::Arc<crate::context::Context>>,
    dim: i32,
    (volume_shape, tile_shape): (*const usize, *const usize),
    precision: i32,
    options: *const sg_wavepacket_layout_options,
    cap: usize,
    out: *mut *mut sg_wavepacket_volume,
) -> Result<()> {
    let out = out_ptr(out, "out")?;
    if dim != 2 && dim != 3 {
        return Err(crate::invalid!("dim is {dim}; expected 2 or 3"));
    }
    let volume = slice(volume_shape, dim as usize, "volume_shape")?;
    let tile = slice(tile_shape, dim as usize, "tile_shape")?;
    let o = options_or(options, sg_wavepacket_layout_options_default())?;
    let opts = layout_options(&o);
    let c = &contexts;
    out.hand_over(sg_wavepacket_volume(ByPrecision::create(
        precision,
        PRECISIONS,
        || TiledPlan::on_contexts_capped(c, volume, tile, &opts, cap),
        || TiledPlan::on_contexts_capped(c, volume, tile, &opts, cap),
    )?));
    Ok(())
}

/// Releases a volume. NULL is a no-op. Must not race with other calls on the same volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_destroy(volume: *mut sg_wavepacket_volume) {
    super::destroy(volume);
}

/// Device bytes the volume's tile transforms hold on all their contexts, into `*bytes` (0 on
/// CPU contexts): per context, what `sg_wavepacket_layout_workspace_bytes` counts for one
/// layout of the tile shape; on a volume of one CUDA context also the device calls' tables
/// (the common grids' rows and each tile's grid shifts) and one tile's data and
/// coefficients, made at creation.
/// `volume` and `bytes` must not be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_workspace_bytes(
    volume: *const sg_wavepacket_volume,
    bytes: *mut usize,
) -> sg_status {
    super::workspace_bytes(volume, "volume", bytes, |v| match &v.0 {
        ByPrecision::F32(p) => p.device_bytes(),
        ByPrecision::F64(p) => p.device_bytes(),
    })
}

/// The volume's sizes: `*n_samples` data values (the product of `volume_shape`),
/// `*n_coefficients` complex coefficients on the common grids, `tiles` (3 values: tiles along
/// axes 1, 2, 3; 1 for an unused axis) and `*n_boxes` boxes (as in one tile's layout: box 0
/// the low-pass box, then per stored direction its levels, coarse to fine). No pointer may be
/// NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_sizes(
    volume: *const sg_wavepacket_volume,
    n_samples: *mut usize,
    n_coefficients: *mut usize,
    tiles: *mut usize,
    n_boxes: *mut usize,
) -> sg_status {
    guard(|| {
        let s = shape_of(volume, 0)?;
        let outs = (
            out_ptr(n_samples, "n_samples")?,
            out_ptr(n_coefficients, "n_coefficients")?,
            out_slice(tiles, 3, "tiles")?,
            out_ptr(n_boxes, "n_boxes")?,
        );
        outs.0.set(s.samples);
        outs.1.set(s.coefficients);
        outs.2.copy_from_slice(&s.tiles);
        outs.3.set(s.layout.boxes.len());
        Ok(())
    })
}

/// Box `box_index` (< n_boxes) on the common grid: `*level` (0 for the low-pass box, 1 …
/// levels coarse to fine), `*direction` (its stored direction, −1 for the low-pass box), and
/// the `*count` coefficients it has, from `*offset` in the coefficient array (boxes follow
/// each other; within a box, rows along its first grid axis). No pointer may be NULL.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_box_info(
    volume: *const sg_wavepacket_volume,
    box_index: usize,
    level: *mut i32,
    direction: *mut i32,
    offset: *mut usize,
    count: *mut usize,
) -> sg_status {
    guard(|| {
        let s = shape_of(volume, box_index)?;
        let l = s.layout;
        let range = s.box_range.ok_or_else(|| {
            crate::invalid!(
                "box_index is {box_index}; the volume has {} boxes",
                l.boxes.len()
            )
        })?;
        let b = &l.boxes[box_index];
        let outs = (
            out_ptr(level, "level")?,
            out_ptr(direction, "direction")?,
            out_ptr(offset, "offset")?,
            out_ptr(count, "count")?,
        );
        outs.0.set(b.level as i32);
        outs.1.set(b.direction.map_or(-1, |d| d as i32));
        outs.2.set(range.start);
        outs.3.set(range.len());
        Ok(())
    })
}

/// C: the volume's `data` (n_samples floats, axis 1 fastest) → `coeffs` (n_coefficients
/// interleaved float complex values on the common grids). Non-finite data gives
/// `SG_ERR_NON_FINITE`. Progress: stage "wave-packet tiles", one item per tile; a stop leaves
/// `coeffs` as it was. On failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_f32(
    volume: *const sg_wavepacket_volume,
    data: *const f32,
    coeffs: *mut f32,
) -> sg_status {
    guard(|| transform::<_, f32>(volume, Forward, data, coeffs))
}

/// `sg_wavepacket_volume_forward_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_f64(
    volume: *const sg_wavepacket_volume,
    data: *const f64,
    coeffs: *mut f64,
) -> sg_status {
    guard(|| transform::<_, f64>(volume, Forward, data, coeffs))
}

/// C*: `coeffs` (as `sg_wavepacket_volume_forward_f32` writes them) → real `data` (the real
/// part of the exact adjoint). Progress as the forward's; on failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_f32(
    volume: *const sg_wavepacket_volume,
    coeffs: *const f32,
    data: *mut f32,
) -> sg_status {
    guard(|| transform::<_, f32>(volume, Adjoint, coeffs, data))
}

/// `sg_wavepacket_volume_adjoint_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_f64(
    volume: *const sg_wavepacket_volume,
    coeffs: *const f64,
    data: *mut f64,
) -> sg_status {
    guard(|| transform::<_, f64>(volume, Adjoint, coeffs, data))
}

/// The inverse: the volume whose coefficients are closest (least squares) to `coeffs` — each
/// tile's correction filter applied to C*c, then conjugate gradients on C*C until the relative
/// residual is ≤ `tolerance` (in (0, 1)) or `max_iterations` were made. `*iterations` and
/// `*residual` (each may be NULL) receive the iterations made and the residual reached.
/// Progress: stage "wave-packet inverse", one item per iteration. On failure nothing is
/// written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_inverse_f32(
    volume: *const sg_wavepacket_volume,
    coeffs: *const f32,
    data: *mut f32,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let stop = Stop::new(tolerance, max_iterations);
    guard(|| inverse::<_, f32>(volume, coeffs, data, stop, iterations, residual))
}

/// `sg_wavepacket_volume_inverse_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_inverse_f64(
    volume: *const sg_wavepacket_volume,
    coeffs: *const f64,
    data: *mut f64,
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status {
    let stop = Stop::new(tolerance, max_iterations);
    guard(|| inverse::<_, f64>(volume, coeffs, data, stop, iterations, residual))
}
