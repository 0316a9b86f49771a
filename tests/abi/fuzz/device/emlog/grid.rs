//! A search's host arguments (the grid's axes, the pairs, the options), valid or with one
//! planted fault.

use super::super::super::{Faults, Fuzz};
use seisgpu::ffi::emlog::*;
use std::ptr;

pub struct Grid {
    kinds: Vec<i32>,
    pub counts: Vec<usize>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    list: Vec<f64>,
    /// Pairs of parameters, flat.
    pairs: Vec<i32>,
    options: sg_emlog_options,
    null_options: bool,
    /// An axis array passed as NULL: 0 kinds, 1 counts, 2 minima, 3 maxima, 4 list values.
    null_array: Option<usize>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, w: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            w,
            "kinds {:?}, counts {:?}, pairs {:?}, criterion {}, mode {}, norm {}",
            self.kinds,
            self.counts,
            self.pairs,
            self.options.criterion,
            self.options.mode,
            self.options.norm
        )
    }
}

type Search = extern "C" fn(
    *const sg_emlog_plan,
    *const i32,
    *const usize,
    *const f64,
    *const f64,
    *const f64,
    usize,
    usize,
    *const i32,
    *const sg_emlog_options,
    *mut *mut sg_emlog_result,
) -> i32;

impl Grid {
    /// A valid grid of 1 to 5 values per axis over `p` parameters (as the host family's).
    pub fn new(f: &mut Fuzz, p: usize) -> Grid {
        let mut g = Grid {
            kinds: vec![0; p],
            counts: vec![0; p],
            lo: vec![0.0; p],
            hi: vec![0.0; p],
            list: Vec::new(),
            pairs: Vec::new(),
            options: sg_emlog_options_default(),
            null_options: false,
            null_array: None,
        };
        for j in 0..p {
            g.kinds[j] = f.rng.range(0, 2) as i32;
            g.counts[j] = f.rng.range(1, 5);
            g.lo[j] = 0.05 + 0.2 * f.rng.symmetric().abs();
            g.hi[j] = g.lo[j] + 0.1 + f.rng.symmetric().abs();
            if g.kinds[j] == SG_EMLOG_AXIS_LIST {
                g.list
                    .extend((0..g.counts[j]).map(|i| g.lo[j] + 0.1 * i as f64));
            }
        }
        if p >= 2 && f.rng.chance(0.5) {
            g.pairs.extend([0, 1]);
        }
        let o = &mut g.options;
        o.criterion = f.rng.range(0, 2) as i32;
        o.level = f.rng.pick(&[0.5, 1.0, 4.0]);
        o.mode = f.rng.range(0, 1) as i32;
        o.norm = if o.mode == SG_EMLOG_DIRECT && o.criterion != SG_EMLOG_DELTA_CHI_SQUARE {
            f.rng.range(0, 2) as i32
        } else {
            SG_EMLOG_NORM_L2
        };
        o.max_models = f.rng.range(0, 5);
        g.null_options = f.rng.chance(0.1);
        g
    }

    /// Sometimes one planted fault.
    pub fn break_one(&mut self, f: &mut Fuzz, k: &mut Faults) {
        let p = self.counts.len();
        let j = f.rng.range(0, p - 1);
        match f.rng.range(0, 14) {
            0 => {
                k.plant("axis_kind");
                self.kinds[j] = f.rng.bad_enum(&[0, 1, 2]);
            }
            1 => {
                k.plant("axis");
                self.counts[j] = 0;
            }
            2 if p >= 2 => {
                k.plant("pair");
                self.pairs = vec![0, f.rng.pick(&[0, p as i32, -1])];
            }
            3 if !self.null_options => {
                k.plant("options.mode");
                self.options.mode = f.rng.bad_enum(&[0, 1]);
            }
            4 if !self.null_options => {
                k.plant("criterion");
                self.options.criterion = f.rng.bad_enum(&[0, 1, 2]);
            }
            5 => {
                let a = f.rng.range(0, 3);
                k.plant(["`axis_kind`", "`axis_count`", "`axis_min`", "`axis_max`"][a]);
                self.null_array = Some(a);
            }
            6 if !self.list.is_empty() => {
                k.plant("`list_values`");
                self.null_array = Some(4);
            }
            _ => {}
        }
    }

    /// The pairs asked for.
    pub fn pair_list(&self) -> Vec<(usize, usize)> {
        self.pairs
            .chunks(2)
            .map(|c| (c[0] as usize, c[1] as usize))
            .collect()
    }

    /// `call` (the host or the device search) with these arguments.
    pub fn search(
        &self,
        plan: *const sg_emlog_plan,
        out: *mut *mut sg_emlog_result,
        call: Search,
    ) -> i32 {
        let at = |i: usize, v: *const f64| {
            if self.null_array == Some(i) {
                ptr::null()
            } else {
                v
            }
        };
        let kinds = match self.null_array {
            Some(0) => ptr::null(),
            _ => self.kinds.as_ptr(),
        };
        let counts = match self.null_array {
            Some(1) => ptr::null(),
            _ => self.counts.as_ptr(),
        };
        let list = match self.list.is_empty() {
            true => ptr::null(),
            false => at(4, self.list.as_ptr()),
        };
        let pairs = match self.pairs.is_empty() {
            true => ptr::null(),
            false => self.pairs.as_ptr(),
        };
        let options: *const sg_emlog_options = match self.null_options {
            true => ptr::null(),
            false => &self.options,
        };
        call(
            plan,
            kinds,
            counts,
            at(2, self.lo.as_ptr()),
            at(3, self.hi.as_ptr()),
            list,
            self.list.len(),
            self.pairs.len() / 2,
            pairs,
            options,
            out,
        )
    }
}
