//! `sg_dwt_*`: plans, transforms and denoising.

use super::{data, handle_slot, sentinel, Faults, Fuzz, Real, Snapshot, Target};
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::status::*;
use std::ptr;

/// Every (family, members) the ABI accepts.
const WAVELETS: &[(i32, &[i32])] = &[
    (SG_WAVELET_DAUBECHIES, &[4, 6, 8, 10, 12, 14, 16, 18, 20]),
    (SG_WAVELET_DAUBECHIES_CENTERED, &[4, 8, 20]),
    (SG_WAVELET_HAAR, &[2]),
    (SG_WAVELET_HAAR_CENTERED, &[2]),
    (
        SG_WAVELET_BSPLINE,
        &[103, 105, 202, 204, 206, 208, 301, 303, 305, 307, 309],
    ),
    (SG_WAVELET_BSPLINE_CENTERED, &[103, 208, 309]),
];

struct Dwt {
    plans: Vec<(*mut sg_dwt_plan, usize)>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Dwt { plans: Vec::new() })
}

impl Drop for Dwt {
    fn drop(&mut self) {
        for (p, _) in self.plans.drain(..) {
            sg_dwt_plan_destroy(p);
        }
    }
}

impl Target for Dwt {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.plans.is_empty() || r < 20 {
            create(f, &mut self.plans);
        } else if r < 25 {
            let i = f.rng.range(0, self.plans.len() - 1);
            let (p, _) = self.plans.swap_remove(i);
            f.announce("sg_dwt_plan_destroy", String::new);
            sg_dwt_plan_destroy(p);
            sg_dwt_plan_destroy(ptr::null_mut());
        } else {
            let (p, n) = self.plans[f.rng.range(0, self.plans.len() - 1)];
            match f.rng.range(0, 3) {
                0 => execute::<f32>(f, p, n, sg_dwt_execute_f32, "sg_dwt_execute_f32"),
                1 => execute::<f64>(f, p, n, sg_dwt_execute_f64, "sg_dwt_execute_f64"),
                2 => denoise::<f32>(f, p, n, sg_dwt_denoise_f32, "sg_dwt_denoise_f32"),
                _ => denoise::<f64>(f, p, n, sg_dwt_denoise_f64, "sg_dwt_denoise_f64"),
            }
        }
    }
}

fn create(f: &mut Fuzz, plans: &mut Vec<(*mut sg_dwt_plan, usize)>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let (mut family, members) = f.rng.pick(WAVELETS);
    let mut member = f.rng.pick(members);
    let mut n = 1usize << f.rng.range(1, 9);
    match f.rng.range(0, 19) {
        0 => {
            k.plant("family");
            family = f.rng.bad_enum(&[1, 2, 3, 4, 5, 6]);
        }
        1 => {
            // Not a member of any family (the centred lists above are samples).
            k.plant("member");
            let all: Vec<i32> = WAVELETS
                .iter()
                .flat_map(|(_, m)| m.iter().copied())
                .collect();
            member = f.rng.bad_enum(&all);
        }
        2 => {
            k.plant("n_samples");
            n = f.rng.pick(&[0, 1, 3, 6, 1000, usize::MAX, (1 << 20) + 1]);
        }
        // Long traces: a limit, refused or planned, never an abort.
        3 => {
            n = 1 << f.rng.range(40, 63);
            k.maybe(&["n_samples"]);
        }
        _ => {}
    }
    let mut out: *mut sg_dwt_plan = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_dwt_plan_create", || format!("{family}, {member}, {n}"));
    let s = sg_dwt_plan_create(ctx, family, member, n, out_p);
    f.check("sg_dwt_plan_create", s, &k, &[snap]);
    if s == SG_OK {
        if n <= 512 && plans.len() < 4 {
            plans.push((out, n));
        } else {
            sg_dwt_plan_destroy(out);
        }
    }
}

/// A random batch layout for `n`-sample traces, sometimes broken: (n_traces, stride,
/// the elements it spans, or `n` for a broken one: small buffers for a refused call).
pub fn layout(f: &mut Fuzz, n: usize, k: &mut Faults) -> (usize, usize, usize) {
    let mut n_traces = f.rng.range(1, 4);
    let mut stride = n + f.rng.range(0, 3);
    match f.rng.range(0, 15) {
        0 => {
            k.plant("n_traces");
            n_traces = 0;
        }
        1 => {
            k.plant("trace_stride");
            stride = f.rng.range(0, n - 1);
        }
        2 => {
            // (n_traces − 1)·stride or its byte count wraps size_t.
            k.plant("n_traces");
            k.plant("trace_stride");
            stride = f.rng.pick(&[n, 1 << 40, usize::MAX / 4]).max(n);
            n_traces = usize::MAX / stride + f.rng.range(2, 5);
        }
        _ => return (n_traces, stride, (n_traces - 1) * stride + n),
    }
    (n_traces, stride, n)
}

/// Input and output arrays: separate, the same (in place), overlapping, or NULL.
struct Arrays<T> {
    buf: Vec<T>,
    out: Vec<T>,
    input: *const T,
    output: *mut T,
}

