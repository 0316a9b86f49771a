//! `sg_emlog_plan_create_device`, `sg_emlog_search_device` and the result's `_device`
//! outputs against the host calls on the same GPU: the plan's closed-form answer, the
//! summary, marginals, pairs and listed models equal bit for bit, in the fast and the
//! direct mode, for A row-major and column-major with a padded leading dimension; the
//! device outputs of a host search (copied from host memory) too.

use super::*;
use crate::emlog_support::{cpu, vikiz, Owned};
use seisgpu::emlog::criterion::Criterion;
use seisgpu::ffi::emlog::device::*;
use seisgpu::ffi::emlog::*;

/// A's layout: (row_stride, col_stride) and the array in it.
pub(super) struct Layout {
    strides: (usize, usize),
    a: Vec<f64>,
}

pub(super) fn layouts(o: &Owned) -> [Layout; 2] {
    let ld = o.n + 3;
    let mut col_major = vec![7.5; ld * o.m];
    for i in 0..o.n {
        for j in 0..o.m {
            col_major[i + j * ld] = o.a[i * o.m + j];
        }
    }
    [
        Layout {
            strides: (o.m, 1),
            a: o.a.clone(),
        },
        Layout {
            strides: (1, ld),
            a: col_major,
        },
    ]
}

fn searched(o: &Owned) -> Vec<i32> {
    o.searched.iter().map(|&c| c as i32).collect()
}

pub(super) fn host_plan(g: &Gpu, o: &Owned, l: &Layout) -> *mut sg_emlog_plan {
    let mut p = std::ptr::null_mut();
    let cols = searched(o);
    let s = sg_emlog_plan_create(
        g.ctx,
        o.n,
        o.m,
        l.a.as_ptr(),
        l.strides.0,
        l.strides.1,
        o.sigma0.as_ptr(),
        o.f0.as_ptr(),
        o.f_exp.as_ptr(),
        o.delta.as_ptr(),
        cols.len(),
        cols.as_ptr(),
        &mut p,
    );
    assert_eq!(s, SG_OK, "{}", message());
    p
}

/// The problem's arrays on the device: A, σ₀, f₀, f_exp, δ.
fn upload(g: &Gpu, o: &Owned, l: &Layout) -> [Dev<f64>; 5] {
    [
        g.upload(&l.a),
        g.upload(&o.sigma0),
        g.upload(&o.f0),
        g.upload(&o.f_exp),
        g.upload(&o.delta),
    ]
}

fn device_plan_at(
    g: &Gpu,
    o: &Owned,
    l: &Layout,
    [a, s0, f0, fe, d]: [u64; 5],
    out: &mut *mut sg_emlog_plan,
) -> sg_status {
    let cols = searched(o);
    let (rs, cs) = l.strides;
    sg_emlog_plan_create_device(
        g.ctx,
        o.n,
        o.m,
        a,
        rs,
        cs,
        s0,
        f0,
        fe,
        d,
        cols.len(),
        cols.as_ptr(),
        out,
    )
}

fn device_plan(g: &Gpu, o: &Owned, l: &Layout, dev: &[Dev<f64>; 5]) -> *mut sg_emlog_plan {
    let mut p = std::ptr::null_mut();
    let addrs = [0, 1, 2, 3, 4].map(|k| dev[k].addr());
    assert_eq!(
        device_plan_at(g, o, l, addrs, &mut p),
        SG_OK,
        "{}",
        message()
    );
    p
}

