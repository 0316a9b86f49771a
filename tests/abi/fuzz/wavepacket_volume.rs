//! `sg_wavepacket_volume_*`: tiled volumes (2D, small tiles and few directions so that a call
//! takes milliseconds; 3D made rarely and not kept), their queries, forward/adjoint/inverse in
//! both precisions; and one tile at a time (`wavepacket_tiles`).

use super::wavepacket_tiles::{self, tile_call, TILES_F32, TILES_F64};
use super::{handle_slot, sentinel, Faults, Fuzz, Real, Snapshot, Target};
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::wavepacket_volume_tiles::sg_wavepacket_volume_tile_info;
use std::ptr;

/// A live volume and its sizes (a tile's too: `wavepacket_tiles`).
pub struct Volume {
    pub(super) p: *mut sg_wavepacket_volume,
    pub(super) f64: bool,
    pub(super) n: usize,
    pub(super) m: usize,
    boxes: usize,
    pub(super) n_tiles: usize,
    pub(super) tile_samples: usize,
    pub(super) tile_coefficients: usize,
}

struct Volumes {
    volumes: Vec<Volume>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Volumes {
        volumes: Vec::new(),
    })
}

impl Drop for Volumes {
    fn drop(&mut self) {
        for v in self.volumes.drain(..) {
            sg_wavepacket_volume_destroy(v.p);
        }
    }
}

impl Target for Volumes {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.volumes.is_empty() || r < 12 {
            create(f, &mut self.volumes);
        } else if r < 15 {
            let i = f.rng.range(0, self.volumes.len() - 1);
            f.announce("sg_wavepacket_volume_destroy", String::new);
            sg_wavepacket_volume_destroy(self.volumes.swap_remove(i).p);
            sg_wavepacket_volume_destroy(ptr::null_mut());
        } else {
            let v = &self.volumes[f.rng.range(0, self.volumes.len() - 1)];
            match r {
                15..=27 => sizes(f, v),
                28..=40 => box_info(f, v),
                41..=45 => wavepacket_tiles::tile_info(f, v),
                46..=60 if v.f64 != f.rng.chance(0.03) => tile_call::<f64>(f, v, &TILES_F64),
                46..=60 => tile_call::<f32>(f, v, &TILES_F32),
                // A call of the other precision is a planted fault.
                _ if v.f64 != f.rng.chance(0.03) => transform::<f64>(f, v, &F64),
                _ => transform::<f32>(f, v, &F32),
            }
        }
    }
}

