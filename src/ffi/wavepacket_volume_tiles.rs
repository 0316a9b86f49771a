//! `sg_wavepacket_volume` one tile at a time, for processes that share a volume's tiles (MPI
//! ranks): a tile's samples, its forward onto its window of the common grid, the tiles'
//! coefficients added into the common grid in tile order, and a tile's part of the adjoint.

use super::args::{arg_ref, out_ptr};
use super::arrays::{check, out_slice, overlap, slice, slice_mut};
use super::guard;
use super::precision::{ByPrecision, Precision};
use super::status::sg_status;
use super::wavepacket_volume::sg_wavepacket_volume;
use crate::error::Result;
use crate::sample::Real;
use crate::wavepacket::tiles::TiledPlan;
use num_complex::Complex;
use TileCall::*;

/// Tile `tile` (< the product of `sg_wavepacket_volume_sizes`' `tiles`; tile order: axis 1
/// fastest, then 2, then 3): `origin` (3 values; 0 for an unused axis) the sample where it
/// starts in the volume, `*n_tile_samples` the samples of one tile (the product of
/// `tile_shape`: the volume's samples from `origin` on, axis 1 fastest, 0 past the volume's
/// end) and `*n_tile_coefficients` the complex coefficients of one tile's window of the
/// common grid. No pointer may be NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_tile_info(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    origin: *mut usize,
    n_tile_samples: *mut usize,
    n_tile_coefficients: *mut usize,
) -> sg_status {
    guard(|| {
        fn info<T: Real>(p: &TiledPlan<T>, t: usize) -> Result<([usize; 3], usize, usize)> {
            let o = p.tile_origin(t).ok_or_else(|| {
                crate::invalid!("tile is {t}; the volume has {} tiles", p.n_tiles())
            })?;
            Ok((o, p.layout().n_samples(), p.layout().n_coefficients))
        }
        let (o, n, m) = match &arg_ref(volume, "volume")?.0 {
            ByPrecision::F32(p) => info(p, tile)?,
            ByPrecision::F64(p) => info(p, tile)?,
        };
        let outs = (
            out_slice(origin, 3, "origin")?,
            out_ptr(n_tile_samples, "n_tile_samples")?,
            out_ptr(n_tile_coefficients, "n_tile_coefficients")?,
        );
        outs.0.copy_from_slice(&o);
        outs.1.set(n);
        outs.2.set(m);
        Ok(())
    })
}

/// Tile `tile`'s samples (`tile_data`, n_tile_samples of `sg_wavepacket_volume_tile_info`)
/// cut from the whole volume's `data` (n_samples), 0 past the volume's end. On failure
/// nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_tile_data_f32(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    data: *const f32,
    tile_data: *mut f32,
) -> sg_status {
    guard(|| tile_call::<f32>(volume, tile, Data, data, tile_data))
}

/// `sg_wavepacket_volume_tile_data_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_tile_data_f64(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    data: *const f64,
    tile_data: *mut f64,
) -> sg_status {
    guard(|| tile_call::<f64>(volume, tile, Data, data, tile_data))
}

/// One tile's forward: its samples (`tile_data`, n_tile_samples) → its coefficients on its
/// window of the common grid (`tile_coeffs`, n_tile_coefficients interleaved complex
/// values), on the context that `sg_wavepacket_volume_forward_f32` would give the tile.
/// Non-finite samples give `SG_ERR_NON_FINITE`; on failure nothing is written. Thread-safe
/// for different tiles on a volume of one CPU context.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_tile_f32(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    tile_data: *const f32,
    tile_coeffs: *mut f32,
) -> sg_status {
    guard(|| tile_call::<f32>(volume, tile, Forward, tile_data, tile_coeffs))
}

/// `sg_wavepacket_volume_forward_tile_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_forward_tile_f64(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    tile_data: *const f64,
    tile_coeffs: *mut f64,
) -> sg_status {
    guard(|| tile_call::<f64>(volume, tile, Forward, tile_data, tile_coeffs))
}

/// Adds tile `tile`'s coefficients (`tile_coeffs`, as the tile's forward wrote them) into
/// `coeffs` (n_coefficients interleaved complex values on the common grids). Adding tiles 0,
/// 1, … in tile order into zeros gives `sg_wavepacket_volume_forward_f32`'s coefficients bit
/// for bit (it adds them in that order). Non-finite coefficients give `SG_ERR_NON_FINITE`;
/// on failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_add_tile_f32(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    tile_coeffs: *const f32,
    coeffs: *mut f32,
) -> sg_status {
    guard(|| tile_call::<f32>(volume, tile, Add, tile_coeffs, coeffs))
}

