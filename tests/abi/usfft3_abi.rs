//! USFFT type 3 through the C ABI: a 3D f64 and a 2D f32 plan against direct sums, then every
//! refusal (missing frequencies, non-finite values, spans too wide for any grid, the wrong
//! set-points call for the type, short and overlapping arrays) with a clear status and
//! message, the output untouched and the previous points kept.

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

struct Plan(*mut sg_usfft_plan);
impl Drop for Plan {
    fn drop(&mut self) {
        sg_usfft_plan_destroy(self.0);
    }
}

fn cpu() -> Ctx {
    let mut c = ptr::null_mut();
    assert_eq!(sg_context_create(SG_BACKEND_CPU, 0, &mut c), SG_OK);
    Ctx(c)
}

/// A type-3 plan (n_modes NULL: type 3 has none).
fn type3(ctx: &Ctx, dim: i32, sign: i32, tol: f64, prec: i32) -> Plan {
    let mut p = ptr::null_mut();
    let s = sg_usfft_plan_create(
        ctx.0,
        SG_USFFT_TYPE3,
        dim,
        ptr::null(),
        sign,
        tol,
        prec,
        1,
        ptr::null(),
        &mut p,
    );
    assert_eq!(s, SG_OK, "{}", message());
    Plan(p)
}

/// `count` values in centre ± half, deterministic.
fn spread(count: usize, mul: usize, centre: f64, half: f64) -> Vec<f64> {
    (0..count)
        .map(|j| centre + half * ((j * mul % 101) as f64 / 50.0 - 1.0))
        .collect()
}

/// f_k = Σ_j c_j e^{i·sign·s_k·x_j} (interleaved complex), in f64.
fn direct(sign: f64, x: &[Vec<f64>], s: &[Vec<f64>], c: &[f64]) -> Vec<f64> {
    let (m, n) = (x[0].len(), s[0].len());
    let mut out = vec![0.0; 2 * n];
    for k in 0..n {
        for j in 0..m {
            let ph: f64 = sign * (0..x.len()).map(|d| s[d][k] * x[d][j]).sum::<f64>();
            let (sn, cs) = ph.sin_cos();
            out[2 * k] += c[2 * j] * cs - c[2 * j + 1] * sn;
            out[2 * k + 1] += c[2 * j] * sn + c[2 * j + 1] * cs;
        }
    }
    out
}

fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

#[test]
fn type3_through_the_c_abi_matches_direct_sums() {
    let ctx = cpu();
    // 3D, f64, sign −1, spans off centre.
    let (m, n) = (120, 90);
    let x: Vec<Vec<f64>> = (0..3).map(|d| spread(m, 37 + 2 * d, 1.5, 2.0)).collect();
    let s: Vec<Vec<f64>> = (0..3).map(|d| spread(n, 53 + 2 * d, -4.0, 9.0)).collect();
    let c: Vec<f64> = (0..2 * m)
        .map(|i| ((i * 7 % 13) as f64) / 13.0 - 0.5)
        .collect();
    let plan = type3(&ctx, 3, -1, 1e-9, SG_USFFT_F64);
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        x[0].as_ptr(),
        x[1].as_ptr(),
        x[2].as_ptr(),
        n,
        s[0].as_ptr(),
        s[1].as_ptr(),
        s[2].as_ptr(),
    );
    assert_eq!(st, SG_OK, "{}", message());
    let mut cin = c.clone();
    let mut f = vec![f64::NAN; 2 * n];
    assert_eq!(
        sg_usfft_execute_f64(plan.0, cin.as_mut_ptr(), f.as_mut_ptr()),
        SG_OK,
        "{}",
        message()
    );
    assert_eq!(cin, c, "type 3 reads c");
    let e = rel_l2(&f, &direct(-1.0, &x, &s, &c));
    println!("3D f64 tol 1e-9: {e:.2e}");
    assert!(e <= 1e-9, "{e}");
    // 2D, f32, sign +1.
    let x32: Vec<Vec<f32>> = (0..2)
        .map(|d| {
            spread(m, 41 + d, 0.0, 3.0)
                .iter()
                .map(|&v| v as f32)
                .collect()
        })
        .collect();
    let s32: Vec<Vec<f32>> = (0..2)
        .map(|d| {
            spread(n, 59 + d, 20.0, 15.0)
                .iter()
                .map(|&v| v as f32)
                .collect()
        })
        .collect();
    let plan = type3(&ctx, 2, 1, 1e-5, SG_USFFT_F32);
    let st = sg_usfft_set_points3_f32(
        plan.0,
        m,
        x32[0].as_ptr(),
        x32[1].as_ptr(),
        ptr::null(),
        n,
        s32[0].as_ptr(),
        s32[1].as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_OK, "{}", message());
    let mut c32: Vec<f32> = c.iter().map(|&v| v as f32).collect();
    let mut f32s = vec![f32::NAN; 2 * n];
    assert_eq!(
        sg_usfft_execute_f32(plan.0, c32.as_mut_ptr(), f32s.as_mut_ptr()),
        SG_OK,
        "{}",
        message()
    );
    let widen = |v: &[Vec<f32>]| -> Vec<Vec<f64>> {
        v.iter()
            .map(|a| a.iter().map(|&q| q as f64).collect())
            .collect()
    };
    let want = direct(
        1.0,
        &widen(&x32),
        &widen(&s32),
        &c32.iter().map(|&v| v as f64).collect::<Vec<_>>(),
    );
    let got: Vec<f64> = f32s.iter().map(|&v| v as f64).collect();
    let e = rel_l2(&got, &want);
    println!("2D f32 tol 1e-5: {e:.2e}");
    assert!(e <= 1e-5, "{e}");
}

