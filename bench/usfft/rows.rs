//! One row per case and mode: set the points (timed once), execute (median of the
//! reps after one untimed call), check against direct sums. The device-resident row
//! times by CUDA events and splits spreading/interpolation, FFT and deconvolution.

use crate::config::{Config, Mode};
use crate::direct::sampled_error;
use crate::finufft::{self, Finufft};
use crate::harness::cpu_threads;
use crate::harness::cuda::{drv_err, Events};
use crate::harness::random::uniform;
use crate::harness::report::thousands;
use crate::harness::timing::{measure, ms_since, Measured, Reps, Sample};
use crate::internal::SpreadMethod;
use cudarc::driver::{sys, CudaSlice};
use num_complex::Complex;
use rayon::prelude::*;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::{KernelShape, ModeOrder, TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use std::sync::Arc;
use std::time::Instant;

/// Type 3 has rows of its own (`type3`).
const TYPE3: &str = "type 3 rows run through bench/usfft/type3.rs";

pub struct Row {
    pub case: String,
    pub mode: String,
    pub dim: usize,
    pub kind: TransformType,
    /// "f32" or "f64".
    pub prec: &'static str,
    pub tol: f64,
    pub clustered: bool,
    pub n: usize,
    pub m: usize,
    pub set_ms: f64,
    /// The median execute time.
    pub exec_ms: f64,
    pub err: f64,
    /// The seed's TITAN X time (s), where it gives one.
    pub seed: Option<f64>,
    pub notes: String,
}

/// The seed's TITAN X times (s) where it gives them: (N, M, type) → seconds.
fn seed_titan_x(n: usize, m: usize, kind: TransformType) -> Option<f64> {
    match (n, m == n * n * n, kind) {
        (256, true, TransformType::Type2) => Some(37.9),
        (256, true, TransformType::Type1) => Some(28.9),
        _ => None,
    }
}

pub struct Gpu {
    pub ctx: Arc<Context>,
    /// The HBM peak from the memory clock and bus width.
    pub peak_gbs: f64,
}

pub fn gpu_context() -> Result<Gpu, String> {
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

/// What a case is: N modes per dimension, M points.
#[derive(Clone, Copy)]
pub struct Case {
    pub dim: usize,
    pub n: usize,
    pub m: usize,
    pub kernel: KernelShape,
}

/// Where its rows run.
#[derive(Clone, Copy)]
pub struct On<'a> {
    pub cpu: &'a Arc<Context>,
    pub gpu: Option<&'a Gpu>,
    pub fin: Option<&'a Finufft>,
}

/// A case's points and inputs, and its rows for every type and mode.
pub fn run_case<T: Real>(cfg: &Config, on: On, case: Case, tol: f64, rows: &mut Vec<Row>) {
    let Case { dim, n, m, kernel } = case;
    if cfg.types.iter().all(|&k| k == TransformType::Type3) {
        return; // type 3 has rows of its own
    }
    let prec = std::any::type_name::<T>();
    // Uniform in [−π, π), or in a sub-interval/square/cube of 1 % of that around π.
    let side = if cfg.clustered {
        0.01f64.powf(1.0 / dim as f64)
    } else {
        1.0
    };
    let centre = if cfg.clustered {
        std::f64::consts::PI
    } else {
        0.0
    };
    let xs: [Vec<T>; 3] = std::array::from_fn(|d| {
        (0..if d < dim { m } else { 0 })
            .into_par_iter()
            .map(|j| {
                let u = 2.0 * uniform(d as u64 + 1, j) - 1.0;
                T::from_f64(centre + u * side * std::f64::consts::PI).unwrap()
            })
            .collect()
    });
    let points = if cfg.clustered { " clustered" } else { "" };
    let kname = match kernel {
        KernelShape::ExpSemicircle => "ES",
        KernelShape::Gaussian => "Gauss",
        KernelShape::Prolate => "prolate",
    };
    let nm = n.pow(dim as u32);
    for &kind in cfg.types.iter().filter(|&&k| k != TransformType::Type3) {
        let n_in = if kind == TransformType::Type1 { m } else { nm };
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
        let name = format!(
            "{dim}D N={n} M={}{points} {tname} {prec} {kname} tol {tol:e}",
            thousands(m)
        );
        for &mode in &cfg.modes {
            let ctx = match (mode, on.gpu) {
                (Mode::Cpu | Mode::Finufft, _) if m > cfg.max_cpu_points => continue,
                (Mode::Finufft, _) if on.fin.is_none() => continue,
                (Mode::Cpu | Mode::Finufft, _) => on.cpu.clone(),
                (_, Some(g)) => g.ctx.clone(),
                (_, None) => continue,
            };
            let mut row = Row {
                case: name.clone(),
                mode: mode.label(cpu_threads(on.cpu)),
                dim,
                kind,
                prec,
                tol,
                clustered: cfg.clustered,
                n,
                m,
                set_ms: f64::NAN,
                exec_ms: f64::NAN,
                err: f64::NAN,
                seed: if dim == 3 {
                    seed_titan_x(n, m, kind)
                } else {
                    None
                },
                notes: String::new(),
            };
            if let Err(e) =
                time_mode::<T>(cfg, &ctx, on, mode, kind, case, tol, &xs, &input, &mut row)
            {
                row.notes = format!("error: {e}");
            }
            eprintln!(
                "{} | {} | set {:.1} ms | exec {:.2} ms | err {:.2e} {}",
                row.case, row.mode, row.set_ms, row.exec_ms, row.err, row.notes
            );
            rows.push(row);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn time_mode<T: Real>(
    cfg: &Config,
    ctx: &Arc<Context>,
    on: On,
    mode: Mode,
    kind: TransformType,
    case: Case,
    tol: f64,
    xs: &[Vec<T>; 3],
    input: &[Complex<T>],
    row: &mut Row,
) -> Result<(), String> {
    let Case { dim, n, m, kernel } = case;
    let gpu = on.gpu;
    let nm = n.pow(dim as u32);
    if let (Mode::Finufft, Some(fin)) = (mode, on.fin) {
        let threads = cpu_threads(on.cpu);
        let t = finufft::run(fin, kind, dim, n, tol, threads, cfg.reps, xs, input)?;
        row.set_ms = t.set_ms;
        row.exec_ms = t.exec_ms;
        row.notes = format!("FINUFFT {}", fin.version);
        row.err = sampled_error(kind, dim, n, xs, input, &t.out, cfg.samples);
        return Ok(());
    }
    let opts = UsfftOptions {
        kernel,
        upsampling: 2.0,
        mode_order: ModeOrder::Centred,
    };
    let err = |e: seisgpu::Error| e.to_string();
    let modes = std::array::from_fn(|d| if d < dim { n } else { 1 });
    let mut plan = UsfftSpec::new::<T>(kind, dim, modes, 1, tol, 1, opts)
        .and_then(|s| UsfftPlan::<T>::new(ctx.clone(), s))
        .map_err(err)?;
    let used = |d: usize| (d < dim).then_some(xs[d].as_slice());
    let t0 = Instant::now();
    plan.set_points(m, &xs[0], used(1), used(2)).map_err(err)?;
    row.set_ms = ms_since(t0);
    let zero = Complex::new(T::zero(), T::zero());
    let mut out = match kind {
        TransformType::Type1 => vec![zero; nm],
        TransformType::Type2 => vec![zero; m],
        TransformType::Type3 => return Err(TYPE3.into()),
    };
    let mut inp = input.to_vec();
    let w = plan.spec().kernel.width;
    let reps = Reps::fixed(1, cfg.reps);
    match mode {
        Mode::Finufft => return Err("FINUFFT is not installed".into()),
        Mode::Cpu | Mode::GpuHost => {
            let timed: Measured<()> = measure(reps, |_| {
                let t = Instant::now();
                match kind {
                    TransformType::Type1 => plan.execute(&mut inp, &mut out),
                    TransformType::Type2 | TransformType::Type3 => plan.execute(&mut out, &mut inp),
                }
                .map_err(err)?;
                Ok((Sample::since(t), None))
            })?;
            row.exec_ms = timed.median_ms;
            row.notes = format!("w={w}");
        }
        Mode::GpuDevice => {
            let gpu = gpu.ok_or("no GPU")?;
            let pts = plan.device_points().ok_or("no device points")?;
            let s = pts.stream().clone();
            let drv = drv_err("running the device-resident case");
            // Set points again from coordinates already on the device (warm: the plan's fine
            // grid and FFT plan exist); the cold call from host arrays above goes in the notes.
            let cold_set = row.set_ms;
            let xd: Vec<CudaSlice<T>> = xs
                .iter()
                .take(dim)
                .map(|x| s.clone_htod(x))
                .collect::<Result<_, _>>()
                .map_err(&drv)?;
            let sets: Measured<()> = measure(reps, |_| {
                let t = Instant::now();
                let used = |d: usize| (d < dim).then(|| &xd[d]);
                plan.set_points_device(m, &xd[0], used(1), used(2))
                    .map_err(err)?;
                s.synchronize().map_err(&drv)?;
                Ok((Sample::since(t), None))
            })?;
            row.set_ms = sets.median_ms;
            drop(xd);
            let reals: Vec<T> = inp.iter().flat_map(|z| [z.re, z.im]).collect();
            let (mut c, mut f): (CudaSlice<T>, CudaSlice<T>) = match kind {
                TransformType::Type1 => (
                    s.clone_htod(&reals).map_err(&drv)?,
                    s.alloc_zeros(2 * nm).map_err(&drv)?,
                ),
                TransformType::Type2 => (
                    s.alloc_zeros(2 * m).map_err(&drv)?,
                    s.clone_htod(&reals).map_err(&drv)?,
                ),
                TransformType::Type3 => return Err(TYPE3.into()),
            };
            let ev = Events::new(s.context(), 4)?;
            // Parts: spreading or the copy in, FFT, deconvolution or interpolation.
            let timed: Measured<()> = measure(reps, |_| {
                let t = Instant::now();
                plan.execute_device_timed(&mut c, &mut f, Some(ev.array()?))
                    .map_err(err)?;
                s.synchronize().map_err(&drv)?;
                let parts = (0..3).map(|p| ev.ms(p, p + 1)).collect::<Result<_, _>>()?;
                let sample = Sample {
                    ms: ev.ms(0, 3)?,
                    wall_ms: ms_since(t),
                    parts,
                };
                Ok((sample, None))
            })?;
            row.exec_ms = timed.median_ms;
            let phase = &timed.parts_median;
            let host = match kind {
                TransformType::Type1 => s.clone_dtoh(&f),
                TransformType::Type2 | TransformType::Type3 => s.clone_dtoh(&c),
            }
            .map_err(&drv)?;
            out = host.chunks(2).map(|z| Complex::new(z[0], z[1])).collect();
            // Bytes the spreading/interpolation kernel must move at least: per point its
            // sorted coordinates (i0 and d per dimension), index and strength, plus the fine
            // grid once (type 1: read-modify-write by atomics, type 2: read).
            let size = std::mem::size_of::<T>() as f64;
            let fine = plan.spec().fine_count() as f64 * 2.0 * size;
            let per_point = dim as f64 * (4.0 + size) + 4.0 + 2.0 * size;
            let (spread_ms, name, grid_passes) = match kind {
                TransformType::Type1 => (phase[0], "spread", 2.0),
                TransformType::Type2 | TransformType::Type3 => (phase[2], "interp", 1.0),
            };
            let gbs = (m as f64 * per_point + grid_passes * fine) / (spread_ms * 1e-3) / 1e9;
            let pts = plan.device_points().ok_or("no device points")?;
            let bins = pts.tiling().tile;
            let method = match pts.method() {
                SpreadMethod::RegisterRows { threads } => format!(
                    "rows {}×{}×{} bins, {threads} threads",
                    bins[0], bins[1], bins[2]
                ),
                SpreadMethod::SharedTiles { shared_bytes } => format!(
                    "SM {}×{}×{} bins, {} KiB",
                    bins[0],
                    bins[1],
                    bins[2],
                    shared_bytes / 1024
                ),
                SpreadMethod::GlobalAtomics => "GM".to_string(),
            };
            let (deconv, deconv_ms) = match kind {
                TransformType::Type1 => ("deconv", phase[2]),
                TransformType::Type2 | TransformType::Type3 => ("deconv+copy", phase[0]),
            };
            row.notes = format!(
                "w={w}, {method}; set points from host {cold_set:.0} ms (cold); {name} {spread_ms:.2} ms ({:.0}% of {:.0} GB/s HBM), FFT {:.2} ms, {deconv} {deconv_ms:.2} ms",
                100.0 * gbs / gpu.peak_gbs,
                gpu.peak_gbs,
                phase[1],
            );
        }
    }
    row.err = sampled_error(kind, dim, n, xs, input, &out, cfg.samples);
    Ok(())
}
