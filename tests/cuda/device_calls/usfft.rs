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
        let host = bits(if kind == SG_USFFT_TYPE1 { &f } else { &c });
        // Points sorted from device coordinates, after the application's uploads.
        let s = sg_usfft_set_points_device_f32(p, m, xd.addr(), yd.addr(), 0);
        assert_eq!(s, SG_OK, "{}", message());
        let dev = five_times_equal("usfft execute", || {
            let s = sg_usfft_execute_device_f32(p, cd.addr(), fd.addr());
            assert_eq!(s, SG_OK, "{}", message());
            bits(&g.download(if kind == SG_USFFT_TYPE1 { &fd } else { &cd }))
        });
        assert!(
            dev == host,
            "type {kind}: device execute differs from the host call"
        );
        check_refusals("f", f.as_ptr() as u64, fd.addr_at(1), |a| {
            sg_usfft_execute_device_f32(p, cd.addr(), a)
        });
        check_refusals("x", x.as_ptr() as u64, xd.addr_at(1), |a| {
            sg_usfft_set_points_device_f32(p, m, a, yd.addr(), 0)
        });
        sg_usfft_plan_destroy(p);
    }
    println!("usfft device calls: types 1 and 2 equal the host calls bit for bit");
}
