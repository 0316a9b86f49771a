//! `sg_usfft_*`: plans, points and transforms, in both precisions.

use super::{data, handle_slot, Faults, Fuzz, Real, Snapshot, Target};
use seisgpu::ffi::context::{sg_context_backend, SG_BACKEND_CPU};
use seisgpu::ffi::status::*;
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
    /// Points set so far (None before the first `set_points`).
    m: Option<usize>,
}

struct Usfft {
    plans: Vec<Plan>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Usfft { plans: Vec::new() })
}

impl Drop for Usfft {
    fn drop(&mut self) {
        for p in self.plans.drain(..) {
            sg_usfft_plan_destroy(p.p);
        }
    }
}

impl Target for Usfft {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.plans.is_empty() || r < 20 {
            create(f, &mut self.plans);
        } else if r < 24 {
            let i = f.rng.range(0, self.plans.len() - 1);
            f.announce("sg_usfft_plan_destroy", String::new);
            sg_usfft_plan_destroy(self.plans.swap_remove(i).p);
            sg_usfft_plan_destroy(ptr::null_mut());
        } else {
            let i = f.rng.range(0, self.plans.len() - 1);
            let plan = &mut self.plans[i];
            // A call of the other precision is a planted fault.
            let wrong = f.rng.chance(0.03);
            if (46..50).contains(&r) {
                let (call, name): (SetPointsDevice, _) = if plan.f64 != wrong {
                    (
                        sg_usfft_set_points_device_f64,
                        "sg_usfft_set_points_device_f64",
                    )
                } else {
                    (
                        sg_usfft_set_points_device_f32,
                        "sg_usfft_set_points_device_f32",
                    )
                };
                return set_points_device(f, plan, wrong, call, name);
            }
            match (r < 50, plan.f64 != wrong) {
                (true, false) => set_points::<f32>(
                    f,
                    plan,
                    wrong,
                    sg_usfft_set_points_f32,
                    "sg_usfft_set_points_f32",
                ),
                (true, true) => set_points::<f64>(
                    f,
                    plan,
                    wrong,
                    sg_usfft_set_points_f64,
                    "sg_usfft_set_points_f64",
                ),
                (false, false) => {
                    execute::<f32>(f, plan, wrong, sg_usfft_execute_f32, "sg_usfft_execute_f32")
                }
                (false, true) => {
                    execute::<f64>(f, plan, wrong, sg_usfft_execute_f64, "sg_usfft_execute_f64")
                }
            }
        }
    }
}

fn create(f: &mut Fuzz, plans: &mut Vec<Plan>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let mut kind = f.rng.pick(&[SG_USFFT_TYPE1, SG_USFFT_TYPE2]);
    let mut dim = f.rng.range(1, 3) as i32;
    let mut modes = [f.rng.range(1, 12), f.rng.range(1, 12), f.rng.range(1, 12)];
    let mut sign = f.rng.pick(&[1, -1]);
    let mut precision = f.rng.pick(&[SG_USFFT_F32, SG_USFFT_F64]);
    let mut tolerance = f.rng.pick(&[1e-2, 1e-3, 1e-5, 0.5]);
    let mut n_vectors = f.rng.range(1, 3);
    let mut o = sg_usfft_options_default();
    o.kernel = f.rng.range(0, 2) as i32;
    o.mode_order = f.rng.range(0, 1) as i32;
    let mut modes_null = false;
    // NULL options (the defaults) leave no room for a fault in them.
    let null_options = f.rng.chance(0.3);
    match f.rng.range(0, if null_options { 9 } else { 29 }) {
        0 => {
            k.plant("type");
            kind = f.rng.bad_enum(&[1, 2, 3]);
        }
        1 => {
            k.plant("dim");
            dim = f.rng.bad_enum(&[1, 2, 3]);
        }
        2 => {
            k.plant("n_modes");
            modes_null = true;
        }
        3 => {
            k.plant("n_modes");
            modes[f.rng.range(0, dim as usize - 1)] = 0;
        }
        4 => {
            k.plant("n_modes");
            modes[f.rng.range(0, dim as usize - 1)] = (1 << 30) + f.rng.range(1, 1 << 20);
        }
        5 => {
            k.plant("sign");
            sign = f.rng.bad_enum(&[1, -1]);
        }
        6 => {
            k.plant("tolerance");
            tolerance = f
                .rng
                .pick(&[0.0, 1.0, -1e-3, 1e-300, 2.0, f64::NAN, f64::INFINITY]);
        }
        7 => {
            k.plant("precision");
            precision = f.rng.bad_enum(&[1, 2]);
        }
        8 => {
            k.plant("n_vectors");
            n_vectors = 0;
        }
        9 => {
            // Vectors × fine grid wraps size_t: refused before anything is allocated.
            k.plant("n_vectors");
            k.plant("overflow");
            n_vectors = f.rng.huge().max(1 << 62);
        }
        10 => {
            k.plant("kernel");
            o.kernel = f.rng.bad_enum(&[0, 1, 2]);
        }
        11 => {
            k.plant("mode_order");
            o.mode_order = f.rng.bad_enum(&[0, 1]);
        }
        12 => {
            k.plant("upsampling");
            o.upsampling = f.rng.pick(&[1.25, 0.0, -2.0, f64::NAN, 3.0]);
        }
        13 => {
            o = f.rng.garbage();
            k.maybe(&["options", "kernel", "mode_order", "upsampling"]);
        }
        _ => {}
    }
    let options: *const sg_usfft_options = if null_options { ptr::null() } else { &o };
    let mut out: *mut sg_usfft_plan = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    let modes_p = if modes_null {
        ptr::null()
    } else {
        modes.as_ptr()
    };
    f.announce("sg_usfft_plan_create", || {
        format!("{kind}, {dim}, {modes:?}, {sign}, {tolerance}, {precision}, {n_vectors}")
    });
    let s = sg_usfft_plan_create(
        ctx, kind, dim, modes_p, sign, tolerance, precision, n_vectors, options, out_p,
    );
    f.check("sg_usfft_plan_create", s, &k, &[snap]);
    if s == SG_OK {
        if plans.len() < 4 {
            let dim = dim as usize;
            plans.push(Plan {
                p: out,
                f64: precision == SG_USFFT_F64,
                dim,
                modes: modes[..dim].iter().product(),
                n_vectors,
                m: None,
            });
        } else {
            sg_usfft_plan_destroy(out);
        }
    }
}

