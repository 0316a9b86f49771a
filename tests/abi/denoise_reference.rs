//! `sg_dwt_denoise_f64/_f32` against an independent NumPy implementation of the same
//! Donoho–Johnstone rule (dense-matrix DWT built from the filter taps, `np.median`):
//! `tests/reference/make_denoise_reference.py` wrote `tests/data/denoise_reference.*`
//! (see `tests/reference/README.md`).
//!
//! f64 outputs must match to 1e-10 (relative to the largest sample) and thresholds to
//! 1e-12 (relative); f32 to 1e-4. Denoising must also actually denoise: the SNR against
//! the clean signal, which the fixture stores, rises by at least a stated amount.

use crate::common;

use common::*;
use seisgpu::ffi::dwt::*;
use std::collections::HashMap;

struct Signal {
    n: usize,
    sigma: f64,
    clean: Vec<f64>,
    noisy: Vec<f64>,
    snr: f64,
}

struct Case {
    name: String,
    signal: String,
    family: i32,
    member: i32,
    options: sg_dwt_denoise_options,
    output: Vec<f64>,
    thresholds: Vec<f64>,
    margin: f64,
    snr: f64,
}

struct Fixture {
    signals: HashMap<String, Signal>,
    cases: Vec<Case>,
}

fn load() -> Fixture {
    let dir = "tests/data/"; // cargo runs tests from the package root
    let text = std::fs::read_to_string(format!("{dir}denoise_reference.txt"))
        .expect("tests/data/denoise_reference.txt");
    let bytes = std::fs::read(format!("{dir}denoise_reference.bin"))
        .expect("tests/data/denoise_reference.bin");
    assert_eq!(bytes.len() % 8, 0);
    let data: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let slice = |off: usize, len: usize| -> Vec<f64> {
        assert!(off + len <= data.len(), "fixture offset out of range");
        data[off..off + len].to_vec()
    };
    let mut fx = Fixture {
        signals: HashMap::new(),
        cases: Vec::new(),
    };
    let mut format_seen = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let kind = words.next().unwrap();
        if kind == "format" {
            assert_eq!(line, "format seisgpu-denoise-reference 1");
            format_seen = true;
            continue;
        }
        let kv: HashMap<&str, &str> = words
            .map(|w| {
                w.split_once('=')
                    .unwrap_or_else(|| panic!("bad token {w:?}"))
            })
            .collect();
        let s = |k: &str| -> &str { kv.get(k).unwrap_or_else(|| panic!("no {k} in {line}")) };
        let u = |k: &str| -> usize { s(k).parse().unwrap() };
        let f = |k: &str| -> f64 { s(k).parse().unwrap() };
        let i = |k: &str| -> i32 { s(k).parse().unwrap() };
        match kind {
            "signal" => {
                let n = u("n");
                fx.signals.insert(
                    s("name").to_string(),
                    Signal {
                        n,
                        sigma: f("sigma"),
                        clean: slice(u("clean"), n),
                        noisy: slice(u("noisy"), n),
                        snr: f("snr"),
                    },
                );
            }
            "case" => {
                let n = fx.signals[s("signal")].n;
                fx.cases.push(Case {
                    name: s("name").to_string(),
                    signal: s("signal").to_string(),
                    family: i("family"),
                    member: i("member"),
                    options: sg_dwt_denoise_options {
                        threshold_rule: i("rule"),
                        threshold_mode: i("mode"),
                        noise_estimate: i("noise"),
                        n_levels: s("levels").parse().unwrap(),
                        fixed_threshold: f("fixed"),
                        level_mask: s("mask").parse().unwrap(),
                    },
                    output: slice(u("output"), n),
                    thresholds: slice(u("thresholds"), u("n_thresholds")),
                    margin: f("margin"),
                    snr: f("snr"),
                });
            }
            other => panic!("unknown line kind {other:?}"),
        }
    }
    assert!(format_seen);
    assert_eq!(fx.signals.len(), 2);
    assert!(fx.cases.len() >= 14, "{} cases", fx.cases.len());
    fx
}

fn snr_db(clean: &[f64], estimate: &[f64]) -> f64 {
    let p: f64 = clean.iter().map(|x| x * x).sum();
    let e: f64 = clean
        .iter()
        .zip(estimate)
        .map(|(c, x)| (x - c) * (x - c))
        .sum();
    10.0 * (p / e).log10()
}

/// Denoises `x` as the middle of three traces (copies of it) at a padded stride, out of
/// place; checks the three agree bit for bit, the gaps are untouched, and in place
/// gives the same bits. Returns the output and the thresholds of one trace.
fn run<T: Real>(ctx: &Ctx, case: &Case, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = x.len();
    let plan = ctx.plan(case.family, case.member, n);
    let (n_traces, stride) = (3, n + 5);
    let len = (n_traces - 1) * stride + n;
    let pad = T::from_f64(-1.5e30);
    let mut input = vec![pad; len];
    for t in 0..n_traces {
        for (d, &v) in input[t * stride..][..n].iter_mut().zip(x) {
            *d = T::from_f64(v);
        }
    }
    let levels = case.thresholds.len();
    let mut output = vec![pad; len];
    let mut thr = vec![f64::NAN; n_traces * levels];
    ok(T::denoise(
        &plan,
        &case.options,
        input.as_ptr(),
        output.as_mut_ptr(),
        n_traces,
        stride,
        thr.as_mut_ptr(),
    ));
    let trace = |buf: &[T], t: usize| -> Vec<u64> {
        buf[t * stride..][..n]
            .iter()
            .map(|v| v.to_bits64())
            .collect()
    };
    for t in 1..n_traces {
        assert_eq!(
            trace(&output, t),
            trace(&output, 0),
            "{}: trace {t} differs",
            case.name
        );
        assert_eq!(thr[t * levels..][..levels], thr[..levels]);
    }
    for (i, v) in output.iter().enumerate() {
        if i % stride >= n {
            assert_eq!(
                v.to_bits64(),
                pad.to_bits64(),
                "{}: gap {i} written",
                case.name
            );
        }
    }
    // In place, one trace: the same bits.
    let mut inplace = input[..n].to_vec();
    let p = inplace.as_mut_ptr();
    ok(T::denoise(
        &plan,
        &case.options,
        p,
        p,
        1,
        n,
        std::ptr::null_mut(),
    ));
    assert_eq!(
        inplace.iter().map(|v| v.to_bits64()).collect::<Vec<_>>(),
        trace(&output, 0),
        "{}: in place differs from out of place",
        case.name
    );
    (
        output[stride..][..n].iter().map(|v| v.to_f64()).collect(),
        thr[levels..2 * levels].to_vec(),
    )
}

