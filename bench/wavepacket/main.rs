//! Gaussian wave-packet benchmark: the seed's Table 2 (Nikitin, Duchkov, Andersson 2017).
//! Cubes of N = 64, 128, 256 (1/3/5 directional levels), 350 Lebedev directions,
//! f32: plan creation, forward C and adjoint C* (host arrays in and out), on the CPU
//! context (all cores) and, where one can be made, a CUDA context (the USFFTs and the box
//! stage on the GPU; host arrays in and out, and device-resident).
//!
//! Per row (`rows`): redundancy, plan time, the median forward and adjoint times after one
//! untimed call each, ‖Cf‖²/‖f‖², the round trip ‖inverse(Cf) − f‖/‖f‖ (correction filter
//! plus conjugate gradients, tol 1e-5, at most 20 iterations), and on GPU rows the device
//! memory the plan took. The input is a synthetic seismic cube (`cube`). Prints a Markdown
//! table, the seed's figures beside ours, and the targets (`report`); `--json`/`--csv`
//! also write the rows. `--tiles K` adds volumes of K × K tiles (`tiles`).
//! `bench/README.md` describes the flags and the columns.

#[path = "../harness/mod.rs"]
mod harness;

mod config;
mod cube;
mod report;
mod rows;
mod tiles;

use harness::cli::Cli;
use harness::report::write_records;
use harness::{cpu_threads, gpu_context};
use report::{Line, Mode};
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use std::time::Instant;

fn main() {
    let start = Instant::now();
    let mut cli = Cli::from_env(config::USAGE);
    let parsed = config::parse(&mut cli);
    let cfg = cli.or_exit(parsed);
    let cpu = Context::new(BackendRequest::Cpu, 0).expect("CPU context");
    let threads = cpu_threads(&cpu);
    let gpu = if cfg.gpu {
        gpu_context(cfg.ordinal)
    } else {
        None
    };
    // The device's free memory is read through the driver's handle on the same primary
    // context the library uses.
    let cu = gpu
        .as_ref()
        .and_then(|_| cudarc::driver::CudaContext::new(cfg.ordinal as usize).ok());
    println!(
        "f32, cutoff {}, inverse tol {:.0e} (≤ {} CG iterations); CPU rows on {threads} threads; \
         GPU rows: USFFTs and box stage on the GPU, host arrays in and out (device-resident \
         beside)\n",
        cfg.cutoff, cfg.tol, cfg.max_iter
    );
    let past_deadline = || start.elapsed().as_secs_f64() > cfg.deadline_s;
    let mut lines = Vec::new();
    for &case in &cfg.cases {
        let name = report::case_name(case, &cfg);
        let t = Instant::now();
        let data = cube::seismic_volume(case.n, case.lateral);
        eprintln!("{name}: test cube in {:.1} s", t.elapsed().as_secs_f64());
        let mut modes = Vec::new();
        if let Some(g) = &gpu {
            modes.push((Mode::Gpu, g, threads, None));
        }
        if cfg.cpu {
            let skip =
                (case.n > cfg.cpu_max_n).then(|| format!("N > --cpu-max-n {}", cfg.cpu_max_n));
            modes.push((Mode::Cpu, &cpu, threads, skip));
        }
        for (mode, ctx, threads, mut skipped) in modes {
            if skipped.is_none() && past_deadline() {
                skipped = Some(format!("past --deadline {} s", cfg.deadline_s));
            }
            let row = match &skipped {
                Some(_) => rows::Row::default(),
                None => {
                    let dev = if mode == Mode::Gpu { cu.as_ref() } else { None };
                    rows::run(ctx, dev, case, &cfg, &data, &past_deadline)
                }
            };
            eprintln!(
                "{name}, {}: done at {:.0} s{}",
                if mode == Mode::Gpu { "GPU" } else { "CPU" },
                start.elapsed().as_secs_f64(),
                row.error
                    .as_ref()
                    .map(|e| format!(" (error: {e})"))
                    .unwrap_or_default()
            );
            lines.push(Line {
                case,
                mode,
                threads,
                skipped,
                row,
            });
        }
    }
    print!("{}", report::table(&lines, &cfg).markdown());
    print!("\n{}", report::plan_phases(&lines, &cfg));
    println!(
        "\nThe seed's TITAN X figures stand beside rows of its cases only (350 directions, \
         1/3/5 levels for N = 64/128/256); its 20-core Xeon E5-2650 took 220/232, \
         1,992/2,153 and 20,313/23,332 s (forward/adjoint).\n"
    );
    print!("{}", report::targets(&lines, &cfg));
    if cfg.tiles > 0 {
        println!(
            "\nTiled volumes (--tiles {}, the seed's §3.5):\n",
            cfg.tiles
        );
        print!("{}", tiles::HEAD);
        // Every other GPU too, for a line with the tiles dealt out over all of them.
        let devices = cudarc::driver::CudaContext::device_count()
            .unwrap_or(0)
            .max(0) as usize;
        let mut all_gpus: Vec<_> = gpu.iter().cloned().collect();
        for ordinal in (0..devices).filter(|&o| o as i32 != cfg.ordinal) {
            if all_gpus.is_empty() {
                break;
            }
            if let Ok(c) = Context::new(BackendRequest::Cuda, ordinal as i32) {
                all_gpus.push(c);
            }
        }
        for &case in &cfg.cases {
            if let Some(g) = &gpu {
                print!(
                    "{}",
                    tiles::line(std::slice::from_ref(g), "GPU", case, cfg.tiles, &cfg)
                );
            }
            if all_gpus.len() > 1 {
                let mode = format!("{} GPUs", all_gpus.len());
                print!("{}", tiles::line(&all_gpus, &mode, case, cfg.tiles, &cfg));
            }
            if cfg.cpu && case.n <= cfg.cpu_max_n {
                print!(
                    "{}",
                    tiles::line(std::slice::from_ref(&cpu), "CPU", case, cfg.tiles, &cfg)
                );
            }
        }
    }
    write_records(&cli, "wavepacket", &report::records(&lines, &cfg));
}
