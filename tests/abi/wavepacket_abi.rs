//! The wave packets through the C ABI (`sg_wavepacket_*`): sizes and box geometry as the
//! layout holds them, the ABI's forward/adjoint/inverse against the Rust plan's, the layout
//! options (the cutoff), per-box noise thresholds, the noise estimate, packet norms and the
//! sparse approximation against the Rust functions, progress and cancellation of the long
//! calls, and bad input refused with the argument named and nothing written.

use crate::common;
use crate::progress_common;

use common::{last_error, ok, Ctx};
use num_complex::Complex;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;
use std::time::Duration;

const NT: usize = 64;
const NX: usize = 40;

struct Layout(*mut sg_wavepacket_layout);
impl Drop for Layout {
    fn drop(&mut self) {
        sg_wavepacket_layout_destroy(self.0);
    }
}

fn layout(ctx: *mut sg_context, shape: &[usize], directions: usize, precision: i32) -> Layout {
    let mut l = ptr::null_mut();
    ok(sg_wavepacket_layout_create(
        ctx,
        shape.len() as i32,
        shape.as_ptr(),
        directions,
        0,
        0.0,
        0.0,
        if precision == SG_WAVEPACKET_F64 {
            1e-12
        } else {
            1e-6
        },
        precision,
        &mut l,
    ));
    Layout(l)
}

fn sizes(l: &Layout) -> [usize; 5] {
    let mut s = [0usize; 5];
    let [a, b, c, d, e] = &mut s;
    ok(sg_wavepacket_layout_sizes(l.0, a, b, c, d, e));
    s
}

/// A section of dipping Ricker reflections, NT × NX.
fn section() -> Vec<f64> {
    let ricker = |t: f64| {
        let a = std::f64::consts::PI * 0.1 * t;
        (1.0 - 2.0 * a * a) * (-a * a).exp()
    };
    (0..NX)
        .flat_map(|x| {
            (0..NT).map(move |t| {
                ricker(t as f64 - 15.0 - 0.5 * x as f64) - 0.6 * ricker(t as f64 - 45.0)
            })
        })
        .collect()
}

#[test]
fn sizes_geometry_and_transforms_match_the_rust_plan() {
    let ctx = Ctx::cpu();
    let l = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F64);
    let [n, m, n_boxes, levels, n_dirs] = sizes(&l);
    let opts = seisgpu::wavepacket::LayoutOptions {
        directions: 12,
        tolerance: 1e-12,
        ..Default::default()
    };
    let ctx_rs = seisgpu::context::Context::new(seisgpu::backend::BackendRequest::Cpu, 0).unwrap();
    let plan = seisgpu::wavepacket::WavepacketPlan::<f64>::new(ctx_rs, &[NT, NX], &opts).unwrap();
    let rl = plan.layout();
    assert_eq!(
        [n, m, n_boxes, levels, n_dirs],
        [
            NT * NX,
            rl.n_coefficients,
            rl.boxes.len(),
            rl.levels,
            rl.directions.len()
        ]
    );
    // Automatic levels: ⌊log2 40⌋ − 3 = 2; 12 directions, 6 stored: 1 + 6·2 boxes.
    assert_eq!((levels, n_dirs, n_boxes), (2, 6, 13));
    for (b, rb) in rl.boxes.iter().enumerate() {
        let (mut level, mut dir, mut centre, mut shape, mut offset) = (0, 0, [0.0; 3], [0; 3], 0);
        ok(sg_wavepacket_box_info(
            l.0,
            b,
            &mut level,
            &mut dir,
            centre.as_mut_ptr(),
            shape.as_mut_ptr(),
            &mut offset,
        ));
        assert_eq!(level as usize, rb.level);
        assert_eq!(dir, rb.direction.map_or(-1, |d| d as i32));
        assert_eq!((centre, shape, offset), (rb.centre, rb.shape, rb.offset));
    }
    // The last box ends the coefficient array.
    let last = rl.boxes.last().unwrap();
    assert_eq!(last.offset + last.n_coefficients(), m);

    // Forward and adjoint equal the Rust plan's bit for bit; the inverse gives f back.
    let f = section();
    let mut c = vec![0.0f64; 2 * m];
    ok(sg_wavepacket_forward_f64(l.0, f.as_ptr(), c.as_mut_ptr()));
    let mut want = vec![Complex::new(0.0, 0.0); m];
    plan.forward(&f, &mut want).unwrap();
    let want_flat: Vec<f64> = want.iter().flat_map(|z| [z.re, z.im]).collect();
    assert_eq!(c, want_flat);
    let mut a = vec![0.0f64; n];
    ok(sg_wavepacket_adjoint_f64(l.0, c.as_ptr(), a.as_mut_ptr()));
    let mut a_want = vec![0.0; n];
    plan.adjoint(&want, &mut a_want).unwrap();
    assert_eq!(a, a_want);
    let (mut it, mut res) = (0usize, 0.0f64);
    let mut x = vec![0.0f64; n];
    ok(sg_wavepacket_inverse_f64(
        l.0,
        c.as_ptr(),
        x.as_mut_ptr(),
        1e-11,
        60,
        &mut it,
        &mut res,
    ));
    let err = rel(&x, &f);
    println!("ABI inverse: {it} CG iterations, residual {res:.1e}, error {err:.2e}");
    assert!(err < 1e-9 && res <= 1e-11 && it > 0, "{err} {res} {it}");
}

fn rel(x: &[f64], f: &[f64]) -> f64 {
    let e: f64 = x.iter().zip(f).map(|(a, b)| (a - b) * (a - b)).sum();
    (e / f.iter().map(|v| v * v).sum::<f64>()).sqrt()
}

