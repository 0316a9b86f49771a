//! `sg_emlog_plan_create_device`, `sg_emlog_search_device` and the result's
//! `sg_emlog_result_{marginal,pair,models}_device`.

use super::super::{handle_slot, Fuzz, Snapshot};
use super::memory::Memory;
use super::{check, or_null, setup};
use seisgpu::ffi::emlog::device::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::status::*;
use std::ptr;

mod grid;
mod results;

use grid::Grid;

/// A live plan and its searched parameters.
struct Plan {
    p: *mut sg_emlog_plan,
    p_count: usize,
}

/// A live result: bins per axis, the pairs asked for, the models listed, the parameters.
pub struct Found {
    r: *mut sg_emlog_result,
    counts: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    n_models: usize,
    p_count: usize,
}

#[derive(Default)]
pub struct Emlog {
    plans: Vec<Plan>,
    results: Vec<Found>,
}

impl Drop for Emlog {
    fn drop(&mut self) {
        for r in self.results.drain(..) {
            sg_emlog_result_destroy(r.r);
        }
        for p in self.plans.drain(..) {
            sg_emlog_plan_destroy(p.p);
        }
    }
}

impl Emlog {
    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        if self.plans.is_empty() || f.rng.chance(0.02) {
            return self.host_plan(f);
        }
        let i = f.rng.range(0, self.plans.len() - 1);
        if self.results.is_empty() || f.rng.chance(0.03) {
            return self.host_search(f, i);
        }
        let found = f.rng.range(0, self.results.len() - 1);
        match f.rng.range(0, 4) {
            0 => self.create_device(f, mem),
            1 => self.search_device(f, mem, i),
            2 => results::marginal(f, mem, &self.results[found]),
            3 => results::pair(f, mem, &self.results[found]),
            _ => results::models(f, mem, &self.results[found]),
        }
    }

    fn keep_plan(&mut self, p: *mut sg_emlog_plan, p_count: usize) {
        if self.plans.len() >= 2 {
            sg_emlog_plan_destroy(self.plans.swap_remove(0).p);
        }
        self.plans.push(Plan { p, p_count });
    }

    fn keep_result(&mut self, r: *mut sg_emlog_result, grid: &Grid) {
        if self.results.len() >= 2 {
            sg_emlog_result_destroy(self.results.swap_remove(0).r);
        }
        self.results.push(Found {
            r,
            counts: grid.counts.clone(),
            pairs: grid.pair_list(),
            n_models: listed(r, grid.counts.len()),
            p_count: grid.counts.len(),
        });
    }

    fn host_plan(&mut self, f: &mut Fuzz) {
        let pr = Problem::new(f);
        let mut out = ptr::null_mut();
        f.announce("sg_emlog_plan_create", || format!("{} × {}", pr.n, pr.m));
        let s = sg_emlog_plan_create(
            f.ctx,
            pr.n,
            pr.m,
            pr.a.as_ptr(),
            pr.rs,
            pr.cs,
            pr.sigma0.as_ptr(),
            pr.f0.as_ptr(),
            pr.f_exp.as_ptr(),
            pr.delta.as_ptr(),
            pr.searched.len(),
            pr.searched.as_ptr(),
            &mut out,
        );
        if setup(f, "sg_emlog_plan_create", s) {
            self.keep_plan(out, pr.searched.len());
        }
    }

    fn host_search(&mut self, f: &mut Fuzz, i: usize) {
        let grid = Grid::new(f, self.plans[i].p_count);
        let mut out = ptr::null_mut();
        f.announce("sg_emlog_search", || format!("{grid:?}"));
        let s = grid.search(self.plans[i].p, &mut out, sg_emlog_search);
        if setup(f, "sg_emlog_search", s) {
            self.keep_result(out, &grid);
        }
    }

    fn create_device(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        let mut k = mem.faults();
        let ctx = f.ctx_or_null(&mut k);
        let pr = Problem::new(f);
        let (mut n, m, mut rs, mut cs) = (pr.n, pr.m, pr.rs, pr.cs);
        let mut searched = pr.searched.clone();
        let mut n_searched = searched.len();
        match f.rng.range(0, 16) {
            0 => {
                k.plant("sensitivity matrix");
                n = 0;
            }
            1 => {
                k.plant("strides");
                (rs, cs) = (f.rng.huge(), f.rng.huge());
            }
            2 => {
                // Strides that make elements coincide.
                k.plant("strides");
                (rs, cs) = (0, 0);
            }
            3 => {
                k.plant("searched");
                searched[0] = f.rng.pick(&[-1, m as i32, i32::MAX, i32::MIN]);
            }
            4 if n_searched > 1 => {
                k.plant("searched twice");
                searched[1] = searched[0];
            }
            5 => {
                k.plant("searched columns");
                n_searched = 0;
            }
            _ => {}
        }
        // The arrays as the (valid) problem spans them; refused sizes are checked first.
        let a = mem.array_of(f, &mut k, "`a`", &pr.a).at;
        let sigma0 = mem.array_of(f, &mut k, "`sigma0`", &pr.sigma0).at;
        let f0 = mem.array_of(f, &mut k, "`f0`", &pr.f0).at;
        let f_exp = mem.array_of(f, &mut k, "`f_exp`", &pr.f_exp).at;
        let delta = mem.array_of(f, &mut k, "`delta`", &pr.delta).at;
        let sp = match (n_searched, f.rng.chance(0.03)) {
            (0, _) => ptr::null(),
            (_, true) => {
                k.plant("searched");
                ptr::null()
            }
            _ => searched.as_ptr(),
        };
        let mut out: *mut sg_emlog_plan = ptr::null_mut();
        let out_p = handle_slot(f, &mut k, &mut out, 0.03);
        let snap = Snapshot::of("out", &out, 1);
        let name = "sg_emlog_plan_create_device";
        f.announce(name, || {
            format!("{n} × {m}, strides ({rs}, {cs}), searched {searched:?}, a {a:#x}")
        });
        let s = sg_emlog_plan_create_device(
            ctx, n, m, a, rs, cs, sigma0, f0, f_exp, delta, n_searched, sp, out_p,
        );
        check(f, mem, name, s, &k, vec![snap]);
        if s == SG_OK {
            self.keep_plan(out, n_searched);
        }
    }

    fn search_device(&mut self, f: &mut Fuzz, mem: &mut Memory, i: usize) {
        let mut k = mem.faults();
        let plan = or_null(f, &mut k, self.plans[i].p, "plan", 0.04);
        let mut grid = Grid::new(f, self.plans[i].p_count);
        grid.break_one(f, &mut k);
        let mut out: *mut sg_emlog_result = ptr::null_mut();
        let out_p = handle_slot(f, &mut k, &mut out, 0.03);
        let snap = Snapshot::of("out", &out, 1);
        let name = "sg_emlog_search_device";
        f.announce(name, || format!("{grid:?}"));
        let s = grid.search(plan, out_p, sg_emlog_search_device);
        check(f, mem, name, s, &k, vec![snap]);
        if s == SG_OK {
            self.keep_result(out, &grid);
        }
    }
}

