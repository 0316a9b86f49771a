//! The wave packets' device coefficient operations (`sg_wavepacket_{keep_largest,
//! threshold_noise,estimate_noise}_device_*`) on a CPU context: each refused with
//! SG_ERR_UNSUPPORTED and a message naming the call, nothing written (the estimate's host
//! σ untouched); a NULL layout refused as such.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::device_coeffs::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;

const SHAPE: [usize; 2] = [32, 24];

/// One device call: the layout, the coefficients' address, the estimate's host output.
type DeviceCall = fn(*mut sg_wavepacket_layout, u64, *mut f64) -> sg_status;

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

/// Every call of one precision on a CPU layout `l`; the coefficients' address is that of a
/// host array, which must stay as it was, and so must σ.
fn refused_on_the_cpu<T: Copy + PartialEq + std::fmt::Debug>(
    l: *mut sg_wavepacket_layout,
    suffix: &str,
    fill: T,
    calls: [DeviceCall; 3],
) {
    let coeffs = [fill; 4096];
    let c = coeffs.as_ptr() as u64;
    let mut sigma = -1.0f64;
    let names = ["keep_largest", "threshold_noise", "estimate_noise"];
    for (call, name) in calls.iter().zip(names) {
        let s = call(l, c, &mut sigma);
        let want = format!("sg_wavepacket_{name}_device_{suffix}");
        assert_eq!(s, SG_ERR_UNSUPPORTED, "{want}: {}", last_error());
        assert!(last_error().contains(&want), "{want}: {}", last_error());
    }
    assert!(coeffs.iter().all(|&v| v == fill), "coefficients written");
    assert_eq!(sigma, -1.0, "σ written");
    for call in calls {
        let s = call(ptr::null_mut(), c, &mut sigma);
        assert_eq!(s, SG_ERR_NULL_POINTER, "{}", last_error());
        assert!(last_error().contains("layout"), "{}", last_error());
    }
}

#[test]
fn wavepacket_device_coefficient_operations_are_refused_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    let l32 = layout(&ctx, SG_WAVEPACKET_F32);
    refused_on_the_cpu(
        l32,
        "f32",
        2.5f32,
        [
            |l, c, _| sg_wavepacket_keep_largest_device_f32(l, c, 10),
            |l, c, _| sg_wavepacket_threshold_noise_device_f32(l, c, SG_WAVEPACKET_HARD, 2.5, 0.1),
            |l, c, s| sg_wavepacket_estimate_noise_device_f32(l, c, s),
        ],
    );
    let l64 = layout(&ctx, SG_WAVEPACKET_F64);
    refused_on_the_cpu(
        l64,
        "f64",
        -1.5f64,
        [
            |l, c, _| sg_wavepacket_keep_largest_device_f64(l, c, 10),
            |l, c, _| sg_wavepacket_threshold_noise_device_f64(l, c, SG_WAVEPACKET_SOFT, 2.5, 0.1),
            |l, c, s| sg_wavepacket_estimate_noise_device_f64(l, c, s),
        ],
    );
    // The other precision's call names the one to make, as the host calls do.
    let s = sg_wavepacket_keep_largest_device_f64(l32, 0, 1);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{}", last_error());
    assert!(
        last_error().contains("sg_wavepacket_keep_largest_device_f32"),
        "{}",
        last_error()
    );
    sg_wavepacket_layout_destroy(l32);
    sg_wavepacket_layout_destroy(l64);
}