fn create(f: &mut Fuzz, volumes: &mut Vec<Volume>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let mut dim = if f.rng.chance(0.05) { 3 } else { 2 };
    let mut tile = [f.rng.range(8, 12), f.rng.range(8, 12), 8];
    let mut volume = [f.rng.range(1, 30), f.rng.range(1, 30), f.rng.range(1, 10)];
    let mut precision = f.rng.pick(&[SG_WAVEPACKET_F32, SG_WAVEPACKET_F64]);
    let mut o = sg_wavepacket_layout_options_default();
    o.directions = if dim == 2 { f.rng.pick(&[2, 4]) } else { 6 };
    o.levels = 1;
    o.cutoff = f.rng.pick(&[1e-3, 0.2]);
    if precision == SG_WAVEPACKET_F64 {
        o.tolerance = f.rng.pick(&[1e-6, 1e-10]);
    }
    let (mut volume_null, mut tile_null, mut null_options) = (false, false, false);
    match f.rng.range(0, 16) {
        0 => {
            k.plant("dim");
            dim = f.rng.bad_enum(&[2, 3]);
        }
        1 => {
            k.plant("`volume_shape`");
            volume_null = true;
        }
        2 => {
            k.plant("`tile_shape`");
            tile_null = true;
        }
        3 => {
            k.plant("volume shape[");
            volume[f.rng.range(0, dim as usize - 1)] = 0;
        }
        4 => {
            // Past size_t or the host: refused with the sizes.
            k.plant("volume");
            volume[f.rng.range(0, dim as usize - 1)] = f.rng.huge();
        }
        5 => {
            k.plant("shape[");
            tile[f.rng.range(0, dim as usize - 1)] = f.rng.range(0, 7);
        }
        6 => {
            k.plant("directions");
            o.directions = if dim == 2 { 3 } else { 7 };
        }
        7 => {
            k.plant("precision");
            precision = f.rng.bad_enum(&[1, 2]);
        }
        8 => {
            k.plant("cutoff");
            o.cutoff = f.rng.pick(&[0.0, 0.5, f64::NAN]);
        }
        // The defaults: 32 directions on these tiles.
        9 if dim == 2 => null_options = true,
        _ => {}
    }
    let mut out: *mut sg_wavepacket_volume = ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    let vp = if volume_null {
        ptr::null()
    } else {
        volume.as_ptr()
    };
    let tp = if tile_null {
        ptr::null()
    } else {
        tile.as_ptr()
    };
    let op: *const sg_wavepacket_layout_options = if null_options { ptr::null() } else { &o };
    // A third of the volumes deal their tiles out over the context given twice (or a list
    // with a planted fault).
    let (name, s) = if f.rng.chance(0.33) {
        let mut list = [ctx, ctx];
        let mut n = list.len();
        let mut list_null = false;
        if ctx.is_null() {
            k.plant("contexts[0]");
        }
        match f.rng.range(0, 5) {
            0 => {
                k.plant("n_contexts");
                n = f.rng.pick(&[0, 1025, usize::MAX]);
            }
            1 => {
                k.plant("contexts[1]");
                list[1] = ptr::null();
            }
            2 => {
                k.plant("`contexts`");
                list_null = true;
            }
            _ => {}
        }
        let lp = if list_null {
            ptr::null()
        } else {
            list.as_ptr()
        };
        // Half of them through the capped create, with a cap that never binds.
        let cap = f.rng.pick(&[0, usize::MAX]);
        let name = match f.rng.chance(0.5) {
            true => "sg_wavepacket_volume_create_capped",
            false => "sg_wavepacket_volume_create_on_contexts",
        };
        f.announce(name, || {
            format!(
                "{n} contexts, dim {dim}, volume {volume:?}, tile {tile:?}, precision {precision}, cap {cap}"
            )
        });
        let s = match name {
            "sg_wavepacket_volume_create_capped" => {
                sg_wavepacket_volume_create_capped(lp, n, dim, vp, tp, precision, op, cap, out_p)
            }
            _ => sg_wavepacket_volume_create_on_contexts(lp, n, dim, vp, tp, precision, op, out_p),
        };
        (name, s)
    } else {
        let name = "sg_wavepacket_volume_create";
        f.announce(name, || {
            format!("dim {dim}, volume {volume:?}, tile {tile:?}, precision {precision}, NULL options {null_options}")
        });
        (
            name,
            sg_wavepacket_volume_create(ctx, dim, vp, tp, precision, op, out_p),
        )
    };
    f.check(name, s, &k, &[snap]);
    if s != SG_OK {
        return;
    }
    if volumes.len() >= 2 || dim == 3 {
        sg_wavepacket_volume_destroy(out);
        return;
    }
    let (mut n, mut m, mut tiles, mut boxes) = (0usize, 0usize, [0usize; 3], 0usize);
    let s = sg_wavepacket_volume_sizes(out, &mut n, &mut m, tiles.as_mut_ptr(), &mut boxes);
    assert_eq!(s, SG_OK);
    assert_eq!(n, volume[0] * volume[1]);
    let (mut origin, mut nt, mut mt) = ([0usize; 3], 0usize, 0usize);
    let s = sg_wavepacket_volume_tile_info(out, 0, origin.as_mut_ptr(), &mut nt, &mut mt);
    assert_eq!(s, SG_OK);
    volumes.push(Volume {
        p: out,
        f64: precision == SG_WAVEPACKET_F64,
        n,
        m,
        boxes,
        n_tiles: tiles.iter().product(),
        tile_samples: nt,
        tile_coefficients: mt,
    });
}

/// The volume, or (a planted fault) NULL.
fn volume_or_null(f: &mut Fuzz, k: &mut Faults, v: &Volume) -> *const sg_wavepacket_volume {
    if f.rng.chance(0.03) {
        k.plant("`volume`");
        ptr::null()
    } else {
        v.p
    }
}

/// An output pointer: `slot`, or (a planted fault named `name`) NULL.
fn slot<T>(f: &mut Fuzz, k: &mut Faults, p: *mut T, name: &'static str) -> *mut T {
    if f.rng.chance(0.04) {
        k.plant(name);
        ptr::null_mut()
    } else {
        p
    }
}

fn sizes(f: &mut Fuzz, v: &Volume) {
    let mut k = Faults::default();
    let p = volume_or_null(f, &mut k, v);
    let mut out = [0x5151usize; 6];
    let snaps = [Snapshot::of_slice("sizes", &out)];
    let base = out.as_mut_ptr();
    let n = slot(f, &mut k, base, "n_samples");
    let m = slot(f, &mut k, base.wrapping_add(1), "n_coefficients");
    let t = slot(f, &mut k, base.wrapping_add(2), "tiles");
    let b = slot(f, &mut k, base.wrapping_add(5), "n_boxes");
    f.announce("sg_wavepacket_volume_sizes", String::new);
    let s = sg_wavepacket_volume_sizes(p, n, m, t, b);
    f.check("sg_wavepacket_volume_sizes", s, &k, &snaps);
    if s == SG_OK {
        assert_eq!((out[0], out[1], out[5]), (v.n, v.m, v.boxes));
    }
}

