//! `sg_xcorr_preprocess_device_f32`, `sg_xcorr_correlate_device_f32` and
//! `sg_xcorr_correlate_substacks_device_f32`.

use super::super::xcorr::block;
use super::super::{handle_slot, sentinel, Faults, Fuzz, Snapshot};
use super::memory::Memory;
use super::{check, or_null, setup};
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::device::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;

/// 128-sample windows at 10 Hz, as the host family's plans.
const NPTS: usize = 128;

/// A live plan, the days of spectra made with it (and their station counts), its lags.
#[derive(Default)]
pub struct Xcorr {
    plan: Option<*mut sg_xcorr_plan>,
    days: Vec<(*mut sg_xcorr_spectra, usize)>,
    n_lags: usize,
}

impl Drop for Xcorr {
    fn drop(&mut self) {
        self.clear();
    }
}

impl Xcorr {
    fn clear(&mut self) {
        for (d, _) in self.days.drain(..) {
            sg_xcorr_spectra_destroy(d);
        }
        if let Some(p) = self.plan.take() {
            sg_xcorr_plan_destroy(p);
        }
    }

    /// Keeps a day of spectra (at most four; the oldest goes).
    fn keep(&mut self, day: *mut sg_xcorr_spectra, n_stations: usize) {
        if self.days.len() >= 4 {
            sg_xcorr_spectra_destroy(self.days.remove(0).0);
        }
        self.days.push((day, n_stations));
    }

    pub fn step(&mut self, f: &mut Fuzz, mem: &mut Memory) {
        let Some(plan) = self.plan.filter(|_| !f.rng.chance(0.01)) else {
            return self.create(f);
        };
        if self.days.is_empty() || f.rng.chance(0.05) {
            return self.host_day(f, plan);
        }
        match f.rng.range(0, 2) {
            0 => self.preprocess(f, mem, plan),
            1 => self.correlate(f, mem, plan),
            _ => self.substacks(f, mem, plan),
        }
    }

    fn create(&mut self, f: &mut Fuzz) {
        self.clear();
        let mut o = sg_xcorr_options_default();
        o.sampling_rate = 10.0;
        o.cc_len = 12.8;
        o.step = f.rng.pick(&[6.4, 12.8, 3.2]);
        o.freqmin = 0.5;
        o.freqmax = f.rng.pick(&[2.0, 4.0]);
        o.maxlag = f.rng.pick(&[0.0, 1.0, 3.0]);
        o.time_norm = f.rng.range(0, 2) as i32;
        o.freq_norm = f.rng.range(0, 2) as i32;
        o.stack_method = f.rng.range(0, 2) as i32;
        o.autocorrelation = f.rng.range(0, 1) as i32;
        o.cc_method = f.rng.range(0, 2) as i32;
        let mut p = ptr::null_mut();
        f.announce("sg_xcorr_plan_create", || {
            format!("step {} maxlag {}", o.step, o.maxlag)
        });
        let s = sg_xcorr_plan_create(f.ctx, &o, &mut p);
        if setup(f, "sg_xcorr_plan_create", s) {
            self.plan = Some(p);
            let s = sg_xcorr_plan_sizes(p, NPTS, ptr::null_mut(), &mut self.n_lags);
            assert_eq!(s, SG_OK, "the plan's lags");
        }
    }

    /// A day preprocessed from host station-days.
    fn host_day(&mut self, f: &mut Fuzz, plan: *mut sg_xcorr_plan) {
        let n_stations = f.rng.range(1, 4);
        let n_samples = NPTS + f.rng.range(0, 2 * NPTS);
        let days: Vec<f32> = (0..n_stations * n_samples)
            .map(|_| f.rng.symmetric() as f32)
            .collect();
        let mut out = ptr::null_mut();
        f.announce("sg_xcorr_preprocess_f32", || {
            format!("{n_stations}, {n_samples}")
        });
        let s = sg_xcorr_preprocess_f32(
            plan,
            days.as_ptr(),
            n_stations,
            n_samples,
            n_samples,
            ptr::null(),
            &mut out,
        );
        if setup(f, "sg_xcorr_preprocess_f32", s) {
            self.keep(out, n_stations);
        }
    }

