//! Ambient-noise correlation benchmark (the two cases), CPU and GPU.
//!
//! 1. Preprocessing: N station-days × 86,400 samples at 1 Hz (synthetic noise), NoisePy's
//!    default pipeline (detrend, taper, 4-corner zero-phase bandpass 0.045–0.44 Hz, windows
//!    of 1800 s every 450 s, max/std rejection, rma whitening 0.05–0.4 Hz). GPU host→host:
//!    caller array in, spectra on the device (and, as a second figure, spectra copied back
//!    to the host). Target: ≤ 10 s for 10,000 station-days on one H100/H200.
//! 2. Correlation + linear stack of S stations × 1 day (same settings, maxlag 200 s): the
//!    spectra already made (on the device for the GPU), correlations out to the caller's
//!    host array. Target: ≤ 1 s per day for 674 stations. Also the GEMM stage alone (CUDA
//!    events) and its fraction of the GPU's FP32 complex-GEMM peak, counting
//!    8·n²·n_freq·n_windows/2 FLOPs (the Hermitian product's distinct pairs; cuBLAS computes
//!    the full square, twice that) with n_freq the band bins actually multiplied.
//!
//! Every GPU result is checked against the CPU on a subset before timing is reported.
//! Prints a Markdown table (lines starting with '|').

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::layout::TraceBatch;
use seisgpu::xcorr::options::Options;
use seisgpu::xcorr::XcorrPlan;
use std::time::Instant;

const USAGE: &str = "\
usage: cargo bench --bench xcorr -- [options]

  --pre N          GPU preprocessing: N station-days of 86,400 samples (default 10000)
  --pre-cpu N      CPU preprocessing: N station-days (default 200)
  --stations N     GPU correlation: N stations × 1 day (default 674)
  --stations-cpu N CPU correlation: N stations (default 100)
  --reps N         timed repetitions of each GPU case (default 3)
  --peak TFLOPS    the GPU's FP32 non-tensor peak assumed (default 67, H100 SXM)
  --no-gpu         CPU rows only
  -h, --help       this text

Without --bench (e.g. under `cargo test --benches`) tiny sizes run.";

struct Config {
    pre: usize,
    pre_cpu: usize,
    stations: usize,
    stations_cpu: usize,
    reps: usize,
    peak: f64,
    gpu: bool,
}

fn parse() -> Result<Config, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = args.iter().any(|a| a == "--bench");
    let mut c = if bench {
        Config {
            pre: 10000,
            pre_cpu: 200,
            stations: 674,
            stations_cpu: 100,
            reps: 3,
            peak: 67.0,
            gpu: true,
        }
    } else {
        Config {
            pre: 8,
            pre_cpu: 4,
            stations: 16,
            stations_cpu: 8,
            reps: 1,
            peak: 67.0,
            gpu: true,
        }
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<f64, String> {
            it.next()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("{name} needs a non-negative number"))
        };
        match a.as_str() {
            "--bench" => {}
            "--pre" => c.pre = num(a)? as usize,
            "--pre-cpu" => c.pre_cpu = num(a)? as usize,
            "--stations" => c.stations = num(a)? as usize,
            "--stations-cpu" => c.stations_cpu = num(a)? as usize,
            "--reps" => c.reps = (num(a)? as usize).max(1),
            "--peak" => c.peak = num(a)?,
            "--no-gpu" => c.gpu = false,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(c)
}

fn options() -> Options {
    Options {
        sampling_rate: 1.0,
        cc_len: 1800.0,
        step: 450.0,
        freqmin: 0.05,
        freqmax: 0.4,
        maxlag: 200.0,
        ..Options::default()
    }
}

const DAY: usize = 86_400;

