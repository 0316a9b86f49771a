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
//! Prints a Markdown table (lines starting with '|'); `--json`/`--csv` also write the rows.

mod harness;

use harness::cli::Cli;
use harness::compare::max_rel_err;
use harness::report::{write_records, Record, Table};
use harness::timing::{measure, Measured, Reps, Sample};
use harness::{cpu_threads, gpu_context};
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::layout::TraceBatch;
/// The GEMM stage alone: below the plan API.
use seisgpu::xcorr::cuda::gemm_seconds;
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

fn parse(cli: &mut Cli) -> Result<Config, String> {
    let mut c = if cli.bench {
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
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--pre" => c.pre = cli.count(&flag)?,
            "--pre-cpu" => c.pre_cpu = cli.count(&flag)?,
            "--stations" => c.stations = cli.count(&flag)?,
            "--stations-cpu" => c.stations_cpu = cli.count(&flag)?,
            "--reps" => c.reps = cli.count(&flag)?.max(1),
            "--peak" => {
                c.peak = cli.number(&flag)?;
                if c.peak.is_nan() || c.peak <= 0.0 {
                    return Err("--peak needs a positive number".into());
                }
            }
            "--no-gpu" => c.gpu = false,
            other => return Err(cli.unknown(other)),
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

/// One row: the table's cells and the record's fields.
struct Line {
    case: String,
    backend: String,
    time_s: f64,
    /// The time as shown (seconds, or milliseconds for the GEMM).
    time: String,
    detail: String,
    target: &'static str,
}

impl Line {
    fn record(&self) -> Record {
        vec![
            ("case", self.case.as_str().into()),
            ("backend", self.backend.as_str().into()),
            ("time_s", self.time_s.into()),
            ("detail", self.detail.as_str().into()),
            ("target", self.target.into()),
        ]
    }
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
    let mut cli = Cli::from_env(USAGE);
    let parsed = parse(&mut cli);
    let cfg = cli.or_exit(parsed);
    let o = options();
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    let gpu = if cfg.gpu { gpu_context(0) } else { None };
    let cpu_plan = XcorrPlan::new(cpu.clone(), o).unwrap();
    let cpu_label = format!("CPU ({} threads)", cpu_threads(&cpu));
    let g = *cpu_plan.geometry();
    let mut rows: Vec<Line> = Vec::new();

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
    rows.push(Line {
        case: format!("preprocess {} station-days × 86,400", cfg.pre_cpu),
        backend: cpu_label.clone(),
        time_s: cpu_pre,
        time: format!("{cpu_pre:.3} s"),
        detail: format!(
            "{:.1} ms per station-day",
            cpu_pre / cfg.pre_cpu as f64 * 1e3
        ),
        target: "10,000 in ≤ 10 s (GPU)",
    });
    if let Some(gpu) = &gpu {
        let plan = XcorrPlan::new(gpu.clone(), o).unwrap();
        // Check against the CPU on the CPU's station-days.
        let check = plan
            .preprocess(&data[..cfg.pre_cpu * DAY], batch(cfg.pre_cpu), None)
            .unwrap();
        let (a, b) = (check.to_host().unwrap(), s_cpu.to_host().unwrap());
        let flat =
            |v: &[num_complex::Complex32]| v.iter().flat_map(|c| [c.re, c.im]).collect::<Vec<_>>();
        let err = max_rel_err(&flat(&a), &flat(&b));
        assert!(
            check.kept == s_cpu.kept && err <= 1e-4,
            "GPU spectra differ from the CPU: {err:.2e}"
        );
        drop(check);
        // No warm-up: the check above compiled the kernels. The sample's one part is the
        // time with the spectra copied back.
        let m: Measured<()> = measure(Reps::fixed(0, cfg.reps), |_| {
            let t = Instant::now();
            let s = plan
                .preprocess(&data[..cfg.pre * DAY], batch(cfg.pre), None)
                .map_err(|e| e.to_string())?;
            let mut sample = Sample::since(t);
            let host = s.to_host().map_err(|e| e.to_string())?;
            sample.parts.push(secs(t) * 1e3);
            std::hint::black_box(host.len());
            Ok((sample, None))
        })
        .unwrap();
        let (tp, tc) = (m.median_ms * 1e-3, m.parts_median[0] * 1e-3);
        let gbytes = (g.band_len * cfg.pre * s_cpu.n_windows * 8) as f64 / 1e9;
        rows.push(Line {
            case: format!("preprocess {} station-days × 86,400", cfg.pre),
            backend: "GPU host→device spectra".into(),
            time_s: tp,
            time: format!("{tp:.3} s"),
            detail: format!(
                "{:.3} ms per station-day; {tc:.3} s with the {gbytes:.1} GB of spectra copied back; max err vs CPU {err:.1e}",
                tp / cfg.pre as f64 * 1e3
            ),
            target: "≤ 10 s for 10,000",
        });
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
    rows.push(Line {
        case: format!(
            "correlate + linear stack, {} stations × 1 day",
            cfg.stations_cpu
        ),
        backend: cpu_label,
        time_s: tc,
        time: format!("{tc:.3} s"),
        detail: format!(
            "{} pairs, {:.1} GFLOP/s (counted)",
            cfg.stations_cpu * (cfg.stations_cpu - 1) / 2,
            flops(cfg.stations_cpu) / tc / 1e9
        ),
        target: "—",
    });
    if let Some(gpu) = &gpu {
        let plan = XcorrPlan::new(gpu.clone(), o).unwrap();
        let check_day = plan
            .preprocess(
                &data[..cfg.stations_cpu * DAY],
                batch(cfg.stations_cpu),
                None,
            )
            .unwrap();
        let err = max_rel_err(&correlate_all(&plan, &check_day), &c_cpu);
        assert!(
            err <= 1e-4,
            "GPU correlations differ from the CPU: {err:.2e}"
        );
        drop(check_day);
        let day = plan
            .preprocess(&data[..cfg.stations * DAY], batch(cfg.stations), None)
            .unwrap();
        // One warm-up call: module, cuBLAS, cuFFT plans.
        let m: Measured<()> = measure(Reps::fixed(1, cfg.reps), |_| {
            let t = Instant::now();
            std::hint::black_box(correlate_all(&plan, &day).len());
            Ok((Sample::since(t), None))
        })
        .unwrap();
        let tg = m.median_ms * 1e-3;
        let gemm = gemm_seconds(&plan, &day, 5).unwrap();
        let n = cfg.stations;
        let frac = flops(n) / gemm / (cfg.peak * 1e12);
        rows.push(Line {
            case: format!("correlate + linear stack, {n} stations × 1 day"),
            backend: "GPU host→host".into(),
            time_s: tg,
            time: format!("{tg:.3} s"),
            detail: format!(
                "{} pairs × {} lags; a year ≈ {:.1} min; max err vs CPU {err:.1e}",
                n * (n - 1) / 2,
                g.n_lags(),
                tg * 365.0 / 60.0
            ),
            target: "≤ 1 s per day",
        });
        rows.push(Line {
            case: format!(
                "correlation GEMM alone, {n} stations ({} bins × {} windows)",
                g.band_len, day.n_windows
            ),
            backend: "GPU (cuBLAS CGEMM, events)".into(),
            time_s: gemm,
            time: format!("{:.2} ms", gemm * 1e3),
            detail: format!(
                "{:.1} TFLOP/s counted = {:.1} % of {} TFLOP/s FP32 peak (cuBLAS does 2× the counted FLOPs)",
                flops(n) / gemm / 1e12,
                frac * 100.0,
                cfg.peak
            ),
            target: "—",
        });
    }
    let mut table = Table::new(&["case", "backend", ">time", "detail", "target"]);
    for r in &rows {
        table.row(vec![
            r.case.clone(),
            r.backend.clone(),
            r.time.clone(),
            r.detail.clone(),
            r.target.into(),
        ]);
    }
    println!();
    print!("{}", table.markdown());
    let records: Vec<Record> = rows.iter().map(Line::record).collect();
    write_records(&cli, "xcorr", &records);
}