type SetPoints<T> = extern "C" fn(*mut sg_usfft_plan, usize, *const T, *const T, *const T) -> i32;

fn set_points<T: Real>(
    f: &mut Fuzz,
    plan: &mut Plan,
    wrong: bool,
    call: SetPoints<T>,
    name: &'static str,
) {
    let mut k = Faults::default();
    if wrong {
        k.plant("precision");
    }
    let p = if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null_mut()
    } else {
        plan.p
    };
    let m = f.rng.range(0, 40);
    // Coordinates anywhere, folded back by the library; sometimes far outside [−π, π).
    let scale = f.rng.pick(&[std::f64::consts::PI, 10.0, 1e4]);
    let mut coords: Vec<Vec<T>> = (0..3)
        .map(|_| (0..m).map(|_| T::of(scale * f.rng.symmetric())).collect())
        .collect();
    let mut ptrs: Vec<*const T> = coords.iter().map(|c| c.as_ptr()).collect();
    if m > 0 {
        match f.rng.range(0, 9) {
            0 => {
                let axis = f.rng.range(0, plan.dim - 1);
                k.plant(["`x`", "`y`", "`z`"][axis]);
                ptrs[axis] = ptr::null();
            }
            1 => {
                let axis = f.rng.range(0, plan.dim - 1);
                k.plant("not finite");
                let j = f.rng.range(0, m - 1);
                coords[axis][j] = T::of(f.rng.non_finite());
                ptrs[axis] = coords[axis].as_ptr();
            }
            _ => {}
        }
    }
    // Axes past the plan's dimension are ignored: NULL is allowed there.
    for p in ptrs.iter_mut().skip(plan.dim) {
        if f.rng.chance(0.5) {
            *p = ptr::null();
        }
    }
    f.announce(name, || format!("m {m}"));
    let s = call(p, m, ptrs[0], ptrs[1], ptrs[2]);
    f.check(name, s, &k, &[]);
    if s == SG_OK {
        plan.m = Some(m);
    }
}

type SetPointsDevice = extern "C" fn(*mut sg_usfft_plan, usize, u64, u64, u64) -> i32;

/// Device coordinates. On a CPU context any addresses (the call is refused before one is
/// read: there is no GPU); on a CUDA context only calls refused for their plan or precision,
/// since no address can be checked there.
fn set_points_device(
    f: &mut Fuzz,
    plan: &Plan,
    wrong: bool,
    call: SetPointsDevice,
    name: &'static str,
) {
    let mut k = Faults::default();
    let mut backend = -1;
    sg_context_backend(f.ctx, &mut backend);
    if backend == SG_BACKEND_CPU {
        k.plant("CUDA context");
    }
    if wrong {
        k.plant("precision");
    }
    let p = if f.rng.chance(0.1) {
        k.plant("plan");
        ptr::null_mut()
    } else {
        plan.p
    };
    if !k.any() {
        return;
    }
    let m = f.rng.range(0, 40);
    let mut address = || f.rng.pick(&[0u64, 8, 0xdead_beef_0000, u64::MAX]);
    let xyz = [address(), address(), address()];
    f.announce(name, || format!("m {m} at {xyz:x?}"));
    let s = call(p, m, xyz[0], xyz[1], xyz[2]);
    f.check(name, s, &k, &[]);
}

type Execute<T> = extern "C" fn(*const sg_usfft_plan, *mut T, *mut T) -> i32;

fn execute<T: Real>(
    f: &mut Fuzz,
    plan: &mut Plan,
    wrong: bool,
    call: Execute<T>,
    name: &'static str,
) {
    let mut k = Faults::default();
    if wrong {
        k.plant("precision");
    }
    let p = if f.rng.chance(0.03) {
        k.plant("plan");
        ptr::null()
    } else {
        plan.p as *const _
    };
    let m = plan.m.unwrap_or_else(|| {
        k.plant("set_points");
        0
    });
    let (nc, nf) = (2 * plan.n_vectors * m, 2 * plan.n_vectors * plan.modes);
    // Strengths and modes in one buffer (two spare values), so that they can overlap.
    let mut buf: Vec<T> = data(f, nc + nf + 2, None);
    let base = buf.as_mut_ptr();
    let (mut c, mut fm) = (base, base.wrapping_add(nc));
    match f.rng.range(0, 9) {
        0 if nc > 0 => {
            k.plant("`c`");
            c = ptr::null_mut();
        }
        1 => {
            k.plant("`f`");
            fm = ptr::null_mut();
        }
        2 if nc > 0 => {
            k.plant("overlap");
            fm = base.wrapping_add(nc - 2);
        }
        _ => {}
    }
    let snap = Snapshot::of_slice("c and f", &buf);
    f.announce(name, || format!("m {m}, nv {}", plan.n_vectors));
    let s = call(p, c, fm);
    f.check(name, s, &k, &[snap]);
}
