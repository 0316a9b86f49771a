//! `sg_emlog_*`: sensitivity-matrix plans (row- or column-major, with padding), the
//! analytic region, grid searches in both modes and norms, and the queries of their results.

use super::{handle_slot, sentinel, Faults, Fuzz, Snapshot, Target};
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::status::*;
use std::ptr;

struct Plan {
    p: *mut sg_emlog_plan,
    /// Searched parameters.
    p_count: usize,
}

/// A live result: its parameter count, bins per axis and requested pairs.
struct Found {
    r: *mut sg_emlog_result,
    counts: Vec<usize>,
    pairs: Vec<(usize, usize)>,
}

struct Emlog {
    plans: Vec<Plan>,
    results: Vec<Found>,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Emlog {
        plans: Vec::new(),
        results: Vec::new(),
    })
}

impl Drop for Emlog {
    fn drop(&mut self) {
        for p in self.plans.drain(..) {
            sg_emlog_plan_destroy(p.p);
        }
        for r in self.results.drain(..) {
            sg_emlog_result_destroy(r.r);
        }
    }
}

impl Target for Emlog {
    fn step(&mut self, f: &mut Fuzz) {
        let r = f.rng.range(0, 99);
        if self.plans.is_empty() || r < 20 {
            create(f, &mut self.plans);
        } else if r < 24 {
            let i = f.rng.range(0, self.plans.len() - 1);
            f.announce("sg_emlog_plan_destroy", String::new);
            sg_emlog_plan_destroy(self.plans.swap_remove(i).p);
            sg_emlog_plan_destroy(ptr::null_mut());
        } else if r < 36 {
            let plan = &self.plans[f.rng.range(0, self.plans.len() - 1)];
            analytic(f, plan);
        } else if self.results.is_empty() || r < 60 {
            let plan = &self.plans[f.rng.range(0, self.plans.len() - 1)];
            search(f, plan, &mut self.results);
        } else if r < 64 {
            let i = f.rng.range(0, self.results.len() - 1);
            f.announce("sg_emlog_result_destroy", String::new);
            sg_emlog_result_destroy(self.results.swap_remove(i).r);
            sg_emlog_result_destroy(ptr::null_mut());
        } else {
            let found = &self.results[f.rng.range(0, self.results.len() - 1)];
            query(f, found, r);
        }
    }
}

/// A caller array, or (a planted fault named `name`) NULL.
fn arg<T>(f: &mut Fuzz, k: &mut Faults, v: &[T], name: &'static str) -> *const T {
    if f.rng.chance(0.02) {
        k.plant(name);
        ptr::null()
    } else {
        v.as_ptr()
    }
}

fn create(f: &mut Fuzz, plans: &mut Vec<Plan>) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let (mut n, m) = (f.rng.range(3, 10), f.rng.range(2, 5));
    // Row-major or column-major, with up to two values of padding.
    let pad = f.rng.range(0, 2);
    let (mut rs, mut cs) = if f.rng.chance(0.5) {
        (m + pad, 1)
    } else {
        (1, n + pad)
    };
    let span = (n - 1) * rs + (m - 1) * cs + 1;
    let mut a: Vec<f64> = (0..span).map(|_| f.rng.symmetric()).collect();
    let sigma0: Vec<f64> = (0..m).map(|_| 0.1 + f.rng.symmetric().abs()).collect();
    let f0: Vec<f64> = (0..n).map(|_| 0.5 + f.rng.symmetric().abs()).collect();
    let mut f_exp: Vec<f64> = f0
        .iter()
        .map(|v| v * (1.0 + 0.05 * f.rng.symmetric()))
        .collect();
    let mut delta: Vec<f64> = (0..n)
        .map(|_| 0.02 + 0.1 * f.rng.symmetric().abs())
        .collect();
    let p = f.rng.range(1, m.min(3));
    let mut searched: Vec<i32> = (0..m as i32).collect();
    for i in 0..p {
        let j = f.rng.range(i, m - 1);
        searched.swap(i, j);
    }
    searched.truncate(p);
    let mut n_searched = p;
    match f.rng.range(0, 24) {
        0 => {
            k.plant("A is");
            n = 0;
        }
        1 => {
            k.plant("A is");
            rs = f.rng.huge();
            cs = f.rng.huge();
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
        4 if p > 1 => {
            k.plant("searched twice");
            searched[1] = searched[0];
        }
        5 => {
            k.plant("searched columns");
            n_searched = 0;
        }
        6 => {
            k.plant("delta[");
            delta[f.rng.range(0, n - 1)] = f.rng.pick(&[0.0, -0.1]);
        }
        7 => {
            k.plant("f_exp[");
            f_exp[f.rng.range(0, n - 1)] = 0.0;
        }
        8 => {
            k.plant("expected a finite value");
            match f.rng.range(0, 1) {
                0 => a[0] = f.rng.non_finite(),
                _ => f_exp[f.rng.range(0, n - 1)] = f.rng.non_finite(),
            }
        }
        9 => {
            // The searched column all zeros.
            k.plant("all zeros");
            let c = searched[0] as usize;
            for i in 0..n {
                a[i * rs + c * cs] = 0.0;
            }
        }
        _ => {}
    }
    let (ap, s0, f0p, fe, de) = (
        arg(f, &mut k, &a, "`a`"),
        arg(f, &mut k, &sigma0, "`sigma0`"),
        arg(f, &mut k, &f0, "`f0`"),
        arg(f, &mut k, &f_exp, "`f_exp`"),
        arg(f, &mut k, &delta, "`delta`"),
    );
    let sp = if n_searched == 0 {
        ptr::null()
    } else {
        arg(f, &mut k, &searched, "`searched`")
    };
    let mut out: *mut sg_emlog_plan = ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_emlog_plan_create", || {
        format!("{n} × {m}, strides ({rs}, {cs}), searched {searched:?}")
    });
    let s = sg_emlog_plan_create(
        ctx, n, m, ap, rs, cs, s0, f0p, fe, de, n_searched, sp, out_p,
    );
    f.check("sg_emlog_plan_create", s, &k, &[snap]);
    if s == SG_OK {
        if plans.len() < 3 {
            plans.push(Plan { p: out, p_count: p });
        } else {
            sg_emlog_plan_destroy(out);
        }
    }
}

