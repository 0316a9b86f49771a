//! Tiled volumes through the C ABI (`sg_wavepacket_volume_*`): sizes and box ranges as the
//! plan holds them, forward/adjoint/inverse against the Rust plan's bit for bit and a round
//! trip on real data, progress and cancellation, and bad input refused with the argument
//! named and nothing written.

use crate::common;
use crate::progress_common;
use crate::wavepacket_support;

use common::{last_error, ok, Ctx};
use num_complex::Complex;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::wavepacket::tiles::TiledPlan;
use seisgpu::wavepacket::LayoutOptions;
use std::ptr;
use wavepacket_support::{penobscot, rel_l2};

const VOLUME: [usize; 2] = [80, 70];
const TILE: [usize; 2] = [48, 40];

struct Volume(*mut sg_wavepacket_volume);
impl Drop for Volume {
    fn drop(&mut self) {
        sg_wavepacket_volume_destroy(self.0);
    }
}

fn options(tolerance: f64) -> sg_wavepacket_layout_options {
    sg_wavepacket_layout_options {
        directions: 12,
        levels: 2,
        tolerance,
        ..sg_wavepacket_layout_options_default()
    }
}

fn volume(ctx: *mut sg_context, precision: i32, tolerance: f64) -> Volume {
    let mut v = ptr::null_mut();
    let o = options(tolerance);
    ok(sg_wavepacket_volume_create(
        ctx,
        2,
        VOLUME.as_ptr(),
        TILE.as_ptr(),
        precision,
        &o,
        &mut v,
    ));
    Volume(v)
}

/// (n_samples, n_coefficients, tiles, n_boxes).
fn sizes(v: &Volume) -> (usize, usize, [usize; 3], usize) {
    let (mut n, mut m, mut t, mut b) = (0, 0, [0usize; 3], 0);
    ok(sg_wavepacket_volume_sizes(
        v.0,
        &mut n,
        &mut m,
        t.as_mut_ptr(),
        &mut b,
    ));
    (n, m, t, b)
}

#[test]
fn sizes_and_box_ranges_match_the_plan() {
    let ctx = Ctx::cpu();
    let v = volume(ctx.0, SG_WAVEPACKET_F64, 1e-10);
    let (n, m, tiles, boxes) = sizes(&v);
    let o = LayoutOptions {
        directions: 12,
        levels: 2,
        tolerance: 1e-10,
        ..Default::default()
    };
    let plan = TiledPlan::<f64>::new(wavepacket_support::cpu(), &VOLUME, &TILE, &o).unwrap();
    assert_eq!(
        (n, m, tiles, boxes),
        (80 * 70, plan.n_coefficients(), [2, 2, 1], 1 + 6 * 2)
    );
    // Box after box, covering the coefficient array; levels 0, then 1, 2 per direction.
    let mut next = 0;
    for b in 0..boxes {
        let (mut level, mut dir, mut offset, mut count) = (-9, -9, 0, 0);
        ok(sg_wavepacket_volume_box_info(
            v.0,
            b,
            &mut level,
            &mut dir,
            &mut offset,
            &mut count,
        ));
        assert_eq!(offset, next);
        assert!(count > 0);
        next += count;
        let want = if b == 0 {
            (0, -1)
        } else {
            ((b - 1) % 2 + 1, (b - 1) as i32 / 2)
        };
        assert_eq!((level as usize, dir), want);
    }
    assert_eq!(next, m);
    let (mut level, mut dir, mut offset, mut count) = (-9, -9, 7, 7);
    let s =
        sg_wavepacket_volume_box_info(v.0, boxes, &mut level, &mut dir, &mut offset, &mut count);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("box_index"), "{}", last_error());
    assert_eq!((level, dir, offset, count), (-9, -9, 7, 7));
}

