//! Shared by tests/abi/xcorr_cases.rs (CPU) and tests/cuda/cuda_xcorr.rs (GPU): owning wrappers of
//! the C handles, synthetic station-days, and the independent references (pairwise sums
//! of the spectra, direct inverse DFTs, a direct phase-weighted and robust stack).

#![allow(dead_code)]

pub mod methods;
pub mod noisepy;

use seisgpu::ffi::context::*;
use seisgpu::ffi::last_error::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::*;
use std::ffi::CStr;
use std::ptr;

pub fn last_error() -> String {
    // SAFETY: documented as a valid NUL-terminated string until the next sg_* call.
    unsafe { CStr::from_ptr(sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
pub fn ok(s: sg_status) {
    assert_eq!(s, SG_OK, "status {s}: {}", last_error());
}

pub struct Context(pub *mut sg_context);

impl Context {
    pub fn new(backend: i32) -> Context {
        let mut c = ptr::null_mut();
        ok(sg_context_create(backend, 0, &mut c));
        Context(c)
    }

    /// The GPU context, or None (the caller reports "skipped") when there is none.
    pub fn cuda() -> Option<Context> {
        let mut c = ptr::null_mut();
        match sg_context_create(SG_BACKEND_CUDA, 0, &mut c) {
            SG_OK => Some(Context(c)),
            _ => None,
        }
    }

    pub fn plan(&self, o: &sg_xcorr_options) -> Plan {
        let mut p = ptr::null_mut();
        ok(sg_xcorr_plan_create(self.0, o, &mut p));
        Plan(p)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        sg_context_destroy(self.0);
    }
}

pub struct Plan(pub *mut sg_xcorr_plan);

pub struct Spectra(pub *mut sg_xcorr_spectra);

impl Drop for Spectra {
    fn drop(&mut self) {
        sg_xcorr_spectra_destroy(self.0);
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        sg_xcorr_plan_destroy(self.0);
    }
}

pub struct Correlations {
    pub stacks: Vec<f32>,
    pub counts: Vec<u32>,
    pub n_lags: usize,
}

impl Correlations {
    pub fn pair(&self, p: usize) -> &[f32] {
        &self.stacks[p * self.n_lags..][..self.n_lags]
    }
}

/// (band values [f][s][w], kept [s][w], n_stations, n_windows, band_start, band_len, nfft)
#[derive(Clone)]
pub struct HostSpectra {
    pub values: Vec<[f64; 2]>,
    pub kept: Vec<u8>,
    pub n_stations: usize,
    pub n_windows: usize,
    pub band_start: usize,
    pub band_len: usize,
    pub nfft: usize,
}

impl HostSpectra {
    pub fn at(&self, f: usize, s: usize, w: usize) -> [f64; 2] {
        self.values[(f * self.n_stations + s) * self.n_windows + w]
    }
}

impl Spectra {
    pub fn host(&self) -> HostSpectra {
        let (mut ns, mut nw, mut bs, mut bl, mut nfft) = (0, 0, 0, 0, 0);
        ok(sg_xcorr_spectra_sizes(
            self.0, &mut ns, &mut nw, &mut bs, &mut bl, &mut nfft,
        ));
        let mut v = vec![0f32; 2 * bl * ns * nw];
        let mut kept = vec![9u8; ns * nw];
        ok(sg_xcorr_spectra_copy(
            self.0,
            v.as_mut_ptr(),
            kept.as_mut_ptr(),
        ));
        HostSpectra {
            values: v
                .chunks_exact(2)
                .map(|c| [c[0] as f64, c[1] as f64])
                .collect(),
            kept,
            n_stations: ns,
            n_windows: nw,
            band_start: bs,
            band_len: bl,
            nfft,
        }
    }
}

impl Plan {
    pub fn preprocess(
        &self,
        data: &[f32],
        n_sta: usize,
        n: usize,
        valid: Option<&[u8]>,
    ) -> Result<Spectra, (sg_status, String)> {
        let mut s = ptr::null_mut();
        let st = sg_xcorr_preprocess_f32(
            self.0,
            data.as_ptr(),
            n_sta,
            n,
            n,
            valid.map_or(ptr::null(), |v| v.as_ptr()),
            &mut s,
        );
        if st == SG_OK {
            Ok(Spectra(s))
        } else {
            assert!(s.is_null());
            Err((st, last_error()))
        }
    }

    pub fn n_lags(&self) -> usize {
        let mut l = 0;
        ok(sg_xcorr_plan_sizes(
            self.0,
            1 << 20,
            ptr::null_mut(),
            &mut l,
        ));
        l
    }

    pub fn correlate(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
    ) -> Result<Correlations, (sg_status, String)> {
        let (i0, ni, j0, nj) = block;
        let mut n_sta = 0;
        ok(sg_xcorr_spectra_sizes(
            days[0].0,
            &mut n_sta,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        ));
        let mut n_pairs = 0;
        let s = sg_xcorr_pair_count(self.0, n_sta, i0, ni, j0, nj, &mut n_pairs);
        if s != SG_OK {
            return Err((s, last_error()));
        }
        let n_lags = self.n_lags();
        let mut stacks = vec![f32::NAN; n_pairs * n_lags];
        let mut counts = vec![u32::MAX; n_pairs];
        let list: Vec<*const sg_xcorr_spectra> = days.iter().map(|d| d.0 as *const _).collect();
        let s = sg_xcorr_correlate_f32(
            self.0,
            list.as_ptr(),
            list.len(),
            i0,
            ni,
            j0,
            nj,
            stacks.as_mut_ptr(),
            n_lags,
            counts.as_mut_ptr(),
        );
        if s != SG_OK {
            return Err((s, last_error()));
        }
        assert!(
            stacks.iter().all(|v| v.is_finite()),
            "non-finite correlation"
        );
        Ok(Correlations {
            stacks,
            counts,
            n_lags,
        })
    }

    /// Spectra from host values and kept flags (`sg_xcorr_spectra_import`).
    pub fn import(&self, h: &HostSpectra) -> Result<Spectra, (sg_status, String)> {
        let values: Vec<f32> = h
            .values
            .iter()
            .flat_map(|c| [c[0] as f32, c[1] as f32])
            .collect();
        let mut s = ptr::null_mut();
        let st = sg_xcorr_spectra_import(
            self.0,
            values.as_ptr(),
            h.kept.as_ptr(),
            h.n_stations,
            h.n_windows,
            &mut s,
        );
        match st {
            SG_OK => Ok(Spectra(s)),
            _ => Err((st, last_error())),
        }
    }

    /// The stacks of all windows and the substacks of groups `labels` (a label per window
    /// of each day): (all, substacks with g·n_pairs + p rows).
    pub fn correlate_substacks(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
        labels: &[i32],
        n_groups: usize,
    ) -> Result<(Correlations, Correlations), (sg_status, String)> {
        let (i0, ni, j0, nj) = block;
        let h = days[0].host();
        let n_pairs = self.pairs(h.n_stations, block).len();
        let n_lags = self.n_lags();
        let mut all = Correlations {
            stacks: vec![f32::NAN; n_pairs * n_lags],
            counts: vec![u32::MAX; n_pairs],
            n_lags,
        };
        let mut sub = Correlations {
            stacks: vec![f32::NAN; n_groups * n_pairs * n_lags],
            counts: vec![u32::MAX; n_groups * n_pairs],
            n_lags,
        };
        let list: Vec<*const sg_xcorr_spectra> = days.iter().map(|d| d.0 as *const _).collect();
        let s = sg_xcorr_correlate_substacks_f32(
            self.0,
            list.as_ptr(),
            list.len(),
            i0,
            ni,
            j0,
            nj,
            labels.as_ptr(),
            n_groups,
            all.stacks.as_mut_ptr(),
            n_lags,
            all.counts.as_mut_ptr(),
            sub.stacks.as_mut_ptr(),
            sub.counts.as_mut_ptr(),
        );
        if s != SG_OK {
            return Err((s, last_error()));
        }
        assert!(all.stacks.iter().chain(&sub.stacks).all(|v| v.is_finite()));
        Ok((all, sub))
    }

    pub fn pairs(&self, n_sta: usize, block: (usize, usize, usize, usize)) -> Vec<(usize, usize)> {
        let (i0, ni, j0, nj) = block;
        let mut n = 0;
        ok(sg_xcorr_pair_count(self.0, n_sta, i0, ni, j0, nj, &mut n));
        (0..n)
            .map(|p| {
                let (mut i, mut j) = (0, 0);
                ok(sg_xcorr_pair_stations(
                    self.0, n_sta, i0, ni, j0, nj, p, &mut i, &mut j,
                ));
                (i, j)
            })
            .collect()
    }
}

/// 1 Hz, windows of 200 s every 100 s, 0.05–0.3 Hz, lags ±50 s, 20-bin whitening tapers.
pub fn small_options() -> sg_xcorr_options {
    sg_xcorr_options {
        sampling_rate: 1.0,
        cc_len: 200.0,
        step: 100.0,
        freqmin: 0.05,
        freqmax: 0.3,
        maxlag: 50.0,
        whiten_taper_bins: 20,
        ..sg_xcorr_options_default()
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn gauss(&mut self) -> f64 {
        let u = ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let v = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// n_sta station-days of n samples: one noise field reaching station s 3·s samples
/// late, plus local noise, in counts.
pub fn synthetic(n_sta: usize, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let field: Vec<f64> = (0..n + 3 * n_sta).map(|_| rng.gauss()).collect();
    let mut v = Vec::with_capacity(n_sta * n);
    for s in 0..n_sta {
        for t in 0..n {
            let x = field[t + 3 * n_sta - 3 * s] + 0.5 * rng.gauss();
            v.push((1000.0 * x + 50.0 + 0.01 * t as f64) as f32);
        }
    }
    v
}

/// The correlation of pair (i, j) straight from the spectra: Σ over days and windows
/// kept in both of conj(S_i)·S_j, /count, minus the mean over bins 0..nfft/2, then a
/// direct inverse DFT at lags −maxlag..maxlag (bin 0 zeroed when `zero_dc`). One window
/// only when `window` is Some((day, w)).
pub fn reference_pair(
    days: &[&HostSpectra],
    i: usize,
    j: usize,
    n_lags: usize,
    window: Option<(usize, usize)>,
    zero_dc: bool,
) -> (Vec<f64>, u32) {
    let keep = |d: usize, w: usize| window.is_none_or(|x| x == (d, w));
    reference_cross(days, days, (i, j), n_lags, keep, zero_dc)
}

/// The correlation of station i's source spectra `src` with station j's `days` (the
/// same but for deconvolution) over the kept windows (d, w) that `keep` selects: the
/// pairwise conjugate-product sum, NoisePy's finishing step and a direct inverse DFT.
pub fn reference_cross(
    src: &[&HostSpectra],
    days: &[&HostSpectra],
    (i, j): (usize, usize),
    n_lags: usize,
    keep: impl Fn(usize, usize) -> bool,
    zero_dc: bool,
) -> (Vec<f64>, u32) {
    let d0 = days[0];
    let (nfft, nfft2) = (d0.nfft, d0.nfft / 2);
    let mut u = vec![[0.0f64; 2]; nfft2];
    let mut count = 0u32;
    for (d, h) in days.iter().enumerate() {
        for w in 0..h.n_windows {
            if !keep(d, w) {
                continue;
            }
            if h.kept[i * h.n_windows + w] == 0 || h.kept[j * h.n_windows + w] == 0 {
                continue;
            }
            count += 1;
            for f in 0..h.band_len {
                let (a, b) = (src[d].at(f, i, w), h.at(f, j, w));
                let k = h.band_start + f;
                if k < nfft2 {
                    u[k][0] += a[0] * b[0] + a[1] * b[1];
                    u[k][1] += a[0] * b[1] - a[1] * b[0];
                }
            }
        }
    }
    let l = (n_lags / 2) as i64;
    if count == 0 {
        return (vec![0.0; n_lags], 0);
    }
    let (mut mr, mut mi) = (0.0, 0.0);
    for v in u.iter_mut() {
        v[0] /= count as f64;
        v[1] /= count as f64;
        mr += v[0];
        mi += v[1];
    }
    for v in u.iter_mut() {
        v[0] -= mr / nfft2 as f64;
        v[1] -= mi / nfft2 as f64;
    }
    if zero_dc {
        u[0] = [0.0, 0.0];
    }
    let y = (-l..=l)
        .map(|tau| {
            let mut acc = u[0][0];
            for (k, v) in u.iter().enumerate().skip(1) {
                let ph = std::f64::consts::TAU * (k as f64) * tau as f64 / nfft as f64;
                acc += 2.0 * (v[0] * ph.cos() - v[1] * ph.sin());
            }
            acc / nfft as f64
        })
        .collect();
    (y, count)
}

/// max |a − b| / max |b|.
pub fn rel_err(a: &[f32], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((*x as f64 - y).abs()))
        / scale
}

pub fn check_against_pairwise_sums(ctx: &Context, tol: f64) {
    let o = sg_xcorr_options {
        autocorrelation: 1,
        ..small_options()
    };
    let plan = ctx.plan(&o);
    let (n_sta, n) = (6, 3000);
    let data = synthetic(n_sta, n, 11);
    let s = plan.preprocess(&data, n_sta, n, None).unwrap();
    let h = s.host();
    assert_eq!((h.n_stations, h.n_windows, h.nfft), (n_sta, 28, 200));
    assert_eq!((h.band_start, h.band_len), (0, 80));
    let c = plan.correlate(&[&s], (0, n_sta, 0, n_sta)).unwrap();
    let pairs = plan.pairs(n_sta, (0, n_sta, 0, n_sta));
    assert_eq!(pairs.len(), n_sta * (n_sta + 1) / 2);
    for (p, &(i, j)) in pairs.iter().enumerate() {
        let (want, count) = reference_pair(&[&h], i, j, c.n_lags, None, false);
        assert_eq!(c.counts[p], count);
        let e = rel_err(c.pair(p), &want);
        assert!(
            e <= tol,
            "pair ({i},{j}): relative error {e:.2e} > {tol:.0e}"
        );
    }
    // The field reaches station j 3·(j − i) samples after station i: the cross-correlation
    // peaks at lag +3·(j − i) s (positive lags: j later than i). (Not the
    // autocorrelations: NoisePy's spectral-mean removal takes out most of their zero lag.)
    for (p, &(i, j)) in pairs.iter().enumerate().filter(|(_, &(i, j))| i != j) {
        let row = c.pair(p);
        let k = (0..row.len())
            .max_by(|&a, &b| row[a].total_cmp(&row[b]))
            .unwrap();
        assert_eq!(
            k as i64 - 50,
            3 * (j as i64 - i as i64),
            "pair ({i},{j}) peak"
        );
    }
}

pub fn check_gaps_spikes_dead(ctx: &Context) {
    let plan = ctx.plan(&small_options());
    let (n_sta, n) = (4, 2000);
    let mut data = synthetic(n_sta, n, 5);
    let mut valid = vec![1u8; n_sta * n];
    valid[n + 450..n + 520].fill(0); // station 1: a gap
    data[2 * n + 1250] = 1e7; // station 2: a spike
    data[3 * n..].fill(0.0); // station 3: dead
    let s = plan.preprocess(&data, n_sta, n, Some(&valid)).unwrap();
    let h = s.host();
    let kept = |st: usize, w: usize| h.kept[st * h.n_windows + w];
    assert_eq!(h.n_windows, 18);
    for w in 0..18 {
        assert_eq!(kept(0, w), 1, "station 0 window {w}");
        assert_eq!(
            kept(1, w),
            !(3..=5).contains(&w) as u8,
            "station 1 window {w} (gap)"
        );
        assert_eq!(kept(3, w), 0, "dead station window {w}");
    }
    assert_eq!(
        (kept(2, 11), kept(2, 12)),
        (0, 0),
        "windows holding the spike"
    );
    for w in (0..=8).chain(15..18) {
        assert_eq!(kept(2, w), 1, "station 2 window {w}, far from the spike");
    }
    // Rejected windows are zero columns.
    for f in 0..h.band_len {
        assert_eq!(h.at(f, 1, 4), [0.0, 0.0]);
        assert_eq!(h.at(f, 3, 0), [0.0, 0.0]);
    }
    let c = plan.correlate(&[&s], (0, n_sta, 0, n_sta)).unwrap();
    let pairs = plan.pairs(n_sta, (0, n_sta, 0, n_sta));
    for (p, &(i, j)) in pairs.iter().enumerate() {
        let (want, count) = reference_pair(&[&h], i, j, c.n_lags, None, false);
        assert_eq!(c.counts[p], count, "pair ({i},{j})");
        if j == 3 {
            assert_eq!(count, 0);
            assert!(
                c.pair(p).iter().all(|&v| v == 0.0),
                "dead station pair ({i},{j})"
            );
        } else {
            assert!(count > 0);
            let e = rel_err(c.pair(p), &want);
            assert!(e <= 1e-5, "pair ({i},{j}): {e:.2e}");
        }
    }
    assert_eq!(c.counts[0], 15); // (0, 1): the gap removed 3 windows
                                 // The dead station changes nothing for the others.
    let alone = plan
        .preprocess(&data[..3 * n], 3, n, Some(&valid[..3 * n]))
        .unwrap();
    let c3 = plan.correlate(&[&alone], (0, 3, 0, 3)).unwrap();
    for (p3, &(i, j)) in plan.pairs(3, (0, 3, 0, 3)).iter().enumerate() {
        let p = pairs.iter().position(|&x| x == (i, j)).unwrap();
        let e = rel_err(
            c3.pair(p3),
            &c.pair(p).iter().map(|&v| v as f64).collect::<Vec<_>>(),
        );
        assert!(
            e <= 1e-6,
            "pair ({i},{j}) with and without the dead station: {e:.2e}"
        );
    }
}

pub fn check_several_days(ctx: &Context, tol: f64) {
    let plan = ctx.plan(&small_options());
    let (n_sta, n) = (3, 2400);
    let a = plan
        .preprocess(&synthetic(n_sta, n, 21), n_sta, n, None)
        .unwrap();
    let b = plan
        .preprocess(&synthetic(n_sta, 2000, 22), n_sta, 2000, None)
        .unwrap();
    let (ha, hb) = (a.host(), b.host());
    let c = plan.correlate(&[&a, &b], (0, n_sta, 0, n_sta)).unwrap();
    for (p, &(i, j)) in plan.pairs(n_sta, (0, n_sta, 0, n_sta)).iter().enumerate() {
        let (want, count) = reference_pair(&[&ha, &hb], i, j, c.n_lags, None, false);
        assert_eq!(c.counts[p], 22 + 18);
        assert_eq!(count, 40);
        let e = rel_err(c.pair(p), &want);
        assert!(e <= tol, "two days, pair ({i},{j}): {e:.2e}");
        let (one, _) = reference_pair(&[&ha], i, j, c.n_lags, None, false);
        assert!(rel_err(c.pair(p), &one) > 1e-3, "the second day must count");
    }
}

/// Stations 0..5 correlated whole on context `a`, and split: blocks (0..2)² and
/// (0..2)×(2..5) on `a`, (2..5)² on `b` from its own spectra of stations 2..5.
pub fn check_blocks_two_contexts(a: &Context, b: &Context, tol: f64) {
    let o = small_options();
    let (pa, pb) = (a.plan(&o), b.plan(&o));
    let (n_sta, n) = (5, 2000);
    let data = synthetic(n_sta, n, 31);
    let sa = pa.preprocess(&data, n_sta, n, None).unwrap();
    let sb = pb.preprocess(&data[2 * n..], 3, n, None).unwrap();
    let whole = pa.correlate(&[&sa], (0, 5, 0, 5)).unwrap();
    let all = pa.pairs(5, (0, 5, 0, 5));
    let mut seen = vec![false; all.len()];
    let mut check = |c: &Correlations, pairs: Vec<(usize, usize)>, offset: usize| {
        for (p, &(i, j)) in pairs.iter().enumerate() {
            let q = all
                .iter()
                .position(|&x| x == (i + offset, j + offset))
                .unwrap();
            assert!(!seen[q], "pair ({i},{j}) computed twice");
            seen[q] = true;
            assert_eq!(c.counts[p], whole.counts[q]);
            let w: Vec<f64> = whole.pair(q).iter().map(|&v| v as f64).collect();
            let e = rel_err(c.pair(p), &w);
            assert!(
                e <= tol,
                "pair ({},{}) split vs whole: {e:.2e}",
                i + offset,
                j + offset
            );
        }
    };
    check(
        &pa.correlate(&[&sa], (0, 2, 0, 2)).unwrap(),
        pa.pairs(5, (0, 2, 0, 2)),
        0,
    );
    check(
        &pa.correlate(&[&sa], (0, 2, 2, 3)).unwrap(),
        pa.pairs(5, (0, 2, 2, 3)),
        0,
    );
    check(
        &pb.correlate(&[&sb], (0, 3, 0, 3)).unwrap(),
        pb.pairs(3, (0, 3, 0, 3)),
        2,
    );
    assert!(seen.iter().all(|&s| s), "the blocks cover every pair");
    // Spectra of one context cannot be correlated by another's plan.
    let e = pb.correlate(&[&sa], (0, 2, 0, 2)).err().unwrap();
    assert_eq!(e.0, SG_ERR_INVALID_ARGUMENT);
    assert!(e.1.contains("another context"), "{}", e.1);
}

pub fn next_fast_len(n: usize) -> usize {
    (n..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3, 5] {
                while r % p == 0 {
                    r /= p;
                }
            }
            r == 1
        })
        .unwrap()
}

/// PWS by direct DFTs (the analytic signal of each row zero-padded to next_fast_len(M)).
pub fn reference_pws(rows: &[Vec<f64>], power: f64) -> Vec<f64> {
    let m = rows[0].len();
    let n = next_fast_len(m);
    let mut phasor = vec![[0.0f64; 2]; m];
    for r in rows {
        let spec: Vec<[f64; 2]> = (0..n)
            .map(|k| {
                let mut s = [0.0, 0.0];
                for (t, &x) in r.iter().enumerate() {
                    let ph = -std::f64::consts::TAU * (k * t % n) as f64 / n as f64;
                    s[0] += x * ph.cos();
                    s[1] += x * ph.sin();
                }
                s
            })
            .collect();
        for (t, ph_t) in phasor.iter_mut().enumerate() {
            let mut z = [0.0, 0.0];
            for (k, s) in spec.iter().enumerate() {
                let h = if k == 0 || (n % 2 == 0 && k == n / 2) {
                    1.0
                } else if k < n.div_ceil(2) {
                    2.0
                } else {
                    0.0
                };
                let ph = std::f64::consts::TAU * (k * t % n) as f64 / n as f64;
                z[0] += h * (s[0] * ph.cos() - s[1] * ph.sin());
                z[1] += h * (s[0] * ph.sin() + s[1] * ph.cos());
            }
            let a = z[1].atan2(z[0]);
            ph_t[0] += a.cos();
            ph_t[1] += a.sin();
        }
    }
    let nr = rows.len() as f64;
    (0..m)
        .map(|t| {
            let w = ((phasor[t][0].powi(2) + phasor[t][1].powi(2)).sqrt() / nr).powf(power);
            rows.iter().map(|r| r[t]).sum::<f64>() / nr * w
        })
        .collect()
}

/// NoisePy's robust stack, written out in f64.
pub fn reference_robust(rows: &[Vec<f64>], eps: f64) -> Vec<f64> {
    let m = rows[0].len();
    let nr = rows.len();
    let mut stack: Vec<f64> = (0..m)
        .map(|t| {
            let mut c: Vec<f64> = rows.iter().map(|r| r[t]).collect();
            c.sort_by(f64::total_cmp);
            if nr % 2 == 1 {
                c[nr / 2]
            } else {
                0.5 * (c[nr / 2 - 1] + c[nr / 2])
            }
        })
        .collect();
    for _ in 0..11 {
        let w: Vec<f64> = rows
            .iter()
            .map(|r| {
                let dot: f64 = r.iter().zip(&stack).map(|(a, b)| a * b).sum();
                let dn = r.iter().map(|a| a * a).sum::<f64>().sqrt();
                let rn = r
                    .iter()
                    .zip(&stack)
                    .map(|(a, b)| (a - dot * b).powi(2))
                    .sum::<f64>()
                    .sqrt();
                dot.abs() / dn / rn
            })
            .collect();
        let total: f64 = w.iter().sum();
        let next: Vec<f64> = (0..m)
            .map(|t| rows.iter().zip(&w).map(|(r, wi)| wi / total * r[t]).sum())
            .collect();
        let l1: f64 = next.iter().zip(&stack).map(|(a, b)| (a - b).abs()).sum();
        let l2 = next.iter().map(|a| a * a).sum::<f64>().sqrt();
        stack = next;
        if l1 / l2 / nr as f64 <= eps {
            break;
        }
    }
    stack
}

pub fn check_nonlinear_against_reference(ctx: &Context, tol: f64) {
    let (n_sta, n) = (3, 1500);
    let mut data = synthetic(n_sta, n, 41);
    data[n + 700] = 5e6; // a spike: rejected windows must stay out of the stacks
    for (method, name) in [
        (SG_XCORR_STACK_PWS, "pws"),
        (SG_XCORR_STACK_ROBUST, "robust"),
    ] {
        let o = sg_xcorr_options {
            stack_method: method,
            ..small_options()
        };
        let plan = ctx.plan(&o);
        let s = plan.preprocess(&data, n_sta, n, None).unwrap();
        let h = s.host();
        let c = plan.correlate(&[&s], (0, n_sta, 0, n_sta)).unwrap();
        for (p, &(i, j)) in plan.pairs(n_sta, (0, n_sta, 0, n_sta)).iter().enumerate() {
            let rows: Vec<Vec<f64>> = (0..h.n_windows)
                .filter_map(|w| {
                    let (r, k) = reference_pair(&[&h], i, j, c.n_lags, Some((0, w)), i != j);
                    (k == 1).then_some(r)
                })
                .collect();
            assert_eq!(c.counts[p] as usize, rows.len());
            assert!(
                rows.len() < h.n_windows || i != 1 && j != 1,
                "the spike rejected windows"
            );
            let want = match method {
                SG_XCORR_STACK_PWS => reference_pws(&rows, 2.0),
                _ => reference_robust(&rows, 0.001),
            };
            let e = rel_err(c.pair(p), &want);
            assert!(e <= tol, "{name} pair ({i},{j}): {e:.2e}");
        }
    }
}
