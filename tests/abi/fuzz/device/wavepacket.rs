//! `sg_wavepacket_{forward,adjoint,inverse,threshold}_device_{f32,f64}` on small 2D layouts
//! (the coefficient operations that rank or scale by box in `wavepacket_coeffs`).

use super::super::{Faults, Fuzz, Snapshot};
use super::memory::{Elem, Memory};
use super::{check, or_null, setup};
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;

/// A live layout: its precision, samples and coefficients.
pub(super) struct Layout {
    p: *mut sg_wavepacket_layout,
    pub(super) f64: bool,
    n: usize,
    pub(super) m: usize,
}

#[derive(Default)]
pub struct Wavepacket {
    layouts: Vec<Layout>,
}

impl Drop for Wavepacket {
    fn drop(&mut self) {
        for l in self.layouts.drain(..) {
            sg_wavepacket_layout_destroy(l.p);
        }
    }
}

/// Each precision's calls: forward, adjoint, inverse, threshold.
struct Calls {
    forward: extern "C" fn(*const sg_wavepacket_layout, u64, u64) -> i32,
    adjoint: extern "C" fn(*const sg_wavepacket_layout, u64, u64) -> i32,
    inverse: extern "C" fn(
        *const sg_wavepacket_layout,
        u64,
        u64,
        f64,
        usize,
        *mut usize,
        *mut f64,
    ) -> i32,
    threshold: extern "C" fn(*const sg_wavepacket_layout, u64, i32, i32, f64) -> i32,
    names: [&'static str; 4],
}

const F32: Calls = Calls {
    forward: sg_wavepacket_forward_device_f32,
    adjoint: sg_wavepacket_adjoint_device_f32,
    inverse: sg_wavepacket_inverse_device_f32,
    threshold: sg_wavepacket_threshold_device_f32,
    names: [
        "sg_wavepacket_forward_device_f32",
        "sg_wavepacket_adjoint_device_f32",
        "sg_wavepacket_inverse_device_f32",
        "sg_wavepacket_threshold_device_f32",
    ],
};

const F64: Calls = Calls {
    forward: sg_wavepacket_forward_device_f64,
    adjoint: sg_wavepacket_adjoint_device_f64,
    inverse: sg_wavepacket_inverse_device_f64,
    threshold: sg_wavepacket_threshold_device_f64,
    names: [
        "sg_wavepacket_forward_device_f64",
        "sg_wavepacket_adjoint_device_f64",
        "sg_wavepacket_inverse_device_f64",
        "sg_wavepacket_threshold_device_f64",
    ],
};

impl Wavepacket {
    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        if self.layouts.is_empty() || f.rng.chance(0.02) {
            return self.create(f);
        }
        let l = &self.layouts[f.rng.range(0, self.layouts.len() - 1)];
        if f.rng.chance(0.4) {
            return super::wavepacket_coeffs::step(f, mem, l.p, l);
        }
        // A call of the other precision is a planted fault.
        match l.f64 != f.rng.chance(0.04) {
            true => calls::<f64>(f, mem, l, &F64),
            false => calls::<f32>(f, mem, l, &F32),
        }
    }

    fn create(&mut self, f: &mut Fuzz) {
        let shape = [f.rng.range(8, 16), f.rng.range(8, 16)];
        let directions = f.rng.pick(&[2, 4, 6, 8]);
        let levels = f.rng.range(0, 2);
        let alpha = f.rng.pick(&[0.0, 3.0]);
        let beta = f.rng.pick(&[0.0, 1.0]);
        let precision = f.rng.pick(&[SG_WAVEPACKET_F32, SG_WAVEPACKET_F64]);
        let mut p = ptr::null_mut();
        let name = "sg_wavepacket_layout_create";
        f.announce(name, || {
            format!("{shape:?}, {directions} dirs, {levels} levels, precision {precision}")
        });
        let s = sg_wavepacket_layout_create(
            f.ctx,
            2,
            shape.as_ptr(),
            directions,
            levels,
            alpha,
            beta,
            0.0,
            precision,
            &mut p,
        );
        if !setup(f, name, s) {
            return;
        }
        let [mut n, mut m, mut boxes, mut depth, mut dirs] = [0usize; 5];
        let s = sg_wavepacket_layout_sizes(p, &mut n, &mut m, &mut boxes, &mut depth, &mut dirs);
        assert_eq!(s, seisgpu::ffi::status::SG_OK, "a layout's sizes");
        if self.layouts.len() >= 2 {
            sg_wavepacket_layout_destroy(self.layouts.swap_remove(0).p);
        }
        let f64 = precision == SG_WAVEPACKET_F64;
        self.layouts.push(Layout { p, f64, n, m });
    }
}

