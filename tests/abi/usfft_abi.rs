//! The USFFT through the C ABI: a 2D type 1 and type 2 against direct sums with interleaved
//! complex arrays, every status path of create / set points / execute, outputs untouched on
//! failure, NULL handling and precision mismatches.

use seisgpu::ffi::context::*;
use seisgpu::ffi::last_error::sg_last_error_message;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use std::ffi::CStr;
use std::ptr;

fn message() -> String {
    // SAFETY: documented as a valid NUL-terminated string.
    unsafe { CStr::from_ptr(sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

struct Ctx(*mut sg_context);
impl Drop for Ctx {
    fn drop(&mut self) {
        sg_context_destroy(self.0);
    }
}

fn cpu() -> Ctx {
    let mut c = ptr::null_mut();
    assert_eq!(sg_context_create(SG_BACKEND_CPU, 0, &mut c), SG_OK);
    Ctx(c)
}

fn create(
    ctx: &Ctx,
    kind: i32,
    dim: i32,
    modes: &[usize],
    tol: f64,
    prec: i32,
) -> (sg_status, *mut sg_usfft_plan) {
    let mut p = ptr::null_mut();
    let s = sg_usfft_plan_create(
        ctx.0,
        kind,
        dim,
        modes.as_ptr(),
        -1,
        tol,
        prec,
        1,
        ptr::null(),
        &mut p,
    );
    (s, p)
}

#[test]
fn c_abi_transforms_match_direct_sums() {
    let ctx = cpu();
    let (n1, n2, m) = (12usize, 9usize, 150usize);
    let xs: Vec<f64> = (0..m)
        .map(|j| ((j * 37 % 101) as f64 / 101.0 - 0.5) * 6.2)
        .collect();
    let ys: Vec<f64> = (0..m)
        .map(|j| ((j * 53 % 97) as f64 / 97.0 - 0.5) * 6.2)
        .collect();
    let phase = |j: usize, a: usize, b: usize| -> f64 {
        -(((a as i64 - (n1 / 2) as i64) as f64) * xs[j]
            + ((b as i64 - (n2 / 2) as i64) as f64) * ys[j])
    };
    for kind in [SG_USFFT_TYPE1, SG_USFFT_TYPE2] {
        let (s, plan) = create(&ctx, kind, 2, &[n1, n2], 1e-10, SG_USFFT_F64);
        assert_eq!(s, SG_OK, "{}", message());
        assert_eq!(
            sg_usfft_set_points_f64(plan, m, xs.as_ptr(), ys.as_ptr(), ptr::null()),
            SG_OK
        );
        let mut c: Vec<f64> = (0..2 * m)
            .map(|i| ((i * 7 % 13) as f64) / 13.0 - 0.5)
            .collect();
        let mut f: Vec<f64> = (0..2 * n1 * n2)
            .map(|i| ((i * 5 % 11) as f64) / 11.0 - 0.5)
            .collect();
        let (c0, f0) = (c.clone(), f.clone());
        assert_eq!(
            sg_usfft_execute_f64(plan, c.as_mut_ptr(), f.as_mut_ptr()),
            SG_OK,
            "{}",
            message()
        );
        let (mut num, mut den) = (0.0, 0.0);
        if kind == SG_USFFT_TYPE1 {
            assert_eq!(c, c0, "type 1 leaves its input alone");
            for b in 0..n2 {
                for a in 0..n1 {
                    let (mut re, mut im) = (0.0, 0.0);
                    for j in 0..m {
                        let (sn, cs) = phase(j, a, b).sin_cos();
                        re += c0[2 * j] * cs - c0[2 * j + 1] * sn;
                        im += c0[2 * j] * sn + c0[2 * j + 1] * cs;
                    }
                    let k = b * n1 + a;
                    num += (f[2 * k] - re).powi(2) + (f[2 * k + 1] - im).powi(2);
                    den += re * re + im * im;
                }
            }
        } else {
            assert_eq!(f, f0, "type 2 leaves its input alone");
            for j in 0..m {
                let (mut re, mut im) = (0.0, 0.0);
                for b in 0..n2 {
                    for a in 0..n1 {
                        let k = b * n1 + a;
                        let (sn, cs) = phase(j, a, b).sin_cos();
                        re += f0[2 * k] * cs - f0[2 * k + 1] * sn;
                        im += f0[2 * k] * sn + f0[2 * k + 1] * cs;
                    }
                }
                num += (c[2 * j] - re).powi(2) + (c[2 * j + 1] - im).powi(2);
                den += re * re + im * im;
            }
        }
        let e = (num / den).sqrt();
        assert!(e <= 1e-10, "type {kind}: {e}");
        sg_usfft_plan_destroy(plan);
    }
}

#[test]
fn statuses_and_messages() {
    let ctx = cpu();
    let modes = [8usize, 8, 8];
    let opts = sg_usfft_options_default();
    assert_eq!(
        (opts.kernel, opts.mode_order, opts.upsampling),
        (SG_USFFT_KERNEL_PROLATE, SG_USFFT_MODES_CENTRED, 2.0)
    );
    let mut p = ptr::null_mut();
    assert_eq!(
        sg_usfft_plan_create(
            ptr::null(),
            1,
            1,
            modes.as_ptr(),
            1,
            1e-6,
            1,
            1,
            ptr::null(),
            &mut p
        ),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        create(&ctx, 4, 1, &modes, 1e-6, 1).0,
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(message().contains("type is 4"), "{}", message());
    assert_eq!(
        create(&ctx, 1, 4, &modes, 1e-6, 1).0,
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        create(&ctx, 1, 1, &modes, 1e-6, 7).0,
        SG_ERR_INVALID_ARGUMENT
    );
    let (s, p0) = create(&ctx, 1, 1, &modes, 1e-7, SG_USFFT_F32);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT);
    assert!(p0.is_null(), "no plan written on failure");
    assert!(message().contains("N·ε_mach"), "{}", message());
    assert_eq!(create(&ctx, 1, 1, &[0], 1e-6, 1).0, SG_ERR_INVALID_ARGUMENT);
    assert_eq!(
        sg_usfft_plan_create(ctx.0, 1, 1, ptr::null(), 1, 1e-6, 1, 1, ptr::null(), &mut p),
        SG_ERR_NULL_POINTER
    );
    let bad = sg_usfft_options {
        upsampling: 1.25,
        ..opts
    };
    assert_eq!(
        sg_usfft_plan_create(ctx.0, 1, 1, modes.as_ptr(), 1, 1e-6, 1, 1, &bad, &mut p),
        SG_ERR_UNSUPPORTED
    );
    let bad = sg_usfft_options { kernel: 5, ..opts };
    assert_eq!(
        sg_usfft_plan_create(ctx.0, 1, 1, modes.as_ptr(), 1, 1e-6, 1, 1, &bad, &mut p),
        SG_ERR_INVALID_ARGUMENT
    );

    // A 2D f32 plan: points, precision mismatches, NaN, NULL arrays.
    let (s, plan) = create(&ctx, SG_USFFT_TYPE2, 2, &modes, 1e-5, SG_USFFT_F32);
    assert_eq!(s, SG_OK);
    let mut c = vec![7.0f32; 8];
    let mut f = vec![0.5f32; 2 * 64];
    assert_eq!(
        sg_usfft_execute_f32(plan, c.as_mut_ptr(), f.as_mut_ptr()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(message().contains("set_points"), "{}", message());
    assert!(c.iter().all(|&v| v == 7.0), "output untouched on failure");
    let x = [0.1f32, 0.2, -3.0, 3.1];
    let y = [0.0f32, 1.0, 2.0, f32::NAN];
    assert_eq!(
        sg_usfft_set_points_f32(plan, 4, x.as_ptr(), y.as_ptr(), ptr::null()),
        SG_ERR_NON_FINITE
    );
    assert_eq!(
        sg_usfft_set_points_f32(plan, 4, x.as_ptr(), ptr::null(), ptr::null()),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        sg_usfft_set_points_f64(plan, 0, ptr::null(), ptr::null(), ptr::null()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(
        message().contains("sg_usfft_set_points_f32"),
        "{}",
        message()
    );
    assert_eq!(
        sg_usfft_set_points_f32(plan, 3, x.as_ptr(), y.as_ptr(), ptr::null()),
        SG_OK
    );
    assert_eq!(
        sg_usfft_execute_f64(plan, ptr::null_mut(), ptr::null_mut()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sg_usfft_execute_f32(plan, ptr::null_mut(), f.as_mut_ptr()),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        sg_usfft_execute_f32(plan, f.as_mut_ptr(), f.as_mut_ptr()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        sg_usfft_execute_f32(plan, c.as_mut_ptr(), f.as_mut_ptr()),
        SG_OK
    );
    assert!(
        c[..6].iter().all(|v| v.is_finite()) && c[6] == 7.0,
        "writes exactly M values"
    );
    // M = 0: NULL arrays of length 0 are fine.
    assert_eq!(
        sg_usfft_set_points_f32(plan, 0, ptr::null(), ptr::null(), ptr::null()),
        SG_OK
    );
    assert_eq!(
        sg_usfft_execute_f32(plan, ptr::null_mut(), f.as_mut_ptr()),
        SG_OK
    );
    assert_eq!(
        sg_usfft_set_points_f32(ptr::null_mut(), 0, ptr::null(), ptr::null(), ptr::null()),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(
        sg_usfft_execute_f32(ptr::null(), c.as_mut_ptr(), f.as_mut_ptr()),
        SG_ERR_NULL_POINTER
    );
    sg_usfft_plan_destroy(plan);
    sg_usfft_plan_destroy(ptr::null_mut());
}
