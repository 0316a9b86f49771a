//! DWT denoise benchmark: GSL daubechies 8, f32, default denoise options (universal
//! threshold, soft, σ from the finest level, all levels).
//!
//! Rows per case (`rows`, `device_rows`): the GSL single-threaded reference (`gsl`,
//! through FFI, in f64), the seisgpu CPU context (all cores), and, where a CUDA context
//! can be made, the GPU host-to-host (pageable caller memory), the GPU device-resident
//! kernels (`denoise_device_enqueue`), and two reference rows measured in the same run:
//! a device-to-device copy of the same bytes and a pinned host→device + device→host
//! transfer of the case's bytes.
//!
//! Every output is checked before it is timed (and again after): the CPU against the
//! GSL rule, the GPU against the CPU. Prints a markdown table (`report`) and a summary
//! against the targets (`targets`); `--csv`/`--json` also write the rows.
//! `bench/README.md` describes the arguments and every column.

#[path = "../harness/mod.rs"]
mod harness;

mod case;
mod config;
mod device_rows;
mod gsl;
mod report;
mod row_types;
mod rows;
mod targets;

/// The library's paths below its public plan API, in one place.
mod internal {
    pub use seisgpu::dwt::cuda::{denoise_device_enqueue, DeviceTraces};
}

use device_rows::Gpu;
use harness::cli::Cli;
use harness::cpu_threads;
use harness::timing::MIN_REPS;
use seisgpu::backend::cuda::CudaBackend;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use std::fmt::Write as _;
use std::time::Instant;

/// GSL's daubechies member (and `Family::Daubechies`'s) every row uses.
const MEMBER: u32 = 8;
/// Bytes counted per sample: one f32 read plus one f32 written.
const BYTES_PER_SAMPLE: f64 = 8.0;
/// Largest accepted max |a − b| / max |b| between two implementations.
const TOLERANCE: f64 = 1e-4;

fn lib_err(e: seisgpu::Error) -> String {
    e.to_string()
}

fn main() {
    let mut cli = Cli::from_env(config::USAGE);
    let parsed = config::parse(&mut cli);
    let cfg = cli.or_exit(parsed);
    let cpu_ctx = match Context::new(BackendRequest::Cpu, 0) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: could not create the CPU context: {e}");
            std::process::exit(1);
        }
    };
    let want_gpu = cfg.gpu || cfg.device || cfg.refs;
    let mut gpu_note = String::new();
    let gpu = if !want_gpu {
        gpu_note = "GPU rows not selected (--modes)".into();
        None
    } else {
        match Context::new(BackendRequest::Cuda, cfg.ordinal) {
            Err(e) => {
                gpu_note = format!("GPU rows skipped: no CUDA context could be created: {e}");
                None
            }
            Ok(ctx) => {
                let backend = if cfg.device || cfg.refs {
                    CudaBackend::new(cfg.ordinal.max(0) as usize).map_err(lib_err)
                } else {
                    Err("not needed".into())
                };
                Some(Gpu { ctx, backend })
            }
        }
    };

    let mut head = String::new();
    let _ = writeln!(head, "# seisgpu DWT denoise benchmark\n");
    let _ = writeln!(
        head,
        "- wavelet: GSL daubechies {MEMBER} (Family::Daubechies, member {MEMBER}), periodic, all levels; samples f32"
    );
    let _ = writeln!(
        head,
        "- denoise: default options: universal threshold σ·√(2 ln n), σ = median(|d₁|)/0.6745 from the finest level, soft, every detail level"
    );
    let _ = writeln!(
        head,
        "- GSL row: libgsl through FFI, one thread, in f64 (GSL is double only): per trace f32→f64, gsl_wavelet_transform_forward, the same threshold rule in plain Rust, gsl_wavelet_transform_inverse, f64→f32"
    );
    let _ = writeln!(
        head,
        "- input: deterministic sines + chirp + blocks + Gaussian noise (σ 0.3); GB/s counts {BYTES_PER_SAMPLE} bytes per sample (f32 read once + written once)"
    );
    let _ = writeln!(
        head,
        "- timing: median of the timed reps after warm-up (host rows: wall clock, warm-up {}; GPU device and reference rows: CUDA events on the stream, warm-up {}); at most ~{} s of timed calls per row, at least {MIN_REPS} reps",
        cfg.warmup,
        cfg.warmup.max(3),
        cfg.budget_s
    );
    let _ = writeln!(
        head,
        "- checks: max |out − ref| / max |ref| on the first warm-up call and the last timed call; tolerance {TOLERANCE:.0e}{}",
        if cfg.quick { "; --quick set" } else { "" }
    );
    let _ = writeln!(
        head,
        "- CPU threads (seisgpu CPU context): {}",
        cpu_threads(&cpu_ctx)
    );
    let _ = writeln!(head, "\nCPU context:\n\n```\n{}\n```", cpu_ctx.describe());
    match &gpu {
        Some(g) => {
            let _ = writeln!(head, "\nGPU context:\n\n```\n{}\n```", g.ctx.describe());
            if let Err(e) = &g.backend {
                if cfg.device || cfg.refs {
                    let _ = writeln!(
                        head,
                        "\nnote: no CUDA backend for the device-resident rows: {e}"
                    );
                }
            }
        }
        None => {
            let _ = writeln!(head, "\nnote: {}", gpu_note.replace('\n', " "));
        }
    }
    print!("{head}");
    let _ = std::io::Write::flush(&mut std::io::stdout());

    let t_all = Instant::now();
    let mut rows = Vec::new();
    for &case in &cfg.cases {
        rows.extend(rows::run_case(&cfg, case, &cpu_ctx, gpu.as_ref()));
    }
    println!("\n{}", report::table(&rows));
    println!("{}", targets::summary(&rows, &cfg));
    println!("(total {:.1} s)", t_all.elapsed().as_secs_f64());
    harness::report::write_records(&cli, "dwt", &report::records(&rows));
}
