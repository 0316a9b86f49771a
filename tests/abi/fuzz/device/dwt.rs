//! `sg_dwt_execute_device_*` and `sg_dwt_denoise_device_*`.

use super::super::dwt::layout;
use super::super::{sentinel, Faults, Fuzz, Snapshot};
use super::memory::{Elem, Memory};
use super::{check, or_null, setup};
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use std::ptr;

/// Wavelets of every family (the host family tries them all).
const WAVELETS: &[(i32, i32)] = &[
    (SG_WAVELET_HAAR, 2),
    (SG_WAVELET_DAUBECHIES, 4),
    (SG_WAVELET_DAUBECHIES, 12),
    (SG_WAVELET_DAUBECHIES_CENTERED, 8),
    (SG_WAVELET_BSPLINE, 103),
    (SG_WAVELET_BSPLINE_CENTERED, 208),
];

/// Live plans and their trace lengths.
#[derive(Default)]
pub struct Dwt {
    plans: Vec<(*mut sg_dwt_plan, usize)>,
}

impl Drop for Dwt {
    fn drop(&mut self) {
        for (p, _) in self.plans.drain(..) {
            sg_dwt_plan_destroy(p);
        }
    }
}

impl Dwt {
    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        if self.plans.is_empty() || f.rng.chance(0.03) {
            return self.create(f);
        }
        let plan = self.plans[f.rng.range(0, self.plans.len() - 1)];
        match f.rng.range(0, 3) {
            0 => execute::<f32>(
                f,
                mem,
                plan,
                sg_dwt_execute_device_f32,
                "sg_dwt_execute_device_f32",
            ),
            1 => execute::<f64>(
                f,
                mem,
                plan,
                sg_dwt_execute_device_f64,
                "sg_dwt_execute_device_f64",
            ),
            2 => denoise::<f32>(
                f,
                mem,
                plan,
                sg_dwt_denoise_device_f32,
                "sg_dwt_denoise_device_f32",
            ),
            _ => denoise::<f64>(
                f,
                mem,
                plan,
                sg_dwt_denoise_device_f64,
                "sg_dwt_denoise_device_f64",
            ),
        }
    }

    fn create(&mut self, f: &mut Fuzz) {
        let (family, member) = f.rng.pick(WAVELETS);
        // At most 256 samples: the GPU's one-block path, which also runs in place.
        let n = 1usize << f.rng.range(1, 8);
        let mut p = ptr::null_mut();
        f.announce("sg_dwt_plan_create", || format!("{family}, {member}, {n}"));
        let s = sg_dwt_plan_create(f.ctx, family, member, n, &mut p);
        if setup(f, "sg_dwt_plan_create", s) {
            if self.plans.len() >= 2 {
                sg_dwt_plan_destroy(self.plans.swap_remove(0).0);
            }
            self.plans.push((p, n));
        }
    }
}

/// The batch's input and output: two arrays of `span` elements, or one (in place).
fn io<T: Elem>(f: &mut Fuzz, mem: &mut Memory, k: &mut Faults, span: usize) -> (u64, u64) {
    let input = mem.array::<T>(f, k, "`input`", span).at;
    let output = if f.rng.chance(0.25) {
        input
    } else {
        mem.array::<T>(f, k, "`output`", span).at
    };
    (input, output)
}

type Exec = extern "C" fn(*const sg_dwt_plan, i32, u32, u64, u64, usize, usize) -> i32;

fn execute<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    (p, n): (*mut sg_dwt_plan, usize),
    call: Exec,
    name: &'static str,
) {
    let mut k = mem.faults();
    let plan = or_null(f, &mut k, p, "plan", 0.05);
    let max_levels = n.trailing_zeros();
    let mut direction = f.rng.pick(&[SG_DWT_FORWARD, SG_DWT_INVERSE]);
    let mut levels = f.rng.range(0, max_levels as usize) as u32;
    if f.rng.chance(0.04) {
        k.plant("direction");
        direction = f.rng.bad_enum(&[1, -1]);
    }
    if f.rng.chance(0.04) {
        k.plant("n_levels");
        levels = f.rng.pick(&[max_levels + 1, 64, u32::MAX]);
    }
    let (n_traces, stride, span) = layout(f, n, &mut k);
    let (input, output) = io::<T>(f, mem, &mut k, span);
    f.announce(name, || {
        format!("{direction}, {levels}, {input:#x}, {output:#x}, {n_traces}, {stride}")
    });
    let s = call(plan, direction, levels, input, output, n_traces, stride);
    check(f, mem, name, s, &k, Vec::new());
}

type Denoise = extern "C" fn(
    *const sg_dwt_plan,
    *const sg_dwt_denoise_options,
    u64,
    u64,
    usize,
    usize,
    *mut f64,
) -> i32;

fn denoise<T: Elem>(
    f: &mut Fuzz,
    mem: &mut Memory,
    (p, n): (*mut sg_dwt_plan, usize),
    call: Denoise,
    name: &'static str,
) {
    let mut k = mem.faults();
    let plan = or_null(f, &mut k, p, "plan", 0.05);
    let max_levels = n.trailing_zeros();
    let mut o = sg_dwt_denoise_options_default();
    o.n_levels = f.rng.range(0, max_levels as usize) as u32;
    o.threshold_rule = f.rng.range(0, 1) as i32;
    o.threshold_mode = f.rng.range(0, 1) as i32;
    o.noise_estimate = f.rng.range(0, 1) as i32;
    o.fixed_threshold = f.rng.symmetric().abs();
    o.level_mask = f.rng.next();
    let null_options = f.rng.chance(0.2);
    match f.rng.range(0, if null_options { 0 } else { 14 }) {
        0 if !null_options => {
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
            o.fixed_threshold = f.rng.pick(&[-1.0, f64::NAN, f64::INFINITY]);
        }
        _ => {}
    }
    let options: *const sg_dwt_denoise_options = if null_options { ptr::null() } else { &o };
    let levels = match null_options || o.n_levels == 0 {
        true => max_levels as usize,
        false => (o.n_levels as usize).min(max_levels as usize),
    };
    let (n_traces, stride, span) = layout(f, n, &mut k);
    let (input, output) = io::<T>(f, mem, &mut k, span);
    // Host memory for n_traces × levels thresholds (a broken layout is refused first).
    let mut thresholds = sentinel::<f64>(n_traces.min(4) * levels);
    let tp = if f.rng.chance(0.5) {
        ptr::null_mut()
    } else {
        thresholds.as_mut_ptr()
    };
    let snaps = vec![
        Snapshot::of_slice("thresholds", &thresholds),
        Snapshot::of("options", &o, 1),
    ];
    f.announce(name, || {
        format!(
            "{input:#x}, {output:#x}, {n_traces}, {stride}, thresholds {}",
            !tp.is_null()
        )
    });
    let s = call(plan, options, input, output, n_traces, stride, tp);
    check(f, mem, name, s, &k, snaps);
}
