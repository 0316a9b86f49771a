//! F-X / F-XY prediction filtering benchmark, host to host (caller arrays in pageable
//! memory, f32), on the CPU context (all cores) and, where one can be made, a CUDA context.
//!
//! Cases: `2d` the Penobscot crossline (601 traces × 1501 samples, data/penobscot-xl1155),
//! with the default options and in SU-compatible mode; `3d` a synthetic 250 × 250 × 1001
//! volume (plane events plus noise) with the seed's parameters: 7 × 7 operator, 20 × 20
//! windows stepping 17, 150-sample time windows (0.6 s at 4 ms, 20-sample tapers) padded to
//! 256. Throughput counts the input traces' bytes (4 per sample); the CPU also reports
//! traces/s per core. Each row is the median of `--reps` calls after one untimed call
//! (`harness::timing`). The GPU output is checked against the CPU's (relative RMS ≤ 1e-4)
//! when both run. A reference row times a page-locked host→device→host copy of the input,
//! the floor of a host-to-host GPU call. Prints a Markdown table; `--json`/`--csv` also
//! write the rows.

mod harness;

use harness::cli::Cli;
use harness::compare::rel_rms;
use harness::cuda::pinned_round_trip;
use harness::report::{write_records, Record, Table, Value};
use harness::timing::{measure, Measured, Reps, Sample};
use harness::{cpu_threads, gpu_context};
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
  --small-3d     a 120 × 100 × 1001 volume instead of 250 × 250 × 1001";

struct Args {
    cases: Vec<String>,
    modes: Vec<String>,
    reps: usize,
    small: bool,
}

fn args(cli: &mut Cli) -> Result<Args, String> {
    let mut a = Args {
        cases: vec!["2d".into(), "3d".into()],
        modes: vec!["cpu".into(), "gpu".into()],
        reps: 5,
        small: false,
    };
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--cases" => a.cases = cli.list(&flag)?,
            "--modes" => a.modes = cli.list(&flag)?,
            "--reps" => a.reps = cli.count(&flag)?.max(1),
            "--small-3d" => a.small = true,
            other => return Err(cli.unknown(other)),
        }
    }
    Ok(a)
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

/// The median of `reps` host-to-host calls after one untimed call (kernels compile,
/// pools and plans warm up), and the output.
fn run(ctx: &Arc<Context>, c: &Case, reps: usize) -> Result<(Measured<()>, Vec<f32>), String> {
    let (n, nx, ny) = c.shape;
    let plan = if c.dims == 2 {
        FxdeconPlan::new_2d(ctx.clone(), &c.options, n, ny)
    } else {
        FxdeconPlan::new_3d(ctx.clone(), &c.options, n, nx, ny)
    }
    .map_err(|e| e.to_string())?;
    let layout = Volume::new(n, nx, ny, n, n * nx).map_err(|e| e.to_string())?;
    let mut out = vec![0f32; c.data.len()];
    let m = measure(Reps::fixed(1, reps), |_| {
        let t = Instant::now();
        plan.execute(&c.data, &mut out, layout)
            .map_err(|e| e.to_string())?;
        Ok((Sample::since(t), None))
    })?;
    Ok((m, out))
}

/// The pinned host→device→host copy of the case's input, the floor of any host-to-host
/// GPU row (median of 5 after one untimed copy).
fn pinned_round_trip_ms(data: &[f32]) -> Result<f64, String> {
    let ctx = cudarc::driver::CudaContext::new(0).map_err(|e| format!("{e:?}"))?;
    let m = pinned_round_trip(&ctx.default_stream(), data, Reps::fixed(1, 5), |_| ())?;
    Ok(m.median_ms)
}

/// What a row timed.
#[derive(Clone, Copy)]
enum Kind {
    Cpu(usize),
    Gpu,
    /// The pinned copy: no traces processed.
    Copy,
}

impl Case {
    fn mb(&self) -> f64 {
        let (n, nx, ny) = self.shape;
        (n * nx * ny * 4) as f64 / 1e6
    }

    fn traces(&self) -> f64 {
        (self.shape.1 * self.shape.2) as f64
    }
}

/// One row of the table and of the records.
struct Line {
    backend: String,
    kind: Kind,
    time_ms: Result<f64, String>,
    gpu_vs_cpu: Option<f64>,
}