/// Every output of `sg_emlog_analytic`, as bits.
fn analytic_bits(plan: *const sg_emlog_plan, p: usize) -> Vec<u64> {
    let (mut star, mut lo, mut hi, mut sv) =
        (vec![0.0; p], vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    let mut rv = vec![0.0; p * p];
    let (mut f_min, mut empty) = (0.0, 0);
    let s = sg_emlog_analytic(
        plan,
        SG_EMLOG_FIT_WITHIN_ERRORS,
        1.0,
        star.as_mut_ptr(),
        &mut f_min,
        &mut empty,
        lo.as_mut_ptr(),
        hi.as_mut_ptr(),
        sv.as_mut_ptr(),
        rv.as_mut_ptr(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    let mut v = bits(&[star, lo, hi, sv, rv, vec![f_min]].concat());
    v.push(empty as u64);
    v
}

/// A grid around the least-squares model, and what to ask of the search.
pub(super) struct Search {
    counts: Vec<usize>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    pairs: Vec<i32>,
    options: sg_emlog_options,
}

impl Search {
    pub(super) fn new(o: &Owned, counts: &[usize], mode: i32) -> Search {
        let an = o.plan(&cpu()).analytic(Criterion::FitWithinErrors);
        let half: Vec<f64> = (0..counts.len())
            .map(|k| 1.2 * (an.upper[k] - an.sigma_star[k]))
            .collect();
        Search {
            counts: counts.to_vec(),
            lo: (0..counts.len())
                .map(|k| an.sigma_star[k] - half[k])
                .collect(),
            hi: (0..counts.len())
                .map(|k| an.sigma_star[k] + half[k])
                .collect(),
            pairs: vec![0, 1, 3, 2],
            options: sg_emlog_options {
                mode,
                max_models: 100,
                ..sg_emlog_options_default()
            },
        }
    }

    pub(super) fn run(&self, plan: *const sg_emlog_plan, device: bool) -> *mut sg_emlog_result {
        let kinds = vec![SG_EMLOG_AXIS_LINEAR; self.counts.len()];
        let call = if device {
            sg_emlog_search_device
        } else {
            sg_emlog_search
        };
        let mut r = std::ptr::null_mut();
        let s = call(
            plan,
            kinds.as_ptr(),
            self.counts.as_ptr(),
            self.lo.as_ptr(),
            self.hi.as_ptr(),
            std::ptr::null(),
            0,
            self.pairs.len() / 2,
            self.pairs.as_ptr(),
            &self.options,
            &mut r,
        );
        assert_eq!(s, SG_OK, "{}", message());
        r
    }

    /// Bins of each marginal, then of each pair.
    pub(super) fn histogram_lens(&self) -> Vec<usize> {
        let pairs = self.pairs.chunks(2);
        let pair_lens = pairs.map(|q| self.counts[q[0] as usize] * self.counts[q[1] as usize]);
        self.counts.iter().copied().chain(pair_lens).collect()
    }
}

/// The summary, every histogram and the listed models through the host calls, as bits.
pub(super) fn host_outputs(r: *const sg_emlog_result, s: &Search) -> Vec<u64> {
    let p = s.counts.len();
    let (mut total, mut count, mut best, mut n_models, mut more) = (0u64, 0u64, 0u64, 0usize, 0);
    let (mut model, mut vmin, mut vmax, mut misfit) =
        (vec![0.0; p], vec![0.0; p], vec![0.0; p], 0.0);
    let st = sg_emlog_result_summary(
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
    assert_eq!(st, SG_OK, "{}", message());
    assert!(count > 0 && n_models > 0, "an empty region tests nothing");
    let mut out = vec![total, count, best, n_models as u64, more as u64];
    out.extend(bits(&[model, vmin, vmax, vec![misfit]].concat()));
    for (h, &len) in s.histogram_lens().iter().enumerate() {
        let mut bins = vec![0u64; len];
        let st = match h.checked_sub(p) {
            None => sg_emlog_result_marginal(r, h, bins.as_mut_ptr(), len),
            Some(q) => sg_emlog_result_pair(r, q, bins.as_mut_ptr(), len),
        };
        assert_eq!(st, SG_OK, "{}", message());
        out.extend(bins);
    }
    let (mut idx, mut val) = (vec![0u64; n_models], vec![0.0; n_models * p]);
    let st = sg_emlog_result_models(r, idx.as_mut_ptr(), val.as_mut_ptr(), n_models);
    assert_eq!(st, SG_OK, "{}", message());
    out.extend(idx);
    out.extend(bits(&val));
    out
}

/// Every histogram and the listed models through the `_device` calls, as bits (the summary
/// from the host call, which the device calls leave to it).
fn device_outputs(g: &Gpu, r: *const sg_emlog_result, s: &Search) -> Vec<u64> {
    let p = s.counts.len();
    let host = host_outputs(r, s);
    let n_models = host[3] as usize;
    let mut out = host[..5 + 3 * p + 1].to_vec();
    for (h, &len) in s.histogram_lens().iter().enumerate() {
        let bins = g.zeros::<u64>(len);
        let st = match h.checked_sub(p) {
            None => sg_emlog_result_marginal_device(r, h, bins.addr(), len),
            Some(q) => sg_emlog_result_pair_device(r, q, bins.addr(), len),
        };
        assert_eq!(st, SG_OK, "{}", message());
        out.extend(g.download(&bins));
    }
    let (idx, val) = (g.zeros::<u64>(n_models), g.zeros::<f64>(n_models * p));
    let st = sg_emlog_result_models_device(r, idx.addr(), val.addr(), n_models);
    assert_eq!(st, SG_OK, "{}", message());
    out.extend(g.download(&idx));
    out.extend(bits(&g.download(&val)));
    out
}

#[test]
fn emlog_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    let o = vikiz(2, 40, 0.01, 1.0, vec![1, 2, 3, 6]);
    let p = o.searched.len();
    for (k, l) in layouts(&o).iter().enumerate() {
        let hp = host_plan(&g, &o, l);
        let dev = upload(&g, &o, l);
        let dp = device_plan(&g, &o, l, &dev);
        assert!(
            analytic_bits(dp, p) == analytic_bits(hp, p),
            "layout {k}: the device plan's closed form differs"
        );
        for mode in [SG_EMLOG_FAST, SG_EMLOG_DIRECT] {
            let s = Search::new(&o, &[23, 17, 11, 9], mode);
            let hr = s.run(hp, false);
            let want = host_outputs(hr, &s);
            let what = format!("layout {k}, mode {mode}");
            let got = five_times_equal(&what, || {
                let r = s.run(dp, true);
                let host_calls = host_outputs(r, &s);
                assert!(host_calls == want, "{what}: device search, host calls");
                let v = device_outputs(&g, r, &s);
                sg_emlog_result_destroy(r);
                v
            });
            assert!(got == want, "{what}: device search, device calls");
            assert!(
                device_outputs(&g, hr, &s) == want,
                "{what}: host search, device calls"
            );
            sg_emlog_result_destroy(hr);
        }
        sg_emlog_plan_destroy(dp);
        sg_emlog_plan_destroy(hp);
    }
}

#[test]
fn emlog_device_calls_refuse_host_and_short_arrays() {
    let Some(g) = gpu() else { return };
    let o = vikiz(2, 40, 0.01, 1.0, vec![1, 2, 3, 6]);
    let l = &layouts(&o)[0];
    let dev = upload(&g, &o, l);
    let mut addrs = [0, 1, 2, 3, 4].map(|k| dev[k].addr());
    let mut out: *mut sg_emlog_plan = std::ptr::null_mut();
    check_refusals("`a`", l.a.as_ptr() as u64, &dev[0], l.a.len(), |a| {
        addrs[0] = a;
        device_plan_at(&g, &o, l, addrs, &mut out)
    });
    assert!(out.is_null(), "a plan was made from a refused array");
    let plan = device_plan(&g, &o, l, &dev);
    let s = Search::new(&o, &[23, 17, 11, 9], SG_EMLOG_FAST);
    let r = s.run(plan, true);
    let n0 = s.counts[0];
    let (host, bins) = (vec![0u64; n0], g.zeros::<u64>(n0));
    check_refusals("counts", host.as_ptr() as u64, &bins, n0, |c| {
        sg_emlog_result_marginal_device(r, 0, c, n0)
    });
    let n_models = host_outputs(r, &s)[3] as usize;
    let p = s.counts.len();
    let idx = g.zeros::<u64>(n_models);
    let (host_v, val) = (vec![0.0; n_models * p], g.zeros::<f64>(n_models * p));
    check_refusals("values", host_v.as_ptr() as u64, &val, n_models * p, |v| {
        sg_emlog_result_models_device(r, idx.addr(), v, n_models)
    });
    sg_emlog_result_destroy(r);
    sg_emlog_plan_destroy(plan);
}
