//! `sg_wavepacket_*`: layouts (tiny, so that transforms take a millisecond; with and without
//! the options struct), their queries, forward/adjoint/inverse, the coefficient operations
//! (noise thresholds and estimate included), POCS and the sparse approximation, in both
//! precisions.

use super::{handle_slot, sentinel, Faults, Fuzz, Real, Snapshot, Target};
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::*;
use std::ptr;

/// A live layout and its sizes.
struct Layout {
    p: *mut sg_wavepacket_layout,
    f64: bool,
    n: usize,
    m: usize,
    traces: usize,
    boxes: usize,
}

struct Wavepacket {
    layouts: Vec<Layout>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Wavepacket {
        layouts: Vec::new(),
    })
}

impl Drop for Wavepacket {
    fn drop(&mut self) {
        for l in self.layouts.drain(..) {
            sg_wavepacket_layout_destroy(l.p);
        }
    }
}

impl Target for Wavepacket {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.layouts.is_empty() || r < 12 {
            create(f, &mut self.layouts);
        } else if r < 15 {
            let i = f.rng.range(0, self.layouts.len() - 1);
            f.announce("sg_wavepacket_layout_destroy", String::new);
            sg_wavepacket_layout_destroy(self.layouts.swap_remove(i).p);
            sg_wavepacket_layout_destroy(ptr::null_mut());
        } else {
            let l = &self.layouts[f.rng.range(0, self.layouts.len() - 1)];
            match r {
                15..=24 => sizes(f, l),
                25..=30 => box_info(f, l),
                31..=34 => packet_norms(f, l),
                // A call of the other precision is a planted fault.
                _ if l.f64 != f.rng.chance(0.03) => calls::<f64>(f, l, r, &F64),
                _ => calls::<f32>(f, l, r, &F32),
            }
        }
    }
}