#[test]
fn type3_refusals_have_clear_statuses_and_write_nothing() {
    let ctx = cpu();
    let plan = type3(&ctx, 2, 1, 1e-6, SG_USFFT_F64);
    let (m, n) = (5usize, 4usize);
    let x = [0.1, 0.5, -0.3, 0.9, 1.2];
    let y = [0.0, 0.2, 0.4, 0.6, 0.8];
    let s = [1.0, 2.0, 3.0, 4.0];
    let t = [-1.0, 0.0, 1.0, 2.0];
    let mut c = vec![1.0; 2 * m];
    let mut f = vec![7.0; 2 * n];
    // Execute before any points.
    assert_eq!(
        sg_usfft_execute_f64(plan.0, c.as_mut_ptr(), f.as_mut_ptr()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(f.iter().all(|&v| v == 7.0));
    // Types 1/2's set-points: the frequencies are missing.
    assert_eq!(
        sg_usfft_set_points_f64(plan.0, m, x.as_ptr(), y.as_ptr(), ptr::null()),
        SG_ERR_INVALID_ARGUMENT
    );
    assert!(message().contains("set_points3"), "{}", message());
    // Missing frequency array t of a 2D plan.
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        x.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        s.as_ptr(),
        ptr::null(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_NULL_POINTER, "{}", message());
    assert!(message().contains('t'), "{}", message());
    // Good points, then refusals that keep them.
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        x.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        s.as_ptr(),
        t.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_OK, "{}", message());
    let mut bad = x;
    bad[3] = f64::NAN;
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        bad.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        s.as_ptr(),
        t.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_NON_FINITE);
    assert!(message().contains("point 3"), "{}", message());
    let mut bad_t = t;
    bad_t[2] = f64::INFINITY;
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        x.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        s.as_ptr(),
        bad_t.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_NON_FINITE);
    assert!(
        message().contains("frequency t of target 2"),
        "{}",
        message()
    );
    // Spans whose grid no dimension may hold: X·S = 1e16.
    let wide = [-1e8, 1e8, 0.0, 1.0, 2.0];
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        wide.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        wide.as_ptr(),
        t.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_UNSUPPORTED, "{}", message());
    assert!(message().contains("X·S"), "{}", message());
    // Spans whose grid fits per dimension but not the host: 2 × 10^5 cells squared × 16 B
    // for the inner fine grid alone is 2.6 TB.
    let far = [-3e4, 3e4, 0.0, 1.0, 2.0];
    let big_y = [-3e4, 3e4, 0.0, 1.0, 2.0];
    let big_s = [-10.0, 10.0, 0.0, 1.0];
    let st = sg_usfft_set_points3_f64(
        plan.0,
        m,
        far.as_ptr(),
        big_y.as_ptr(),
        ptr::null(),
        n,
        big_s.as_ptr(),
        big_s.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_OUT_OF_MEMORY, "{}", message());
    assert!(message().contains("type 3"), "{}", message());
    // The earlier points are still set: execute works and matches the direct sum.
    let xs = vec![x.to_vec(), y.to_vec()];
    let ss = vec![s.to_vec(), t.to_vec()];
    let cin: Vec<f64> = (0..2 * m).map(|i| i as f64 * 0.1 - 0.4).collect();
    c.copy_from_slice(&cin);
    assert_eq!(
        sg_usfft_execute_f64(plan.0, c.as_mut_ptr(), f.as_mut_ptr()),
        SG_OK,
        "{}",
        message()
    );
    assert!(rel_l2(&f, &direct(1.0, &xs, &ss, &cin)) <= 1e-6);
    // Overlapping arrays and a type-3 call on a type-1 plan.
    assert_eq!(
        sg_usfft_execute_f64(plan.0, c.as_mut_ptr(), c.as_mut_ptr().wrapping_add(2)),
        SG_ERR_INVALID_ARGUMENT
    );
    let mut p1 = ptr::null_mut();
    let modes = [8usize, 8];
    assert_eq!(
        sg_usfft_plan_create(
            ctx.0,
            SG_USFFT_TYPE1,
            2,
            modes.as_ptr(),
            1,
            1e-6,
            SG_USFFT_F64,
            1,
            ptr::null(),
            &mut p1
        ),
        SG_OK
    );
    let p1 = Plan(p1);
    let st = sg_usfft_set_points3_f64(
        p1.0,
        m,
        x.as_ptr(),
        y.as_ptr(),
        ptr::null(),
        n,
        s.as_ptr(),
        t.as_ptr(),
        ptr::null(),
    );
    assert_eq!(st, SG_ERR_INVALID_ARGUMENT);
    assert!(message().contains("type-3"), "{}", message());
    // Precision mismatch and NULL plan.
    let xf = [0.0f32; 5];
    assert_ne!(
        sg_usfft_set_points3_f32(
            plan.0,
            m,
            xf.as_ptr(),
            xf.as_ptr(),
            ptr::null(),
            0,
            ptr::null(),
            ptr::null(),
            ptr::null()
        ),
        SG_OK
    );
    assert_eq!(
        sg_usfft_set_points3_f64(
            ptr::null_mut(),
            m,
            x.as_ptr(),
            y.as_ptr(),
            ptr::null(),
            n,
            s.as_ptr(),
            t.as_ptr(),
            ptr::null()
        ),
        SG_ERR_NULL_POINTER
    );
}

