//! `sg_usfft_set_points_device_*` and `sg_usfft_execute_device_*`.

use super::super::Fuzz;
use super::memory::{Elem, Memory};
use super::{check, or_null, setup};
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;
use std::ptr;

/// A live plan and what the fuzzer knows of it.
struct Plan {
    p: *mut sg_usfft_plan,
    f64: bool,
    dim: usize,
    modes: usize,
    n_vectors: usize,
    /// Points set (by the host call at creation, then by successful device calls).
    m: usize,
}

#[derive(Default)]
pub struct Usfft {
    plans: Vec<Plan>,
}

impl Drop for Usfft {
    fn drop(&mut self) {
        for p in self.plans.drain(..) {
            sg_usfft_plan_destroy(p.p);
        }
    }
}

type SetPoints = extern "C" fn(*mut sg_usfft_plan, usize, u64, u64, u64) -> i32;
type Execute = extern "C" fn(*const sg_usfft_plan, u64, u64) -> i32;

impl Usfft {
    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        if self.plans.is_empty() || f.rng.chance(0.03) {
            return self.create(f);
        }
        let i = f.rng.range(0, self.plans.len() - 1);
        let plan = &mut self.plans[i];
        // A call of the other precision is a planted fault.
        let f64 = plan.f64 != f.rng.chance(0.04);
        match (f.rng.chance(0.4), f64) {
            (true, false) => set_points::<f32>(
                f,
                mem,
                plan,
                sg_usfft_set_points_device_f32,
                "sg_usfft_set_points_device_f32",
            ),
            (true, true) => set_points::<f64>(
                f,
                mem,
                plan,
                sg_usfft_set_points_device_f64,
                "sg_usfft_set_points_device_f64",
            ),
            (false, false) => execute::<f32>(
                f,
                mem,
                plan,
                sg_usfft_execute_device_f32,
                "sg_usfft_execute_device_f32",
            ),
            (false, true) => execute::<f64>(
                f,
                mem,
                plan,
                sg_usfft_execute_device_f64,
                "sg_usfft_execute_device_f64",
            ),
        }
    }

    /// A small plan of either type, dimension and precision, with points set on the host.
    fn create(&mut self, f: &mut Fuzz) {
        let kind = f.rng.pick(&[SG_USFFT_TYPE1, SG_USFFT_TYPE2]);
        let dim = f.rng.range(1, 3);
        let modes = [f.rng.range(1, 10), f.rng.range(1, 10), f.rng.range(1, 10)];
        let sign = f.rng.pick(&[1, -1]);
        let precision = f.rng.pick(&[SG_USFFT_F32, SG_USFFT_F64]);
        let tolerance = f.rng.pick(&[1e-2, 1e-3, 1e-5]);
        let n_vectors = f.rng.range(1, 2);
        let mut p = ptr::null_mut();
        f.announce("sg_usfft_plan_create", || {
            format!("{kind}, {dim}, {modes:?}, {precision}, {n_vectors}")
        });
        let s = sg_usfft_plan_create(
            f.ctx,
            kind,
            dim as i32,
            modes.as_ptr(),
            sign,
            tolerance,
            precision,
            n_vectors,
            ptr::null(),
            &mut p,
        );
        if !setup(f, "sg_usfft_plan_create", s) {
            return;
        }
        let m = f.rng.range(1, 24);
        let s = if precision == SG_USFFT_F64 {
            host_points::<f64>(f, p, m, sg_usfft_set_points_f64, "sg_usfft_set_points_f64")
        } else {
            host_points::<f32>(f, p, m, sg_usfft_set_points_f32, "sg_usfft_set_points_f32")
        };
        if !s {
            sg_usfft_plan_destroy(p);
            return;
        }
        if self.plans.len() >= 3 {
            sg_usfft_plan_destroy(self.plans.swap_remove(0).p);
        }
        self.plans.push(Plan {
            p,
            f64: precision == SG_USFFT_F64,
            dim,
            modes: modes[..dim].iter().product(),
            n_vectors,
            m,
        });
    }
}

type HostPoints<T> = extern "C" fn(*mut sg_usfft_plan, usize, *const T, *const T, *const T) -> i32;

/// Sets `m` random points (on every axis; those past the plan's dimension are ignored).
fn host_points<T: Elem>(
    f: &mut Fuzz,
    p: *mut sg_usfft_plan,
    m: usize,
    call: HostPoints<T>,
    name: &'static str,
) -> bool {
    let xyz: Vec<Vec<T>> = (0..3)
        .map(|_| (0..m).map(|_| T::sample(f)).collect())
        .collect();
    f.announce(name, || format!("m {m}"));
    let s = call(p, m, xyz[0].as_ptr(), xyz[1].as_ptr(), xyz[2].as_ptr());
    setup(f, name, s)
}

/// Device coordinates: `m` values on each of the plan's axes; the others are not read.
fn set_points<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    plan: &mut Plan,
    call: SetPoints,
    name: &'static str,
) {
    let mut k = mem.faults();
    if plan.f64 != (std::mem::size_of::<T>() == 8) {
        k.plant("precision");
    }
    let p = or_null(f, &mut k, plan.p, "plan", 0.05);
    let m = f.rng.range(0, 24);
    let mut xyz = [0u64; 3];
    for (d, at) in xyz.iter_mut().enumerate() {
        if d >= plan.dim {
            *at = f.rng.pick(&[0, 8, 0xdead_beef_0000, u64::MAX]);
            continue;
        }
        *at = mem.array::<T>(f, &mut k, ["`x`", "`y`", "`z`"][d], m).at;
        if *at == 0 && m > 0 {
            // Its message: "device coordinate array x is NULL".
            k.plant(["array x", "array y", "array z"][d]);
        }
    }
    f.announce(name, || format!("m {m} at {xyz:#x?}"));
    let s = call(p, m, xyz[0], xyz[1], xyz[2]);
    check(f, mem, name, s, &k, Vec::new());
    if s == seisgpu::ffi::status::SG_OK {
        plan.m = m;
    }
}

/// Strengths `c` (2·n_vectors·m reals) and modes `f` (2·n_vectors·modes reals).
fn execute<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    plan: &mut Plan,
    call: Execute,
    name: &'static str,
) {
    let mut k = mem.faults();
    if plan.f64 != (std::mem::size_of::<T>() == 8) {
        k.plant("precision");
    }
    let p = or_null(f, &mut k, plan.p, "plan", 0.05);
    let (nc, nf) = (2 * plan.n_vectors * plan.m, 2 * plan.n_vectors * plan.modes);
    let c = mem.array::<T>(f, &mut k, "`c`", nc).at;
    let fm = mem.array::<T>(f, &mut k, "`f`", nf).at;
    f.announce(name, || format!("m {}, c {c:#x}, f {fm:#x}", plan.m));
    let s = call(p, c, fm);
    check(f, mem, name, s, &k, Vec::new());
}
