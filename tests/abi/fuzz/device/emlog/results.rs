//! A result's histograms and listed models into device memory.

use super::super::super::{Faults, Fuzz};
use super::super::memory::Memory;
use super::super::{check, or_null};
use super::Found;
use seisgpu::ffi::emlog::device::*;
use seisgpu::ffi::emlog::sg_emlog_result;

fn result_or_null(f: &mut Fuzz, k: &mut Faults, found: &Found) -> *const sg_emlog_result {
    or_null(f, k, found.r, "result", 0.04)
}

/// `len`, the room the caller claims: at least `bins`, or (a planted fault) fewer.
fn room(f: &mut Fuzz, k: &mut Faults, bins: usize) -> usize {
    if bins > 0 && f.rng.chance(0.08) {
        k.plant("len");
        return f.rng.range(0, bins - 1);
    }
    bins + f.rng.range(0, 2)
}

/// `counts`: the call writes `bins`, in an allocation of the `len` it is told of.
fn counts(f: &mut Fuzz, mem: &mut Memory, k: &mut Faults, bins: usize, len: usize) -> u64 {
    mem.array_in::<u64>(f, k, "`counts`", bins, len.max(bins), None)
        .at
}

pub fn marginal(f: &mut Fuzz, mem: &mut Memory, found: &Found) {
    let mut k = mem.faults();
    let r = result_or_null(f, &mut k, found);
    let p = found.counts.len();
    let mut j = f.rng.range(0, p - 1);
    if f.rng.chance(0.08) {
        k.plant("parameter");
        j = p + f.rng.range(0, 3);
    }
    // A refused parameter: no bins are looked for.
    let bins = found.counts.get(j).copied().unwrap_or(0);
    let len = room(f, &mut k, bins);
    let at = counts(f, mem, &mut k, bins, len);
    let name = "sg_emlog_result_marginal_device";
    f.announce(name, || format!("parameter {j}, {at:#x}, len {len}"));
    let s = sg_emlog_result_marginal_device(r, j, at, len);
    check(f, mem, name, s, &k, Vec::new());
}

pub fn pair(f: &mut Fuzz, mem: &mut Memory, found: &Found) {
    let mut k = mem.faults();
    let r = result_or_null(f, &mut k, found);
    let mut q = 0;
    let mut bins = match found.pairs.first() {
        Some(&(a, b)) => found.counts[a] * found.counts[b],
        None => {
            k.plant("pair");
            0
        }
    };
    if f.rng.chance(0.08) {
        k.plant("pair");
        q = found.pairs.len() + f.rng.range(0, 2);
        bins = 0;
    }
    let len = room(f, &mut k, bins);
    let at = counts(f, mem, &mut k, bins, len);
    let name = "sg_emlog_result_pair_device";
    f.announce(name, || format!("pair {q}, {at:#x}, len {len}"));
    let s = sg_emlog_result_pair_device(r, q, at, len);
    check(f, mem, name, s, &k, Vec::new());
}

/// The listed models' indices and values (p per model); none listed: nothing looked at.
pub fn models(f: &mut Fuzz, mem: &mut Memory, found: &Found) {
    let mut k = mem.faults();
    let r = result_or_null(f, &mut k, found);
    let n = found.n_models;
    let len = room(f, &mut k, n);
    let p = found.p_count;
    let indices = mem
        .array_in::<u64>(f, &mut k, "`indices`", n, len.max(n), None)
        .at;
    let values = mem
        .array_in::<f64>(f, &mut k, "`values`", n * p, len.max(n) * p, None)
        .at;
    let name = "sg_emlog_result_models_device";
    f.announce(name, || {
        format!("{n} models, {indices:#x}, {values:#x}, len {len}")
    });
    let s = sg_emlog_result_models_device(r, indices, values, len);
    check(f, mem, name, s, &k, Vec::new());
}
