//! `sg_fxdecon_*`: 2D and 3D plans and their execution, in both precisions.

use super::{data, handle_slot, sentinel, Faults, Fuzz, Real, Snapshot, Target};
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use std::ptr;

/// A live plan: its shape (n_samples, n_inline, n_crossline; 2D has n_inline = 1).
struct Plan {
    p: *mut sg_fxdecon_plan,
    dims: usize,
    shape: [usize; 3],
}

struct Fxdecon {
    plans: Vec<Plan>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Fxdecon { plans: Vec::new() })
}

impl Drop for Fxdecon {
    fn drop(&mut self) {
        for p in self.plans.drain(..) {
            sg_fxdecon_plan_destroy(p.p);
        }
    }
}

impl Target for Fxdecon {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.plans.is_empty() || r < 25 {
            create(f, &mut self.plans);
        } else if r < 30 {
            let i = f.rng.range(0, self.plans.len() - 1);
            f.announce("sg_fxdecon_plan_destroy", String::new);
            sg_fxdecon_plan_destroy(self.plans.swap_remove(i).p);
            sg_fxdecon_plan_destroy(ptr::null_mut());
        } else {
            let plan = &self.plans[f.rng.range(0, self.plans.len() - 1)];
            let f64 = f.rng.chance(0.5);
            // The call of the other dimension is a planted fault.
            match (plan.dims == 2) != f.rng.chance(0.03) {
                true if f64 => execute::<f64>(
                    f,
                    plan,
                    2,
                    Calls::D2(sg_fxdecon_execute_2d_f64),
                    "sg_fxdecon_execute_2d_f64",
                ),
                true => execute::<f32>(
                    f,
                    plan,
                    2,
                    Calls::D2(sg_fxdecon_execute_2d_f32),
                    "sg_fxdecon_execute_2d_f32",
                ),
                false if f64 => execute::<f64>(
                    f,
                    plan,
                    3,
                    Calls::D3(sg_fxdecon_execute_3d_f64),
                    "sg_fxdecon_execute_3d_f64",
                ),
                false => execute::<f32>(
                    f,
                    plan,
                    3,
                    Calls::D3(sg_fxdecon_execute_3d_f32),
                    "sg_fxdecon_execute_3d_f32",
                ),
            }
        }
    }
}

/// Options that suit the fuzzer's small sections, sometimes with one field broken.
fn options(f: &mut Fuzz, dims: usize, k: &mut Faults) -> sg_fxdecon_options {
    let mut o = if dims == 2 && f.rng.chance(0.2) {
        sg_fxdecon_options_seismic_unix()
    } else {
        sg_fxdecon_options_default()
    };
    o.window_traces = f.rng.range(10, 20) as i32;
    o.window_inline = f.rng.range(6, 12) as i32;
    o.window_crossline = f.rng.range(6, 12) as i32;
    o.operator_inline = f.rng.pick(&[3, 5]);
    o.operator_crossline = f.rng.pick(&[1, 3, 5]);
    o.out_of_band = f.rng.range(0, 1) as i32;
    if dims == 2 && o.su_compatible == 0 {
        o.prediction = f.rng.range(0, 1) as i32;
    }
    if f.rng.chance(0.3) {
        o.time_window_s = 0.2;
        o.taper_s = 0.04;
    }
    match f.rng.range(0, 24) {
        0 => {
            k.plant("sample_interval_s");
            o.sample_interval_s = f.rng.pick(&[0.0, -0.004, f64::NAN, f64::INFINITY]);
        }
        1 => {
            k.plant("fmin_hz");
            o.fmin_hz = f.rng.pick(&[-1.0, f64::NAN, 1e6]);
        }
        2 => {
            k.plant("fmax_hz");
            o.fmax_hz = f.rng.pick(&[-1.0, f64::NAN, f64::INFINITY]);
        }
        3 => {
            k.plant("damping");
            o.damping = f.rng.pick(&[-0.1, f64::NAN, f64::INFINITY]);
        }
        4 => {
            k.plant("time_window_s");
            o.time_window_s = f.rng.pick(&[-1.0, f64::NAN]);
        }
        5 => {
            k.plant("taper_s");
            o.taper_s = f.rng.pick(&[-1.0, f64::INFINITY]);
        }
        6 => {
            let name = f.rng.pick(&[
                "window_traces",
                "overlap_traces",
                "operator_traces",
                "window_inline",
                "overlap_crossline",
                "operator_inline",
                "fft_length",
            ]);
            k.plant(name);
            let v = -1 - f.rng.range(0, 1000) as i32;
            match name {
                "window_traces" => o.window_traces = v,
                "overlap_traces" => o.overlap_traces = v,
                "operator_traces" => o.operator_traces = v,
                "window_inline" => o.window_inline = v,
                "overlap_crossline" => o.overlap_crossline = v,
                "operator_inline" => o.operator_inline = v,
                _ => o.fft_length = v,
            }
        }
        7 => {
            k.plant("prediction");
            o.prediction = f.rng.bad_enum(&[0, 1]);
        }
        8 => {
            k.plant("out_of_band");
            o.out_of_band = f.rng.bad_enum(&[0, 1]);
        }
        9 => {
            k.plant("su_compatible");
            o.su_compatible = f.rng.bad_enum(&[0, 1]);
        }
        10 => {
            // The spatial window no larger than its overlap, or no room for the operator.
            k.maybe(&["window", "operator", "ntrf"]);
            o.overlap_traces = o.window_traces;
            o.overlap_inline = o.window_inline + 1;
            o.operator_traces = f.rng.range(0, 40) as i32;
        }
        11 => {
            k.plant("fft_length");
            o.fft_length = f.rng.pick(&[3, 15, 2]);
        }
        12 => {
            o = f.rng.garbage();
            k.maybe(&[
                "options",
                "window",
                "operator",
                "fft",
                "time window",
                "slab",
                "exceeds",
                "strides",
            ]);
        }
        _ => {}
    }
    o
}