#[test]
fn compression_threshold_and_pocs_in_f32() {
    let ctx = Ctx::cpu();
    let l = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F32);
    let [n, m, ..] = sizes(&l);
    let f: Vec<f32> = section().into_iter().map(|v| v as f32).collect();
    let mut c = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_forward_f32(l.0, f.as_ptr(), c.as_mut_ptr()));
    let mags: Vec<f32> = c.chunks(2).map(|z| z[0].hypot(z[1])).collect();

    // Keep 100: exactly the 100 largest magnitudes survive, unchanged.
    let mut k = c.clone();
    ok(sg_wavepacket_keep_largest_f32(l.0, k.as_mut_ptr(), 100));
    let mut sorted = mags.clone();
    sorted.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let kept: Vec<usize> = (0..m)
        .filter(|&i| k[2 * i] != 0.0 || k[2 * i + 1] != 0.0)
        .collect();
    assert_eq!(kept.len(), 100);
    for &i in &kept {
        assert!(mags[i] >= sorted[99]);
        assert_eq!((k[2 * i], k[2 * i + 1]), (c[2 * i], c[2 * i + 1]));
    }

    // Soft threshold at a value: |c| ≤ t → 0, else |c| − t with the phase kept.
    let t = 0.3 * sorted[0] as f64;
    let mut s = c.clone();
    ok(sg_wavepacket_threshold_f32(
        l.0,
        s.as_mut_ptr(),
        SG_WAVEPACKET_SOFT,
        SG_WAVEPACKET_THRESHOLD_VALUE,
        t,
    ));
    for i in 0..m {
        let got = (s[2 * i] as f64).hypot(s[2 * i + 1] as f64);
        let want = (mags[i] as f64 - t).max(0.0);
        assert!(
            (got - want).abs() <= 1e-5 * sorted[0] as f64,
            "{i}: {got} {want}"
        );
    }
    // Hard at 3σ per level: zeroes most of these (mostly empty) coefficients, keeps some.
    let mut h = c.clone();
    ok(sg_wavepacket_threshold_f32(
        l.0,
        h.as_mut_ptr(),
        SG_WAVEPACKET_HARD,
        SG_WAVEPACKET_THRESHOLD_SIGMA,
        3.0,
    ));
    let left = h.chunks(2).filter(|z| z[0] != 0.0 || z[1] != 0.0).count();
    assert!(left > 0 && left < m / 2, "{left} of {m} left");

    // POCS: the recorded traces unchanged, the missing ones approached.
    let mut live = [1i32; NX];
    for x in [5, 11, 12, 20, 27, 33] {
        live[x] = 0;
    }
    let mut x: Vec<f32> = f.clone();
    for (t, &v) in live.iter().enumerate() {
        if v == 0 {
            x[t * NT..(t + 1) * NT].fill(f32::NAN); // never read
        }
    }
    let mut o = sg_wavepacket_pocs_options_default();
    o.iterations = 10;
    ok(sg_wavepacket_pocs_f32(
        l.0,
        x.as_mut_ptr(),
        live.as_ptr(),
        NX,
        &o,
    ));
    let (mut e, mut r) = (0.0f64, 0.0f64);
    for (t, &v) in live.iter().enumerate() {
        for i in t * NT..(t + 1) * NT {
            if v == 1 {
                assert_eq!(x[i], f[i]);
            } else {
                e += (x[i] as f64 - f[i] as f64).powi(2);
                r += (f[i] as f64).powi(2);
            }
        }
    }
    println!(
        "POCS (10 iterations, 6 of {NX} traces missing): error on them {:.3}",
        (e / r).sqrt()
    );
    assert!((e / r).sqrt() < 0.8);
    assert_eq!(n, NT * NX);
}

// ---- progress and cancellation -------------------------------------------------------

// The checks of tests/support/progress_common (`exercise`), shared with the other capabilities.