    fn preprocess(&mut self, f: &mut Fuzz, mem: &mut Memory, plan: *mut sg_xcorr_plan) {
        let mut k = mem.faults();
        let p = or_null(f, &mut k, plan, "plan", 0.04);
        let mut n_stations = f.rng.range(1, 4);
        let mut n_samples = NPTS + f.rng.range(0, 2 * NPTS);
        let mut stride = n_samples + f.rng.range(0, 2);
        // The station-days' span; `None` where the layout is refused before the arrays.
        let span = match f.rng.range(0, 14) {
            0 => {
                k.plant("n_stations");
                n_stations = 0;
                None
            }
            1 => {
                // Refused after the arrays are checked: they span what the sizes say.
                k.plant("n_samples");
                n_samples = f.rng.range(0, NPTS - 1);
                stride = n_samples;
                Some((n_stations - 1) * stride + n_samples)
            }
            2 => {
                k.plant("station_stride");
                stride = f.rng.range(0, n_samples - 1);
                None
            }
            3 => {
                k.plant("n_stations");
                k.plant("station_stride");
                stride = f.rng.pick(&[n_samples, 1 << 40]);
                n_stations = usize::MAX / stride + 2;
                None
            }
            _ => Some((n_stations - 1) * stride + n_samples),
        };
        let len = span.unwrap_or(n_samples.max(1));
        let days = mem.array::<f32>(f, &mut k, "`station_days`", len).at;
        let valid = match f.rng.chance(0.5) {
            true => 0,
            false => mem.optional::<u8>(f, &mut k, "`valid`", len),
        };
        let mut out: *mut sg_xcorr_spectra = ptr::null_mut();
        let out_p = handle_slot(f, &mut k, &mut out, 0.03);
        let snap = Snapshot::of("out", &out, 1);
        let name = "sg_xcorr_preprocess_device_f32";
        f.announce(name, || {
            format!("{days:#x}, {n_stations}, {n_samples}, {stride}, {valid:#x}")
        });
        let s =
            sg_xcorr_preprocess_device_f32(p, days, n_stations, n_samples, stride, valid, out_p);
        check(f, mem, name, s, &k, vec![snap]);
        if s == SG_OK {
            self.keep(out, n_stations);
        }
    }

    /// The days of one station count (with `mixed`, sometimes one of another: a planted
    /// fault), that count, and the pairs of a random block of them.
    fn days(
        &self,
        f: &mut Fuzz,
        k: &mut Faults,
        mixed: bool,
    ) -> (Vec<*const sg_xcorr_spectra>, Block) {
        let (_, n) = self.days[f.rng.range(0, self.days.len() - 1)];
        let days: Vec<*const sg_xcorr_spectra> = self
            .days
            .iter()
            .filter(|&&(_, m)| m == n || (mixed && f.rng.chance(0.03)))
            .map(|&(d, _)| d as *const _)
            .collect();
        if self
            .days
            .iter()
            .any(|&(d, m)| m != n && days.contains(&(d as *const _)))
        {
            k.plant("stations");
            // The library counts the pairs with day 0's stations: the stacks may be short.
            k.maybe(&["`stacks`"]);
        }
        let (i0, ni, j0, nj) = block(f, n, k);
        let mut n_pairs = 0;
        let plan = self.plan.unwrap();
        if sg_xcorr_pair_count(plan, n, i0, ni, j0, nj, &mut n_pairs) != SG_OK {
            n_pairs = 0;
        }
        (
            days,
            Block {
                i0,
                ni,
                j0,
                nj,
                n_pairs,
            },
        )
    }

    fn correlate(&mut self, f: &mut Fuzz, mem: &mut Memory, plan: *mut sg_xcorr_plan) {
        let mut k = mem.faults();
        let p = or_null(f, &mut k, plan, "plan", 0.04);
        let (mut days, b) = self.days(f, &mut k, true);
        let mut n_days = days.len();
        match f.rng.range(0, 19) {
            0 => {
                k.plant("n_days");
                k.maybe(&["`stacks`"]);
                n_days = 0;
            }
            1 => {
                k.plant("days[");
                let d = f.rng.range(0, days.len() - 1);
                days[d] = ptr::null();
            }
            _ => {}
        }
        let stride = self.stride(f, &mut k, b.n_pairs);
        let len = rows_span(b.n_pairs, stride, self.n_lags);
        let stacks = mem.array::<f32>(f, &mut k, "`stacks`", len).at;
        let mut counts = sentinel::<u32>(b.n_pairs.max(1));
        let cp = if f.rng.chance(0.5) {
            ptr::null_mut()
        } else {
            counts.as_mut_ptr()
        };
        let dp = if f.rng.chance(0.02) {
            k.plant("days");
            ptr::null()
        } else {
            days.as_ptr()
        };
        let snaps = vec![Snapshot::of_slice("n_windows", &counts)];
        let name = "sg_xcorr_correlate_device_f32";
        f.announce(name, || format!("{n_days}, {b:?}, {stacks:#x}, {stride}"));
        let s = sg_xcorr_correlate_device_f32(
            p, dp, n_days, b.i0, b.ni, b.j0, b.nj, stacks, stride, cp,
        );
        check(f, mem, name, s, &k, snaps);
    }