fn calls<T: Elem>(f: &mut Fuzz, mem: &mut Memory, l: &Layout, c: &Calls) {
    let mut k = mem.faults();
    if l.f64 != (std::mem::size_of::<T>() == 8) {
        k.plant("precision");
    }
    let p = or_null(f, &mut k, l.p, "layout", 0.04);
    let which = f.rng.range(0, 3);
    let name = c.names[which];
    if which == 3 {
        return threshold::<T>(f, mem, l, p, k, c);
    }
    // The library checks `data` (n reals), then `coeffs` (2·m reals).
    let data = mem.array::<T>(f, &mut k, "`data`", l.n).at;
    let coeffs = mem.array::<T>(f, &mut k, "`coeffs`", 2 * l.m).at;
    let s = match which {
        0 => {
            f.announce(name, || format!("{data:#x}, {coeffs:#x}"));
            (c.forward)(p, data, coeffs)
        }
        1 => {
            f.announce(name, || format!("{coeffs:#x}, {data:#x}"));
            (c.adjoint)(p, coeffs, data)
        }
        _ => return inverse(f, mem, p, [coeffs, data], k, c),
    };
    check(f, mem, name, s, &k, Vec::new());
}

/// The inverse: a tolerance in (0, 1), a few iterations, host outputs that may be NULL.
fn inverse(
    f: &mut Fuzz,
    mem: &mut Memory,
    p: *const sg_wavepacket_layout,
    [coeffs, data]: [u64; 2],
    mut k: Faults,
    c: &Calls,
) {
    let mut tolerance = f.rng.pick(&[1e-2, 1e-4, 1e-6]);
    if f.rng.chance(0.08) {
        k.plant("tolerance");
        tolerance = f.rng.pick(&[0.0, 1.0, -1.0, f64::NAN, f64::INFINITY]);
    }
    let max_iterations = f.rng.range(0, 3);
    let (mut iterations, mut residual) = (0x5151usize, 7.0f64);
    let snaps = vec![
        Snapshot::of("iterations", &iterations, 1),
        Snapshot::of("residual", &residual, 1),
    ];
    let it: *mut usize = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut iterations
    };
    let res: *mut f64 = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut residual
    };
    let name = c.names[2];
    f.announce(name, || {
        format!("{coeffs:#x}, {data:#x}, {tolerance}, {max_iterations}")
    });
    let s = (c.inverse)(p, coeffs, data, tolerance, max_iterations, it, res);
    check(f, mem, name, s, &k, snaps);
}

/// Thresholding in place: a mode, a kind (the σ kind is host-only), a value ≥ 0.
fn threshold<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    l: &Layout,
    p: *const sg_wavepacket_layout,
    mut k: Faults,
    c: &Calls,
) {
    let mut mode = f.rng.pick(&[SG_WAVEPACKET_HARD, SG_WAVEPACKET_SOFT]);
    let mut kind = SG_WAVEPACKET_THRESHOLD_VALUE;
    let mut value = f.rng.symmetric().abs();
    match f.rng.range(0, 14) {
        0 => {
            k.plant("mode");
            mode = f.rng.bad_enum(&[0, 1]);
        }
        1 => {
            k.plant("kind");
            kind = f.rng.bad_enum(&[0, 1]);
        }
        2 => {
            kind = SG_WAVEPACKET_THRESHOLD_SIGMA;
            if mem.cuda() {
                k.plant("SG_WAVEPACKET_THRESHOLD_SIGMA");
            }
        }
        3 => {
            k.plant("value");
            value = f.rng.pick(&[-1.0, f64::NAN, f64::INFINITY, -0.0 - 1e-300]);
        }
        _ => {}
    }
    let coeffs = mem.array::<T>(f, &mut k, "`coeffs`", 2 * l.m).at;
    let name = c.names[3];
    f.announce(name, || {
        format!("{coeffs:#x}, mode {mode}, kind {kind}, value {value}")
    });
    let s = (c.threshold)(p, coeffs, mode, kind, value);
    check(f, mem, name, s, &k, Vec::new());
}