/// The models a result lists.
fn listed(r: *mut sg_emlog_result, p: usize) -> usize {
    let (mut total, mut count, mut best) = (0u64, 0u64, 0u64);
    let (mut model, mut vmin, mut vmax) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    let (mut misfit, mut n_models, mut more) = (0.0, 0usize, 0i32);
    let s = sg_emlog_result_summary(
        r,
        &mut total,
        &mut count,
        &mut best,
        model.as_mut_ptr(),
        &mut misfit,
        vmin.as_mut_ptr(),
        vmax.as_mut_ptr(),
        &mut n_models,
        &mut more,
    );
    assert_eq!(s, SG_OK, "a result's summary");
    n_models
}

/// A small well-posed problem (as the host family makes them): A row- or column-major
/// with padding, positive σ₀, data and errors, 1 to 3 distinct searched columns.
struct Problem {
    n: usize,
    m: usize,
    rs: usize,
    cs: usize,
    a: Vec<f64>,
    sigma0: Vec<f64>,
    f0: Vec<f64>,
    f_exp: Vec<f64>,
    delta: Vec<f64>,
    searched: Vec<i32>,
}

impl Problem {
    fn new(f: &mut Fuzz) -> Problem {
        let (n, m) = (f.rng.range(3, 10), f.rng.range(2, 5));
        let pad = f.rng.range(0, 2);
        let (rs, cs) = if f.rng.chance(0.5) {
            (m + pad, 1)
        } else {
            (1, n + pad)
        };
        let span = (n - 1) * rs + (m - 1) * cs + 1;
        let a: Vec<f64> = (0..span).map(|_| f.rng.symmetric()).collect();
        let sigma0: Vec<f64> = (0..m).map(|_| 0.1 + f.rng.symmetric().abs()).collect();
        let f0: Vec<f64> = (0..n).map(|_| 0.5 + f.rng.symmetric().abs()).collect();
        let f_exp = f0
            .iter()
            .map(|v| v * (1.0 + 0.05 * f.rng.symmetric()))
            .collect();
        let delta = (0..n)
            .map(|_| 0.02 + 0.1 * f.rng.symmetric().abs())
            .collect();
        let p = f.rng.range(1, m.min(3));
        let mut searched: Vec<i32> = (0..m as i32).collect();
        for i in 0..p {
            let j = f.rng.range(i, m - 1);
            searched.swap(i, j);
        }
        searched.truncate(p);
        Problem {
            n,
            m,
            rs,
            cs,
            a,
            sigma0,
            f0,
            f_exp,
            delta,
            searched,
        }
    }
}
