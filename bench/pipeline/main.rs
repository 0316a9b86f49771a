//! A processing chain on a volume that stays on the GPU, run three ways: host arrays per
//! call (each call copies its volume in and out), device calls on the application's stream
//! (one copy in before, one out after, not timed), and the device calls captured once into
//! a CUDA graph and replayed. The chain: DWT denoise of every trace → F-XY decon of the
//! volume → wave-packet forward, soft threshold and adjoint (the wave packets' inverse runs
//! conjugate gradients whose stopping test reads residuals on the host, so it cannot be
//! part of a graph; its iterations are a forward and an adjoint each).
//!
//! Printed: each way's end-to-end time (median of `--reps`), the sum of the device calls'
//! times measured one at a time with events (what the chain costs the device), their
//! ratio, and the host time spent inside each device call (the enqueue cost). The graph's
//! and the device calls' results are compared with the host calls'.

mod chain;
#[path = "../harness/mod.rs"]
mod harness;
mod ways;

use chain::{Chain, Shape};
use harness::cli::Cli;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;

const USAGE: &str = "\
usage: cargo bench --bench pipeline -- [options]

  --n N            the volume is N × N × N samples (default 256 with --bench, else 64)
  --directions D   wave-packet Lebedev rule size (default 350 with --bench, else 26)
  --levels L       wave-packet directional levels (default 5 at N = 256, 3 at 128, else 1)
  --reps R         timed repetitions of each way (default 5)";

struct Args {
    n: usize,
    directions: usize,
    levels: Option<usize>,
    reps: usize,
}

fn args(cli: &mut Cli) -> Result<Args, String> {
    let big = cli.bench;
    let mut a = Args {
        n: if big { 256 } else { 64 },
        directions: if big { 350 } else { 26 },
        levels: None,
        reps: 5,
    };
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--n" => a.n = cli.count(&flag)?,
            "--directions" => a.directions = cli.count(&flag)?,
            "--levels" => a.levels = Some(cli.count(&flag)?),
            "--reps" => a.reps = cli.count(&flag)?.max(1),
            other => return Err(cli.unknown(other)),
        }
    }
    Ok(a)
}

fn main() {
    let mut cli = Cli::from_env(USAGE);
    let a = match args(&mut cli) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let mut ctx = std::ptr::null_mut();
    if sg_context_create(SG_BACKEND_CUDA, 0, &mut ctx) != SG_OK {
        println!("pipeline: no CUDA context (the chain runs on device arrays); nothing to time");
        return;
    }
    let levels = a.levels.unwrap_or(match a.n {
        256 => 5,
        128 => 3,
        _ => 1,
    });
    let shape = Shape {
        n: a.n,
        nx: a.n,
        ny: a.n,
    };
    let t = std::time::Instant::now();
    let run = Chain::new(ctx, shape, a.directions, levels).and_then(|chain| {
        println!(
            "plans made in {:.1} s: {n}³ f32, {} directions, {levels} levels, {} coefficients",
            t.elapsed().as_secs_f64(),
            a.directions,
            chain.coefficients,
            n = a.n
        );
        ways::run(chain, a.reps)
    });
    sg_context_destroy(ctx);
    if let Err(e) = run {
        eprintln!("pipeline: {e}");
        std::process::exit(1);
    }
}
