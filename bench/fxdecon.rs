//! F-X / F-XY prediction filtering benchmark, host to host (caller arrays in pageable
//! memory, f32), on the CPU context (all cores) and, where one can be made, a CUDA context.
//!
//! Cases: `2d` the Penobscot crossline (601 traces × 1501 samples, data/penobscot-xl1155),
//! with the default options and in SU-compatible mode; `3d` a synthetic 250 × 250 × 1001
//! volume (plane events plus noise) with the seed's parameters: 7 × 7 operator, 20 × 20
//! windows stepping 17, 150-sample time windows (0.6 s at 4 ms, 20-sample tapers) padded to
//! 256. Throughput counts the input traces' bytes (4 per sample); the CPU also reports
//! traces/s per core. The GPU output is checked against the CPU's (relative RMS ≤ 1e-4)
//! when both run. A reference row times a page-locked host→device→host copy of the input,
//! the floor of a host-to-host GPU call. Prints a Markdown table.

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::fxdecon::options::FxdeconOptions;
use seisgpu::fxdecon::{FxdeconPlan, Volume};
use std::sync::Arc;
use std::time::Instant;

const USAGE: &str = "\
usage: cargo bench --bench fxdecon -- [options]

  --cases LIST   comma-separated subset of 2d,3d (default: both)
  --modes LIST   comma-separated subset of cpu,gpu (default: both)
  --reps N       timed repetitions per row (default 5; the median is reported)
  --small-3d     a 120 × 100 × 1001 volume instead of 250 × 250 × 1001
  -h, --help     this text";

struct Args {
    cases: Vec<String>,
    modes: Vec<String>,
    reps: usize,
    small: bool,
}