fn plan_or_null(f: &mut Fuzz, k: &mut Faults, p: &Plan) -> *const sg_emlog_plan {
    if f.rng.chance(0.03) {
        k.plant("`plan`");
        ptr::null()
    } else {
        p.p
    }
}

fn out<T>(f: &mut Fuzz, k: &mut Faults, v: &mut [T], name: &'static str) -> *mut T {
    if f.rng.chance(0.03) {
        k.plant(name);
        ptr::null_mut()
    } else {
        v.as_mut_ptr()
    }
}

fn analytic(f: &mut Fuzz, plan: &Plan) {
    let mut k = Faults::default();
    let pp = plan_or_null(f, &mut k, plan);
    let p = plan.p_count;
    let mut kind = f.rng.range(0, 2) as i32;
    let mut level = f.rng.pick(&[0.5, 1.0, 2.0]);
    match f.rng.range(0, 9) {
        0 => {
            k.plant("criterion");
            kind = f.rng.bad_enum(&[0, 1, 2]);
        }
        1 if kind != 0 => {
            k.maybe(&["level", "Δ"]);
            level = f.rng.pick(&[-1.0, f64::NAN]);
        }
        _ => {}
    }
    let mut v: Vec<Vec<f64>> = [p, 1, p, p, p, p * p]
        .iter()
        .map(|&n| sentinel(n))
        .collect();
    let mut empty = [0x5151i32];
    let snaps: Vec<Snapshot> = v
        .iter()
        .map(|x| Snapshot::of_slice("analytic output", x))
        .chain([Snapshot::of_slice("empty", &empty)])
        .collect();
    let [a, b, c, d, e, g] = &mut v[..] else {
        unreachable!()
    };
    let ptrs = (
        out(f, &mut k, a, "sigma_star"),
        out(f, &mut k, b, "f_min"),
        out(f, &mut k, &mut empty, "empty"),
        out(f, &mut k, c, "lower"),
        out(f, &mut k, d, "upper"),
        out(f, &mut k, e, "singular_values"),
        out(f, &mut k, g, "right_vectors"),
    );
    f.announce("sg_emlog_analytic", || {
        format!("criterion {kind}, level {level}")
    });
    let s = sg_emlog_analytic(
        pp, kind, level, ptrs.0, ptrs.1, ptrs.2, ptrs.3, ptrs.4, ptrs.5, ptrs.6,
    );
    f.check("sg_emlog_analytic", s, &k, &snaps);
}