fn box_info(f: &mut Fuzz, v: &Volume) {
    let mut k = Faults::default();
    let p = volume_or_null(f, &mut k, v);
    let mut b = f.rng.range(0, v.boxes - 1);
    if f.rng.chance(0.1) {
        k.plant("box_index");
        b = if f.rng.chance(0.5) {
            v.boxes
        } else {
            f.rng.huge()
        };
    }
    let (mut level, mut dir) = (0x5151i32, 0x5151i32);
    let (mut offset, mut count) = (7usize, 7usize);
    let snaps = [
        Snapshot::of("level", &level, 1),
        Snapshot::of("direction", &dir, 1),
        Snapshot::of("offset", &offset, 1),
        Snapshot::of("count", &count, 1),
    ];
    let lv = slot(f, &mut k, &mut level as *mut i32, "level");
    let dr = slot(f, &mut k, &mut dir as *mut i32, "direction");
    let of = slot(f, &mut k, &mut offset as *mut usize, "offset");
    let co = slot(f, &mut k, &mut count as *mut usize, "count");
    f.announce("sg_wavepacket_volume_box_info", || format!("box {b}"));
    let s = sg_wavepacket_volume_box_info(p, b, lv, dr, of, co);
    f.check("sg_wavepacket_volume_box_info", s, &k, &snaps);
    if s == SG_OK {
        assert!(offset + count <= v.m);
    }
}

type Transform<T> = extern "C" fn(*const sg_wavepacket_volume, *const T, *mut T) -> i32;
type Inverse<T> = extern "C" fn(
    *const sg_wavepacket_volume,
    *const T,
    *mut T,
    f64,
    usize,
    *mut usize,
    *mut f64,
) -> i32;

/// The calls of one precision.
struct Calls<T> {
    forward: Transform<T>,
    adjoint: Transform<T>,
    inverse: Inverse<T>,
    names: [&'static str; 3],
    f64: bool,
}

const F32: Calls<f32> = Calls {
    forward: sg_wavepacket_volume_forward_f32,
    adjoint: sg_wavepacket_volume_adjoint_f32,
    inverse: sg_wavepacket_volume_inverse_f32,
    names: [
        "sg_wavepacket_volume_forward_f32",
        "sg_wavepacket_volume_adjoint_f32",
        "sg_wavepacket_volume_inverse_f32",
    ],
    f64: false,
};

const F64: Calls<f64> = Calls {
    forward: sg_wavepacket_volume_forward_f64,
    adjoint: sg_wavepacket_volume_adjoint_f64,
    inverse: sg_wavepacket_volume_inverse_f64,
    names: [
        "sg_wavepacket_volume_forward_f64",
        "sg_wavepacket_volume_adjoint_f64",
        "sg_wavepacket_volume_inverse_f64",
    ],
    f64: true,
};

/// Forward, adjoint or inverse: an input and an output array, apart or not, sometimes a
/// non-finite input value, NULL arrays, a bad tolerance.
fn transform<T: Real>(f: &mut Fuzz, v: &Volume, c: &Calls<T>) {
    let mut k = Faults::default();
    if c.f64 != v.f64 {
        k.plant("precision");
    }
    let p = volume_or_null(f, &mut k, v);
    let which = f.rng.range(0, 2);
    let (n_in, n_out) = match which {
        0 => (v.n, 2 * v.m),
        _ => (2 * v.m, v.n),
    };
    // Input then output in one buffer, so that they can also be made to overlap.
    let mut buf: Vec<T> = (0..n_in).map(|_| T::of(f.rng.symmetric())).collect();
    if f.rng.chance(0.05) {
        let i = f.rng.range(0, n_in - 1);
        buf[i] = T::of(f.rng.non_finite());
        k.plant("not finite");
    }
    buf.extend(sentinel::<T>(n_out));
    let base = buf.as_mut_ptr();
    let mut input = base as *const T;
    let mut output = base.wrapping_add(n_in);
    match f.rng.range(0, 19) {
        0 => {
            k.plant(if which == 0 { "`data`" } else { "`coeffs`" });
            input = ptr::null();
        }
        1 => {
            k.plant(if which == 0 { "`coeffs`" } else { "`data`" });
            output = ptr::null_mut();
        }
        2 => {
            k.plant("overlap");
            output = base.wrapping_add(f.rng.range(0, n_in - 1));
        }
        _ => {}
    }
    let mut tolerance = f.rng.pick(&[1e-2, 1e-4]);
    if which == 2 && f.rng.chance(0.1) {
        k.plant("tolerance");
        tolerance = f.rng.pick(&[0.0, 1.0, -1.0, f64::NAN]);
    }
    let (mut iterations, mut residual) = (0x5151usize, 7.0f64);
    let snaps = [
        Snapshot::of("output", output, n_out),
        Snapshot::of("input", input, n_in),
        Snapshot::of("iterations", &iterations, 1),
        Snapshot::of("residual", &residual, 1),
    ];
    let name = c.names[which];
    f.announce(name, || format!("n {}, m {}", v.n, v.m));
    let s = match which {
        0 => (c.forward)(p, input, output),
        1 => (c.adjoint)(p, input, output),
        _ => (c.inverse)(
            p,
            input,
            output,
            tolerance,
            f.rng.range(0, 3),
            &mut iterations,
            &mut residual,
        ),
    };
    f.check(name, s, &k, &snaps);
}