impl Line {
    fn cells(&self, c: &Case) -> Vec<String> {
        let mut v = vec![c.name.clone(), self.backend.clone()];
        match &self.time_ms {
            Err(e) => v.push(format!("error: {e}")),
            Ok(ms) => {
                let s = ms * 1e-3;
                v.push(format!("{ms:.1}"));
                v.push(format!("{:.1}", c.mb() / s));
                if !matches!(self.kind, Kind::Copy) {
                    v.push(format!("{:.0}", c.traces() / s));
                }
                if let Kind::Cpu(threads) = self.kind {
                    v.push(format!("{:.0}", c.traces() / s / threads as f64));
                }
            }
        }
        v.resize(6, String::new());
        v.push(self.gpu_vs_cpu.map_or(String::new(), |e| {
            format!("{e:.1e}{}", if e <= 1e-4 { "" } else { " (> 1e-4!)" })
        }));
        v
    }

    fn record(&self, c: &Case) -> Record {
        let ms = self.time_ms.as_ref().ok().copied();
        let s = ms.map(|ms| ms * 1e-3);
        let processes = !matches!(self.kind, Kind::Copy);
        vec![
            ("case", c.name.as_str().into()),
            ("backend", self.backend.as_str().into()),
            ("time_ms", ms.into()),
            ("mb_per_s", s.map(|s| c.mb() / s).into()),
            (
                "traces_per_s",
                s.filter(|_| processes).map(|s| c.traces() / s).into(),
            ),
            (
                "threads",
                match self.kind {
                    Kind::Cpu(t) => Some(t),
                    _ => None,
                }
                .into(),
            ),
            ("gpu_vs_cpu_rel_rms", self.gpu_vs_cpu.into()),
            (
                "error",
                Value::Text(self.time_ms.as_ref().err().cloned().unwrap_or_default()),
            ),
        ]
    }
}

fn main() {
    let mut cli = Cli::from_env(USAGE);
    let parsed = args(&mut cli);
    let a = cli.or_exit(parsed);
    let cpu = Context::new(BackendRequest::Cpu, 0).expect("CPU context");
    let threads = cpu_threads(&cpu);
    let gpu = if a.modes.iter().any(|m| m == "gpu") {
        gpu_context(0)
    } else {
        None
    };
    let want_cpu = a.modes.iter().any(|m| m == "cpu");
    let mut table = Table::new(&[
        "case",
        "backend",
        "time (ms)",
        "MB/s of input",
        "traces/s",
        "traces/s per core",
        "GPU vs CPU",
    ]);
    let mut records = Vec::new();
    for c in cases(&a) {
        let mut lines = Vec::new();
        let mut cpu_out = None;
        if want_cpu {
            let r = run(&cpu, &c, a.reps);
            lines.push(Line {
                backend: format!("CPU ({threads} threads)"),
                kind: Kind::Cpu(threads),
                time_ms: r.as_ref().map(|(m, _)| m.median_ms).map_err(Clone::clone),
                gpu_vs_cpu: None,
            });
            cpu_out = r.ok().map(|(_, out)| out);
        }
        if let Some(g) = &gpu {
            let r = run(g, &c, a.reps);
            lines.push(Line {
                backend: "GPU host-to-host".into(),
                kind: Kind::Gpu,
                gpu_vs_cpu: r
                    .as_ref()
                    .ok()
                    .zip(cpu_out.as_ref())
                    .map(|((_, out), co)| rel_rms(out, co)),
                time_ms: r.map(|(m, _)| m.median_ms),
            });
            lines.push(Line {
                backend: "reference: pinned H→D + D→H copy of the input".into(),
                kind: Kind::Copy,
                time_ms: pinned_round_trip_ms(&c.data),
                gpu_vs_cpu: None,
            });
        }
        for l in &lines {
            table.row(l.cells(&c));
            records.push(l.record(&c));
        }
    }
    print!("{}", table.markdown());
    println!("\nTarget: ≥ 2 GB/s host-to-host for the 3D case on an H100/H200 (the seed's 30.9 GB survey in ≤ 16 s).");
    write_records(&cli, "fxdecon", &records);
}