fn create(f: &mut Fuzz, layouts: &mut Vec<Layout>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    // 3D layouts cost tens of milliseconds even at 8³: made rarely and not kept (the calls
    // on a layout do not depend on its dimension).
    let mut dim = if f.rng.chance(0.1) { 3 } else { 2 };
    let mut shape = if dim == 2 {
        [f.rng.range(8, 16), f.rng.range(8, 16), 0]
    } else {
        [8, f.rng.range(8, 9), 8]
    };
    let mut directions = if dim == 2 {
        f.rng.pick(&[2, 4, 6, 8])
    } else {
        6
    };
    let mut levels = f.rng.range(0, 2);
    let mut alpha = f.rng.pick(&[0.0, 2.0, 3.0, 5.0]);
    let mut beta = f.rng.pick(&[0.0, 1.0, 2.0]);
    let mut precision = f.rng.pick(&[SG_WAVEPACKET_F32, SG_WAVEPACKET_F64]);
    let mut tolerance = match precision {
        SG_WAVEPACKET_F32 => f.rng.pick(&[0.0, 1e-3, 1e-6]),
        _ => f.rng.pick(&[0.0, 1e-6, 1e-10]),
    };
    let with_options = f.rng.chance(0.5);
    // With options: plain, capped (a cap that never binds, or a planted one of one byte),
    // or the memory query of the same arguments.
    let way = if with_options { f.rng.range(0, 2) } else { 0 };
    let mut cap = f.rng.pick(&[0, usize::MAX]);
    let mut cutoff = f.rng.pick(&[1e-3, 0.05, 0.2]);
    let mut null_options = false;
    let mut shape_null = false;
    match f.rng.range(0, 24) {
        0 => {
            k.plant("dim");
            dim = f.rng.bad_enum(&[2, 3]);
        }
        1 => {
            k.plant("`shape`");
            shape_null = true;
        }
        2 => {
            k.plant("shape[");
            shape[f.rng.range(0, dim as usize - 1)] = f.rng.range(0, 7);
        }
        3 => {
            k.plant("shape[");
            shape[f.rng.range(0, dim as usize - 1)] = f.rng.huge();
        }
        4 => {
            // An odd 2D count, or a size no Lebedev rule has.
            k.plant("directions");
            directions = if dim == 2 {
                f.rng.pick(&[3, 5, 4097, 1])
            } else {
                f.rng.pick(&[5, 7, 351, 100, 1000])
            };
        }
        5 => {
            k.plant("levels");
            levels = f.rng.range(13, 1000);
        }
        6 => {
            k.plant("alpha");
            alpha = f.rng.pick(&[-1.0, 0.1, 25.0, f64::NAN, f64::INFINITY]);
        }
        7 => {
            k.plant("beta");
            beta = f.rng.pick(&[-1.0, f64::NAN, f64::NEG_INFINITY]);
        }
        8 => {
            k.plant("tolerance");
            tolerance = f.rng.pick(&[-1e-3, 1.0, 2.0, f64::NAN, f64::INFINITY]);
        }
        9 => {
            k.plant("precision");
            precision = f.rng.bad_enum(&[1, 2]);
        }
        10 if precision == SG_WAVEPACKET_F32 => {
            // Below what single precision reaches.
            k.plant("tolerance");
            tolerance = 1e-12;
        }
        11 if with_options => {
            k.plant("cutoff");
            cutoff = f.rng.pick(&[0.0, 0.5, -1.0, f64::NAN, f64::INFINITY]);
        }
        // The defaults: 32 directions (16 stored) on these small shapes.
        12 if with_options && dim == 2 => null_options = true,
        // A cap of one byte refuses the query (a layout's creation only on a CUDA context).
        13 if way == 2 => {
            k.plant("max_device_bytes");
            cap = 1;
        }
        _ => {}
    }
    let mut out: *mut sg_wavepacket_layout = ptr::null_mut();
    let out_p = match way {
        2 => ptr::null_mut(),
        _ => handle_slot(f, &mut k, &mut out, 0.03),
    };
    let snap = Snapshot::of("out", &out, 1);
    let shape_p = if shape_null {
        ptr::null()
    } else {
        shape.as_ptr()
    };
    let name = match way {
        1 => "sg_wavepacket_layout_create_capped",
        2 => "sg_wavepacket_device_bytes",
        _ if with_options => "sg_wavepacket_layout_create_with_options",
        _ => "sg_wavepacket_layout_create",
    };
    f.announce(name, || {
        format!("dim {dim}, {shape:?}, {directions} dirs, {levels} levels, α {alpha}, β {beta}, cutoff {cutoff}, tol {tolerance}, precision {precision}, NULL options {null_options}")
    });
    let s = if with_options {
        // The struct has no "0 gives the default" for alpha and tolerance: their defaults.
        let o = sg_wavepacket_layout_options {
            directions,
            levels,
            alpha: if alpha == 0.0 { 3.0 } else { alpha },
            beta,
            cutoff,
            tolerance: if tolerance == 0.0 { 1e-6 } else { tolerance },
        };
        let o_p: *const sg_wavepacket_layout_options = if null_options { ptr::null() } else { &o };
        match way {
            1 => sg_wavepacket_layout_create_capped(ctx, dim, shape_p, precision, o_p, cap, out_p),
            2 => {
                let mut bytes = [0usize];
                let snap = Snapshot::of_slice("bytes", &bytes);
                let bytes_p = slot(f, &mut k, bytes.as_mut_ptr(), "bytes");
                let s = sg_wavepacket_device_bytes(ctx, dim, shape_p, precision, o_p, cap, bytes_p);
                f.check(name, s, &k, &[snap]);
                assert!(s != SG_OK || bytes[0] > 0, "{name} gave 0 bytes");
                return;
            }
            _ => sg_wavepacket_layout_create_with_options(ctx, dim, shape_p, precision, o_p, out_p),
        }
    } else {
        sg_wavepacket_layout_create(
            ctx, dim, shape_p, directions, levels, alpha, beta, tolerance, precision, out_p,
        )
    };
    f.check(name, s, &k, &[snap]);
    if s != SG_OK {
        return;
    }
    if layouts.len() >= 3 || dim == 3 {
        sg_wavepacket_layout_destroy(out);
        return;
    }
    let mut z = [0usize; 5];
    let [a, b, c, d, e] = &mut z;
    let s = sg_wavepacket_layout_sizes(out, a, b, c, d, e);
    assert_eq!(s, SG_OK);
    layouts.push(Layout {
        p: out,
        f64: precision == SG_WAVEPACKET_F64,
        n: z[0],
        m: z[1],
        traces: z[0] / shape[0],
        boxes: z[2],
    });
}

