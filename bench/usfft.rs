//! USFFT benchmark: the seed's Table 1 cases (N = 64, 128, 256 modes per dimension,
//! M = N³/4, N³/2, N³ uniformly random points in the cube), types 1 (u2e) and 2 (e2u), on
//! the CPU and the GPU (host-to-host, device-resident), with set-points timed separately,
//! ns per point, the accuracy reached (relative ℓ2 error against direct sums on a random
//! subset of the output), and the ratio to the seed's TITAN X times where the seed gives one.
//! Prints a Markdown table (lines starting with '|') and a summary against the targets.
//!
//! Options:
//!   --quick             N = 64, 128, 256 at M = N³, f32 tol 1e-6 and N = 256 f64 tol 1e-9,
//!                       GPU only unless --modes says otherwise (about a minute of device time)
//!   --n LIST            mode counts per dimension (64,128,256)
//!   --frac LIST         M as fractions of N³ (0.25,0.5,1)
//!   --prec LIST         f32,f64 (f32); f32 uses --tol32 (1e-6), f64 --tol64 (1e-9)
//!   --kernel LIST       es,gauss (es)
//!   --type LIST         1,2 (both)
//!   --modes LIST        cpu,gpu,device (all that are available)
//!   --reps N            timed executes per row (5); one untimed call before
//!   --samples N         output entries checked against direct sums (16)
//!   --max-cpu-points N  skip CPU rows above N points (2^22; the CPU is slow on 256³)

use cudarc::driver::{sys, CudaSlice};
use num_complex::Complex;
use rayon::prelude::*;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::usfft::{KernelShape, ModeOrder, Real, TransformType, UsfftOptions, UsfftPlan};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Cpu,
    GpuHost,
    GpuDevice,
}

impl Mode {
    fn label(self, threads: usize) -> String {
        match self {
            Mode::Cpu => format!("CPU {threads} thr"),
            Mode::GpuHost => "GPU host→host".into(),
            Mode::GpuDevice => "GPU device-resident".into(),
        }
    }
}

struct Config {
    ns: Vec<usize>,
    fracs: Vec<f64>,
    precs: Vec<String>,
    kernels: Vec<KernelShape>,
    types: Vec<TransformType>,
    modes: Vec<Mode>,
    reps: usize,
    samples: usize,
    tol32: f64,
    tol64: f64,
    max_cpu_points: usize,
    quick: bool,
}

fn list<T>(s: &str, f: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    s.split(',').map(|x| f(x.trim())).collect()
}

fn parse_args() -> Result<Config, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut c = Config {
        ns: vec![64, 128, 256],
        fracs: vec![0.25, 0.5, 1.0],
        precs: vec!["f32".into()],
        kernels: vec![KernelShape::ExpSemicircle],
        types: vec![TransformType::Type1, TransformType::Type2],
        modes: vec![Mode::Cpu, Mode::GpuHost, Mode::GpuDevice],
        reps: 5,
        samples: 16,
        tol32: 1e-6,
        tol64: 1e-9,
        max_cpu_points: 1 << 22,
        quick: false,
    };
    let mut modes_given = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        let num = |s: &str| s.parse::<f64>().map_err(|_| format!("bad number {s:?}"));
        match a.as_str() {
            "--bench" => {}
            "--quick" => c.quick = true,
            "--n" => c.ns = list(&val()?, |s| s.parse().map_err(|_| format!("bad N {s:?}")))?,
            "--frac" => c.fracs = list(&val()?, num)?,
            "--prec" => c.precs = list(&val()?, |s| Ok(s.to_string()))?,
            "--kernel" => {
                c.kernels = list(&val()?, |s| match s {
                    "es" => Ok(KernelShape::ExpSemicircle),
                    "gauss" => Ok(KernelShape::Gaussian),
                    _ => Err(format!("bad kernel {s:?}")),
                })?
            }
            "--type" => {
                c.types = list(&val()?, |s| match s {
                    "1" => Ok(TransformType::Type1),
                    "2" => Ok(TransformType::Type2),
                    _ => Err(format!("bad type {s:?}")),
                })?
            }
            "--modes" => {
                modes_given = true;
                c.modes = list(&val()?, |s| match s {
                    "cpu" => Ok(Mode::Cpu),
                    "gpu" => Ok(Mode::GpuHost),
                    "device" => Ok(Mode::GpuDevice),
                    _ => Err(format!("bad mode {s:?}")),
                })?
            }
            "--reps" => c.reps = num(&val()?)? as usize,
            "--samples" => c.samples = num(&val()?)? as usize,
            "--tol32" => c.tol32 = num(&val()?)?,
            "--tol64" => c.tol64 = num(&val()?)?,
            "--max-cpu-points" => c.max_cpu_points = num(&val()?)? as usize,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if c.quick {
        c.fracs = vec![1.0];
        c.precs = vec!["f32".into(), "f64".into()];
        c.reps = c.reps.min(3);
        c.samples = c.samples.min(8);
        if !modes_given {
            c.modes = vec![Mode::GpuHost, Mode::GpuDevice];
        }
    }
    Ok(c)
}

