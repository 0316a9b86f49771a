//! EM-logging exhaustive-search benchmark: the seed's table (Glinskikh & Gorbatenko 2015),
//! p = 3 … 9 searched conductivities of 10 values each (10^p models), n = 1,750
//! measurements (5 probes × 350 depth points of the VIKIZ-like synthetic log,
//! src/emlog/synthetic.rs, three reservoir layers × three zones), criterion F ≤ 1, the
//! grid centred on σ* and spanning 1.2 × the ellipsoid's extent. Fast mode (centred
//! quadratic form) and direct mode (the full n-row residual of every model), on the CPU
//! context (all cores) and a CUDA context where one can be made. Reports models/s and, in
//! direct mode, the f64 FLOP/s of the arithmetic executed (the same on both backends):
//! 4n per model (r = s − a·v, Σr²) plus 2n(p − 1) per row of 10 models (the row's partial
//! residual). Every GPU row is checked against the CPU's count where both ran. Prints
//! Markdown rows.

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::emlog::criterion::{Criterion, Mode, SearchOptions};
use seisgpu::emlog::grid::Axis;
use seisgpu::emlog::matrix::SensitivitySpec;
use seisgpu::emlog::synthetic::{reservoir, vikiz_like, with_noise};
use seisgpu::emlog::EmlogPlan;
use std::sync::Arc;
use std::time::Instant;

const USAGE: &str = "\
usage: cargo bench --bench emlog -- [options]

  --p LIST             parameter counts (default 3,4,5,6,7,8,9)
  --modes LIST         subset of cpu,gpu (default both)
  --cpu-direct-max P   largest p run in direct mode on the CPU (default 6: p = 7 takes minutes)
  --reps N             timed repetitions of rows under a second (default 3; the best is reported)
  -h, --help           this text";

fn main() {
    let mut ps: Vec<usize> = (3..=9).collect();
    let mut modes = vec!["cpu".to_string(), "gpu".to_string()];
    let (mut direct_max, mut reps) = (6usize, 3usize);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_default();
        match a.as_str() {
            "--p" => {
                ps = val()
                    .split(',')
                    .filter_map(|v| v.trim().parse().ok())
                    .collect()
            }
            "--modes" => modes = val().split(',').map(|v| v.trim().to_string()).collect(),
            "--cpu-direct-max" => direct_max = val().parse().unwrap_or(6),
            "--reps" => reps = val().parse().unwrap_or(3).max(1),
            "--bench" => {}
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => {
                eprintln!("unknown argument {other}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let log = vikiz_like(&reservoir(3), (0.25, 0.3), 350, -1.0, 4.6);
    let n = log.n;
    let f_exp = with_noise(&log.f, 0.02, 11);
    let delta = vec![0.02; n];
    let mut contexts: Vec<(&str, Arc<Context>)> = Vec::new();
    if modes.iter().any(|m| m == "cpu") {
        contexts.push((
            "CPU",
            Context::new(BackendRequest::Cpu, 0).expect("CPU context"),
        ));
    }
    if modes.iter().any(|m| m == "gpu") {
        match Context::new(BackendRequest::Cuda, 0) {
            Ok(c) => contexts.push(("GPU", c)),
            Err(e) => eprintln!("no GPU rows: {e}"),
        }
    }
    let threads = rayon::current_num_threads();
    println!("n = {n} measurements; CPU rows on {threads} threads\n");
    println!("| backend | mode | p | models | equivalent | time, ms | models/s | GFLOP/s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for &p in &ps {
        let searched: Vec<usize> = (1..=p).collect();
        let spec = SensitivitySpec {
            n,
            m: log.m,
            a: &log.a,
            row_stride: log.m,
            col_stride: 1,
            sigma0: &log.sigma,
            f0: &log.f,
            f_exp: &f_exp,
            delta: &delta,
            searched: &searched,
        };
        for mode in [Mode::Fast, Mode::Direct] {
            let mut cpu_count = None;
            for (name, ctx) in &contexts {
                if *name == "CPU" && mode == Mode::Direct && p > direct_max {
                    continue;
                }
                let plan = EmlogPlan::new(ctx.clone(), &spec).expect("plan");
                let an = plan.analytic(Criterion::FitWithinErrors);
                let axes: Vec<Axis> = (0..p)
                    .map(|k| {
                        let h = 1.2 * (an.upper[k] - an.sigma_star[k]);
                        Axis::Linear {
                            min: an.sigma_star[k] - h,
                            max: an.sigma_star[k] + h,
                            count: 10,
                        }
                    })
                    .collect();
                let opts = SearchOptions {
                    mode,
                    ..Default::default()
                };
                // Untimed: the first search on a context compiles the kernels for this p.
                let one: Vec<Axis> = (0..p)
                    .map(|k| Axis::Linear {
                        min: an.sigma_star[k],
                        max: an.sigma_star[k],
                        count: 1,
                    })
                    .collect();
                plan.search(&one, &opts).expect("warm-up search");
                let mut best = f64::INFINITY;
                let mut count = 0;
                for _ in 0..reps {
                    let t = Instant::now();
                    let r = plan.search(&axes, &opts).expect("search");
                    best = best.min(t.elapsed().as_secs_f64());
                    count = r.count;
                    if best > 1.0 {
                        break;
                    }
                }
                if *name == "CPU" {
                    cpu_count = Some(count);
                } else if let Some(c) = cpu_count {
                    assert_eq!(count, c, "GPU and CPU counts differ (p = {p}, {mode:?})");
                }
                let models = 10f64.powi(p as i32);
                let flops = (mode == Mode::Direct).then(|| {
                    models * 4.0 * n as f64 + models / 10.0 * 2.0 * n as f64 * (p - 1) as f64
                });
                println!(
                    "| {name} | {} | {p} | {models:.0e} | {count} | {:.3} | {:.3e} | {} |",
                    if mode == Mode::Fast { "fast" } else { "direct" },
                    best * 1e3,
                    models / best,
                    flops.map_or("–".to_string(), |f| format!("{:.1}", f / best / 1e9)),
                );
            }
        }
    }
}