/// The layout, or (a planted fault) NULL.
fn layout_or_null(f: &mut Fuzz, k: &mut Faults, l: &Layout) -> *const sg_wavepacket_layout {
    if f.rng.chance(0.03) {
        k.plant("`layout`");
        ptr::null()
    } else {
        l.p
    }
}

/// An output pointer: `slot`, or (a planted fault named `name`) NULL.
fn slot<T>(f: &mut Fuzz, k: &mut Faults, p: *mut T, name: &'static str) -> *mut T {
    if f.rng.chance(0.04) {
        k.plant(name);
        ptr::null_mut()
    } else {
        p
    }
}

fn sizes(f: &mut Fuzz, l: &Layout) {
    let mut k = Faults::default();
    let p = layout_or_null(f, &mut k, l);
    let mut v = [0x5151usize; 5];
    let snaps = [Snapshot::of_slice("sizes", &v)];
    let [a, b, c, d, e] = &mut v;
    let outs = [
        slot(f, &mut k, a as *mut usize, "n_samples"),
        slot(f, &mut k, b as *mut usize, "n_coefficients"),
        slot(f, &mut k, c as *mut usize, "n_boxes"),
        slot(f, &mut k, d as *mut usize, "levels"),
        slot(f, &mut k, e as *mut usize, "n_directions"),
    ];
    f.announce("sg_wavepacket_layout_sizes", String::new);
    let s = sg_wavepacket_layout_sizes(p, outs[0], outs[1], outs[2], outs[3], outs[4]);
    f.check("sg_wavepacket_layout_sizes", s, &k, &snaps);
    if s == SG_OK {
        assert_eq!((v[0], v[1], v[2]), (l.n, l.m, l.boxes));
    }
}

fn box_info(f: &mut Fuzz, l: &Layout) {
    let mut k = Faults::default();
    let p = layout_or_null(f, &mut k, l);
    let mut b = f.rng.range(0, l.boxes - 1);
    if f.rng.chance(0.1) {
        k.plant("box_index");
        b = if f.rng.chance(0.5) {
            l.boxes
        } else {
            f.rng.huge()
        };
    }
    let (mut level, mut dir) = (0x5151i32, 0x5151i32);
    let (mut centre, mut shape, mut offset) = ([7.0f64; 3], [7usize; 3], 7usize);
    let snaps = [
        Snapshot::of("level", &level, 1),
        Snapshot::of("direction", &dir, 1),
        Snapshot::of_slice("centre", &centre),
        Snapshot::of_slice("shape", &shape),
        Snapshot::of("offset", &offset, 1),
    ];
    let lv = slot(f, &mut k, &mut level as *mut i32, "level");
    let dr = slot(f, &mut k, &mut dir as *mut i32, "direction");
    let ce = slot(f, &mut k, centre.as_mut_ptr(), "centre");
    let sh = slot(f, &mut k, shape.as_mut_ptr(), "shape");
    let of = slot(f, &mut k, &mut offset as *mut usize, "offset");
    f.announce("sg_wavepacket_box_info", || format!("box {b}"));
    let s = sg_wavepacket_box_info(p, b, lv, dr, ce, sh, of);
    f.check("sg_wavepacket_box_info", s, &k, &snaps);
    if s == SG_OK {
        assert!(offset + shape.iter().product::<usize>() <= l.m);
    }
}

fn packet_norms(f: &mut Fuzz, l: &Layout) {
    let mut k = Faults::default();
    let p = layout_or_null(f, &mut k, l);
    let mut n_boxes = l.boxes;
    if f.rng.chance(0.1) {
        k.plant("n_boxes");
        n_boxes = f.rng.pick(&[0, l.boxes - 1, l.boxes + 1]);
    }
    // One more than the boxes: a wrong count must not write past them either.
    let mut norms = vec![-7.0f64; l.boxes + 1];
    let snaps = [Snapshot::of_slice("norms", &norms)];
    let out = slot(f, &mut k, norms.as_mut_ptr(), "norms");
    f.announce("sg_wavepacket_packet_norms", || format!("{n_boxes} boxes"));
    let s = sg_wavepacket_packet_norms(p, out, n_boxes);
    f.check("sg_wavepacket_packet_norms", s, &k, &snaps);
    if s == SG_OK {
        assert!(norms[..l.boxes].iter().all(|&v| v > 0.0) && norms[l.boxes] == -7.0);
    }
}