#[test]
fn long_calls_report_progress_and_stop_cleanly() {
    seisgpu::progress::set_report_interval(Some(Duration::from_micros(100)));
    let ctx = progress_common::Context::new(SG_BACKEND_CPU);
    let l = layout(ctx.0, &[NT, NX], 16, SG_WAVEPACKET_F32);
    let [n, m, ..] = sizes(&l);
    let f: Vec<f32> = section().into_iter().map(|v| v as f32).collect();
    progress_common::wavepacket_transforms(&ctx, l.0, &f, m, 3);
    let sentinel_c = vec![-3.0f32; 2 * m];
    let sentinel_d = vec![-3.0f32; n];
    let so = sg_wavepacket_sparse_options {
        stages: 6,
        refit_iterations: 2,
    };
    progress_common::exercise(&ctx, "sparse approximation", 4, &sentinel_c, || {
        let mut out = sentinel_c.clone();
        let s = sg_wavepacket_sparse_approximation_f32(
            l.0,
            f.as_ptr(),
            out.as_mut_ptr(),
            60,
            &so,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        (s, out)
    });
    let mut live = [1i32; NX];
    live[7] = 0;
    live[21] = 0;
    let mut o = sg_wavepacket_pocs_options_default();
    o.iterations = 6;
    progress_common::exercise(&ctx, "POCS", 4, &sentinel_d, || {
        let mut out = sentinel_d.clone();
        out[..f.len()].copy_from_slice(&f);
        let s = sg_wavepacket_pocs_f32(l.0, out.as_mut_ptr(), live.as_ptr(), NX, &o);
        if s != SG_OK {
            // The data went in; a refused or stopped call must leave it as it was.
            assert_eq!(out, f);
            return (s, sentinel_d.clone());
        }
        (s, out)
    });
}

// ---- bad input ----------------------------------------------------------------------

#[track_caller]
fn refused(s: sg_status, want: sg_status, words: &str) {
    assert_eq!(s, want, "{}", last_error());
    assert!(
        last_error().contains(words),
        "{:?} lacks {words:?}",
        last_error()
    );
}

#[test]
fn bad_input_is_refused_with_nothing_written() {
    let ctx = Ctx::cpu();
    let sentinel = 0x5151 as *mut sg_wavepacket_layout;
    let create = |dim: i32, shape: &[usize], dirs: usize, alpha: f64, tol: f64, prec: i32| {
        let mut out = sentinel;
        let s = sg_wavepacket_layout_create(
            ctx.0,
            dim,
            shape.as_ptr(),
            dirs,
            0,
            alpha,
            0.0,
            tol,
            prec,
            &mut out,
        );
        assert_eq!(out, sentinel, "a refused create wrote *out");
        s
    };
    let inv = SG_ERR_INVALID_ARGUMENT;
    refused(create(2, &[7, 40], 8, 0.0, 0.0, 1), inv, "shape[0] is 7");
    refused(
        create(3, &[16, 16, 5], 6, 0.0, 0.0, 1),
        inv,
        "shape[2] is 5",
    );
    refused(
        create(3, &[16, 16, 16], 351, 0.0, 0.0, 1),
        inv,
        "directions",
    );
    refused(create(2, &[16, 16], 7, 0.0, 0.0, 1), inv, "directions");
    refused(create(4, &[16; 4], 8, 0.0, 0.0, 1), inv, "dim is 4");
    refused(create(2, &[16, 16], 8, -1.0, 0.0, 1), inv, "alpha");
    refused(create(2, &[16, 16], 8, 0.0, f64::NAN, 1), inv, "tolerance");
    refused(create(2, &[16, 16], 8, 0.0, 0.0, 3), inv, "precision is 3");
    let mut out = sentinel;
    refused(
        sg_wavepacket_layout_create(ctx.0, 2, ptr::null(), 8, 0, 0.0, 0.0, 0.0, 1, &mut out),
        SG_ERR_NULL_POINTER,
        "`shape`",
    );
    assert_eq!(out, sentinel);
    // 2^20 per axis in 3D: no host holds it; refused with the sizes, not an abort.
    let huge = [1usize << 20; 3];
    let s = sg_wavepacket_layout_create(ctx.0, 3, huge.as_ptr(), 6, 1, 0.0, 0.0, 0.0, 1, &mut out);
    assert_eq!(s, SG_ERR_OUT_OF_MEMORY, "{}", last_error());
    assert_eq!(out, sentinel);
    println!("2^20 cube: {}", last_error());
    // A 1000³ layout of the default 350 directions: refused with its sizes, at once.
    let t = std::time::Instant::now();
    let cube = [1000usize; 3];
    let s = sg_wavepacket_layout_create(ctx.0, 3, cube.as_ptr(), 0, 0, 0.0, 0.0, 0.0, 1, &mut out);
    assert_eq!(s, SG_ERR_OUT_OF_MEMORY, "{}", last_error());
    assert!(last_error().contains("bytes") && out == sentinel);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    println!("1000³: {}", last_error());

    let l = layout(ctx.0, &[NT, NX], 8, SG_WAVEPACKET_F32);
    let [n, m, n_boxes, ..] = sizes(&l);
    let f: Vec<f32> = section().into_iter().map(|v| v as f32).collect();
    let mut c = vec![7.0f32; 2 * m];
    let mut bad = f.clone();
    bad[100] = f32::INFINITY;
    refused(
        sg_wavepacket_forward_f32(l.0, bad.as_ptr(), c.as_mut_ptr()),
        SG_ERR_NON_FINITE,
        "data sample 100",
    );
    assert!(c.iter().all(|&v| v == 7.0));
    // The wrong precision, NULL arrays, overlapping arrays.
    let mut c64 = vec![7.0f64; 2 * m];
    let f64s: Vec<f64> = f.iter().map(|&v| v as f64).collect();
    refused(
        sg_wavepacket_forward_f64(l.0, f64s.as_ptr(), c64.as_mut_ptr()),
        inv,
        "call sg_wavepacket_forward_f32",
    );
    refused(
        sg_wavepacket_forward_f32(l.0, ptr::null(), c.as_mut_ptr()),
        SG_ERR_NULL_POINTER,
        "`data`",
    );
    refused(
        sg_wavepacket_forward_f32(l.0, c.as_ptr(), c.as_mut_ptr()),
        inv,
        "overlap",
    );
    refused(
        sg_wavepacket_forward_f32(ptr::null(), f.as_ptr(), c.as_mut_ptr()),
        SG_ERR_NULL_POINTER,
        "`layout`",
    );
    assert!(c.iter().all(|&v| v == 7.0) && c64.iter().all(|&v| v == 7.0));
    // Non-finite coefficients in adjoint, inverse, keep-largest and threshold.
    c[2 * 17 + 1] = f32::NAN;
    let mut d = vec![9.0f32; n];
    refused(
        sg_wavepacket_adjoint_f32(l.0, c.as_ptr(), d.as_mut_ptr()),
        SG_ERR_NON_FINITE,
        "coefficient 17",
    );
    let (mut it, mut res) = (5usize, 5.0f64);
    refused(
        sg_wavepacket_inverse_f32(l.0, c.as_ptr(), d.as_mut_ptr(), 1e-6, 10, &mut it, &mut res),
        SG_ERR_NON_FINITE,
        "coefficient 17",
    );
    assert_eq!((it, res), (5, 5.0));
    let before = c.clone();
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    refused(
        sg_wavepacket_keep_largest_f32(l.0, c.as_mut_ptr(), 10),
        SG_ERR_NON_FINITE,
        "coefficient 17",
    );
    refused(
        sg_wavepacket_threshold_f32(l.0, c.as_mut_ptr(), 0, 1, 3.0),
        SG_ERR_NON_FINITE,
        "coefficient 17",
    );
    assert!(same(&c, &before) && d.iter().all(|&v| v == 9.0));
    c[2 * 17 + 1] = 0.5;
    let before = c.clone();
    refused(
        sg_wavepacket_threshold_f32(l.0, c.as_mut_ptr(), 2, 0, 1.0),
        inv,
        "mode is 2",
    );
    refused(
        sg_wavepacket_threshold_f32(l.0, c.as_mut_ptr(), 0, -1, 1.0),
        inv,
        "kind is -1",
    );
    refused(
        sg_wavepacket_threshold_f32(l.0, c.as_mut_ptr(), 0, 0, -1.0),
        inv,
        "value is -1",
    );
    refused(
        sg_wavepacket_inverse_f32(l.0, c.as_ptr(), d.as_mut_ptr(), 0.0, 10, &mut it, &mut res),
        inv,
        "tolerance is 0",
    );
    assert!(same(&c, &before) && d.iter().all(|&v| v == 9.0) && (it, res) == (5, 5.0));
    // Box queries.
    let (mut level, mut dir, mut centre, mut shape, mut offset) = (-5, -5, [0.0; 3], [0; 3], 0);
    refused(
        sg_wavepacket_box_info(
            l.0,
            n_boxes,
            &mut level,
            &mut dir,
            centre.as_mut_ptr(),
            shape.as_mut_ptr(),
            &mut offset,
        ),
        inv,
        "box_index",
    );
    assert_eq!((level, dir), (-5, -5));
    // POCS: a mask of the wrong length, a bad mask value, bad options, NaN in a live trace.
    let live = vec![1i32; NX];
    let mut x = f.clone();
    refused(
        sg_wavepacket_pocs_f32(l.0, x.as_mut_ptr(), live.as_ptr(), NX + 1, ptr::null()),
        inv,
        "n_traces is 41",
    );
    let mut two = live.clone();
    two[3] = 2;
    refused(
        sg_wavepacket_pocs_f32(l.0, x.as_mut_ptr(), two.as_ptr(), NX, ptr::null()),
        inv,
        "live[3] is 2",
    );
    let mut o = sg_wavepacket_pocs_options_default();
    o.schedule = 9;
    refused(
        sg_wavepacket_pocs_f32(l.0, x.as_mut_ptr(), live.as_ptr(), NX, &o),
        inv,
        "options.schedule",
    );
    o = sg_wavepacket_pocs_options_default();
    o.last = 2.0;
    refused(
        sg_wavepacket_pocs_f32(l.0, x.as_mut_ptr(), live.as_ptr(), NX, &o),
        inv,
        "POCS options",
    );
    x[NT * 4 + 3] = f32::NAN;
    refused(
        sg_wavepacket_pocs_f32(l.0, x.as_mut_ptr(), live.as_ptr(), NX, ptr::null()),
        SG_ERR_NON_FINITE,
        "live trace",
    );
    x[NT * 4 + 3] = f[NT * 4 + 3];
    assert_eq!(x, f);
    // The layout still works after all of that.
    ok(sg_wavepacket_forward_f32(l.0, f.as_ptr(), c.as_mut_ptr()));
}

// ---- layout options, noise thresholds, sparse approximation ---------------------------

fn rust_plan<T: seisgpu::sample::Real>(
    opts: &seisgpu::wavepacket::LayoutOptions,
) -> seisgpu::wavepacket::WavepacketPlan<T> {
    let ctx = seisgpu::context::Context::new(seisgpu::backend::BackendRequest::Cpu, 0).unwrap();
    seisgpu::wavepacket::WavepacketPlan::new(ctx, &[NT, NX], opts).unwrap()
}

fn layout_with(ctx: *mut sg_context, o: Option<&sg_wavepacket_layout_options>, p: i32) -> Layout {
    let mut l = ptr::null_mut();
    let shape = [NT, NX];
    let o = o.map_or(ptr::null(), |o| o as *const _);
    ok(sg_wavepacket_layout_create_with_options(
        ctx,
        2,
        shape.as_ptr(),
        p,
        o,
        &mut l,
    ));
    Layout(l)
}

/// The memory query gives the Rust footprint's peak (the windows, work arrays and fine grid
/// the layout's sizes imply) and refuses a cap below every grouping of the directions,
/// naming the parts and writing nothing; a capped layout is made on a CPU context, where
/// the cap does not apply.
#[test]
fn device_bytes_query_and_cap() {
    use seisgpu::wavepacket::footprint::{footprint, host_areas};
    let ctx = Ctx::cpu();
    let shape = [NT, NX];
    let query = |precision, cap, bytes: &mut usize| {
        sg_wavepacket_device_bytes(ctx.0, 2, shape.as_ptr(), precision, ptr::null(), cap, bytes)
    };
    let mut need = [0usize; 2];
    ok(query(SG_WAVEPACKET_F32, 0, &mut need[0]));
    ok(query(SG_WAVEPACKET_F64, 0, &mut need[1]));
    let opts = seisgpu::wavepacket::LayoutOptions::default();
    let l = seisgpu::wavepacket::Layout::new(2, &shape, &opts).unwrap();
    let one = seisgpu::wavepacket::lattice_groups::split(&l, 1);
    let cpu = seisgpu::backend::cpu::CpuBackend::new().unwrap();
    let tables = seisgpu::wavepacket::cuda::window_table_bytes(&l, &cpu);
    let want = footprint::<f32>(&l, &one, &host_areas::<f32>, tables).unwrap();
    assert_eq!(need[0], want.peak());
    // Windows, work arrays (coefficients, lattice values, modes) and the data's copy.
    let (c, p, n) = (l.n_coefficients, l.n_points, l.n_samples());
    assert!(need[0] > 4 * c + 8 * (c + p + n) + 4 * n, "{need:?}");
    assert!(need[1] > need[0] && need[1] < 2 * need[0], "{need:?}");
    let mut at = 0usize;
    ok(query(SG_WAVEPACKET_F32, need[0], &mut at));
    assert_eq!(at, need[0]);
    let mut untouched = 7usize;
    let s = query(SG_WAVEPACKET_F32, 1, &mut untouched);
    refused(s, SG_ERR_DEVICE_OUT_OF_MEMORY, "max_device_bytes");
    assert!(last_error().contains("windows") && last_error().contains("work arrays"));
    assert_eq!(untouched, 7);
    refused(
        query(7, 0, &mut untouched),
        SG_ERR_INVALID_ARGUMENT,
        "precision",
    );
    let bad = sg_wavepacket_device_bytes(ctx.0, 4, shape.as_ptr(), 1, ptr::null(), 0, &mut at);
    refused(bad, SG_ERR_INVALID_ARGUMENT, "dim");
    let null =
        sg_wavepacket_device_bytes(ctx.0, 2, shape.as_ptr(), 1, ptr::null(), 0, ptr::null_mut());
    refused(null, SG_ERR_NULL_POINTER, "bytes");
    let mut out = ptr::null_mut();
    ok(sg_wavepacket_layout_create_capped(
        ctx.0,
        2,
        shape.as_ptr(),
        SG_WAVEPACKET_F32,
        ptr::null(),
        1,
        &mut out,
    ));
    let capped = Layout(out);
    assert_eq!(sizes(&capped)[1], c);
}

/// The options struct's defaults are the Rust defaults; its cutoff shrinks the boxes as the
/// Rust layout of that cutoff does; the old create is the new one at cutoff 1e-3.
#[test]
fn layout_options_set_the_cutoff() {
    use seisgpu::wavepacket::LayoutOptions;
    let d = sg_wavepacket_layout_options_default();
    let r = LayoutOptions::default();
    assert_eq!(
        (
            d.directions,
            d.levels,
            d.alpha,
            d.beta,
            d.cutoff,
            d.tolerance
        ),
        (
            r.directions,
            r.levels,
            r.alpha,
            r.beta,
            r.cutoff,
            r.tolerance
        )
    );
    assert_eq!((d.cutoff, d.alpha, d.tolerance), (1e-3, 3.0, 1e-6));

    let ctx = Ctx::cpu();
    let f = section();
    let mut o = sg_wavepacket_layout_options_default();
    o.directions = 12;
    o.tolerance = 1e-12;
    let mut redundancy = Vec::new();
    for cutoff in [1e-3, 0.05, 0.2] {
        o.cutoff = cutoff;
        let l = layout_with(ctx.0, Some(&o), SG_WAVEPACKET_F64);
        let [n, m, n_boxes, ..] = sizes(&l);
        let plan = rust_plan::<f64>(&LayoutOptions {
            directions: 12,
            cutoff,
            tolerance: 1e-12,
            ..Default::default()
        });
        let rl = plan.layout();
        assert_eq!(
            (m, n_boxes),
            (rl.n_coefficients, rl.boxes.len()),
            "{cutoff}"
        );
        // The same windows: forward equals the Rust plan's bit for bit.
        let mut c = vec![0.0f64; 2 * m];
        ok(sg_wavepacket_forward_f64(l.0, f.as_ptr(), c.as_mut_ptr()));
        let mut want = vec![Complex::new(0.0, 0.0); m];
        plan.forward(&f, &mut want).unwrap();
        assert!(c.chunks(2).zip(&want).all(|(a, b)| a == [b.re, b.im]));
        redundancy.push(m as f64 / n as f64);
    }
    println!("redundancy at cutoff 1e-3 / 0.05 / 0.2: {redundancy:.2?}");
    assert!(redundancy[0] > redundancy[1] && redundancy[1] > redundancy[2]);
    assert!(redundancy[2] < 0.7 * redundancy[0], "{redundancy:?}");

    // sg_wavepacket_layout_create = the options at cutoff 1e-3 (alpha and tolerance 0:
    // their defaults); NULL options = the defaults (32 directions).
    let old = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F64);
    o.cutoff = 1e-3;
    assert_eq!(
        sizes(&old),
        sizes(&layout_with(ctx.0, Some(&o), SG_WAVEPACKET_F64))
    );
    let dflt = layout_with(ctx.0, None, SG_WAVEPACKET_F32);
    let rl = rust_plan::<f32>(&LayoutOptions::default());
    assert_eq!(
        sizes(&dflt)[1..4],
        [
            rl.layout().n_coefficients,
            rl.layout().boxes.len(),
            rl.layout().levels
        ]
    );
    assert_eq!(sizes(&dflt)[4], 16);
}

