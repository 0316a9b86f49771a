//! The NoisePy fixture (tests/data/xcorr_undervolc.*) and the comparison, for
//! tests/capabilities/xcorr_noisepy.rs (CPU) and tests/cuda/cuda_xcorr.rs (GPU).
//!
//! NoisePy's own stacks (noisepy-seis 0.9.93, run by
//! tests/reference/make_xcorr_reference.py) on a real day: MSNoise's UnderVolc data,
//! 2010-09-01, stations YA.UV05, UV06, UV10, decimated to 1 Hz (tests/data/README.md).
//! Every stacked pair must correlate with NoisePy's at ≥ 0.999 and match its amplitude.
//!
//! Lag convention: the library's element k is lag (k − maxlag)·dt. NoisePy labels its
//! trimmed output with t = arange(−Nfft2+1, Nfft2)·dt, which for even Nfft puts the
//! correlation at lag τ under the label τ + dt: its element m is our element m − 1.

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::layout::TraceBatch;
use seisgpu::xcorr::groups::WindowGroups;
use seisgpu::xcorr::options::{CcMethod, FreqNorm, Options, StackMethod, TimeNorm};
use seisgpu::xcorr::{StackOut, XcorrPlan};
use std::collections::HashMap;

struct Case {
    words: HashMap<String, String>,
    pairs: Vec<(usize, usize, usize, Vec<f32>)>,
    /// NoisePy's substacks: (i, j, group, windows, stack).
    substacks: Vec<(usize, usize, usize, usize, Vec<f32>)>,
}