fn search(f: &mut Fuzz, plan: &Plan, results: &mut Vec<Found>) {
    let mut k = Faults::default();
    let pp = plan_or_null(f, &mut k, plan);
    let p = plan.p_count;
    let mut kinds = vec![0i32; p];
    let mut counts = vec![0usize; p];
    let mut lo = vec![0.0f64; p];
    let mut hi = vec![0.0f64; p];
    let mut list = Vec::new();
    for j in 0..p {
        kinds[j] = f.rng.range(0, 2) as i32;
        counts[j] = f.rng.range(1, 6);
        lo[j] = 0.05 + 0.2 * f.rng.symmetric().abs();
        hi[j] = lo[j] + 0.1 + f.rng.symmetric().abs();
        if kinds[j] == SG_EMLOG_AXIS_LIST {
            list.extend((0..counts[j]).map(|i| lo[j] + 0.1 * i as f64));
        }
    }
    let mut pairs: Vec<i32> = Vec::new();
    if p >= 2 && f.rng.chance(0.5) {
        pairs.extend([0, 1]);
    }
    let mut o = sg_emlog_options_default();
    o.criterion = f.rng.range(0, 2) as i32;
    o.level = f.rng.pick(&[0.5, 1.0, 4.0]);
    o.mode = f.rng.range(0, 1) as i32;
    o.norm = if o.mode == SG_EMLOG_DIRECT && o.criterion != SG_EMLOG_DELTA_CHI_SQUARE {
        f.rng.range(0, 2) as i32
    } else {
        SG_EMLOG_NORM_L2
    };
    o.max_models = f.rng.range(0, 5);
    let mut null_options = false;
    let j = f.rng.range(0, p - 1);
    match f.rng.range(0, 24) {
        0 => {
            k.plant("axis_kind");
            kinds[j] = f.rng.bad_enum(&[0, 1, 2]);
        }
        1 => {
            k.plant("axis");
            counts[j] = 0;
        }
        2 if kinds[j] != SG_EMLOG_AXIS_LIST && counts[j] > 1 => {
            k.plant("axis");
            (lo[j], hi[j]) = (hi[j], lo[j] - 1.0);
        }
        3 if kinds[j] == SG_EMLOG_AXIS_LOG => {
            k.plant("logarithmic axis");
            lo[j] = -lo[j];
        }
        4 if !list.is_empty() => {
            // Fewer list values than the list axes take.
            k.plant("list values");
            list.pop();
        }
        5 if p >= 2 => {
            k.plant("pair");
            pairs = vec![0, f.rng.pick(&[0, p as i32, -1])];
        }
        6 => {
            k.plant("options.mode");
            o.mode = f.rng.bad_enum(&[0, 1]);
        }
        7 => {
            k.plant("options.norm");
            o.norm = f.rng.bad_enum(&[0, 1, 2]);
        }
        8 => {
            k.plant("criterion");
            o.criterion = f.rng.bad_enum(&[0, 1, 2]);
        }
        9 => {
            // The fast mode is least squares only.
            k.plant("fast mode");
            k.maybe(&["L2"]);
            o.mode = SG_EMLOG_FAST;
            o.norm = f.rng.pick(&[SG_EMLOG_NORM_L1, SG_EMLOG_NORM_MAX]);
        }
        10 => {
            o = f.rng.garbage();
            o.max_models %= 8;
            k.maybe(&["options", "criterion", "level", "Δ", "mode", "norm", "L2"]);
        }
        11 => null_options = true,
        _ => {}
    }
    let o_p: *const sg_emlog_options = if null_options { ptr::null() } else { &o };
    let n_pairs = pairs.len() / 2;
    let (kp, cp) = (
        arg(f, &mut k, &kinds, "`axis_kind`"),
        arg(f, &mut k, &counts, "`axis_count`"),
    );
    let (lp, hp) = (
        arg(f, &mut k, &lo, "`axis_min`"),
        arg(f, &mut k, &hi, "`axis_max`"),
    );
    let list_p = if list.is_empty() {
        ptr::null()
    } else {
        arg(f, &mut k, &list, "`list_values`")
    };
    let pairs_p = if pairs.is_empty() {
        ptr::null()
    } else {
        pairs.as_ptr()
    };
    let mut out: *mut sg_emlog_result = ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.03);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_emlog_search", || {
        format!("kinds {kinds:?}, counts {counts:?}, pairs {pairs:?}")
    });
    let s = sg_emlog_search(
        pp,
        kp,
        cp,
        lp,
        hp,
        list_p,
        list.len(),
        n_pairs,
        pairs_p,
        o_p,
        out_p,
    );
    f.check("sg_emlog_search", s, &k, &[snap]);
    if s == SG_OK {
        if results.len() < 3 {
            let pairs = pairs
                .chunks(2)
                .map(|c| (c[0] as usize, c[1] as usize))
                .collect();
            results.push(Found {
                r: out,
                counts,
                pairs,
            });
        } else {
            sg_emlog_result_destroy(out);
        }
    }
}

