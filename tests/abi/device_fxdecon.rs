//! `sg_fxdecon_execute_*_device_*` on a CPU context: each call refused with
//! SG_ERR_UNSUPPORTED and a message naming it, the arrays untouched; a NULL plan, and a
//! plan of the other dimension, refused first.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use std::ptr;

const SENTINEL: f32 = 12345.5;

/// The four calls on `plan`, 2D or 3D, with a 2D stride of `n` and 3D strides (n, n·nx).
fn call(name: &str, plan: *const sg_fxdecon_plan, a: [u64; 2], n: usize, nx: usize) -> sg_status {
    match name {
        "sg_fxdecon_execute_2d_device_f32" => sg_fxdecon_execute_2d_device_f32(plan, a[0], a[1], n),
        "sg_fxdecon_execute_2d_device_f64" => sg_fxdecon_execute_2d_device_f64(plan, a[0], a[1], n),
        "sg_fxdecon_execute_3d_device_f32" => {
            sg_fxdecon_execute_3d_device_f32(plan, a[0], a[1], n, n * nx)
        }
        "sg_fxdecon_execute_3d_device_f64" => {
            sg_fxdecon_execute_3d_device_f64(plan, a[0], a[1], n, n * nx)
        }
        _ => unreachable!("{name}"),
    }
}

const CALLS: [&str; 4] = [
    "sg_fxdecon_execute_2d_device_f32",
    "sg_fxdecon_execute_2d_device_f64",
    "sg_fxdecon_execute_3d_device_f32",
    "sg_fxdecon_execute_3d_device_f64",
];

#[test]
fn device_calls_on_a_cpu_context_are_refused_and_write_nothing() {
    let ctx = Ctx::cpu();
    let (n, nx, ny) = (64, 4, 30);
    let o = sg_fxdecon_options_default();
    let (mut p2, mut p3) = (ptr::null_mut(), ptr::null_mut());
    ok(sg_fxdecon_plan_create_2d(ctx.0, &o, n, ny, &mut p2));
    ok(sg_fxdecon_plan_create_3d(ctx.0, &o, n, nx, ny, &mut p3));
    // Host arrays passed as addresses: a CPU context must refuse before touching them.
    let input: Vec<f64> = (0..n * nx * ny).map(|i| (i as f64 * 0.1).sin()).collect();
    let mut output = vec![SENTINEL as f64; n * nx * ny];
    let a = [input.as_ptr() as u64, output.as_mut_ptr() as u64];
    for name in CALLS {
        let (plan, other) = if name.contains("_2d_") {
            (p2, p3)
        } else {
            (p3, p2)
        };
        let s = call(name, plan, a, n, nx);
        assert_eq!(s, SG_ERR_UNSUPPORTED, "{name} on a CPU context");
        let m = last_error();
        assert!(m.contains(name) && m.contains("CPU"), "{name}: {m}");
        let s = call(name, ptr::null(), a, n, nx);
        assert_eq!(s, SG_ERR_NULL_POINTER, "{name} with a NULL plan");
        assert!(last_error().contains("plan"), "{name}: {}", last_error());
        let s = call(name, other, a, n, nx);
        assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{name} with the other plan");
        assert!(last_error().contains("the plan is"), "{}", last_error());
        // In place, and with no arrays at all: refused the same way.
        let s = call(name, plan, [a[1], a[1]], n, nx);
        assert_eq!(s, SG_ERR_UNSUPPORTED, "{name} in place on a CPU context");
        let s = call(name, plan, [0, 0], n, nx);
        assert_eq!(
            s, SG_ERR_UNSUPPORTED,
            "{name} with NULL arrays on a CPU context"
        );
    }
    assert!(
        output.iter().all(|&v| v == SENTINEL as f64),
        "output written"
    );
    assert!(
        input
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i as f64 * 0.1).sin()),
        "input written"
    );
    sg_fxdecon_plan_destroy(p2);
    sg_fxdecon_plan_destroy(p3);
}