/// Per-box noise thresholds, the noise estimate and the packet norms through the ABI equal
/// the Rust functions on the same coefficients, and the thresholds are k·σ·‖ψ_b‖ box by box.
#[test]
fn noise_thresholds_match_the_rust_functions() {
    use seisgpu::wavepacket::coeffs::{estimate_noise, threshold_noise, ThresholdMode};
    let ctx = Ctx::cpu();
    let l = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F64);
    let [n, m, n_boxes, ..] = sizes(&l);
    let plan = rust_plan::<f64>(&seisgpu::wavepacket::LayoutOptions {
        directions: 12,
        tolerance: 1e-12,
        ..Default::default()
    });
    let rl = plan.layout();
    let clean = section();
    let rms = (clean.iter().map(|v| v * v).sum::<f64>() / n as f64).sqrt();
    let sigma = 0.5 * rms;
    let mut rng = common::Rng::new(11);
    let noisy: Vec<f64> = clean.iter().map(|&v| v + sigma * rng.gauss()).collect();
    let mut c = vec![0.0f64; 2 * m];
    ok(sg_wavepacket_forward_f64(
        l.0,
        noisy.as_ptr(),
        c.as_mut_ptr(),
    ));
    let cz: Vec<Complex<f64>> = c.chunks(2).map(|z| Complex::new(z[0], z[1])).collect();

    let mut norms = vec![0.0; n_boxes];
    ok(sg_wavepacket_packet_norms(l.0, norms.as_mut_ptr(), n_boxes));
    assert_eq!(norms, plan.packet_norms());
    assert!(norms.iter().all(|&v| v > 0.0));

    let mut est = -1.0;
    ok(sg_wavepacket_estimate_noise_f64(l.0, c.as_ptr(), &mut est));
    assert_eq!(est, estimate_noise(rl, &norms, &cz));
    println!("σ estimated {est:.4}, true {sigma:.4}");
    assert!((est / sigma - 1.0).abs() < 0.1, "{est} vs {sigma}");

    let denoise = |x: &[f64]| {
        let mut y = vec![0.0; n];
        ok(sg_wavepacket_adjoint_f64(l.0, x.as_ptr(), y.as_mut_ptr()));
        -20.0 * rel(&y, &clean).log10()
    };
    for (mode, rmode, k) in [
        (SG_WAVEPACKET_HARD, ThresholdMode::Hard, 2.5),
        (SG_WAVEPACKET_SOFT, ThresholdMode::Soft, 1.5),
    ] {
        let mut t = c.clone();
        ok(sg_wavepacket_threshold_noise_f64(
            l.0,
            t.as_mut_ptr(),
            mode,
            k,
            est,
        ));
        let mut want = cz.clone();
        threshold_noise(rl, &norms, &mut want, rmode, k, est).unwrap();
        assert!(t.chunks(2).zip(&want).all(|(a, b)| a == [b.re, b.im]));
        // Box by box: |c| ≤ k·σ·‖ψ_b‖ → 0; above, kept (hard) or shrunk by it (soft).
        for (b, bx) in rl.boxes.iter().enumerate() {
            let th = k * est * norms[b];
            for i in bx.offset..bx.offset + bx.n_coefficients() {
                let (a, got) = (cz[i].norm(), t[2 * i].hypot(t[2 * i + 1]));
                let want = match (a <= th, mode) {
                    (true, _) => 0.0,
                    (false, SG_WAVEPACKET_HARD) => a,
                    _ => a - th,
                };
                assert!(
                    (got - want).abs() <= 1e-12 * a.max(1.0),
                    "box {b} {i}: {got} {want}"
                );
            }
        }
        let left = t.chunks(2).filter(|z| z[0] != 0.0 || z[1] != 0.0).count();
        let (before, after) = (denoise(&c), denoise(&t));
        println!("k = {k} (mode {mode}): {left} of {m} left, SNR {before:.2} → {after:.2} dB");
        assert!(after > before + 3.0, "{before} {after}");
    }

    // f32: the norms of the f32 windows, the same thresholds as Rust's on f32 values.
    let l32 = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F32);
    let plan32 = rust_plan::<f32>(&seisgpu::wavepacket::LayoutOptions {
        directions: 12,
        ..Default::default()
    });
    ok(sg_wavepacket_packet_norms(
        l32.0,
        norms.as_mut_ptr(),
        n_boxes,
    ));
    assert_eq!(norms, plan32.packet_norms());
    let f32s: Vec<f32> = noisy.iter().map(|&v| v as f32).collect();
    let mut c32 = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_forward_f32(
        l32.0,
        f32s.as_ptr(),
        c32.as_mut_ptr(),
    ));
    let cz32: Vec<Complex<f32>> = c32.chunks(2).map(|z| Complex::new(z[0], z[1])).collect();
    ok(sg_wavepacket_estimate_noise_f32(
        l32.0,
        c32.as_ptr(),
        &mut est,
    ));
    assert_eq!(est, estimate_noise(plan32.layout(), &norms, &cz32));
    ok(sg_wavepacket_threshold_noise_f32(
        l32.0,
        c32.as_mut_ptr(),
        SG_WAVEPACKET_HARD,
        2.5,
        est,
    ));
    let mut want = cz32;
    threshold_noise(
        plan32.layout(),
        &norms,
        &mut want,
        ThresholdMode::Hard,
        2.5,
        est,
    )
    .unwrap();
    assert!(c32.chunks(2).zip(&want).all(|(a, b)| a == [b.re, b.im]));
}