/// `n` station-days of Gaussian-ish noise (sum of uniforms), station by station in parallel.
fn synthetic(n: usize) -> Vec<f32> {
    use rayon::prelude::*;
    let mut v = vec![0f32; n * DAY];
    v.par_chunks_mut(DAY).enumerate().for_each(|(s, day)| {
        let mut x = (s as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        for t in day.iter_mut() {
            *t = 1000.0 * (next() + next() + next() + next());
        }
    });
    v
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn max_rel(a: &[f32], b: &[f32]) -> f64 {
    let scale = b.iter().fold(0f64, |m, v| m.max(v.abs() as f64)).max(1e-30);
    a.iter()
        .zip(b)
        .fold(0f64, |m, (x, y)| m.max((x - y).abs() as f64))
        / scale
}

fn correlate_all(plan: &XcorrPlan, day: &seisgpu::xcorr::Spectra) -> Vec<f32> {
    let n = day.n_stations;
    let m = plan.geometry().n_lags();
    let mut out = vec![0f32; n * (n - 1) / 2 * m];
    plan.correlate(&[day], (0, n, 0, n), &mut out, m, None)
        .unwrap();
    out
}

fn main() {
    let cfg = match parse() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let o = options();
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    let gpu = if cfg.gpu {
        match Context::new(BackendRequest::Cuda, 0) {
            Ok(g) => Some(g),
            Err(e) => {
                println!("note: no GPU rows ({e})");
                None
            }
        }
    } else {
        None
    };
    let cpu_plan = XcorrPlan::new(cpu.clone(), o).unwrap();
    // "CPU: N threads", as the context describes itself
    let threads = cpu
        .describe()
        .lines()
        .find_map(|l| l.strip_prefix("CPU: "))
        .unwrap_or("? threads")
        .to_string();
    let g = *cpu_plan.geometry();
    let mut rows: Vec<String> = Vec::new();

    // --- Preprocessing.
    let n_pre = cfg.pre.max(cfg.pre_cpu);
    let t = Instant::now();
    let data = synthetic(n_pre);
    println!("synthetic input: {n_pre} station-days in {:.1} s", secs(t));
    let batch = |n: usize| TraceBatch::new(DAY, n, DAY).unwrap();
    let t = Instant::now();
    let s_cpu = cpu_plan
        .preprocess(&data[..cfg.pre_cpu * DAY], batch(cfg.pre_cpu), None)
        .unwrap();
    let cpu_pre = secs(t);
    rows.push(format!(
        "| preprocess {} station-days × 86,400 | CPU ({threads}) | {:.3} s | {:.1} ms per station-day | 10,000 in ≤ 10 s (GPU) |",
        cfg.pre_cpu,
        cpu_pre,
        cpu_pre / cfg.pre_cpu as f64 * 1e3
    ));
    if let Some(gpu) = &gpu {
        let plan = XcorrPlan::new(gpu.clone(), o).unwrap();
        // Check against the CPU on the CPU's station-days.
        let check = plan
            .preprocess(&data[..cfg.pre_cpu * DAY], batch(cfg.pre_cpu), None)
            .unwrap();
        let (a, b) = (check.to_host().unwrap(), s_cpu.to_host().unwrap());
        let flat =
            |v: &[num_complex::Complex32]| v.iter().flat_map(|c| [c.re, c.im]).collect::<Vec<_>>();
        let err = max_rel(&flat(&a), &flat(&b));
        assert!(
            check.kept == s_cpu.kept && err <= 1e-4,
            "GPU spectra differ from the CPU: {err:.2e}"
        );
        drop(check);
        let mut times = Vec::new();
        let mut with_copy = Vec::new();
        for _ in 0..cfg.reps {
            let t = Instant::now();
            let s = plan
                .preprocess(&data[..cfg.pre * DAY], batch(cfg.pre), None)
                .unwrap();
            times.push(secs(t));
            let host = s.to_host().unwrap();
            with_copy.push(secs(t));
            std::hint::black_box(host.len());
        }
        let (tp, tc) = (median(times), median(with_copy));
        let gbytes = (g.band_len * cfg.pre * s_cpu.n_windows * 8) as f64 / 1e9;
        rows.push(format!(
            "| preprocess {} station-days × 86,400 | GPU host→device spectra | {tp:.3} s | {:.3} ms per station-day; {tc:.3} s with the {gbytes:.1} GB of spectra copied back; max err vs CPU {err:.1e} | ≤ 10 s for 10,000 |",
            cfg.pre,
            tp / cfg.pre as f64 * 1e3
        ));
    }
    drop(data);
    drop(s_cpu);

    // --- Correlation + linear stack of one day.
    let n_corr = cfg.stations.max(cfg.stations_cpu);
    let data = synthetic(n_corr);
    let day_cpu = cpu_plan
        .preprocess(
            &data[..cfg.stations_cpu * DAY],
            batch(cfg.stations_cpu),
            None,
        )
        .unwrap();
    let t = Instant::now();
    let c_cpu = correlate_all(&cpu_plan, &day_cpu);
    let tc = secs(t);
    let flops =
        |n: usize| 8.0 * (n * n) as f64 * g.band_len as f64 * day_cpu.n_windows as f64 / 2.0;
    rows.push(format!(
        "| correlate + linear stack, {} stations × 1 day | CPU ({threads}) | {tc:.3} s | {} pairs, {:.1} GFLOP/s (counted) | — |",
        cfg.stations_cpu,
        cfg.stations_cpu * (cfg.stations_cpu - 1) / 2,
        flops(cfg.stations_cpu) / tc / 1e9
    ));
    if let Some(gpu) = &gpu {
        let plan = XcorrPlan::new(gpu.clone(), o).unwrap();
        let check_day = plan
            .preprocess(
                &data[..cfg.stations_cpu * DAY],
                batch(cfg.stations_cpu),
                None,
            )
            .unwrap();
        let err = max_rel(&correlate_all(&plan, &check_day), &c_cpu);
        assert!(
            err <= 1e-4,
            "GPU correlations differ from the CPU: {err:.2e}"
        );
        drop(check_day);
        let day = plan
            .preprocess(&data[..cfg.stations * DAY], batch(cfg.stations), None)
            .unwrap();
        let _ = correlate_all(&plan, &day); // warm-up: module, cuBLAS, cuFFT plans
        let times: Vec<f64> = (0..cfg.reps)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(correlate_all(&plan, &day).len());
                secs(t)
            })
            .collect();
        let tg = median(times);
        let gemm = seisgpu::xcorr::cuda::gemm_seconds(&plan, &day, 5).unwrap();
        let n = cfg.stations;
        let frac = flops(n) / gemm / (cfg.peak * 1e12);
        rows.push(format!(
            "| correlate + linear stack, {n} stations × 1 day | GPU host→host | {tg:.3} s | {} pairs × {} lags; a year ≈ {:.1} min; max err vs CPU {err:.1e} | ≤ 1 s per day |",
            n * (n - 1) / 2,
            g.n_lags(),
            tg * 365.0 / 60.0
        ));
        rows.push(format!(
            "| correlation GEMM alone, {n} stations ({} bins × {} windows) | GPU (cuBLAS CGEMM, events) | {:.2} ms | {:.1} TFLOP/s counted = {:.1} % of {} TFLOP/s FP32 peak (cuBLAS does 2× the counted FLOPs) | — |",
            g.band_len,
            day.n_windows,
            gemm * 1e3,
            flops(n) / gemm / 1e12,
            frac * 100.0,
            cfg.peak
        ));
    }
    println!();
    println!("| case | backend | time | detail | target |");
    println!("| --- | --- | ---: | --- | --- |");
    for r in rows {
        println!("{r}");
    }
}
