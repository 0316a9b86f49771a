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
use seisgpu::xcorr::options::{FreqNorm, Options, StackMethod, TimeNorm};
use seisgpu::xcorr::XcorrPlan;
use std::collections::HashMap;

struct Case {
    words: HashMap<String, String>,
    pairs: Vec<(usize, usize, usize, Vec<f32>)>,
}

fn words(line: &str) -> HashMap<String, String> {
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn fixture() -> (Vec<f32>, usize, usize, Vec<Case>) {
    // cargo (and scripts/gpu_run.sh) run tests from the package root
    let txt = std::fs::read_to_string("tests/data/xcorr_undervolc.txt")
        .expect("tests/data/xcorr_undervolc.txt");
    let bin =
        std::fs::read("tests/data/xcorr_undervolc.bin").expect("tests/data/xcorr_undervolc.bin");
    let vals: Vec<f32> = bin
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let (mut input, mut shape, mut cases) = (Vec::new(), (0, 0), Vec::<Case>::new());
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
            });
        } else if line.starts_with("pair ") {
            let v = vals[num("offset")..][..num("n_lags")].to_vec();
            cases
                .last_mut()
                .unwrap()
                .pairs
                .push((num("i"), num("j"), num("n_windows"), v));
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
        stack_method: match w["stack"].as_str() {
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