#[test]
fn transforms_match_the_rust_plan_and_invert_real_data() {
    let ctx = Ctx::cpu();
    let v = volume(ctx.0, SG_WAVEPACKET_F64, 1e-12);
    let (n, m, ..) = sizes(&v);
    let f = penobscot(420, 80, 300, 70);
    let mut c = vec![0.0f64; 2 * m];
    ok(sg_wavepacket_volume_forward_f64(
        v.0,
        f.as_ptr(),
        c.as_mut_ptr(),
    ));
    let o = LayoutOptions {
        directions: 12,
        levels: 2,
        tolerance: 1e-12,
        ..Default::default()
    };
    let plan = TiledPlan::<f64>::new(wavepacket_support::cpu(), &VOLUME, &TILE, &o).unwrap();
    let mut want = vec![Complex::new(0.0, 0.0); m];
    plan.forward(&f, &mut want).unwrap();
    let flat: Vec<f64> = want.iter().flat_map(|z| [z.re, z.im]).collect();
    assert_eq!(c, flat);
    let mut adj = vec![0.0; n];
    ok(sg_wavepacket_volume_adjoint_f64(
        v.0,
        c.as_ptr(),
        adj.as_mut_ptr(),
    ));
    let mut want_adj = vec![0.0; n];
    plan.adjoint(&want, &mut want_adj).unwrap();
    assert_eq!(adj, want_adj);
    let (mut it, mut res) = (0usize, 0.0f64);
    let mut x = vec![0.0; n];
    ok(sg_wavepacket_volume_inverse_f64(
        v.0,
        c.as_ptr(),
        x.as_mut_ptr(),
        1e-11,
        60,
        &mut it,
        &mut res,
    ));
    let e = rel_l2(&x, &f);
    println!("round trip through the C ABI: {e:.2e} after {it} iterations (residual {res:.1e})");
    assert!(e <= 1e-9 && it > 0 && res <= 1e-11);
    // Single precision.
    let v32 = volume(ctx.0, SG_WAVEPACKET_F32, 1e-6);
    let (_, m32, ..) = sizes(&v32);
    let f32s: Vec<f32> = f.iter().map(|&x| x as f32).collect();
    let mut c32 = vec![0.0f32; 2 * m32];
    ok(sg_wavepacket_volume_forward_f32(
        v32.0,
        f32s.as_ptr(),
        c32.as_mut_ptr(),
    ));
    let mut x32 = vec![0.0f32; n];
    ok(sg_wavepacket_volume_inverse_f32(
        v32.0,
        c32.as_ptr(),
        x32.as_mut_ptr(),
        2e-6,
        60,
        ptr::null_mut(),
        ptr::null_mut(),
    ));
    let x32: Vec<f64> = x32.iter().map(|&x| x as f64).collect();
    assert!(rel_l2(&x32, &f) <= 1e-5, "{:.2e}", rel_l2(&x32, &f));
}

#[test]
fn long_calls_report_progress_and_stop_cleanly() {
    let ctx = progress_common::Context::new(SG_BACKEND_CPU);
    let v = volume(ctx.0, SG_WAVEPACKET_F32, 1e-6);
    let (n, m, ..) = sizes(&v);
    let f: Vec<f32> = penobscot(420, 80, 300, 70)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    let mut c = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_volume_forward_f32(
        v.0,
        f.as_ptr(),
        c.as_mut_ptr(),
    ));
    let sentinel_c = vec![-3.0f32; 2 * m];
    let sentinel_d = vec![-3.0f32; n];
    progress_common::exercise(&ctx, "tiled forward", 3, &sentinel_c, || {
        let mut out = sentinel_c.clone();
        let s = sg_wavepacket_volume_forward_f32(v.0, f.as_ptr(), out.as_mut_ptr());
        (s, out)
    });
    progress_common::exercise(&ctx, "tiled adjoint", 3, &sentinel_d, || {
        let mut out = sentinel_d.clone();
        let s = sg_wavepacket_volume_adjoint_f32(v.0, c.as_ptr(), out.as_mut_ptr());
        (s, out)
    });
    progress_common::exercise(&ctx, "tiled inverse", 3, &sentinel_d, || {
        let mut out = sentinel_d.clone();
        let s = sg_wavepacket_volume_inverse_f32(
            v.0,
            c.as_ptr(),
            out.as_mut_ptr(),
            1e-6,
            20,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        (s, out)
    });
}