fn query(f: &mut Fuzz, found: &Found, r: usize) {
    let mut k = Faults::default();
    let rp = if f.rng.chance(0.03) {
        k.plant("`result`");
        ptr::null()
    } else {
        found.r as *const _
    };
    let p = found.counts.len();
    match r % 4 {
        0 => {
            let (mut total, mut count, mut best) = ([7u64], [7u64], [7u64]);
            let (mut model, mut misfit) = (sentinel::<f64>(p), sentinel::<f64>(1));
            let (mut vmin, mut vmax) = (sentinel::<f64>(p), sentinel::<f64>(p));
            let (mut n_models, mut more) = ([7usize], [7i32]);
            let snaps = [
                Snapshot::of_slice("total", &total),
                Snapshot::of_slice("best_model", &model),
                Snapshot::of_slice("value_min", &vmin),
                Snapshot::of_slice("n_models", &n_models),
                Snapshot::of_slice("more_models", &more),
            ];
            let ptrs = (
                out(f, &mut k, &mut total, "total"),
                out(f, &mut k, &mut count, "count"),
                out(f, &mut k, &mut best, "best_index"),
                out(f, &mut k, &mut model, "best_model"),
                out(f, &mut k, &mut misfit, "best_misfit"),
                out(f, &mut k, &mut vmin, "value_min"),
                out(f, &mut k, &mut vmax, "value_max"),
                out(f, &mut k, &mut n_models, "n_models"),
                out(f, &mut k, &mut more, "more_models"),
            );
            f.announce("sg_emlog_result_summary", String::new);
            let s = sg_emlog_result_summary(
                rp, ptrs.0, ptrs.1, ptrs.2, ptrs.3, ptrs.4, ptrs.5, ptrs.6, ptrs.7, ptrs.8,
            );
            f.check("sg_emlog_result_summary", s, &k, &snaps);
            if s == SG_OK {
                let all: u64 = found.counts.iter().map(|&c| c as u64).product();
                assert!(total[0] == all && count[0] <= all);
            }
        }
        1 => {
            let mut j = f.rng.range(0, p - 1);
            if f.rng.chance(0.1) {
                k.plant("parameter");
                j = p + f.rng.range(0, 3);
            }
            let bins = found.counts.get(j).copied().unwrap_or(1);
            let mut len = bins + f.rng.range(0, 2);
            if f.rng.chance(0.1) {
                k.plant("len");
                len = f.rng.range(0, bins - 1);
            }
            let mut buf = sentinel::<u64>(len.max(1));
            let snaps = [Snapshot::of_slice("counts", &buf)];
            let bp = out(f, &mut k, &mut buf, "counts");
            f.announce("sg_emlog_result_marginal", || {
                format!("parameter {j}, len {len}")
            });
            let s = sg_emlog_result_marginal(rp, j, bp, len);
            f.check("sg_emlog_result_marginal", s, &k, &snaps);
        }
        2 => {
            let mut q = 0;
            let bins = match found.pairs.first() {
                Some(&(a, b)) => found.counts[a] * found.counts[b],
                None => {
                    k.plant("pair");
                    1
                }
            };
            if f.rng.chance(0.1) {
                k.plant("pair");
                q = found.pairs.len() + f.rng.range(0, 2);
            }
            let mut len = bins;
            if f.rng.chance(0.1) {
                k.plant("len");
                len = f.rng.range(0, bins - 1);
            }
            let mut buf = sentinel::<u64>(len.max(1));
            let snaps = [Snapshot::of_slice("counts", &buf)];
            let bp = out(f, &mut k, &mut buf, "counts");
            f.announce("sg_emlog_result_pair", || format!("pair {q}, len {len}"));
            let s = sg_emlog_result_pair(rp, q, bp, len);
            f.check("sg_emlog_result_pair", s, &k, &snaps);
        }
        _ => {
            // Room for up to 8 models (a search lists at most 7): sometimes too little, and
            // NULL arrays, which only matter when models were listed.
            let len = f.rng.range(0, 8);
            let mut idx = sentinel::<u64>(8);
            let mut vals = sentinel::<f64>(8 * p);
            let snaps = [
                Snapshot::of_slice("indices", &idx),
                Snapshot::of_slice("values", &vals),
            ];
            let null = f.rng.chance(0.05);
            let (ip, vp) = match null {
                true => (ptr::null_mut(), ptr::null_mut()),
                false => (idx.as_mut_ptr(), vals.as_mut_ptr()),
            };
            k.maybe(&["len", "indices", "models"]);
            f.announce("sg_emlog_result_models", || format!("len {len}"));
            let s = sg_emlog_result_models(rp, ip, vp, len);
            f.check("sg_emlog_result_models", s, &k, &snaps);
        }
    }
}