fn create(f: &mut Fuzz, plans: &mut Vec<Plan>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let dims = f.rng.range(2, 3);
    // NULL options (the defaults) leave no room for a fault in them.
    let opts_null = f.rng.chance(0.15);
    let o = if opts_null {
        sg_fxdecon_options_default()
    } else {
        options(f, dims, &mut k)
    };
    let opts: *const sg_fxdecon_options = if opts_null { ptr::null() } else { &o };
    let mut shape = [f.rng.range(16, 96), 1, f.rng.range(1, 24)];
    if dims == 3 {
        shape[1] = f.rng.range(1, 6);
        shape[2] = f.rng.range(1, 6);
    }
    match f.rng.range(0, 19) {
        0 => {
            k.plant("n_samples");
            shape[0] = 0;
        }
        1 => {
            k.plant("traces");
            shape[f.rng.range(if dims == 3 { 1 } else { 2 }, 2)] = 0;
        }
        // Shapes no machine holds: refused or planned, never an abort.
        2 => {
            k.maybe(&["n_samples", "traces", "exceeds", "overflow"]);
            shape[f.rng.range(if dims == 3 { 0 } else { 2 }, 2)] = f.rng.huge();
        }
        _ => {}
    }
    let mut out: *mut sg_fxdecon_plan = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    let (name, s) = if dims == 2 {
        f.announce("sg_fxdecon_plan_create_2d", || format!("{shape:?}"));
        (
            "sg_fxdecon_plan_create_2d",
            sg_fxdecon_plan_create_2d(ctx, opts, shape[0], shape[2], out_p),
        )
    } else {
        f.announce("sg_fxdecon_plan_create_3d", || format!("{shape:?}"));
        (
            "sg_fxdecon_plan_create_3d",
            sg_fxdecon_plan_create_3d(ctx, opts, shape[0], shape[1], shape[2], out_p),
        )
    };
    f.check(name, s, &k, &[snap]);
    if s == SG_OK {
        // Garbage options can make a valid plan whose work is too long for a fuzzer.
        let sane = opts.is_null() || o.fft_length <= 512;
        if plans.len() < 4 && sane && shape.iter().all(|&n| n <= 96) {
            plans.push(Plan {
                p: out,
                dims,
                shape,
            });
        } else {
            sg_fxdecon_plan_destroy(out);
        }
    }
}

enum Calls<T> {
    D2(extern "C" fn(*const sg_fxdecon_plan, *const T, *mut T, usize) -> i32),
    D3(extern "C" fn(*const sg_fxdecon_plan, *const T, *mut T, usize, usize) -> i32),
}

fn execute<T: Real>(f: &mut Fuzz, plan: &Plan, dims: usize, call: Calls<T>, name: &'static str) {
    let mut k = Faults::default();
    if dims != plan.dims {
        k.plant("D; call sg_fxdecon_execute_");
    }
    let p = if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null()
    } else {
        plan.p as *const _
    };
    let [n, nil, nxl] = plan.shape;
    // Dense or padded layouts, inline fastest or crossline fastest.
    let pad = f.rng.range(0, 2);
    let (mut s1, mut s2) = if f.rng.chance(0.5) {
        (n + pad, (n + pad) * nil)
    } else {
        ((n + pad) * nxl, n + pad)
    };
    if plan.dims == 2 {
        s1 = n + pad;
    }
    let mut broken = true;
    match f.rng.range(0, 14) {
        // A stride matters only between two traces.
        0 if (plan.dims == 2 && nxl > 1) || nil > 1 => {
            k.plant("stride");
            s1 = f.rng.range(0, n - 1);
        }
        1 if plan.dims == 3 && nil > 1 && nxl > 1 => {
            // Traces that overlap one another.
            k.plant("stride");
            s1 = n;
            s2 = f.rng.range(1, n - 1) + if f.rng.chance(0.5) { 0 } else { n * (nil - 1) };
        }
        2 => {
            k.maybe(&["stride", "overflow"]);
            s1 = f.rng.huge();
            s2 = f.rng.huge();
        }
        _ => broken = dims != plan.dims,
    }
    let span = if broken {
        n
    } else if plan.dims == 2 {
        (nxl - 1) * s1 + n
    } else {
        (nil - 1) * s1 + (nxl - 1) * s2 + n
    };
    let mut buf: Vec<T> = data(f, span + 8, Some(&mut k));
    let mut out: Vec<T> = sentinel(span);
    let mut input = buf.as_ptr();
    let mut output = out.as_mut_ptr();
    match f.rng.range(0, 9) {
        0 => output = buf.as_mut_ptr(),
        1 => {
            k.plant("overlap");
            output = buf
                .as_mut_ptr()
                .wrapping_add(f.rng.range(1, (span - 1).min(8)));
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
    let snaps = [
        Snapshot::of("output", output, span),
        Snapshot::of_slice("input", &buf),
    ];
    f.announce(name, || format!("{:?}, strides {s1}, {s2}", plan.shape));
    let s = match call {
        Calls::D2(c) => c(p, input, output, s1),
        Calls::D3(c) => c(p, input, output, s1, s2),
    };
    f.check(name, s, &k, &snaps);
}