#[test]
fn bad_input_is_refused_with_the_argument_named() {
    let ctx = Ctx::cpu();
    let o = options(1e-6);
    let mut v = ptr::null_mut();
    let refused = |s: sg_status, word: &str| {
        assert_ne!(s, SG_OK);
        assert!(last_error().contains(word), "{word}: {}", last_error());
    };
    let tile3 = [48usize, 40, 40];
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            4,
            VOLUME.as_ptr(),
            TILE.as_ptr(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "dim",
    );
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            2,
            ptr::null(),
            TILE.as_ptr(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "volume_shape",
    );
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            2,
            VOLUME.as_ptr(),
            ptr::null(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "tile_shape",
    );
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            3,
            [80usize, 70, 0].as_ptr(),
            tile3.as_ptr(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "volume shape[2]",
    );
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            2,
            [usize::MAX, 70].as_ptr(),
            TILE.as_ptr(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "volume",
    );
    refused(
        sg_wavepacket_volume_create(
            ctx.0,
            2,
            VOLUME.as_ptr(),
            [48usize, 5].as_ptr(),
            SG_WAVEPACKET_F32,
            &o,
            &mut v,
        ),
        "shape[1]",
    );
    refused(
        sg_wavepacket_volume_create(ctx.0, 2, VOLUME.as_ptr(), TILE.as_ptr(), 7, &o, &mut v),
        "precision",
    );
    assert!(v.is_null());
    // NULL options: the defaults.
    ok(sg_wavepacket_volume_create(
        ctx.0,
        2,
        VOLUME.as_ptr(),
        TILE.as_ptr(),
        SG_WAVEPACKET_F32,
        ptr::null(),
        &mut v,
    ));
    let v = Volume(v);
    let (n, m, ..) = sizes(&v);
    let f = vec![0.5f64; n];
    let mut c = vec![-7.0f64; 2 * m];
    refused(
        sg_wavepacket_volume_forward_f64(v.0, f.as_ptr(), c.as_mut_ptr()),
        "sg_wavepacket_volume_forward_f32",
    );
    let f32s = vec![0.5f32; n];
    let mut c32 = vec![-7.0f32; 2 * m];
    refused(
        sg_wavepacket_volume_forward_f32(v.0, ptr::null(), c32.as_mut_ptr()),
        "`data`",
    );
    refused(
        sg_wavepacket_volume_forward_f32(v.0, f32s.as_ptr(), ptr::null_mut()),
        "`coeffs`",
    );
    refused(
        sg_wavepacket_volume_forward_f32(ptr::null(), f32s.as_ptr(), c32.as_mut_ptr()),
        "`volume`",
    );
    let mut nan = f32s.clone();
    nan[9] = f32::NAN;
    refused(
        sg_wavepacket_volume_forward_f32(v.0, nan.as_ptr(), c32.as_mut_ptr()),
        "not finite",
    );
    assert!(c.iter().all(|&x| x == -7.0) && c32.iter().all(|&x| x == -7.0));
    let mut d = vec![-7.0f32; n];
    c32.fill(0.0);
    refused(
        sg_wavepacket_volume_inverse_f32(
            v.0,
            c32.as_ptr(),
            d.as_mut_ptr(),
            1.5,
            5,
            ptr::null_mut(),
            ptr::null_mut(),
        ),
        "tolerance",
    );
    assert!(d.iter().all(|&x| x == -7.0));
}

/// `sg_wavepacket_volume_create_capped` on two contexts (CPU contexts: a cap of one byte
/// does not apply) gives one context's coefficients and adjoint bit for bit;
/// `sg_wavepacket_volume_create_on_contexts` refuses an empty, NULL or too long context
/// list, or a NULL entry, with the argument named and `*out` untouched.
#[test]
fn volumes_on_several_contexts_equal_one_context() {
    let (a, b) = (Ctx::cpu(), Ctx::cpu());
    let one = volume(a.0, SG_WAVEPACKET_F64, 1e-10);
    let list = [a.0 as *const sg_context, b.0 as *const sg_context];
    let o = options(1e-10);
    let mut v = ptr::null_mut();
    ok(sg_wavepacket_volume_create_capped(
        list.as_ptr(),
        2,
        2,
        VOLUME.as_ptr(),
        TILE.as_ptr(),
        SG_WAVEPACKET_F64,
        &o,
        1,
        &mut v,
    ));
    let two = Volume(v);
    let (n, m, ..) = sizes(&one);
    assert_eq!(sizes(&two).1, m);
    let f = penobscot(420, 80, 300, 70);
    let (mut c1, mut c2) = (vec![0.0; 2 * m], vec![0.0; 2 * m]);
    ok(sg_wavepacket_volume_forward_f64(
        one.0,
        f.as_ptr(),
        c1.as_mut_ptr(),
    ));
    ok(sg_wavepacket_volume_forward_f64(
        two.0,
        f.as_ptr(),
        c2.as_mut_ptr(),
    ));
    assert_eq!(c1, c2);
    let (mut d1, mut d2) = (vec![0.0; n], vec![0.0; n]);
    ok(sg_wavepacket_volume_adjoint_f64(
        one.0,
        c1.as_ptr(),
        d1.as_mut_ptr(),
    ));
    ok(sg_wavepacket_volume_adjoint_f64(
        two.0,
        c1.as_ptr(),
        d2.as_mut_ptr(),
    ));
    assert_eq!(d1, d2);

    let with_null = [a.0 as *const sg_context, ptr::null()];
    for (contexts, count, name, status) in [
        (list.as_ptr(), 0, "n_contexts", SG_ERR_INVALID_ARGUMENT),
        (list.as_ptr(), 1025, "n_contexts", SG_ERR_INVALID_ARGUMENT),
        (ptr::null(), 2, "contexts", SG_ERR_NULL_POINTER),
        (with_null.as_ptr(), 2, "contexts[1]", SG_ERR_NULL_POINTER),
    ] {
        let mut out = ptr::dangling_mut::<sg_wavepacket_volume>();
        let s = sg_wavepacket_volume_create_on_contexts(
            contexts,
            count,
            2,
            VOLUME.as_ptr(),
            TILE.as_ptr(),
            SG_WAVEPACKET_F64,
            &o,
            &mut out,
        );
        assert_eq!(s, status, "{name}: {}", last_error());
        assert!(last_error().contains(name), "{}", last_error());
        assert_eq!(
            out,
            ptr::dangling_mut::<sg_wavepacket_volume>(),
            "{name}: *out written"
        );
    }
}