#[test]
fn type3_empty_sets_give_zeros_or_nothing() {
    let ctx = cpu();
    let plan = type3(&ctx, 1, 1, 1e-6, SG_USFFT_F64);
    let s = [1.0, 2.0, 3.0];
    // No points: every value is the empty sum, 0.
    assert_eq!(
        sg_usfft_set_points3_f64(
            plan.0,
            0,
            ptr::null(),
            ptr::null(),
            ptr::null(),
            3,
            s.as_ptr(),
            ptr::null(),
            ptr::null()
        ),
        SG_OK,
        "{}",
        message()
    );
    let mut f = vec![7.0; 6];
    assert_eq!(
        sg_usfft_execute_f64(plan.0, ptr::null_mut(), f.as_mut_ptr()),
        SG_OK,
        "{}",
        message()
    );
    assert!(f.iter().all(|&v| v == 0.0), "{f:?}");
    // No frequencies: nothing to write (f may be NULL).
    let x = [0.5, -0.5];
    assert_eq!(
        sg_usfft_set_points3_f64(
            plan.0,
            2,
            x.as_ptr(),
            ptr::null(),
            ptr::null(),
            0,
            ptr::null(),
            ptr::null(),
            ptr::null()
        ),
        SG_OK,
        "{}",
        message()
    );
    let mut c = vec![1.0; 4];
    assert_eq!(
        sg_usfft_execute_f64(plan.0, c.as_mut_ptr(), ptr::null_mut()),
        SG_OK,
        "{}",
        message()
    );
}
