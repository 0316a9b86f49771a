//! `sg_wavepacket_{keep_largest,threshold_noise,estimate_noise}_device_{f32,f64}` on the
//! wave-packet family's layouts.

use super::super::{Faults, Fuzz, Snapshot};
use super::memory::{Elem, Memory};
use super::wavepacket::Layout;
use super::{check, or_null};
use seisgpu::ffi::wavepacket::device_coeffs::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;

type L = sg_wavepacket_layout;

/// Each precision's calls: keep-largest, the noise threshold, the noise estimate.
struct Calls {
    keep: extern "C" fn(*const L, u64, usize) -> i32,
    noise: extern "C" fn(*const L, u64, i32, f64, f64) -> i32,
    estimate: extern "C" fn(*const L, u64, *mut f64) -> i32,
    names: [&'static str; 3],
}

const F32: Calls = Calls {
    keep: sg_wavepacket_keep_largest_device_f32,
    noise: sg_wavepacket_threshold_noise_device_f32,
    estimate: sg_wavepacket_estimate_noise_device_f32,
    names: [
        "sg_wavepacket_keep_largest_device_f32",
        "sg_wavepacket_threshold_noise_device_f32",
        "sg_wavepacket_estimate_noise_device_f32",
    ],
};

const F64: Calls = Calls {
    keep: sg_wavepacket_keep_largest_device_f64,
    noise: sg_wavepacket_threshold_noise_device_f64,
    estimate: sg_wavepacket_estimate_noise_device_f64,
    names: [
        "sg_wavepacket_keep_largest_device_f64",
        "sg_wavepacket_threshold_noise_device_f64",
        "sg_wavepacket_estimate_noise_device_f64",
    ],
};

/// One call on layout `l` (`p` its handle): a call of the other precision is a planted fault.
pub(super) fn step(f: &mut Fuzz, mem: &mut Memory, p: *mut L, l: &Layout) {
    match l.f64 != f.rng.chance(0.04) {
        true => call::<f64>(f, mem, p, l, &F64),
        false => call::<f32>(f, mem, p, l, &F32),
    }
}

fn call<T: Elem>(f: &mut Fuzz, mem: &mut Memory, p: *mut L, l: &Layout, c: &Calls) {
    let mut k = mem.faults();
    if l.f64 != (std::mem::size_of::<T>() == 8) {
        k.plant("precision");
    }
    let p = or_null(f, &mut k, p, "layout", 0.04);
    match f.rng.range(0, 2) {
        0 => keep::<T>(f, mem, l, p, k, c),
        1 => noise::<T>(f, mem, l, p, k, c),
        _ => estimate::<T>(f, mem, l, p, k, c),
    }
}

/// Keep-largest: any count is valid (beyond the coefficients: all kept).
fn keep<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    l: &Layout,
    p: *const L,
    mut k: Faults,
    c: &Calls,
) {
    let s = f.rng.pick(&[0, 1, l.m / 2, l.m, l.m + 3, usize::MAX]);
    let coeffs = mem.array::<T>(f, &mut k, "`coeffs`", 2 * l.m).at;
    let name = c.names[0];
    f.announce(name, || format!("{coeffs:#x}, s {s}"));
    let s = (c.keep)(p, coeffs, s);
    check(f, mem, name, s, &k, Vec::new());
}

/// The noise threshold: a mode, k and σ finite and ≥ 0.
fn noise<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    l: &Layout,
    p: *const L,
    mut k: Faults,
    c: &Calls,
) {
    let mut mode = f.rng.pick(&[SG_WAVEPACKET_HARD, SG_WAVEPACKET_SOFT]);
    let (mut kk, mut sigma) = (f.rng.symmetric().abs() * 3.0, f.rng.symmetric().abs());
    let bad = [-1.0, f64::NAN, f64::INFINITY];
    match f.rng.range(0, 12) {
        0 => {
            k.plant("mode");
            mode = f.rng.bad_enum(&[0, 1]);
        }
        1 => {
            k.plant("k is");
            kk = f.rng.pick(&bad);
        }
        2 => {
            k.plant("sigma");
            sigma = f.rng.pick(&bad);
        }
        _ => {}
    }
    let coeffs = mem.array::<T>(f, &mut k, "`coeffs`", 2 * l.m).at;
    let name = c.names[1];
    f.announce(name, || {
        format!("{coeffs:#x}, mode {mode}, k {kk}, sigma {sigma}")
    });
    let s = (c.noise)(p, coeffs, mode, kk, sigma);
    check(f, mem, name, s, &k, Vec::new());
}

/// The noise estimate: σ a host output, NULL a planted fault, untouched on failure.
fn estimate<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    l: &Layout,
    p: *const L,
    mut k: Faults,
    c: &Calls,
) {
    let mut sigma = 7.0f64;
    let snaps = vec![Snapshot::of("sigma", &sigma, 1)];
    let out: *mut f64 = if f.rng.chance(0.05) {
        k.plant("sigma");
        ptr::null_mut()
    } else {
        &mut sigma
    };
    let coeffs = mem.array::<T>(f, &mut k, "`coeffs`", 2 * l.m).at;
    let name = c.names[2];
    f.announce(name, || format!("{coeffs:#x}"));
    let s = (c.estimate)(p, coeffs, out);
    check(f, mem, name, s, &k, snaps);
}