fn arrays<T: Real>(f: &mut Fuzz, span: usize, k: &mut Faults) -> Arrays<T> {
    let mut buf = data::<T>(f, span + 8, Some(k));
    let mut out = sentinel::<T>(span);
    let mut input = buf.as_ptr();
    let mut output = out.as_mut_ptr();
    match f.rng.range(0, 9) {
        0 => output = buf.as_mut_ptr(),
        1 => {
            k.plant("overlap");
            let shift = f.rng.range(1, (span - 1).min(8));
            output = if f.rng.chance(0.5) {
                buf.as_mut_ptr().wrapping_add(shift)
            } else {
                input = buf.as_ptr().wrapping_add(shift);
                buf.as_mut_ptr()
            };
        }
        2 => {
            k.plant("`input`");
            input = ptr::null();
        }
        3 => {
            k.plant("`output`");
            output = ptr::null_mut();
        }
        _ => {}
    }
    Arrays {
        buf,
        out,
        input,
        output,
    }
}

type Exec<T> = extern "C" fn(*const sg_dwt_plan, i32, u32, *const T, *mut T, usize, usize) -> i32;

fn execute<T: Real>(
    f: &mut Fuzz,
    p: *mut sg_dwt_plan,
    n: usize,
    call: Exec<T>,
    name: &'static str,
) {
    let mut k = Faults::default();
    let plan = if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null()
    } else {
        p as *const _
    };
    let max_levels = n.trailing_zeros();
    let mut direction = f.rng.pick(&[SG_DWT_FORWARD, SG_DWT_INVERSE]);
    let mut levels = f.rng.range(0, max_levels as usize) as u32;
    if f.rng.chance(0.05) {
        k.plant("direction");
        direction = f.rng.bad_enum(&[1, -1]);
    }
    if f.rng.chance(0.05) {
        k.plant("n_levels");
        levels = f.rng.pick(&[max_levels + 1, 64, u32::MAX]);
    }
    let (n_traces, stride, span) = layout(f, n, &mut k);
    let a = arrays::<T>(f, span, &mut k);
    let snaps = [
        Snapshot::of("output", a.output, span),
        Snapshot::of_slice("buf", &a.buf),
    ];
    f.announce(name, || {
        format!("{direction}, {levels}, {n_traces}, {stride}")
    });
    let s = call(plan, direction, levels, a.input, a.output, n_traces, stride);
    f.check(name, s, &k, &snaps);
    drop(a);
}

type Denoise<T> = extern "C" fn(
    *const sg_dwt_plan,
    *const sg_dwt_denoise_options,
    *const T,
    *mut T,
    usize,
    usize,
    *mut f64,
) -> i32;

fn denoise<T: Real>(
    f: &mut Fuzz,
    p: *mut sg_dwt_plan,
    n: usize,
    call: Denoise<T>,
    name: &'static str,
) {
    let mut k = Faults::default();
    let plan = if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null()
    } else {
        p as *const _
    };
    let max_levels = n.trailing_zeros();
    let mut o = sg_dwt_denoise_options_default();
    o.n_levels = f.rng.range(0, max_levels as usize) as u32;
    o.threshold_rule = f.rng.range(0, 1) as i32;
    o.threshold_mode = f.rng.range(0, 1) as i32;
    o.noise_estimate = f.rng.range(0, 1) as i32;
    o.fixed_threshold = f.rng.symmetric().abs();
    o.level_mask = f.rng.next();
    // NULL options (the defaults) leave no room for a fault in them.
    let opts_null = f.rng.chance(0.2);
    match f.rng.range(0, if opts_null { 0 } else { 19 }) {
        0 if !opts_null => {
            k.plant("threshold_rule");
            o.threshold_rule = f.rng.bad_enum(&[0, 1]);
        }
        1 => {
            k.plant("threshold_mode");
            o.threshold_mode = f.rng.bad_enum(&[0, 1]);
        }
        2 => {
            k.plant("noise_estimate");
            o.noise_estimate = f.rng.bad_enum(&[0, 1]);
        }
        3 => {
            k.plant("n_levels");
            o.n_levels = f.rng.pick(&[max_levels + 1, 64, u32::MAX]);
        }
        4 => {
            o.threshold_rule = SG_THRESHOLD_FIXED;
            k.plant("fixed_threshold");
            o.fixed_threshold = f.rng.pick(&[-1.0, f64::NAN, f64::INFINITY, -0.5]);
        }
        5 => {
            o = f.rng.garbage();
            k.maybe(&["options", "fixed_threshold", "n_levels", "levels"]);
        }
        _ => {}
    }
    let opts: *const sg_dwt_denoise_options = if opts_null { ptr::null() } else { &o };
    let levels = if opts.is_null() || o.n_levels == 0 {
        max_levels as usize
    } else {
        (o.n_levels as usize).min(max_levels as usize)
    };
    let (n_traces, stride, span) = layout(f, n, &mut k);
    let a = arrays::<T>(f, span, &mut k);
    let mut thresholds = sentinel::<f64>(n_traces.min(4) * levels);
    let tp = if f.rng.chance(0.5) {
        ptr::null_mut()
    } else {
        thresholds.as_mut_ptr()
    };
    let snaps = [
        Snapshot::of("output", a.output, span),
        Snapshot::of_slice("buf", &a.buf),
        Snapshot::of_slice("thresholds", &thresholds),
    ];
    f.announce(name, || format!("{n_traces}, {stride}"));
    let s = call(plan, opts, a.input, a.output, n_traces, stride, tp);
    f.check(name, s, &k, &snaps);
    drop(a);
}