#[track_caller]
fn assert_thresholds(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: number of thresholds");
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        if *w == 0.0 {
            assert_eq!(*g, 0.0, "{what}: level {} should be left alone", j + 1);
        } else {
            let e = (g - w).abs() / w.abs();
            assert!(
                e <= tol,
                "{what}: level {} threshold {g} vs reference {w} (relative error {e:.2e})",
                j + 1
            );
        }
    }
}

#[test]
fn fixture_is_what_it_claims() {
    let fx = load();
    for (name, s) in &fx.signals {
        // The noise is the stated σ, and the stated SNR is the SNR.
        let var = s
            .noisy
            .iter()
            .zip(&s.clean)
            .map(|(y, c)| (y - c) * (y - c))
            .sum::<f64>()
            / s.n as f64;
        let ratio = var.sqrt() / s.sigma;
        assert!((0.9..1.1).contains(&ratio), "{name}: noise σ ratio {ratio}");
        assert!((snr_db(&s.clean, &s.noisy) - s.snr).abs() < 1e-9);
    }
}

#[test]
fn f64_matches_numpy_reference() {
    let fx = load();
    let ctx = Ctx::cpu();
    for case in &fx.cases {
        let sig = &fx.signals[&case.signal];
        let (out, thr) = run::<f64>(&ctx, case, &sig.noisy);
        let e = rel_err(&out, &case.output);
        assert!(
            e <= 1e-10,
            "{}: output differs from the reference by {e:.2e} (relative)",
            case.name
        );
        assert_thresholds(&thr, &case.thresholds, 1e-12, &case.name);
        // And the output is not the input: something was thresholded.
        assert!(
            rel_err(&out, &sig.noisy) > 1e-3,
            "{}: nothing changed",
            case.name
        );
    }
}

#[test]
fn f32_matches_numpy_reference() {
    let fx = load();
    let ctx = Ctx::cpu();
    let mut ran = 0;
    for case in &fx.cases {
        // Hard thresholding is discontinuous: only where no coefficient lies within
        // f32 rounding of λ (the generator records the closest one).
        if case.options.threshold_mode == SG_THRESHOLD_HARD && case.margin < 1e-4 {
            continue;
        }
        let sig = &fx.signals[&case.signal];
        // The reference for f32 input is the f64 reference: the rounding of the input
        // to f32 (~6e-8) is far inside the tolerance.
        let (out, thr) = run::<f32>(&ctx, case, &sig.noisy);
        let e = rel_err(&out, &case.output);
        assert!(
            e <= 1e-4,
            "{} (f32): output differs from the reference by {e:.2e} (relative)",
            case.name
        );
        assert_thresholds(
            &thr,
            &case.thresholds,
            1e-4,
            &format!("{} (f32)", case.name),
        );
        ran += 1;
    }
    assert!(ran >= 12, "only {ran} cases checked in f32");
}

#[test]
fn denoising_raises_snr() {
    let fx = load();
    let ctx = Ctx::cpu();
    // The improvement our f64 output achieves, at least (the reference achieves a bit
    // more than 1 dB above each floor, see the generator's printout).
    let floors = [
        ("db8_soft_finest_4096", 5.0),
        ("db8_hard_finest", 5.5),
        ("db8c_hard_finest", 5.4),
        ("bs309_soft_finest", 4.9),
        ("db8_fixed_soft", 5.5),
        ("db8_partial4_soft_perlevel", 7.0),
        ("bs309c_partial6_hard_perlevel_mask_4096", 5.5),
    ];
    for (name, floor) in floors {
        let case = fx
            .cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name}"));
        let sig = &fx.signals[&case.signal];
        let (out, _) = run::<f64>(&ctx, case, &sig.noisy);
        let before = snr_db(&sig.clean, &sig.noisy);
        let after = snr_db(&sig.clean, &out);
        assert!(
            (after - case.snr).abs() < 1e-6,
            "{name}: SNR {after} dB, the reference's {} dB",
            case.snr
        );
        assert!(
            after - before >= floor,
            "{name}: SNR {before:.2} dB -> {after:.2} dB, less than +{floor} dB"
        );
    }
    // Per-level σ over all levels estimates the coarse levels' σ from signal, not noise,
    // and wipes them out: the rule says so, and the reference shows it (SNR falls).
    let c = fx
        .cases
        .iter()
        .find(|c| c.name == "db8_soft_perlevel")
        .unwrap();
    let sig = &fx.signals[&c.signal];
    let (out, _) = run::<f64>(&ctx, c, &sig.noisy);
    assert!(snr_db(&sig.clean, &out) < snr_db(&sig.clean, &sig.noisy));
}