/// The seed's TITAN X times (s) where it gives them: (N, M, type) → seconds.
fn seed_titan_x(n: usize, m: usize, kind: TransformType) -> Option<f64> {
    match (n, m == n * n * n, kind) {
        (256, true, TransformType::Type2) => Some(37.9),
        (256, true, TransformType::Type1) => Some(28.9),
        _ => None,
    }
}

struct Row {
    case: String,
    mode: String,
    m: usize,
    set_ms: f64,
    exec_ms: Vec<f64>,
    err: f64,
    seed: Option<f64>,
    notes: String,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if s.is_empty() {
        f64::NAN
    } else {
        s[s.len() / 2]
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn uniform(seed: u64, i: usize) -> f64 {
    let mut s = seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407);
    (splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64
}

/// Relative ℓ2 error over `samples` random output entries against direct sums in f64.
fn sampled_error<T: Real>(
    kind: TransformType,
    n: usize,
    xs: &[Vec<T>; 3],
    input: &[Complex<T>],
    output: &[Complex<T>],
    samples: usize,
) -> f64 {
    let m = xs[0].len();
    let nm = n * n * n;
    let half = (n / 2) as i64;
    let (mut num, mut den) = (0.0, 0.0);
    for s in 0..samples {
        let (got, want) = match kind {
            TransformType::Type1 => {
                let idx = (uniform(17, s) * nm as f64) as usize % nm;
                let k = [idx % n, (idx / n) % n, idx / (n * n)].map(|q| (q as i64 - half) as f64);
                let want: Complex<f64> = (0..m)
                    .into_par_iter()
                    .map(|j| {
                        let ph: f64 = (0..3).map(|d| k[d] * xs[d][j].to_f64().unwrap()).sum();
                        let c = input[j];
                        Complex::new(c.re.to_f64().unwrap(), c.im.to_f64().unwrap())
                            * Complex::from_polar(1.0, ph)
                    })
                    .sum();
                (output[idx], want)
            }
            TransformType::Type2 => {
                let j = (uniform(19, s) * m as f64) as usize % m;
                let x: Vec<f64> = (0..3).map(|d| xs[d][j].to_f64().unwrap()).collect();
                // e^{i k x} per dimension, then the sum over modes plane by plane.
                let e: Vec<Vec<Complex<f64>>> = (0..3)
                    .map(|d| {
                        (0..n)
                            .map(|q| Complex::from_polar(1.0, (q as i64 - half) as f64 * x[d]))
                            .collect()
                    })
                    .collect();
                let want: Complex<f64> = (0..n * n)
                    .into_par_iter()
                    .map(|r| {
                        let (m2, m3) = (r % n, r / n);
                        let s = e[1][m2] * e[2][m3];
                        let row = &input[r * n..][..n];
                        row.iter()
                            .zip(&e[0])
                            .map(|(f, e1)| {
                                Complex::new(f.re.to_f64().unwrap(), f.im.to_f64().unwrap()) * e1
                            })
                            .sum::<Complex<f64>>()
                            * s
                    })
                    .sum();
                (output[j], want)
            }
        };
        let got = Complex::new(got.re.to_f64().unwrap(), got.im.to_f64().unwrap());
        num += (got - want).norm_sqr();
        den += want.norm_sqr();
    }
    (num / den).sqrt()
}

struct Gpu {
    ctx: Arc<Context>,
    peak_gbs: f64,
}

fn gpu_context() -> Result<Gpu, String> {
    let ctx = Context::new(BackendRequest::Cuda, 0).map_err(|e| e.to_string())?;
    let dev = cudarc::driver::CudaContext::new(0).map_err(|e| format!("{e:?}"))?;
    let attr = |a| dev.attribute(a).unwrap_or(0) as f64;
    let clock_khz = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    let bus_bits = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    Ok(Gpu {
        ctx,
        peak_gbs: 2.0 * clock_khz * 1e3 * bus_bits / 8.0 / 1e9,
    })
}

#[allow(clippy::too_many_arguments)]
fn run_case<T: Real>(
    cfg: &Config,
    cpu: &Arc<Context>,
    gpu: Option<&Gpu>,
    n: usize,
    m: usize,
    kernel: KernelShape,
    tol: f64,
    rows: &mut Vec<Row>,
) {
    let prec = std::any::type_name::<T>();
    let xs: [Vec<T>; 3] = std::array::from_fn(|d| {
        (0..m)
            .into_par_iter()
            .map(|j| {
                T::from_f64((2.0 * uniform(d as u64 + 1, j) - 1.0) * std::f64::consts::PI).unwrap()
            })
            .collect()
    });
    let kname = if kernel == KernelShape::ExpSemicircle {
        "ES"
    } else {
        "Gauss"
    };
    for &kind in &cfg.types {
        let n_in = if kind == TransformType::Type1 {
            m
        } else {
            n * n * n
        };
        let input: Vec<Complex<T>> = (0..n_in)
            .into_par_iter()
            .map(|i| {
                Complex::new(
                    T::from_f64(2.0 * uniform(11, i) - 1.0).unwrap(),
                    T::from_f64(2.0 * uniform(13, i) - 1.0).unwrap(),
                )
            })
            .collect();
        let tname = if kind == TransformType::Type1 {
            "type 1 (u2e)"
        } else {
            "type 2 (e2u)"
        };
        let case = format!(
            "N={n} M={} {tname} {prec} {kname} tol {tol:e}",
            thousands(m)
        );
        for &mode in &cfg.modes {
            let ctx = match mode {
                Mode::Cpu => {
                    if m > cfg.max_cpu_points {
                        continue;
                    }
                    cpu.clone()
                }
                _ => match gpu {
                    Some(g) => g.ctx.clone(),
                    None => continue,
                },
            };
            let threads = rayon::current_num_threads();
            let mut row = Row {
                case: case.clone(),
                mode: mode.label(threads),
                m,
                set_ms: f64::NAN,
                exec_ms: Vec::new(),
                err: f64::NAN,
                seed: seed_titan_x(n, m, kind),
                notes: String::new(),
            };
            if let Err(e) = time_mode::<T>(
                cfg, &ctx, gpu, mode, kind, n, kernel, tol, &xs, &input, &mut row,
            ) {
                row.notes = format!("error: {e}");
            }
            eprintln!(
                "{} | {} | set {:.1} ms | exec {:.2} ms | err {:.2e} {}",
                row.case,
                row.mode,
                row.set_ms,
                median(&row.exec_ms),
                row.err,
                row.notes
            );
            rows.push(row);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn time_mode<T: Real>(
    cfg: &Config,
    ctx: &Arc<Context>,
    gpu: Option<&Gpu>,
    mode: Mode,
    kind: TransformType,
    n: usize,
    kernel: KernelShape,
    tol: f64,
    xs: &[Vec<T>; 3],
    input: &[Complex<T>],
    row: &mut Row,
) -> Result<(), String> {
    let m = xs[0].len();
    let opts = UsfftOptions {
        kernel,
        upsampling: 2.0,
        mode_order: ModeOrder::Centred,
    };
    let err = |e: seisgpu::Error| e.to_string();
    let mut plan =
        UsfftPlan::<T>::new(ctx.clone(), kind, 3, [n, n, n], 1, tol, 1, opts).map_err(err)?;
    let t0 = Instant::now();
    plan.set_points(m, &xs[0], Some(&xs[1]), Some(&xs[2]))
        .map_err(err)?;
    row.set_ms = t0.elapsed().as_secs_f64() * 1e3;
    let zero = Complex::new(T::zero(), T::zero());
    let nm = n * n * n;
    let mut out = match kind {
        TransformType::Type1 => vec![zero; nm],
        TransformType::Type2 => vec![zero; m],
    };
    let mut inp = input.to_vec();
    let w = plan.spec().kernel.width;
    match mode {
        Mode::Cpu | Mode::GpuHost => {
            for rep in 0..=cfg.reps {
                let t = Instant::now();
                match kind {
                    TransformType::Type1 => plan.execute(&mut inp, &mut out),
                    TransformType::Type2 => plan.execute(&mut out, &mut inp),
                }
                .map_err(err)?;
                if rep > 0 {
                    row.exec_ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            row.notes = format!("w={w}");
        }
        Mode::GpuDevice => {
            let gpu = gpu.ok_or("no GPU")?;
            let pts = plan.device_points().ok_or("no device points")?;
            let s = pts.stream().clone();
            let drv = |e: cudarc::driver::DriverError| format!("{e:?}");
            let reals: Vec<T> = inp.iter().flat_map(|z| [z.re, z.im]).collect();
            let (mut c, mut f): (CudaSlice<T>, CudaSlice<T>) = match kind {
                TransformType::Type1 => (
                    s.clone_htod(&reals).map_err(drv)?,
                    s.alloc_zeros(2 * nm).map_err(drv)?,
                ),
                TransformType::Type2 => (
                    s.alloc_zeros(2 * m).map_err(drv)?,
                    s.clone_htod(&reals).map_err(drv)?,
                ),
            };
            let dev = s.context().clone();
            let ev: [cudarc::driver::CudaEvent; 4] = std::array::from_fn(|_| {
                dev.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                    .unwrap()
            });
            let mut phase = [Vec::new(), Vec::new(), Vec::new()];
            for rep in 0..=cfg.reps {
                plan.execute_device_timed(&mut c, &mut f, Some(&ev))
                    .map_err(err)?;
                s.synchronize().map_err(drv)?;
                if rep > 0 {
                    row.exec_ms
                        .push(ev[0].elapsed_ms(&ev[3]).map_err(drv)? as f64);
                    for p in 0..3 {
                        phase[p].push(ev[p].elapsed_ms(&ev[p + 1]).map_err(drv)? as f64);
                    }
                }
            }
            let host = match kind {
                TransformType::Type1 => s.clone_dtoh(&f),
                TransformType::Type2 => s.clone_dtoh(&c),
            }
            .map_err(drv)?;
            out = host.chunks(2).map(|z| Complex::new(z[0], z[1])).collect();
            // Bytes the spreading/interpolation kernel must move at least: per point its
            // sorted coordinates (i0 and d per dimension), index and strength, plus the fine
            // grid once (type 1: read-modify-write by atomics, type 2: read).
            let size = std::mem::size_of::<T>() as f64;
            let fine = plan.spec().fine_count() as f64 * 2.0 * size;
            let per_point = 3.0 * (4.0 + size) + 4.0 + 2.0 * size;
            let (spread_ms, name, grid_passes) = match kind {
                TransformType::Type1 => (median(&phase[0]), "spread", 2.0),
                TransformType::Type2 => (median(&phase[2]), "interp", 1.0),
            };
            let gbs = (m as f64 * per_point + grid_passes * fine) / (spread_ms * 1e-3) / 1e9;
            let pts = plan.device_points().ok_or("no device points")?;
            let bins = pts.tiling.tile;
            let method = match pts.method {
                seisgpu::usfft::cuda::SpreadMethod::SharedTiles { shared_bytes } => {
                    format!(
                        "SM {}×{}×{} bins, {} KiB",
                        bins[0],
                        bins[1],
                        bins[2],
                        shared_bytes / 1024
                    )
                }
                seisgpu::usfft::cuda::SpreadMethod::GlobalAtomics => "GM".to_string(),
            };
            row.notes = format!(
                "w={w}, {method}; {name} {spread_ms:.2} ms ({:.0}% of {:.0} GB/s HBM), FFT {:.2} ms, {} {:.2} ms",
                100.0 * gbs / gpu.peak_gbs,
                gpu.peak_gbs,
                median(&phase[1]),
                if kind == TransformType::Type1 { "deconv" } else { "deconv+copy" },
                if kind == TransformType::Type1 { median(&phase[2]) } else { median(&phase[0]) },
            );
        }
    }
    row.err = sampled_error(kind, n, xs, input, &out, cfg.samples);
    Ok(())
}

fn thousands(x: usize) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn main() {
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("usfft bench: {e}");
            std::process::exit(2);
        }
    };
    let cpu = Context::new(BackendRequest::Cpu, 0).expect("CPU context");
    let wants_gpu = cfg.modes.iter().any(|&m| m != Mode::Cpu);
    let gpu = if wants_gpu {
        match gpu_context() {
            Ok(g) => Some(g),
            Err(e) => {
                println!("GPU rows left out: {e}");
                None
            }
        }
    } else {
        None
    };
    let mut rows = Vec::new();
    for &n in &cfg.ns {
        for &frac in &cfg.fracs {
            let m = ((n * n * n) as f64 * frac).round() as usize;
            for prec in &cfg.precs {
                for &kernel in &cfg.kernels {
                    // The quick run: f64 only at N = 256.
                    if cfg.quick && prec == "f64" && n != *cfg.ns.iter().max().unwrap() {
                        continue;
                    }
                    match prec.as_str() {
                        "f32" => run_case::<f32>(
                            &cfg,
                            &cpu,
                            gpu.as_ref(),
                            n,
                            m,
                            kernel,
                            cfg.tol32,
                            &mut rows,
                        ),
                        "f64" => run_case::<f64>(
                            &cfg,
                            &cpu,
                            gpu.as_ref(),
                            n,
                            m,
                            kernel,
                            cfg.tol64,
                            &mut rows,
                        ),
                        other => eprintln!("unknown precision {other}"),
                    }
                }
            }
        }
    }
    println!();
    println!("| case | mode | set points ms | execute ms (median) | ns/point | rel ℓ2 err (sampled) | × faster than seed TITAN X | notes |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
    for r in &rows {
        let ms = median(&r.exec_ms);
        let ratio = r
            .seed
            .map_or("—".to_string(), |s| format!("{:.0}×", s * 1e3 / ms));
        println!(
            "| {} | {} | {:.1} | {:.2} | {:.2} | {:.1e} | {} | {} |",
            r.case,
            r.mode,
            r.set_ms,
            ms,
            ms * 1e6 / r.m as f64,
            r.err,
            ratio,
            r.notes.replace('|', "/")
        );
    }
    println!();
    println!("Targets (H100/H200, N = 256, M = N³, device-resident): f32 tol 1e-6 execute ≤ 20 ms per type, set points ≤ 10 ms; f64 tol 1e-9 ≤ 60 ms per type.");
    for r in rows
        .iter()
        .filter(|r| r.mode.starts_with("GPU device") && r.case.starts_with("N=256 M=16,777,216"))
    {
        let ms = median(&r.exec_ms);
        let limit = if r.case.contains("f64") { 60.0 } else { 20.0 };
        println!(
            "  {}: execute {ms:.1} ms ({}), set points {:.0} ms ({})",
            r.case,
            if ms <= limit { "met" } else { "missed" },
            r.set_ms,
            if r.set_ms <= 10.0 { "met" } else { "missed" }
        );
    }
}