/// The S-term approximation through the ABI equals the Rust one, keeps S coefficients,
/// reports the residual its coefficients give, and beats the S largest of C f.
#[test]
fn sparse_approximation_matches_the_rust_plan() {
    use seisgpu::wavepacket::sparse::SparseOptions;
    let ctx = Ctx::cpu();
    let l = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F64);
    let [n, m, ..] = sizes(&l);
    let plan = rust_plan::<f64>(&seisgpu::wavepacket::LayoutOptions {
        directions: 12,
        tolerance: 1e-12,
        ..Default::default()
    });
    let f = section();
    let d = sg_wavepacket_sparse_options_default();
    let r = SparseOptions::default();
    assert_eq!(
        (d.stages, d.refit_iterations),
        (r.stages, r.refit_iterations)
    );
    let residual_of = |c: &[f64]| {
        let mut y = vec![0.0; n];
        ok(sg_wavepacket_adjoint_f64(l.0, c.as_ptr(), y.as_mut_ptr()));
        rel(&y, &f)
    };
    let s = n / 40; // complex values: 5 % of the samples' reals
    let mut o = sg_wavepacket_sparse_options_default();
    o.stages = 6;
    let mut c = vec![0.0f64; 2 * m];
    let (mut kept, mut res) = (0usize, 0.0f64);
    ok(sg_wavepacket_sparse_approximation_f64(
        l.0,
        f.as_ptr(),
        c.as_mut_ptr(),
        s,
        &o,
        &mut kept,
        &mut res,
    ));
    let opts = SparseOptions {
        stages: 6,
        ..Default::default()
    };
    let (want, report) = plan.sparse_approximation(&f, s, &opts).unwrap();
    assert!(c.chunks(2).zip(&want).all(|(a, b)| a == [b.re, b.im]));
    assert_eq!((kept, res), (report.kept, report.residual));
    let nonzero = c.chunks(2).filter(|z| z[0] != 0.0 || z[1] != 0.0).count();
    assert_eq!((kept, nonzero), (s, s));
    let direct = residual_of(&c);
    assert!((direct - res).abs() < 1e-9, "{direct} {res}");
    let mut largest = vec![0.0f64; 2 * m];
    ok(sg_wavepacket_forward_f64(
        l.0,
        f.as_ptr(),
        largest.as_mut_ptr(),
    ));
    ok(sg_wavepacket_keep_largest_f64(l.0, largest.as_mut_ptr(), s));
    let plain = residual_of(&largest);
    println!(
        "{s} of {m} coefficients: sparse SNR {:.2} dB (residual {res:.4}), the largest of Cf {:.2} dB",
        -20.0 * res.log10(),
        -20.0 * plain.log10()
    );
    assert!(res < 0.7 * plain, "{res} vs {plain}");

    // f32 with NULL options (the defaults): S kept, the residual as reported.
    let l32 = layout(ctx.0, &[NT, NX], 12, SG_WAVEPACKET_F32);
    let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
    let mut c32 = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_sparse_approximation_f32(
        l32.0,
        f32s.as_ptr(),
        c32.as_mut_ptr(),
        s,
        ptr::null(),
        &mut kept,
        &mut res,
    ));
    let (_, report) = rust_plan::<f32>(&seisgpu::wavepacket::LayoutOptions {
        directions: 12,
        ..Default::default()
    })
    .sparse_approximation(&f32s, s, &SparseOptions::default())
    .unwrap();
    assert_eq!((kept, res), (report.kept, report.residual));
    let mut y = vec![0.0f32; n];
    ok(sg_wavepacket_adjoint_f32(
        l32.0,
        c32.as_ptr(),
        y.as_mut_ptr(),
    ));
    let direct = rel(&y.iter().map(|&v| v as f64).collect::<Vec<_>>(), &f);
    println!("f32, default options: kept {kept}, residual {res:.4} (direct {direct:.4})");
    assert_eq!(kept, s);
    assert!(
        (direct - res).abs() < 1e-4 && res < 0.7 * plain,
        "{direct} {res}"
    );
}

