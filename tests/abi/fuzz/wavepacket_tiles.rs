//! `sg_wavepacket_volume_*` one tile at a time, on the volumes of `wavepacket_volume`: tile
//! info, a tile's samples, its forward, its coefficients added into the common grid, its
//! adjoint; bad tile indices, NULL or overlapping arrays, non-finite inputs, the other
//! precision's call.

use super::wavepacket_volume::Volume;
use super::{sentinel, Faults, Fuzz, Real, Snapshot};
use seisgpu::ffi::status::SG_OK;
use seisgpu::ffi::wavepacket_volume::sg_wavepacket_volume;
use seisgpu::ffi::wavepacket_volume_tiles::*;
use std::ptr;

type TileCall<T> = extern "C" fn(*const sg_wavepacket_volume, usize, *const T, *mut T) -> i32;

/// The per-tile calls of one precision: (name, call, input and output array names).
pub struct TileCalls<T: 'static> {
    calls: [(&'static str, TileCall<T>, &'static str, &'static str); 4],
    f64: bool,
}

pub const TILES_F32: TileCalls<f32> = TileCalls {
    calls: [
        (
            "sg_wavepacket_volume_tile_data_f32",
            sg_wavepacket_volume_tile_data_f32,
            "`data`",
            "`tile_data`",
        ),
        (
            "sg_wavepacket_volume_forward_tile_f32",
            sg_wavepacket_volume_forward_tile_f32,
            "`tile_data`",
            "`tile_coeffs`",
        ),
        (
            "sg_wavepacket_volume_add_tile_f32",
            sg_wavepacket_volume_add_tile_f32,
            "`tile_coeffs`",
            "`coeffs`",
        ),
        (
            "sg_wavepacket_volume_adjoint_tile_f32",
            sg_wavepacket_volume_adjoint_tile_f32,
            "`coeffs`",
            "`tile_data`",
        ),
    ],
    f64: false,
};

pub const TILES_F64: TileCalls<f64> = TileCalls {
    calls: [
        (
            "sg_wavepacket_volume_tile_data_f64",
            sg_wavepacket_volume_tile_data_f64,
            "`data`",
            "`tile_data`",
        ),
        (
            "sg_wavepacket_volume_forward_tile_f64",
            sg_wavepacket_volume_forward_tile_f64,
            "`tile_data`",
            "`tile_coeffs`",
        ),
        (
            "sg_wavepacket_volume_add_tile_f64",
            sg_wavepacket_volume_add_tile_f64,
            "`tile_coeffs`",
            "`coeffs`",
        ),
        (
            "sg_wavepacket_volume_adjoint_tile_f64",
            sg_wavepacket_volume_adjoint_tile_f64,
            "`coeffs`",
            "`tile_data`",
        ),
    ],
    f64: true,
};

/// A tile index: one of the volume's, or (a planted fault) past them.
fn tile_index(f: &mut Fuzz, k: &mut Faults, v: &Volume) -> usize {
    if f.rng.chance(0.05) {
        k.plant("tile is");
        if f.rng.chance(0.5) {
            v.n_tiles
        } else {
            f.rng.huge()
        }
    } else {
        f.rng.range(0, v.n_tiles - 1)
    }
}

pub fn tile_info(f: &mut Fuzz, v: &Volume) {
    let mut k = Faults::default();
    let p = if f.rng.chance(0.03) {
        k.plant("`volume`");
        ptr::null()
    } else {
        v.p.cast_const()
    };
    let t = tile_index(f, &mut k, v);
    let mut out = [0x5151usize; 5];
    let snaps = [Snapshot::of_slice("tile info", &out)];
    let base = out.as_mut_ptr();
    let (mut o, mut n, mut m) = (base, base.wrapping_add(3), base.wrapping_add(4));
    match f.rng.range(0, 29) {
        0 => {
            k.plant("`origin`");
            o = ptr::null_mut();
        }
        1 => {
            k.plant("`n_tile_samples`");
            n = ptr::null_mut();
        }
        2 => {
            k.plant("`n_tile_coefficients`");
            m = ptr::null_mut();
        }
        _ => {}
    }
    f.announce("sg_wavepacket_volume_tile_info", || format!("tile {t}"));
    let s = sg_wavepacket_volume_tile_info(p, t, o, n, m);
    f.check("sg_wavepacket_volume_tile_info", s, &k, &snaps);
    if s == SG_OK {
        assert_eq!((out[3], out[4]), (v.tile_samples, v.tile_coefficients));
    }
}

/// One of the four array calls: its input (sometimes with a non-finite value) and output in
/// one buffer, apart or made to overlap, or NULL.
pub fn tile_call<T: Real>(f: &mut Fuzz, v: &Volume, c: &TileCalls<T>) {
    let mut k = Faults::default();
    if c.f64 != v.f64 {
        k.plant("precision");
    }
    let which = f.rng.range(0, 3);
    let (name, call, in_name, out_name) = c.calls[which];
    let (nt, mt, m) = (v.tile_samples, 2 * v.tile_coefficients, 2 * v.m);
    let (n_in, n_out) = [(v.n, nt), (nt, mt), (mt, m), (m, nt)][which];
    let t = tile_index(f, &mut k, v);
    let mut buf: Vec<T> = (0..n_in).map(|_| T::of(f.rng.symmetric())).collect();
    if which > 0 && f.rng.chance(0.05) {
        let i = f.rng.range(0, n_in - 1);
        buf[i] = T::of(f.rng.non_finite());
        k.plant("not finite");
    }
    buf.extend(sentinel::<T>(n_out));
    let base = buf.as_mut_ptr();
    let (mut input, mut output) = (base as *const T, base.wrapping_add(n_in));
    match f.rng.range(0, 19) {
        0 => {
            k.plant(in_name);
            input = ptr::null();
        }
        1 => {
            k.plant(out_name);
            output = ptr::null_mut();
        }
        2 => {
            k.plant("overlap");
            output = base.wrapping_add(f.rng.range(0, n_in - 1));
        }
        _ => {}
    }
    let snaps = [
        Snapshot::of("output", output, n_out),
        Snapshot::of("input", input, n_in),
    ];
    f.announce(name, || format!("tile {t}, n {}, m {}", v.n, v.m));
    let s = call(v.p, t, input, output);
    f.check(name, s, &k, &snaps);
}