    /// A pair stride: n_lags or more, sometimes (between two pairs or more) too small or
    /// so large that the rows overflow.
    fn stride(&self, f: &mut Fuzz, k: &mut Faults, n_pairs: usize) -> usize {
        match f.rng.range(0, 14) {
            0 if n_pairs > 1 => {
                k.plant("pair_stride");
                f.rng.range(0, self.n_lags - 1)
            }
            1 if n_pairs > 1 => {
                k.plant("stride");
                usize::MAX / (n_pairs - 1) + 1
            }
            _ => self.n_lags + f.rng.range(0, 2),
        }
    }

    fn substacks(&mut self, f: &mut Fuzz, mem: &mut Memory, plan: *mut sg_xcorr_plan) {
        let mut k = mem.faults();
        let p = or_null(f, &mut k, plan, "plan", 0.04);
        let (days, b) = self.days(f, &mut k, false);
        let total: usize = days.iter().map(|&d| windows(d)).sum();
        let (labels, n_groups, null_labels) = labels(f, &mut k, total);
        let lp = if null_labels {
            ptr::null()
        } else {
            labels.as_ptr()
        };
        let stride = self.stride(f, &mut k, b.n_pairs * n_groups.max(1));
        let na = rows_span(b.n_pairs, stride, self.n_lags);
        let ns = rows_span(n_groups * b.n_pairs, stride, self.n_lags);
        let stacks = mem.array::<f32>(f, &mut k, "`stacks`", na);
        let sub = mem.array::<f32>(f, &mut k, "`substacks`", ns);
        if stacks.bad || sub.bad {
            // Refused addresses may also overlap: "stacks and substacks overlap".
            k.maybe(&["overlap"]);
        }
        let mut counts = sentinel::<u32>(b.n_pairs.max(1));
        let mut sub_counts = sentinel::<u32>((n_groups * b.n_pairs).max(1));
        let cp = if f.rng.chance(0.5) {
            ptr::null_mut()
        } else {
            counts.as_mut_ptr()
        };
        let scp = if f.rng.chance(0.5) {
            ptr::null_mut()
        } else {
            sub_counts.as_mut_ptr()
        };
        let snaps = vec![
            Snapshot::of_slice("n_windows", &counts),
            Snapshot::of_slice("substack_windows", &sub_counts),
        ];
        let name = "sg_xcorr_correlate_substacks_device_f32";
        f.announce(name, || {
            format!(
                "{}, {b:?}, {n_groups} groups, {:#x}, {:#x}, {stride}",
                days.len(),
                stacks.at,
                sub.at
            )
        });
        let s = sg_xcorr_correlate_substacks_device_f32(
            p,
            days.as_ptr(),
            days.len(),
            b.i0,
            b.ni,
            b.j0,
            b.nj,
            lp,
            n_groups,
            stacks.at,
            stride,
            cp,
            sub.at,
            scp,
        );
        check(f, mem, name, s, &k, snaps);
    }
}

/// A block of station pairs and how many pairs it holds (0 for a refused block).
#[derive(Debug)]
struct Block {
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    n_pairs: usize,
}

/// The floats `rows` rows of `stride` span, the last n_lags long (0 where they overflow:
/// refused before the array is looked at).
fn rows_span(rows: usize, stride: usize, n_lags: usize) -> usize {
    match rows {
        0 => 0,
        n => (n - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(n_lags))
            .unwrap_or(0),
    }
}

/// A group label per window (-1: none) of `n_groups` groups, sometimes with a planted
/// fault: a label out of range, no groups, or (`true`) NULL labels.
fn labels(f: &mut Fuzz, k: &mut Faults, total: usize) -> (Vec<i32>, usize, bool) {
    let mut n_groups = f.rng.range(1, 3);
    let mut labels: Vec<i32> = (0..total)
        .map(|_| f.rng.range(0, n_groups) as i32 - 1)
        .collect();
    let mut null = false;
    match f.rng.range(0, 11) {
        0 if total > 0 => {
            k.plant("group label");
            let i = f.rng.range(0, total - 1);
            labels[i] = f.rng.pick(&[n_groups as i32, -2, i32::MIN]);
        }
        1 => {
            k.plant("n_groups");
            n_groups = 0;
        }
        2 => {
            k.plant("labels");
            null = true;
        }
        _ => {}
    }
    (labels, n_groups, null)
}

/// A day's windows.
fn windows(d: *const sg_xcorr_spectra) -> usize {
    let mut nw = 0;
    let n = ptr::null_mut();
    assert_eq!(sg_xcorr_spectra_sizes(d, n, &mut nw, n, n, n), SG_OK);
    nw
}