fn words(line: &str) -> HashMap<String, String> {
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn fixture() -> (Vec<f32>, usize, usize, Vec<Case>) {
    fixture_named("xcorr_undervolc")
}

/// The day (from xcorr_undervolc.bin) and the cases of `tests/data/{name}.*`.
fn fixture_named(name: &str) -> (Vec<f32>, usize, usize, Vec<Case>) {
    // cargo (and scripts/gpu_run.sh) run tests from the package root
    let read = |f: &str| std::fs::read(f).unwrap_or_else(|e| panic!("{f}: {e}"));
    let txt = String::from_utf8(read(&format!("tests/data/{name}.txt"))).unwrap();
    let bin = read(&format!("tests/data/{name}.bin"));
    let day: Vec<f32> = read("tests/data/xcorr_undervolc.bin")[..3 * 86400 * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let vals: Vec<f32> = bin
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let (mut input, mut shape, mut cases) = (day, (3, 86400), Vec::<Case>::new());
    for line in txt.lines().filter(|l| !l.starts_with('#')) {
        let w = words(line);
        let num = |k: &str| w[k].parse::<usize>().unwrap();
        if line.starts_with("input ") {
            shape = (num("n_stations"), num("n_samples"));
            input = vals[num("offset")..][..shape.0 * shape.1].to_vec();
        } else if line.starts_with("case ") {
            cases.push(Case {
                words: w,
                pairs: Vec::new(),
                substacks: Vec::new(),
            });
        } else if line.starts_with("pair ") {
            let v = vals[num("offset")..][..num("n_lags")].to_vec();
            cases
                .last_mut()
                .unwrap()
                .pairs
                .push((num("i"), num("j"), num("n_windows"), v));
        } else if line.starts_with("substack ") {
            let v = vals[num("offset")..][..num("n_lags")].to_vec();
            let (i, j, g, n) = (num("i"), num("j"), num("group"), num("n_windows"));
            cases.last_mut().unwrap().substacks.push((i, j, g, n, v));
        }
    }
    (input, shape.0, shape.1, cases)
}

fn options(case: &Case) -> Options {
    let w = &case.words;
    let smoothspect_n: usize = w["smoothspect_n"].parse().unwrap();
    Options {
        sampling_rate: 1.0,
        cc_len: 1800.0,
        step: 450.0,
        freqmin: 0.05,
        freqmax: 0.4,
        maxlag: 200.0,
        time_norm: match w["time_norm"].as_str() {
            "no" => TimeNorm::None,
            "one_bit" => TimeNorm::OneBit,
            "rma" => TimeNorm::RunningMean,
            t => panic!("time_norm {t}"),
        },
        smooth_n: w["smooth_n"].parse().unwrap(),
        freq_norm: match (w["freq_norm"].as_str(), smoothspect_n) {
            ("no", _) => FreqNorm::None,
            ("rma", 0 | 1) => FreqNorm::PhaseOnly,
            ("rma", _) => FreqNorm::RunningMean,
            (f, _) => panic!("freq_norm {f}"),
        },
        smoothspect_n,
        cc_method: match w.get("cc_method").map_or("xcorr", |m| m.as_str()) {
            "xcorr" => CcMethod::Xcorr,
            "deconv" => CcMethod::Deconv,
            "coherency" => CcMethod::Coherency,
            m => panic!("cc_method {m}"),
        },
        stack_method: match w.get("stack").map_or("linear", |s| s.as_str()) {
            "linear" => StackMethod::Linear,
            "pws" => StackMethod::PhaseWeighted,
            "robust" => StackMethod::Robust,
            s => panic!("stack {s}"),
        },
        autocorrelation: true,
        ..Options::default()
    }
}

/// Pearson correlation and max |a − b| / max |b| of two equal-length series.
fn compare(a: &[f32], b: &[f32]) -> (f64, f64) {
    let n = a.len() as f64;
    let ma = a.iter().map(|&x| x as f64).sum::<f64>() / n;
    let mb = b.iter().map(|&x| x as f64).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb, mut err, mut scale) = (0.0, 0.0, 0.0, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
        err = err.max((x - y).abs());
        scale = scale.max(y.abs());
    }
    (sab / (saa * sbb).sqrt(), err / scale)
}

/// Compares every case and pair, printing one line per pair as it goes (so that a
/// failure leaves the lines before it), and panics at the first pair out of tolerance.
pub fn run_against_noisepy(request: BackendRequest, tol_linear: f64, tol_nonlinear: f64) {
    let ctx = Context::new(request, 0).unwrap();
    let (input, n_sta, n, cases) = fixture();
    let batch = TraceBatch::new(n, n_sta, n).unwrap();
    for case in &cases {
        let name = &case.words["name"];
        let plan = XcorrPlan::new(ctx.clone(), options(case)).unwrap();
        let g = *plan.geometry();
        assert_eq!(g.nfft.to_string(), case.words["nfft"], "{name}: nfft");
        let spectra = plan.preprocess(&input, batch, None).unwrap();
        assert_eq!(spectra.n_windows.to_string(), case.words["n_windows"]);
        let linear = plan.options().stack_method == StackMethod::Linear;
        let block = (0, n_sta, 0, n_sta);
        let n_pairs = n_sta * (n_sta + 1) / 2;
        let mut out = vec![f32::NAN; n_pairs * g.n_lags()];
        let mut counts = vec![0u32; n_pairs];
        let got = plan
            .correlate(&[&spectra], block, &mut out, g.n_lags(), Some(&mut counts))
            .unwrap();
        assert_eq!(got, n_pairs);
        let order: Vec<(usize, usize)> = (0..n_sta)
            .flat_map(|i| (i..n_sta).map(move |j| (i, j)))
            .collect();
        for (i, j, n_windows, reference) in &case.pairs {
            let p = order.iter().position(|&x| x == (*i, *j)).unwrap();
            assert_eq!(
                counts[p] as usize, *n_windows,
                "{name} ({i},{j}) window count"
            );
            let ours = &out[p * g.n_lags()..][..g.n_lags()];
            // NoisePy's m ↔ our m − 1.
            let (r, rel) = compare(&ours[..g.n_lags() - 1], &reference[1..]);
            println!(
                "{name:<28} ({i},{j})  windows {n_windows}  correlation {r:.7}  max|diff|/max {rel:.2e}"
            );
            assert!(r >= 0.999, "{name} ({i},{j}): correlation {r} < 0.999");
            let tol = if linear { tol_linear } else { tol_nonlinear };
            assert!(
                rel <= tol,
                "{name} ({i},{j}): amplitude differs by {rel:.2e} of max"
            );
        }
    }
}

/// NoisePy's substack groups of one day whose windows are all kept: windows starting
/// within each `len` s from the first, ⌊(t − t₀)/len⌋, for the round((t_last − t₀)/len)
/// groups it makes (the last windows, past them, are in none).
fn noisepy_groups(n_windows: usize, step: f64, len: f64) -> (Vec<i32>, usize) {
    let t_last = (n_windows - 1) as f64 * step;
    let n_groups = (t_last / len).round() as usize;
    let labels = (0..n_windows)
        .map(|w| match (w as f64 * step / len).floor() as usize {
            g if g < n_groups => g as i32,
            _ => seisgpu::ffi::xcorr::SG_XCORR_NO_GROUP,
        })
        .collect();
    (labels, n_groups)
}

/// NoisePy's deconv and coherency stacks (tests/data/xcorr_undervolc_methods.*) and its
/// substacks: every pair's stack (and every substack) must correlate at ≥ 0.999 and match
/// its amplitude to `tol` of its maximum.
pub fn run_methods_against_noisepy(request: BackendRequest, tol: f64) {
    let ctx = Context::new(request, 0).unwrap();
    let (input, n_sta, n, cases) = fixture_named("xcorr_undervolc_methods");
    let batch = TraceBatch::new(n, n_sta, n).unwrap();
    let order: Vec<(usize, usize)> = (0..n_sta)
        .flat_map(|i| (i..n_sta).map(move |j| (i, j)))
        .collect();
    for case in &cases {
        let name = &case.words["name"];
        let plan = XcorrPlan::new(ctx.clone(), options(case)).unwrap();
        let g = *plan.geometry();
        let spectra = plan.preprocess(&input, batch, None).unwrap();
        assert!(
            spectra.kept.iter().all(|&k| k == 1),
            "the day keeps every window"
        );
        let m = g.n_lags();
        let n_pairs = order.len();
        let mut out = vec![f32::NAN; n_pairs * m];
        let mut counts = vec![0u32; n_pairs];
        let len: f64 = case.words["substack_len"].parse().unwrap();
        let all = StackOut {
            out: &mut out,
            pair_stride: m,
            counts: Some(&mut counts),
        };
        let mut sub = Vec::new();
        let mut sub_counts = Vec::new();
        let block = (0, n_sta, 0, n_sta);
        let n_groups = if len > 0.0 {
            let (labels, n_groups) = noisepy_groups(spectra.n_windows, 450.0, len);
            let groups = WindowGroups::new(&labels, &[spectra.n_windows], n_groups).unwrap();
            sub = vec![f32::NAN; n_groups * n_pairs * m];
            sub_counts = vec![0u32; n_groups * n_pairs];
            let s = StackOut {
                out: &mut sub,
                pair_stride: m,
                counts: Some(&mut sub_counts),
            };
            plan.correlate_substacks(&[&spectra], block, all, &groups, s)
                .unwrap();
            n_groups
        } else {
            plan.correlate(&[&spectra], block, all.out, m, all.counts)
                .unwrap();
            0
        };
        let check = |what: String, ours: &[f32], reference: &[f32]| {
            // NoisePy's m ↔ our m − 1.
            let (r, rel) = compare(&ours[..m - 1], &reference[1..]);
            println!("{name:<28} {what}  correlation {r:.7}  max|diff|/max {rel:.2e}");
            assert!(r >= 0.999, "{name} {what}: correlation {r} < 0.999");
            assert!(
                rel <= tol,
                "{name} {what}: amplitude differs by {rel:.2e} of max"
            );
        };
        for (i, j, n_windows, reference) in &case.pairs {
            let p = order.iter().position(|&x| x == (*i, *j)).unwrap();
            assert_eq!(
                counts[p] as usize, *n_windows,
                "{name} ({i},{j}) window count"
            );
            check(format!("({i},{j})"), &out[p * m..][..m], reference);
        }
        let mut seen = vec![false; n_groups * n_pairs];
        for (i, j, grp, n_windows, reference) in &case.substacks {
            let p = order.iter().position(|&x| x == (*i, *j)).unwrap();
            let k = grp * n_pairs + p;
            seen[k] = true;
            assert_eq!(
                sub_counts[k] as usize, *n_windows,
                "{name} ({i},{j}) group {grp}"
            );
            check(
                format!("({i},{j}) group {grp:>2}"),
                &sub[k * m..][..m],
                reference,
            );
        }
        assert!(
            seen.iter().all(|&s| s),
            "{name}: NoisePy has every substack"
        );
    }
}
