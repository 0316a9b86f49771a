//! `sg_fxdecon_execute_{2d,3d}_device_{f32,f64}`.

use super::super::{Faults, Fuzz};
use super::memory::Memory;
use super::{check, or_null, setup};
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use std::ptr;

/// A live plan (default options): its dimension and shape (n_samples, n_inline,
/// n_crossline; a 2D plan has n_inline = 1 and its traces as crosslines).
struct Plan {
    p: *mut sg_fxdecon_plan,
    dims: usize,
    shape: [usize; 3],
}

#[derive(Default)]
pub struct Fxdecon {
    plans: Vec<Plan>,
}

impl Drop for Fxdecon {
    fn drop(&mut self) {
        for p in self.plans.drain(..) {
            sg_fxdecon_plan_destroy(p.p);
        }
    }
}

type D2 = extern "C" fn(*const sg_fxdecon_plan, u64, u64, usize) -> i32;
type D3 = extern "C" fn(*const sg_fxdecon_plan, u64, u64, usize, usize) -> i32;

/// The four calls: (dims, double, name).
const CALLS: [(usize, bool, &str); 4] = [
    (2, false, "sg_fxdecon_execute_2d_device_f32"),
    (2, true, "sg_fxdecon_execute_2d_device_f64"),
    (3, false, "sg_fxdecon_execute_3d_device_f32"),
    (3, true, "sg_fxdecon_execute_3d_device_f64"),
];

impl Fxdecon {
    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        if self.plans.is_empty() || f.rng.chance(0.03) {
            return self.create(f);
        }
        let plan = &self.plans[f.rng.range(0, self.plans.len() - 1)];
        // The call of the other dimension is a planted fault.
        let dims = if f.rng.chance(0.04) {
            5 - plan.dims
        } else {
            plan.dims
        };
        let double = f.rng.chance(0.4);
        let (_, _, name) = CALLS[2 * (dims - 2) + double as usize];
        execute(f, mem, plan, dims, double, name);
    }

    fn create(&mut self, f: &mut Fuzz) {
        let dims = f.rng.range(2, 3);
        let shape = match dims {
            2 => [f.rng.range(16, 64), 1, f.rng.range(1, 16)],
            _ => [f.rng.range(16, 48), f.rng.range(1, 5), f.rng.range(1, 5)],
        };
        let mut p = ptr::null_mut();
        let name = match dims {
            2 => "sg_fxdecon_plan_create_2d",
            _ => "sg_fxdecon_plan_create_3d",
        };
        f.announce(name, || format!("{shape:?}"));
        let s = match dims {
            2 => sg_fxdecon_plan_create_2d(f.ctx, ptr::null(), shape[0], shape[2], &mut p),
            _ => {
                sg_fxdecon_plan_create_3d(f.ctx, ptr::null(), shape[0], shape[1], shape[2], &mut p)
            }
        };
        if setup(f, name, s) {
            if self.plans.len() >= 2 {
                sg_fxdecon_plan_destroy(self.plans.swap_remove(0).p);
            }
            self.plans.push(Plan { p, dims, shape });
        }
    }
}

/// Strides (the 2D call uses the first) and the elements they span (`n` where the
/// library refuses the strides before it looks at the arrays).
fn strides(f: &mut Fuzz, plan: &Plan, k: &mut Faults) -> (usize, usize, usize) {
    let [n, nil, nxl] = plan.shape;
    let pad = f.rng.range(0, 2);
    let (mut s1, mut s2) = match (plan.dims, f.rng.chance(0.5)) {
        (2, _) => (n + pad, 0),
        (_, true) => (n + pad, (n + pad) * nil),
        (_, false) => ((n + pad) * nxl, n + pad),
    };
    match f.rng.range(0, 14) {
        // A stride matters only between two traces.
        0 if plan.dims == 2 && nxl > 1 => {
            k.plant("stride");
            s1 = f.rng.range(0, n - 1);
            return (s1, s2, n);
        }
        1 if plan.dims == 3 && nil > 1 && nxl > 1 => {
            // Traces that overlap one another.
            k.plant("stride");
            s1 = n;
            s2 = f.rng.range(1, n - 1) + if f.rng.chance(0.5) { 0 } else { n * (nil - 1) };
            return (s1, s2, n);
        }
        2 => {
            // Refused, or (where they multiply no trace index) harmless.
            k.maybe(&["stride", "overflow"]);
            s1 = f.rng.huge();
            s2 = f.rng.huge();
        }
        _ => {}
    }
    let span = match plan.dims {
        2 => (nxl - 1).checked_mul(s1),
        _ => (nil - 1)
            .checked_mul(s1)
            .and_then(|a| (nxl - 1).checked_mul(s2).and_then(|b| a.checked_add(b))),
    }
    .and_then(|s| s.checked_add(n))
    .filter(|s| s.checked_mul(8).is_some());
    (s1, s2, span.unwrap_or(n))
}

fn execute(
    f: &mut Fuzz,
    mem: &mut Memory,
    plan: &Plan,
    dims: usize,
    double: bool,
    name: &'static str,
) {
    let mut k = mem.faults();
    if dims != plan.dims {
        k.plant("D; call sg_fxdecon_execute_");
    }
    let p = or_null(f, &mut k, plan.p, "plan", 0.05);
    let (s1, s2, span) = strides(f, plan, &mut k);
    let (input, output) = if double {
        // Never looked at: the GPU filter runs float data only.
        if mem.cuda() {
            k.plant("float data only");
        }
        (f.rng.next(), f.rng.next())
    } else {
        let input = mem.array::<f32>(f, &mut k, "`input`", span).at;
        match f.rng.chance(0.25) {
            true => (input, input),
            false => (input, mem.array::<f32>(f, &mut k, "`output`", span).at),
        }
    };
    f.announce(name, || {
        format!(
            "{:?}, {input:#x}, {output:#x}, strides {s1}, {s2}",
            plan.shape
        )
    });
    let s = match (dims, double) {
        (2, false) => (sg_fxdecon_execute_2d_device_f32 as D2)(p, input, output, s1),
        (2, true) => (sg_fxdecon_execute_2d_device_f64 as D2)(p, input, output, s1),
        (_, false) => (sg_fxdecon_execute_3d_device_f32 as D3)(p, input, output, s1, s2),
        (_, true) => (sg_fxdecon_execute_3d_device_f64 as D3)(p, input, output, s1, s2),
    };
    check(f, mem, name, s, &k, Vec::new());
}