/// The calls of one precision.
struct Calls<T> {
    forward: extern "C" fn(*const sg_wavepacket_layout, *const T, *mut T) -> i32,
    adjoint: extern "C" fn(*const sg_wavepacket_layout, *const T, *mut T) -> i32,
    inverse: extern "C" fn(
        *const sg_wavepacket_layout,
        *const T,
        *mut T,
        f64,
        usize,
        *mut usize,
        *mut f64,
    ) -> i32,
    keep: extern "C" fn(*const sg_wavepacket_layout, *mut T, usize) -> i32,
    threshold: extern "C" fn(*const sg_wavepacket_layout, *mut T, i32, i32, f64) -> i32,
    pocs: extern "C" fn(
        *const sg_wavepacket_layout,
        *mut T,
        *const i32,
        usize,
        *const sg_wavepacket_pocs_options,
    ) -> i32,
    threshold_noise: extern "C" fn(*const sg_wavepacket_layout, *mut T, i32, f64, f64) -> i32,
    estimate_noise: extern "C" fn(*const sg_wavepacket_layout, *const T, *mut f64) -> i32,
    sparse: extern "C" fn(
        *const sg_wavepacket_layout,
        *const T,
        *mut T,
        usize,
        *const sg_wavepacket_sparse_options,
        *mut usize,
        *mut f64,
    ) -> i32,
    names: [&'static str; 9],
    f64: bool,
}

const F32: Calls<f32> = Calls {
    forward: sg_wavepacket_forward_f32,
    adjoint: sg_wavepacket_adjoint_f32,
    inverse: sg_wavepacket_inverse_f32,
    keep: sg_wavepacket_keep_largest_f32,
    threshold: sg_wavepacket_threshold_f32,
    pocs: sg_wavepacket_pocs_f32,
    threshold_noise: sg_wavepacket_threshold_noise_f32,
    estimate_noise: sg_wavepacket_estimate_noise_f32,
    sparse: sg_wavepacket_sparse_approximation_f32,
    names: [
        "sg_wavepacket_forward_f32",
        "sg_wavepacket_adjoint_f32",
        "sg_wavepacket_inverse_f32",
        "sg_wavepacket_keep_largest_f32",
        "sg_wavepacket_threshold_f32",
        "sg_wavepacket_pocs_f32",
        "sg_wavepacket_threshold_noise_f32",
        "sg_wavepacket_estimate_noise_f32",
        "sg_wavepacket_sparse_approximation_f32",
    ],
    f64: false,
};

const F64: Calls<f64> = Calls {
    forward: sg_wavepacket_forward_f64,
    adjoint: sg_wavepacket_adjoint_f64,
    inverse: sg_wavepacket_inverse_f64,
    keep: sg_wavepacket_keep_largest_f64,
    threshold: sg_wavepacket_threshold_f64,
    pocs: sg_wavepacket_pocs_f64,
    threshold_noise: sg_wavepacket_threshold_noise_f64,
    estimate_noise: sg_wavepacket_estimate_noise_f64,
    sparse: sg_wavepacket_sparse_approximation_f64,
    names: [
        "sg_wavepacket_forward_f64",
        "sg_wavepacket_adjoint_f64",
        "sg_wavepacket_inverse_f64",
        "sg_wavepacket_keep_largest_f64",
        "sg_wavepacket_threshold_f64",
        "sg_wavepacket_pocs_f64",
        "sg_wavepacket_threshold_noise_f64",
        "sg_wavepacket_estimate_noise_f64",
        "sg_wavepacket_sparse_approximation_f64",
    ],
    f64: true,
};

/// Random values in [-1, 1), sometimes with one planted NaN or infinity.
fn values<T: Real>(f: &mut Fuzz, len: usize, k: &mut Faults, p_bad: f64) -> Vec<T> {
    let mut v: Vec<T> = (0..len).map(|_| T::of(f.rng.symmetric())).collect();
    if f.rng.chance(p_bad) {
        let i = f.rng.range(0, len - 1);
        v[i] = T::of(f.rng.non_finite());
        k.plant("not finite");
    }
    v
}

fn calls<T: Real>(f: &mut Fuzz, l: &Layout, r: usize, c: &Calls<T>) {
    let mut k = Faults::default();
    if c.f64 != l.f64 {
        k.plant("precision");
    }
    let p = layout_or_null(f, &mut k, l);
    match r {
        35..=50 => transform(f, l, p, k, c, 0),
        51..=64 => transform(f, l, p, k, c, 1),
        65..=72 => transform(f, l, p, k, c, 2),
        73..=81 => coefficients(f, l, p, k, c),
        82..=90 => pocs(f, l, p, k, c),
        _ => sparse(f, l, p, k, c),
    }
}

/// Forward (0), adjoint (1) or inverse (2): an input and an output array, apart or not.
fn transform<T: Real>(
    f: &mut Fuzz,
    l: &Layout,
    p: *const sg_wavepacket_layout,
    mut k: Faults,
    c: &Calls<T>,
    which: usize,
) {
    let (n_in, n_out) = match which {
        0 => (l.n, 2 * l.m),
        _ => (2 * l.m, l.n),
    };
    // Input then output in one buffer, so that they can also be made to overlap.
    let mut buf: Vec<T> = values(f, n_in, &mut k, 0.05);
    buf.extend(sentinel::<T>(n_out));
    let base = buf.as_mut_ptr();
    let mut input = base as *const T;
    let mut output = base.wrapping_add(n_in);
    match f.rng.range(0, 19) {
        0 => {
            k.plant(if which == 0 { "`data`" } else { "`coeffs`" });
            input = ptr::null();
        }
        1 => {
            k.plant(if which == 0 { "`coeffs`" } else { "`data`" });
            output = ptr::null_mut();
        }
        2 => {
            k.plant("overlap");
            output = base.wrapping_add(f.rng.range(0, n_in - 1));
        }
        _ => {}
    }
    let mut tolerance = f.rng.pick(&[1e-2, 1e-4, 1e-6]);
    if which == 2 && f.rng.chance(0.1) {
        k.plant("tolerance");
        tolerance = f.rng.pick(&[0.0, 1.0, -1.0, f64::NAN]);
    }
    let (mut iterations, mut residual) = (0x5151usize, 7.0f64);
    let mut snaps = vec![
        Snapshot::of("output", output, n_out),
        Snapshot::of("input", input, n_in),
    ];
    snaps.push(Snapshot::of("iterations", &iterations, 1));
    snaps.push(Snapshot::of("residual", &residual, 1));
    let it = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut iterations as *mut usize
    };
    let res = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut residual as *mut f64
    };
    let name = c.names[which];
    f.announce(name, || format!("n {}, m {}", l.n, l.m));
    let s = match which {
        0 => (c.forward)(p, input, output),
        1 => (c.adjoint)(p, input, output),
        _ => (c.inverse)(p, input, output, tolerance, f.rng.range(0, 3), it, res),
    };
    f.check(name, s, &k, &snaps);
}