#[test]
fn bad_input_to_options_noise_and_sparse_calls() {
    let ctx = Ctx::cpu();
    let inv = SG_ERR_INVALID_ARGUMENT;
    let shape = [NT, NX];
    let sentinel = 0x5151 as *mut sg_wavepacket_layout;
    let create = |o: &sg_wavepacket_layout_options, shape: *const usize| {
        let mut out = sentinel;
        let s = sg_wavepacket_layout_create_with_options(ctx.0, 2, shape, 1, o, &mut out);
        assert_eq!(out, sentinel, "a refused create wrote *out");
        s
    };
    let d = sg_wavepacket_layout_options_default();
    for (cutoff, words) in [
        (0.5, "cutoff is 0.5"),
        (0.0, "cutoff is 0"),
        (f64::NAN, "cutoff is NaN"),
    ] {
        refused(
            create(
                &sg_wavepacket_layout_options { cutoff, ..d },
                shape.as_ptr(),
            ),
            inv,
            words,
        );
    }
    refused(
        create(
            &sg_wavepacket_layout_options { alpha: 0.0, ..d },
            shape.as_ptr(),
        ),
        inv,
        "alpha is 0",
    );
    refused(
        create(
            &sg_wavepacket_layout_options {
                tolerance: 0.0,
                ..d
            },
            shape.as_ptr(),
        ),
        inv,
        "tolerance is 0",
    );
    refused(
        create(
            &sg_wavepacket_layout_options { directions: 7, ..d },
            shape.as_ptr(),
        ),
        inv,
        "directions",
    );
    refused(create(&d, ptr::null()), SG_ERR_NULL_POINTER, "`shape`");

    let l = layout(ctx.0, &[NT, NX], 8, SG_WAVEPACKET_F32);
    let [n, m, n_boxes, ..] = sizes(&l);
    let f: Vec<f32> = section().into_iter().map(|v| v as f32).collect();
    let mut c = vec![0.0f32; 2 * m];
    ok(sg_wavepacket_forward_f32(l.0, f.as_ptr(), c.as_mut_ptr()));
    let before = c.clone();
    let mut c64 = vec![7.0f64; 2 * m];

    // Noise thresholds: mode, k, sigma, the precision, NULL, non-finite coefficients.
    let th = |c: &mut [f32], mode: i32, k: f64, sigma: f64| {
        sg_wavepacket_threshold_noise_f32(l.0, c.as_mut_ptr(), mode, k, sigma)
    };
    refused(th(&mut c, 2, 2.5, 0.1), inv, "mode is 2");
    refused(th(&mut c, 0, -1.0, 0.1), inv, "k is -1");
    refused(th(&mut c, 0, f64::INFINITY, 0.1), inv, "k is inf");
    refused(th(&mut c, 0, 2.5, f64::NAN), inv, "sigma is NaN");
    refused(th(&mut c, 0, 2.5, -0.1), inv, "sigma is -0.1");
    refused(
        sg_wavepacket_threshold_noise_f64(l.0, c64.as_mut_ptr(), 0, 2.5, 0.1),
        inv,
        "call sg_wavepacket_threshold_noise_f32",
    );
    refused(
        sg_wavepacket_threshold_noise_f32(l.0, ptr::null_mut(), 0, 2.5, 0.1),
        SG_ERR_NULL_POINTER,
        "`coeffs`",
    );
    refused(
        sg_wavepacket_threshold_noise_f32(ptr::null(), c.as_mut_ptr(), 0, 2.5, 0.1),
        SG_ERR_NULL_POINTER,
        "`layout`",
    );
    assert_eq!(c, before);
    c[2 * 9] = f32::NAN;
    let nan_at_9 = c.clone();
    refused(th(&mut c, 0, 2.5, 0.1), SG_ERR_NON_FINITE, "coefficient 9");
    assert!(c
        .iter()
        .zip(&nan_at_9)
        .all(|(a, b)| a.to_bits() == b.to_bits()));

    // The noise estimate: NULL σ, non-finite coefficients, the precision; σ untouched.
    let mut sigma = -5.0;
    refused(
        sg_wavepacket_estimate_noise_f32(l.0, c.as_ptr(), &mut sigma),
        SG_ERR_NON_FINITE,
        "coefficient 9",
    );
    c = before.clone();
    refused(
        sg_wavepacket_estimate_noise_f32(l.0, c.as_ptr(), ptr::null_mut()),
        SG_ERR_NULL_POINTER,
        "`sigma`",
    );
    refused(
        sg_wavepacket_estimate_noise_f64(l.0, c64.as_ptr(), &mut sigma),
        inv,
        "call sg_wavepacket_estimate_noise_f32",
    );
    assert_eq!(sigma, -5.0);

    // Packet norms: the box count, NULL.
    let mut norms = vec![-5.0; n_boxes + 1];
    refused(
        sg_wavepacket_packet_norms(l.0, norms.as_mut_ptr(), n_boxes + 1),
        inv,
        &format!("n_boxes is {}", n_boxes + 1),
    );
    refused(
        sg_wavepacket_packet_norms(l.0, ptr::null_mut(), n_boxes),
        SG_ERR_NULL_POINTER,
        "`norms`",
    );
    assert!(norms.iter().all(|&v| v == -5.0));

    // Sparse approximation: S over the count, options, NaN data, NULL, the precision,
    // overlapping arrays; coefficients, kept and residual untouched.
    let (mut kept, mut res) = (5usize, 5.0f64);
    let mut out = vec![7.0f32; 2 * m];
    let mut sp =
        |data: &[f32], out: &mut [f32], s: usize, o: *const sg_wavepacket_sparse_options| {
            sg_wavepacket_sparse_approximation_f32(
                l.0,
                data.as_ptr(),
                out.as_mut_ptr(),
                s,
                o,
                &mut kept,
                &mut res,
            )
        };
    refused(
        sp(&f, &mut out, m + 1, ptr::null()),
        inv,
        &format!("s is {}", m + 1),
    );
    let mut o = sg_wavepacket_sparse_options_default();
    o.stages = 0;
    refused(sp(&f, &mut out, 10, &o), inv, "stages is 0");
    o = sg_wavepacket_sparse_options_default();
    o.refit_iterations = 0;
    refused(sp(&f, &mut out, 10, &o), inv, "refit_iterations is 0");
    let mut bad = f.clone();
    bad[n - 1] = f32::NAN;
    refused(
        sp(&bad, &mut out, 10, ptr::null()),
        SG_ERR_NON_FINITE,
        &format!("data sample {}", n - 1),
    );
    let f64s: Vec<f64> = f.iter().map(|&v| v as f64).collect();
    refused(
        sg_wavepacket_sparse_approximation_f64(
            l.0,
            f64s.as_ptr(),
            c64.as_mut_ptr(),
            10,
            ptr::null(),
            &mut kept,
            &mut res,
        ),
        inv,
        "call sg_wavepacket_sparse_approximation_f32",
    );
    refused(
        sg_wavepacket_sparse_approximation_f32(
            l.0,
            ptr::null(),
            out.as_mut_ptr(),
            10,
            ptr::null(),
            &mut kept,
            &mut res,
        ),
        SG_ERR_NULL_POINTER,
        "`data`",
    );
    refused(
        sg_wavepacket_sparse_approximation_f32(
            l.0,
            f.as_ptr(),
            ptr::null_mut(),
            10,
            ptr::null(),
            &mut kept,
            &mut res,
        ),
        SG_ERR_NULL_POINTER,
        "`coeffs`",
    );
    refused(
        sg_wavepacket_sparse_approximation_f32(
            l.0,
            out.as_ptr(),
            out.as_mut_ptr(),
            10,
            ptr::null(),
            &mut kept,
            &mut res,
        ),
        inv,
        "overlap",
    );
    assert!(out.iter().all(|&v| v == 7.0) && c64.iter().all(|&v| v == 7.0));
    assert_eq!((kept, res), (5, 5.0));
    // S = the count is allowed; kept and residual may be NULL.
    ok(sg_wavepacket_sparse_approximation_f32(
        l.0,
        f.as_ptr(),
        out.as_mut_ptr(),
        m,
        &sg_wavepacket_sparse_options {
            stages: 1,
            refit_iterations: 1,
        },
        ptr::null_mut(),
        ptr::null_mut(),
    ));
    assert!(out.iter().all(|v| v.is_finite()) && out.iter().any(|&v| v != 7.0));
}