fn args() -> Args {
    let mut a = Args {
        cases: vec!["2d".into(), "3d".into()],
        modes: vec!["cpu".into(), "gpu".into()],
        reps: 5,
        small: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let list = |v: Option<String>| -> Vec<String> {
            v.unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .collect()
        };
        match arg.as_str() {
            "--cases" => a.cases = list(it.next()),
            "--modes" => a.modes = list(it.next()),
            "--reps" => a.reps = it.next().and_then(|v| v.parse().ok()).unwrap_or(5).max(1),
            "--small-3d" => a.small = true,
            "--bench" => {}
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => {
                eprintln!("unknown argument {other}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    a
}

/// IBM float to f32 (the bundled SEG-Y's format).
fn ibm(b: [u8; 4]) -> f32 {
    let u = u32::from_be_bytes(b);
    let m = (u & 0x00ff_ffff) as f64 / (1u64 << 24) as f64;
    let e = ((u >> 24) & 0x7f) as i32 - 64;
    let s = if u >> 31 == 1 { -1.0 } else { 1.0 };
    (s * m * 16f64.powi(e)) as f32
}

fn penobscot() -> Vec<f32> {
    let d = std::fs::read("data/penobscot-xl1155/penobscot_xl1155.sgy")
        .expect("run from the repository root (data/penobscot-xl1155/penobscot_xl1155.sgy)");
    let (n, traces, row) = (1501, 601, 240 + 4 * 1501);
    (0..traces)
        .flat_map(|t| (0..n).map(move |i| 3600 + t * row + 240 + 4 * i))
        .map(|o| ibm(d[o..o + 4].try_into().unwrap()))
        .collect()
}

/// Plane events (25 Hz Ricker) plus uniform noise, trace (ix, iy) at (ix + nx·iy)·n.
fn volume(n: usize, nx: usize, ny: usize) -> Vec<f32> {
    let mut v = vec![0f32; n * nx * ny];
    let events = [
        (0.8, 0.002, -0.001, 1.0),
        (1.6, -0.003, 0.002, 0.7),
        (2.4, 0.0, 0.0, 0.5),
    ];
    let mut state = 0x1234_5678_9abc_def0u64;
    for (t, tr) in v.chunks_mut(n).enumerate() {
        let (ix, iy) = ((t % nx) as f64, (t / nx) as f64);
        for (i, s) in tr.iter_mut().enumerate() {
            let time = i as f64 * 0.004;
            let mut x = 0.0;
            for &(t0, px, py, a) in &events {
                let arg = (std::f64::consts::PI * 25.0 * (time - t0 - px * ix - py * iy)).powi(2);
                x += a * (1.0 - 2.0 * arg) * (-arg).exp();
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            x += 0.3 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
            *s = x as f32;
        }
    }
    v
}

struct Case {
    name: String,
    dims: usize,
    shape: (usize, usize, usize),
    options: FxdeconOptions,
    data: Arc<Vec<f32>>,
}

fn cases(a: &Args) -> Vec<Case> {
    let mut out = Vec::new();
    if a.cases.iter().any(|c| c == "2d") {
        let data = Arc::new(penobscot());
        out.push(Case {
            name: "2D Penobscot 601×1501, defaults".into(),
            dims: 2,
            shape: (1501, 1, 601),
            options: FxdeconOptions::default(),
            data: data.clone(),
        });
        out.push(Case {
            name: "2D Penobscot 601×1501, SU mode (nfft 3080)".into(),
            dims: 2,
            shape: (1501, 1, 601),
            options: FxdeconOptions {
                fft_length: 3080,
                ..FxdeconOptions::seismic_unix()
            },
            data,
        });
    }
    if a.cases.iter().any(|c| c == "3d") {
        let (nx, ny) = if a.small { (120, 100) } else { (250, 250) };
        out.push(Case {
            name: format!("3D {nx}×{ny}×1001, seed parameters"),
            dims: 3,
            shape: (1001, nx, ny),
            options: FxdeconOptions {
                time_window: 0.6,
                taper: 0.08,
                fft_length: 256,
                ..Default::default()
            },
            data: Arc::new(volume(1001, nx, ny)),
        });
    }
    out
}

fn run(ctx: &Arc<Context>, c: &Case, reps: usize) -> Result<(f64, Vec<f32>), String> {
    let (n, nx, ny) = c.shape;
    let plan = if c.dims == 2 {
        FxdeconPlan::new_2d(ctx.clone(), &c.options, n, ny)
    } else {
        FxdeconPlan::new_3d(ctx.clone(), &c.options, n, nx, ny)
    }
    .map_err(|e| e.to_string())?;
    let layout = Volume::new(n, nx, ny, n, n * nx).map_err(|e| e.to_string())?;
    let mut out = vec![0f32; c.data.len()];
    // One untimed call: kernels compile, pools and plans warm up.
    plan.execute(&c.data, &mut out, layout)
        .map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        plan.execute(&c.data, &mut out, layout)
            .map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((times[times.len() / 2], out))
}

/// Milliseconds to copy `bytes` host→device then device→host through page-locked memory:
/// the floor of any host-to-host GPU row (median of 5).
fn pinned_round_trip_ms(bytes: usize) -> Result<f64, String> {
    use cudarc::driver::CudaContext;
    let ctx = CudaContext::new(0).map_err(|e| format!("{e:?}"))?;
    let stream = ctx.default_stream();
    let n = bytes / 4;
    // SAFETY: filled before use.
    let mut host = unsafe { ctx.alloc_pinned::<f32>(n) }.map_err(|e| format!("{e:?}"))?;
    let mut dev = stream.alloc_zeros::<f32>(n).map_err(|e| format!("{e:?}"))?;
    let mut times = Vec::new();
    for _ in 0..6 {
        let t = Instant::now();
        stream
            .memcpy_htod(&host, &mut dev)
            .map_err(|e| format!("{e:?}"))?;
        stream
            .memcpy_dtoh(&dev, &mut host)
            .map_err(|e| format!("{e:?}"))?;
        stream.synchronize().map_err(|e| format!("{e:?}"))?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.remove(0);
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok(times[times.len() / 2] * 1e3)
}

fn rel_rms(a: &[f32], b: &[f32]) -> f64 {
    let (mut d, mut r) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        d += (x as f64 - y as f64).powi(2);
        r += (y as f64).powi(2);
    }
    (d / r).sqrt()
}

fn main() {
    let a = args();
    let cpu = Context::new(BackendRequest::Cpu, 0).expect("CPU context");
    let threads = std::env::var("SEISGPU_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let gpu = if a.modes.iter().any(|m| m == "gpu") {
        match Context::new(BackendRequest::Cuda, 0) {
            Ok(g) => {
                println!("{}\n", g.describe());
                Some(g)
            }
            Err(e) => {
                println!("no GPU rows: {e}\n");
                None
            }
        }
    } else {
        None
    };
    let want_cpu = a.modes.iter().any(|m| m == "cpu");
    println!("| case | backend | time (ms) | MB/s of input | traces/s | traces/s per core | GPU vs CPU |");
    println!("|---|---|---|---|---|---|---|");
    for c in cases(&a) {
        let (n, nx, ny) = c.shape;
        let mb = (n * nx * ny * 4) as f64 / 1e6;
        let traces = (nx * ny) as f64;
        let mut cpu_out = None;
        if want_cpu {
            match run(&cpu, &c, a.reps) {
                Ok((t, out)) => {
                    println!(
                        "| {} | CPU ({threads} threads) | {:.1} | {:.1} | {:.0} | {:.0} | |",
                        c.name,
                        t * 1e3,
                        mb / t,
                        traces / t,
                        traces / t / threads as f64
                    );
                    cpu_out = Some(out);
                }
                Err(e) => println!("| {} | CPU | error: {e} | | | | |", c.name),
            }
        }
        if let Some(g) = &gpu {
            match run(g, &c, a.reps) {
                Ok((t, out)) => {
                    let check = cpu_out.as_ref().map_or("—".to_string(), |co| {
                        let e = rel_rms(&out, co);
                        format!("{e:.1e}{}", if e <= 1e-4 { "" } else { " (> 1e-4!)" })
                    });
                    println!(
                        "| {} | GPU host-to-host | {:.1} | {:.1} | {:.0} | | {check} |",
                        c.name,
                        t * 1e3,
                        mb / t,
                        traces / t
                    );
                }
                Err(e) => println!("| {} | GPU | error: {e} | | | | |", c.name),
            }
            match pinned_round_trip_ms(n * nx * ny * 4) {
                Ok(ms) => println!(
                    "| {} | reference: pinned H→D + D→H copy of the input | {ms:.1} | {:.1} | | | |",
                    c.name,
                    mb / (ms * 1e-3)
                ),
                Err(e) => println!("| {} | reference copy | error: {e} | | | | |", c.name),
            }
        }
    }
    println!("\nTarget: ≥ 2 GB/s host-to-host for the 3D case on an H100/H200 (the seed's 30.9 GB survey in ≤ 16 s).");
}