/// Keep-largest, threshold or noise threshold, in place, or the noise estimate.
fn coefficients<T: Real>(
    f: &mut Fuzz,
    l: &Layout,
    p: *const sg_wavepacket_layout,
    mut k: Faults,
    c: &Calls<T>,
) {
    let mut coeffs: Vec<T> = values(f, 2 * l.m, &mut k, 0.05);
    let mut ptr_c = coeffs.as_mut_ptr();
    if f.rng.chance(0.03) {
        k.plant("`coeffs`");
        ptr_c = ptr::null_mut();
    }
    let mut snaps = vec![Snapshot::of_slice("coeffs", &coeffs)];
    let mode_or_bad = |f: &mut Fuzz, k: &mut Faults| {
        if f.rng.chance(0.08) {
            k.plant("mode");
            f.rng.bad_enum(&[0, 1])
        } else {
            f.rng.pick(&[SG_WAVEPACKET_HARD, SG_WAVEPACKET_SOFT])
        }
    };
    let bad = [-1.0, f64::NAN, f64::INFINITY];
    match f.rng.range(0, 3) {
        0 => {
            let s_keep = match f.rng.range(0, 9) {
                0 => f.rng.huge(),
                1 => 0,
                _ => f.rng.range(1, 2 * l.m),
            };
            f.announce(c.names[3], || format!("s {s_keep}"));
            let s = (c.keep)(p, ptr_c, s_keep);
            f.check(c.names[3], s, &k, &snaps);
        }
        1 => {
            let mode = mode_or_bad(f, &mut k);
            let mut kind = f
                .rng
                .pick(&[SG_WAVEPACKET_THRESHOLD_VALUE, SG_WAVEPACKET_THRESHOLD_SIGMA]);
            let mut value = f.rng.pick(&[0.0, 0.1, 0.5, 3.0]);
            match f.rng.range(0, 12) {
                0 => {
                    k.plant("kind");
                    kind = f.rng.bad_enum(&[0, 1]);
                }
                1 => {
                    k.plant("value");
                    value = f.rng.pick(&bad);
                }
                _ => {}
            }
            f.announce(c.names[4], || {
                format!("mode {mode}, kind {kind}, value {value}")
            });
            let s = (c.threshold)(p, ptr_c, mode, kind, value);
            f.check(c.names[4], s, &k, &snaps);
        }
        2 => {
            let mode = mode_or_bad(f, &mut k);
            let mut kk = f.rng.pick(&[0.0, 1.0, 2.5]);
            let mut sigma = f.rng.pick(&[0.0, 0.1, 1.0]);
            match f.rng.range(0, 12) {
                0 => {
                    k.plant("k is");
                    kk = f.rng.pick(&bad);
                }
                1 => {
                    k.plant("sigma is");
                    sigma = f.rng.pick(&bad);
                }
                _ => {}
            }
            f.announce(c.names[6], || format!("mode {mode}, k {kk}, sigma {sigma}"));
            let s = (c.threshold_noise)(p, ptr_c, mode, kk, sigma);
            f.check(c.names[6], s, &k, &snaps);
        }
        _ => {
            let mut sigma = 7.0f64;
            snaps.push(Snapshot::of("sigma", &sigma, 1));
            let out = slot(f, &mut k, &mut sigma as *mut f64, "sigma");
            f.announce(c.names[7], String::new);
            let s = (c.estimate_noise)(p, ptr_c, out);
            f.check(c.names[7], s, &k, &snaps);
            if s == SG_OK {
                assert!(sigma.is_finite() && sigma >= 0.0, "{sigma}");
            }
        }
    }
}

