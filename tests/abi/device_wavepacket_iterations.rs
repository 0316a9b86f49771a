//! The wave packets' iterative and tiled device calls (`sg_wavepacket_{pocs,
//! sparse_approximation}_device_*`, `sg_wavepacket_volume_{forward,adjoint,inverse}_device_*`)
//! on a CPU context: each refused with SG_ERR_UNSUPPORTED and a message naming the call,
//! nothing written (the host arrays behind the addresses and the host outputs untouched); a
//! NULL layout or volume refused as such.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::device_iterations::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::wavepacket_volume_device::*;
use std::ptr;

const SHAPE: [usize; 2] = [32, 24];
const VOLUME: [usize; 2] = [40, 20];
const TILE: [usize; 2] = [32, 16];

/// One device call: the handle, two arrays' addresses, the host outputs (a count and a
/// residual).
type DeviceCall<H> = fn(*mut H, u64, u64, *mut usize, *mut f64) -> sg_status;

fn layout(ctx: &Ctx, precision: i32) -> *mut sg_wavepacket_layout {
    let mut l = ptr::null_mut();
    ok(sg_wavepacket_layout_create(
        ctx.0,
        2,
        SHAPE.as_ptr(),
        8,
        0,
        0.0,
        0.0,
        1e-6,
        precision,
        &mut l,
    ));
    l
}

fn volume(ctx: &Ctx, precision: i32) -> *mut sg_wavepacket_volume {
    let mut v = ptr::null_mut();
    ok(sg_wavepacket_volume_create(
        ctx.0,
        2,
        VOLUME.as_ptr(),
        TILE.as_ptr(),
        precision,
        ptr::null(),
        &mut v,
    ));
    v
}

/// Every call of `calls` (named `sg_<names[i]>_device_<suffix>`) on a CPU handle `h`; the
/// arrays' addresses are those of host arrays, which must stay as they were, and so must
/// the host outputs. A NULL handle is refused naming `handle`.
fn refused_on_the_cpu<H, T: Copy + PartialEq + std::fmt::Debug>(
    (h, handle): (*mut H, &str),
    suffix: &str,
    fill: T,
    calls: &[(&str, DeviceCall<H>)],
) {
    let a = [fill; 4096];
    let b = [fill; 4096];
    let (pa, pb) = (a.as_ptr() as u64, b.as_ptr() as u64);
    let (mut count, mut residual) = (7usize, -1.0f64);
    for (name, call) in calls {
        let s = call(h, pa, pb, &mut count, &mut residual);
        let want = format!("sg_{name}_device_{suffix}");
        assert_eq!(s, SG_ERR_UNSUPPORTED, "{want}: {}", last_error());
        assert!(last_error().contains(&want), "{want}: {}", last_error());
    }
    assert!(a.iter().chain(&b).all(|&v| v == fill), "an array written");
    assert_eq!((count, residual), (7, -1.0), "a host output written");
    for (_, call) in calls {
        let s = call(ptr::null_mut(), pa, pb, &mut count, &mut residual);
        assert_eq!(s, SG_ERR_NULL_POINTER, "{}", last_error());
        assert!(last_error().contains(handle), "{}", last_error());
    }
}

#[test]
fn wavepacket_pocs_and_sparse_device_calls_are_refused_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    // Every trace recorded but one: a valid mask for the layout's 24 traces.
    static LIVE: [i32; 24] = {
        let mut m = [1; 24];
        m[5] = 0;
        m
    };
    let l32 = layout(&ctx, SG_WAVEPACKET_F32);
    refused_on_the_cpu::<sg_wavepacket_layout, f32>(
        (l32, "layout"),
        "f32",
        2.5,
        &[
            ("wavepacket_pocs", |l, d, _, _, _| {
                sg_wavepacket_pocs_device_f32(l, d, LIVE.as_ptr(), 24, ptr::null())
            }),
            ("wavepacket_sparse_approximation", |l, d, c, k, r| {
                sg_wavepacket_sparse_approximation_device_f32(l, d, c, 10, ptr::null(), k, r)
            }),
        ],
    );
    let l64 = layout(&ctx, SG_WAVEPACKET_F64);
    refused_on_the_cpu::<sg_wavepacket_layout, f64>(
        (l64, "layout"),
        "f64",
        -1.5,
        &[
            ("wavepacket_pocs", |l, d, _, _, _| {
                sg_wavepacket_pocs_device_f64(l, d, LIVE.as_ptr(), 24, ptr::null())
            }),
            ("wavepacket_sparse_approximation", |l, d, c, k, r| {
                sg_wavepacket_sparse_approximation_device_f64(l, d, c, 10, ptr::null(), k, r)
            }),
        ],
    );
    // The other precision's call names the one to make, as the host calls do.
    let s = sg_wavepacket_pocs_device_f64(l32, 0, LIVE.as_ptr(), 24, ptr::null());
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{}", last_error());
    assert!(
        last_error().contains("sg_wavepacket_pocs_device_f32"),
        "{}",
        last_error()
    );
    sg_wavepacket_layout_destroy(l32);
    sg_wavepacket_layout_destroy(l64);
}

#[test]
fn wavepacket_volume_device_calls_are_refused_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    let v32 = volume(&ctx, SG_WAVEPACKET_F32);
    refused_on_the_cpu::<sg_wavepacket_volume, f32>(
        (v32, "volume"),
        "f32",
        2.5,
        &[
            ("wavepacket_volume_forward", |v, d, c, _, _| {
                sg_wavepacket_volume_forward_device_f32(v, d, c)
            }),
            ("wavepacket_volume_adjoint", |v, c, d, _, _| {
                sg_wavepacket_volume_adjoint_device_f32(v, c, d)
            }),
            ("wavepacket_volume_inverse", |v, c, d, k, r| {
                sg_wavepacket_volume_inverse_device_f32(v, c, d, 1e-3, 4, k, r)
            }),
        ],
    );
    let v64 = volume(&ctx, SG_WAVEPACKET_F64);
    refused_on_the_cpu::<sg_wavepacket_volume, f64>(
        (v64, "volume"),
        "f64",
        -1.5,
        &[
            ("wavepacket_volume_forward", |v, d, c, _, _| {
                sg_wavepacket_volume_forward_device_f64(v, d, c)
            }),
            ("wavepacket_volume_adjoint", |v, c, d, _, _| {
                sg_wavepacket_volume_adjoint_device_f64(v, c, d)
            }),
            ("wavepacket_volume_inverse", |v, c, d, k, r| {
                sg_wavepacket_volume_inverse_device_f64(v, c, d, 1e-3, 4, k, r)
            }),
        ],
    );
    let s = sg_wavepacket_volume_forward_device_f64(v32, 0, 0);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{}", last_error());
    assert!(
        last_error().contains("sg_wavepacket_volume_forward_device_f32"),
        "{}",
        last_error()
    );
    sg_wavepacket_volume_destroy(v32);
    sg_wavepacket_volume_destroy(v64);
}
