//! `sg_usfft_set_points_device_*` and `sg_usfft_execute_device_*` against the host calls.

use super::*;
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;

fn plan(g: &Gpu, kind: i32, modes: &[usize; 2], nv: usize) -> *mut sg_usfft_plan {
    let mut p = std::ptr::null_mut();
    let s = sg_usfft_plan_create(
        g.ctx,
        kind,
        2,
        modes.as_ptr(),
        -1,
        1e-5,
        SG_USFFT_F32,
        nv,
        std::ptr::null(),
        &mut p,
    );
    assert_eq!(s, SG_OK, "{}", message());
    p
}

/// Largest |a − b| over largest |b|.
fn rel_err(a: &[f32], b: &[f32]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() as f64)
        .fold(0.0, f64::max);
    d / b.iter().map(|y| y.abs() as f64).fold(0.0, f64::max)
}

/// Type 2 (interpolation: each point gathers its own value) equals the host call bit for bit
/// and is bit-identical over runs, whatever the order the sort left the points in. Type 1
/// accumulates the points' spread in atomically added sums, whose order follows the
/// threads' timing: equal to the host call within 1e-6 of the largest mode, not bit for bit.
#[test]
fn usfft_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    let (modes, m, nv) = ([48usize, 40], 5000usize, 2usize);
    let x: Vec<f32> = (0..m)
        .map(|i| ((i as f32 * 0.618).fract() - 0.5) * 6.0)
        .collect();
    let y: Vec<f32> = (0..m)
        .map(|i| ((i as f32 * 0.414).fract() - 0.5) * 6.0)
        .collect();
    let (xd, yd) = (g.upload(&x), g.upload(&y));
    let nf = 2 * nv * modes[0] * modes[1];
    let nc = 2 * nv * m;
    for kind in [SG_USFFT_TYPE1, SG_USFFT_TYPE2] {
        let p = plan(&g, kind, &modes, nv);
        let null = std::ptr::null();
        assert_eq!(
            sg_usfft_set_points_f32(p, m, x.as_ptr(), y.as_ptr(), null),
            SG_OK
        );
        let mut c: Vec<f32> = (0..nc).map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0).collect();
        let mut f: Vec<f32> = (0..nf).map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0).collect();
        let (cd, fd) = (g.upload(&c), g.upload(&f));
        assert_eq!(
            sg_usfft_execute_f32(p, c.as_mut_ptr(), f.as_mut_ptr()),
            SG_OK,
            "{}",
            message()
        );
        let host = if kind == SG_USFFT_TYPE1 {
            f.clone()
        } else {
            c.clone()
        };
        let out = if kind == SG_USFFT_TYPE1 { &fd } else { &cd };
        let run = || {
            let s = sg_usfft_execute_device_f32(p, cd.addr(), fd.addr());
            assert_eq!(s, SG_OK, "{}", message());
            g.download(out)
        };
        let same_points = run();
        // Points sorted from device coordinates, after the application's uploads.
        let s = sg_usfft_set_points_device_f32(p, m, xd.addr(), yd.addr(), 0);
        assert_eq!(s, SG_OK, "{}", message());
        if kind == SG_USFFT_TYPE2 {
            assert!(
                bits(&same_points) == bits(&host),
                "type 2: device execute differs"
            );
            let dev = five_times_equal("usfft type 2", || bits(&run()));
            assert!(dev == bits(&host), "type 2 after device set-points differs");
            // Points of another count after those replays: the execute follows them.
            let half = m / 2;
            let s = sg_usfft_set_points_f32(p, half, x.as_ptr(), y.as_ptr(), null);
            assert_eq!(s, SG_OK, "{}", message());
            let mut c_half = vec![0f32; 2 * nv * half];
            let s = sg_usfft_execute_f32(p, c_half.as_mut_ptr(), f.as_mut_ptr());
            assert_eq!(s, SG_OK, "{}", message());
            run();
            let got = run();
            let same = bits(&got[..c_half.len()]) == bits(&c_half);
            assert!(same, "type 2 on new points after replays differs");
        } else {
            let e = rel_err(&same_points, &host).max(rel_err(&run(), &host));
            assert!(e < 1e-6, "type 1: device execute differs by {e:e}");
        }
        check_refusals("f", f.as_ptr() as u64, &fd, nf, |a| {
            sg_usfft_execute_device_f32(p, cd.addr(), a)
        });
        check_refusals("x", x.as_ptr() as u64, &xd, m, |a| {
            sg_usfft_set_points_device_f32(p, m, a, yd.addr(), 0)
        });
        sg_usfft_plan_destroy(p);
    }
    // The enqueue cost on 2²⁰ points: timing only (its kernels ran above), not in the
    // sanitizer's reduced mode.
    if crate::cuda_common::sanitize_small() {
        println!("usfft device calls: type 2 equals the host call bit for bit, type 1 within 1e-6");
        return;
    }
    let (modes, m) = ([256usize, 256], 1 << 20);
    let p = plan(&g, SG_USFFT_TYPE2, &modes, 1);
    let x: Vec<f32> = (0..m)
        .map(|i| ((i as f32 * 0.618).fract() - 0.5) * 6.0)
        .collect();
    let y: Vec<f32> = (0..m)
        .map(|i| ((i as f32 * 0.414).fract() - 0.5) * 6.0)
        .collect();
    assert_eq!(
        sg_usfft_set_points_f32(p, m, x.as_ptr(), y.as_ptr(), std::ptr::null()),
        SG_OK
    );
    let (cd, fd) = (
        g.zeros::<f32>(2 * m),
        g.zeros::<f32>(2 * modes[0] * modes[1]),
    );
    let (c, f) = (cd.addr(), fd.addr());
    enqueue_cost(
        &g,
        "usfft type 2, 256² modes, 2²⁰ points f32",
        50,
        || sg_usfft_execute_device_f32(p, c, f),
    );
    sg_usfft_plan_destroy(p);
    println!("usfft device calls: type 2 equals the host call bit for bit, type 1 within 1e-6");
}