/// The S-term approximation: data in, coefficients out, apart or not.
fn sparse<T: Real>(
    f: &mut Fuzz,
    l: &Layout,
    p: *const sg_wavepacket_layout,
    mut k: Faults,
    c: &Calls<T>,
) {
    let mut buf: Vec<T> = values(f, l.n, &mut k, 0.05);
    buf.extend(sentinel::<T>(2 * l.m));
    let base = buf.as_mut_ptr();
    let mut data = base as *const T;
    let mut coeffs = base.wrapping_add(l.n);
    let mut s_terms = f.rng.range(0, l.m);
    // Few stages and refits: a fuzzer's budget (NULL options, the defaults, rarely).
    let mut o = sg_wavepacket_sparse_options {
        stages: f.rng.range(1, 3),
        refit_iterations: f.rng.range(1, 2),
    };
    let mut null_options = false;
    match f.rng.range(0, 19) {
        0 => {
            k.plant("`data`");
            data = ptr::null();
        }
        1 => {
            k.plant("`coeffs`");
            coeffs = ptr::null_mut();
        }
        2 => {
            k.plant("overlap");
            coeffs = base.wrapping_add(f.rng.range(0, l.n - 1));
        }
        3 => {
            k.plant("s is");
            s_terms = if f.rng.chance(0.5) {
                l.m + 1
            } else {
                f.rng.huge()
            };
        }
        4 => {
            k.plant("stages");
            o.stages = 0;
        }
        5 => {
            k.plant("refit_iterations");
            o.refit_iterations = 0;
        }
        6 => null_options = true,
        _ => {}
    }
    let (mut kept, mut residual) = (0x5151usize, 7.0f64);
    let snaps = [
        Snapshot::of("coeffs", coeffs, 2 * l.m),
        Snapshot::of("data", data, l.n),
        Snapshot::of("kept", &kept, 1),
        Snapshot::of("residual", &residual, 1),
    ];
    let kept_p = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut kept as *mut usize
    };
    let res_p = if f.rng.chance(0.3) {
        ptr::null_mut()
    } else {
        &mut residual as *mut f64
    };
    let o_p: *const sg_wavepacket_sparse_options = if null_options { ptr::null() } else { &o };
    f.announce(c.names[8], || {
        format!(
            "s {s_terms} of {}, {} stages, {} refits",
            l.m, o.stages, o.refit_iterations
        )
    });
    let s = (c.sparse)(p, data, coeffs, s_terms, o_p, kept_p, res_p);
    f.check(c.names[8], s, &k, &snaps);
    if s == SG_OK && !kept_p.is_null() {
        assert!(kept <= s_terms, "{kept} > {s_terms}");
    }
}