/// `sg_wavepacket_volume_add_tile_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_add_tile_f64(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    tile_coeffs: *const f64,
    coeffs: *mut f64,
) -> sg_status {
    guard(|| tile_call::<f64>(volume, tile, Add, tile_coeffs, coeffs))
}

/// Tile `tile`'s part of C*: from `coeffs` (n_coefficients on the common grids) its samples
/// `tile_data` (n_tile_samples; those inside the volume are
/// `sg_wavepacket_volume_adjoint_f32`'s there, the tiles do not overlap, and those past the
/// volume's end are to be dropped). Non-finite coefficients give `SG_ERR_NON_FINITE`; on
/// failure nothing is written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_tile_f32(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    coeffs: *const f32,
    tile_data: *mut f32,
) -> sg_status {
    guard(|| tile_call::<f32>(volume, tile, Adjoint, coeffs, tile_data))
}

/// `sg_wavepacket_volume_adjoint_tile_f32` for a double-precision volume.
#[no_mangle]
pub extern "C" fn sg_wavepacket_volume_adjoint_tile_f64(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    coeffs: *const f64,
    tile_data: *mut f64,
) -> sg_status {
    guard(|| tile_call::<f64>(volume, tile, Adjoint, coeffs, tile_data))
}

/// The calls on one tile, each reading one array and writing another (of the whole volume
/// or of the tile).
#[derive(Clone, Copy)]
enum TileCall {
    /// The tile's samples cut from the volume's data.
    Data,
    /// The tile's forward onto its window of the common grid.
    Forward,
    /// The tile's coefficients added into the common grid.
    Add,
    /// The tile's part of C*.
    Adjoint,
}

impl TileCall {
    fn name(self) -> &'static str {
        match self {
            TileCall::Data => "sg_wavepacket_volume_tile_data",
            TileCall::Forward => "sg_wavepacket_volume_forward_tile",
            TileCall::Add => "sg_wavepacket_volume_add_tile",
            TileCall::Adjoint => "sg_wavepacket_volume_adjoint_tile",
        }
    }
}

/// The array a call reads (`na` of A) and the one it writes (`nb` of B), non-NULL and apart.
fn apart<'a, A, B>(
    (a, na, name_a): (*const A, usize, &str),
    (b, nb, name_b): (*mut B, usize, &str),
) -> Result<(&'a [A], &'a mut [B])> {
    check(a, na, name_a)?;
    check(b, nb, name_b)?;
    if overlap(a, na, b.cast_const(), nb) {
        return Err(crate::invalid!("`{name_a}` and `{name_b}` overlap"));
    }
    Ok((slice(a, na, name_a)?, slice_mut(b, nb, name_b)?))
}

/// `call` on tile `tile`: the volume's plan of `T` found and the call's `input` and `output`
/// checked (interleaved complex values where they are coefficients) before any work.
fn tile_call<T: Precision>(
    volume: *const sg_wavepacket_volume,
    tile: usize,
    call: TileCall,
    input: *const T,
    output: *mut T,
) -> Result<()> {
    let handle = arg_ref(volume, "volume")?;
    let p = handle.0.get::<T>("volume", call.name())?;
    let (n, m): (usize, _) = (p.volume().iter().product(), p.n_coefficients());
    let (n_tile, m_tile) = (p.layout().n_samples(), p.layout().n_coefficients);
    let (input_c, output_c) = (input.cast::<Complex<T>>(), output.cast::<Complex<T>>());
    match call {
        TileCall::Data => {
            let (d, t) = apart((input, n, "data"), (output, n_tile, "tile_data"))?;
            p.tile_of(tile, d, t)
        }
        TileCall::Forward => {
            let (d, c) = apart(
                (input, n_tile, "tile_data"),
                (output_c, m_tile, "tile_coeffs"),
            )?;
            p.forward_tile(tile, d, c)
        }
        TileCall::Add => {
            let (local, common) = apart((input_c, m_tile, "tile_coeffs"), (output_c, m, "coeffs"))?;
            p.add_tile(tile, local, common)
        }
        TileCall::Adjoint => {
            let (c, d) = apart((input_c, m, "coeffs"), (output, n_tile, "tile_data"))?;
            p.adjoint_tile(tile, c, d)
        }
    }
}
