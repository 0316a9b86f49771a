//! The wave packets' device calls (`sg_wavepacket_*_device_*`) on a CPU context: each
//! refused with SG_ERR_UNSUPPORTED and a message naming the call, nothing written (the
//! inverse's host outputs untouched); a NULL layout refused as such.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;

const SHAPE: [usize; 2] = [32, 24];

/// One device call: the layout, data and coefficient addresses, the inverse's host outputs.
type DeviceCall = fn(*mut sg_wavepacket_layout, u64, u64, *mut usize, *mut f64) -> sg_status;

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

/// `status` is SG_ERR_UNSUPPORTED and the message names `call`.
fn unsupported(status: sg_status, call: &str) {
    assert_eq!(status, SG_ERR_UNSUPPORTED, "{call}: {}", last_error());
    let m = last_error();
    assert!(m.contains(call), "{call}: {m}");
}

/// Every device call of one precision on a CPU layout `l`, each with `call` naming it;
/// device addresses are those of host arrays, which must stay as they were.
fn refused_on_the_cpu<T: Copy + PartialEq + std::fmt::Debug>(
    l: *mut sg_wavepacket_layout,
    suffix: &str,
    fill: T,
    calls: [DeviceCall; 4],
) {
    let n = SHAPE[0] * SHAPE[1];
    let data = vec![fill; n];
    let coeffs = [fill; 64];
    let (d, c) = (data.as_ptr() as u64, coeffs.as_ptr() as u64);
    let (mut iterations, mut residual) = (7usize, -1.0f64);
    let names = ["forward", "adjoint", "inverse", "threshold"];
    for (call, name) in calls.iter().zip(names) {
        let s = call(l, d, c, &mut iterations, &mut residual);
        unsupported(s, &format!("sg_wavepacket_{name}_device_{suffix}"));
    }
    assert!(data.iter().all(|&v| v == fill) && coeffs.iter().all(|&v| v == fill));
    assert_eq!((iterations, residual), (7, -1.0), "host outputs written");
    for call in calls {
        let s = call(ptr::null_mut(), d, c, &mut iterations, &mut residual);
        assert_eq!(s, SG_ERR_NULL_POINTER, "{}", last_error());
        assert!(last_error().contains("layout"), "{}", last_error());
    }
}

#[test]
fn wavepacket_device_calls_are_refused_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    let l32 = layout(&ctx, SG_WAVEPACKET_F32);
    refused_on_the_cpu(
        l32,
        "f32",
        2.5f32,
        [
            |l, d, c, _, _| sg_wavepacket_forward_device_f32(l, d, c),
            |l, d, c, _, _| sg_wavepacket_adjoint_device_f32(l, c, d),
            |l, d, c, i, r| sg_wavepacket_inverse_device_f32(l, c, d, 1e-3, 5, i, r),
            |l, _, c, _, _| sg_wavepacket_threshold_device_f32(l, c, SG_WAVEPACKET_HARD, 0, 0.1),
        ],
    );
    let l64 = layout(&ctx, SG_WAVEPACKET_F64);
    refused_on_the_cpu(
        l64,
        "f64",
        -1.5f64,
        [
            |l, d, c, _, _| sg_wavepacket_forward_device_f64(l, d, c),
            |l, d, c, _, _| sg_wavepacket_adjoint_device_f64(l, c, d),
            |l, d, c, i, r| sg_wavepacket_inverse_device_f64(l, c, d, 1e-3, 5, i, r),
            |l, _, c, _, _| sg_wavepacket_threshold_device_f64(l, c, SG_WAVEPACKET_SOFT, 0, 0.1),
        ],
    );
    // The other precision's call names the one to make, as the host calls do.
    let s = sg_wavepacket_forward_device_f64(l32, 0, 0);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{}", last_error());
    let m = last_error();
    assert!(m.contains("sg_wavepacket_forward_device_f32"), "{m}");
    sg_wavepacket_layout_destroy(l32);
    sg_wavepacket_layout_destroy(l64);
}