fn pocs<T: Real>(
    f: &mut Fuzz,
    l: &Layout,
    p: *const sg_wavepacket_layout,
    mut k: Faults,
    c: &Calls<T>,
) {
    let mut data: Vec<T> = (0..l.n).map(|_| T::of(f.rng.symmetric())).collect();
    let mut live: Vec<i32> = (0..l.traces).map(|_| f.rng.range(0, 1) as i32).collect();
    let n1 = l.n / l.traces;
    // Dead traces may hold anything; a live one must be finite.
    let t = f.rng.range(0, l.traces - 1);
    if f.rng.chance(0.1) {
        data[t * n1] = T::of(f.rng.non_finite());
        if live[t] == 1 {
            k.plant("not finite");
        }
    }
    let mut n_traces = l.traces;
    let mut live_p = live.as_ptr();
    let mut o = sg_wavepacket_pocs_options_default();
    o.iterations = f.rng.range(1, 3);
    let mut null_options = false;
    match f.rng.range(0, 19) {
        0 => {
            k.plant("n_traces");
            n_traces = if f.rng.chance(0.5) {
                l.traces + 1
            } else {
                f.rng.range(0, l.traces - 1)
            };
        }
        1 => {
            k.plant("`live`");
            live_p = ptr::null();
        }
        2 => {
            k.plant("live[");
            live[t] = f.rng.bad_enum(&[0, 1]);
            live_p = live.as_ptr();
        }
        3 => {
            k.plant("options.schedule");
            o.schedule = f.rng.bad_enum(&[0, 1]);
        }
        4 => {
            k.plant("POCS options");
            match f.rng.range(0, 3) {
                0 => o.iterations = 0,
                1 => o.first = f.rng.pick(&[0.0, 1.5, f64::NAN]),
                2 => o.last = f.rng.pick(&[0.0, -1.0, f64::INFINITY]),
                _ => o.last = o.first * 2.0,
            }
        }
        5 => {
            // Garbage, with the iterations kept few enough for a fuzzer.
            o = f.rng.garbage();
            o.iterations %= 4;
            k.maybe(&["options", "POCS"]);
        }
        6 => null_options = true,
        _ => {}
    }
    let o_p: *const sg_wavepacket_pocs_options = if null_options { ptr::null() } else { &o };
    let mut data_p = data.as_mut_ptr();
    if f.rng.chance(0.03) {
        k.plant("`data`");
        data_p = ptr::null_mut();
    }
    let snaps = [Snapshot::of_slice("data", &data)];
    f.announce(c.names[5], || format!("{n_traces} traces"));
    let s = (c.pocs)(p, data_p, live_p, n_traces, o_p);
    f.check(c.names[5], s, &k, &snaps);
}
