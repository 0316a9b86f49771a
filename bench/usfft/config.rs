//! The USFFT bench's flags and the configuration they give.

use crate::harness::cli::Cli;
use seisgpu::usfft::{KernelShape, TransformType};

pub const USAGE: &str = "\
usage: cargo bench --bench usfft -- [options]

  --quick             N = 64, 128, 256 at M = N³, f32 tol 1e-6 and N = 256 f64 tol 1e-9,
                      GPU only unless --modes says otherwise (about a minute of device time)
  --vs-finufft        the CPU beside FINUFFT 2.5 (same threads): 1D/2D/3D, types 1 and 2,
                      f32 and f64 at tol 1e-6, M = N^dim with N = 2^18, 512, 64 (seconds on
                      2 cores; --n and --frac make them larger)
  --dim LIST          dimensions (3)
  --n LIST            mode counts per dimension (64,128,256)
  --frac LIST         M as fractions of N^dim (0.25,0.5,1)
  --prec LIST         f32,f64 (f32); f32 uses --tol32 (1e-6), f64 --tol64 (1e-9)
  --kernel LIST       prolate,es,gauss (prolate)
  --type LIST         1,2,3 (1,2); type 3 rows: 3D, M = N = --type3-m points and
                      frequencies (10^6), the precisions of --prec, CPU and GPU host→host
  --type3-m N         points (= frequencies) of the type-3 rows (1000000)
  --modes LIST        cpu,gpu,device,finufft (cpu,gpu,device: all that are available;
                      finufft needs the Python package, else its rows are left out)
  --reps N            timed executes per row (5); one untimed call before
  --samples N         output entries checked against direct sums (16)
  --max-cpu-points N  skip CPU rows above N points (2^22; the CPU is slow on 256³)
  --clustered         all points in 1 % of the period's length, square or cube (straddling
                      the ±π seam) instead of uniform in it: the load-balancing case
(--json rows: case, mode, dims, type, precision, tol, points, N, M, median execute ms,
error, and on a CPU row FINUFFT's execute ms, error and the ratio where it ran)";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Cpu,
    GpuHost,
    GpuDevice,
    Finufft,
}

impl Mode {
    pub fn label(self, threads: usize) -> String {
        match self {
            Mode::Cpu => format!("CPU {threads} thr"),
            Mode::GpuHost => "GPU host→host".into(),
            Mode::GpuDevice => "GPU device-resident".into(),
            Mode::Finufft => format!("FINUFFT CPU {threads} thr"),
        }
    }
}

pub struct Config {
    pub dims: Vec<usize>,
    /// N per dimension; `None`: the default of the run's kind (`ns_for`).
    pub ns: Option<Vec<usize>>,
    pub fracs: Vec<f64>,
    pub precs: Vec<String>,
    pub kernels: Vec<KernelShape>,
    pub types: Vec<TransformType>,
    pub modes: Vec<Mode>,
    pub reps: usize,
    pub samples: usize,
    pub tol32: f64,
    pub tol64: f64,
    pub max_cpu_points: usize,
    pub quick: bool,
    pub vs_finufft: bool,
    pub clustered: bool,
    pub type3_m: usize,
}

impl Config {
    /// The mode counts per dimension for `dim`-dimensional cases.
    pub fn ns_for(&self, dim: usize) -> Vec<usize> {
        match (&self.ns, self.vs_finufft) {
            (Some(ns), _) => ns.clone(),
            // About 2^18 modes and points in each dimension count.
            (None, true) => vec![[1 << 18, 512, 64][dim - 1]],
            (None, false) => vec![64, 128, 256],
        }
    }
}

/// Each item of the list `flag` read by `f`.
fn list<T>(
    cli: &mut Cli,
    flag: &str,
    f: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    cli.list(flag)?.iter().map(|s| f(s)).collect()
}

pub fn parse(cli: &mut Cli) -> Result<Config, String> {
    let mut c = Config {
        dims: vec![3],
        ns: None,
        fracs: vec![0.25, 0.5, 1.0],
        precs: vec!["f32".into()],
        kernels: vec![KernelShape::Prolate],
        types: vec![TransformType::Type1, TransformType::Type2],
        modes: vec![Mode::Cpu, Mode::GpuHost, Mode::GpuDevice],
        reps: 5,
        samples: 16,
        tol32: 1e-6,
        tol64: 1e-9,
        max_cpu_points: 1 << 22,
        quick: false,
        vs_finufft: false,
        clustered: false,
        type3_m: 1_000_000,
    };
    let (mut modes_given, mut dims_given, mut fracs_given) = (false, false, false);
    let num = |s: &str| s.parse::<f64>().map_err(|_| format!("bad number {s:?}"));
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--quick" => c.quick = true,
            "--vs-finufft" => c.vs_finufft = true,
            "--clustered" => c.clustered = true,
            "--dim" => {
                dims_given = true;
                c.dims = list(cli, &flag, |s| match s {
                    "1" | "2" | "3" => Ok(s.parse().unwrap()),
                    _ => Err(format!("bad dimension {s:?}")),
                })?
            }
            "--n" => {
                c.ns = Some(list(cli, &flag, |s| {
                    s.parse().map_err(|_| format!("bad N {s:?}"))
                })?)
            }
            "--frac" => {
                fracs_given = true;
                c.fracs = list(cli, &flag, num)?
            }
            "--prec" => {
                c.precs = list(cli, &flag, |s| match s {
                    "f32" | "f64" => Ok(s.to_string()),
                    _ => Err(format!("bad precision {s:?}")),
                })?
            }
            "--kernel" => {
                c.kernels = list(cli, &flag, |s| match s {
                    "es" => Ok(KernelShape::ExpSemicircle),
                    "gauss" => Ok(KernelShape::Gaussian),
                    "prolate" => Ok(KernelShape::Prolate),
                    _ => Err(format!("bad kernel {s:?}")),
                })?
            }
            "--type" => {
                c.types = list(cli, &flag, |s| match s {
                    "1" => Ok(TransformType::Type1),
                    "2" => Ok(TransformType::Type2),
                    "3" => Ok(TransformType::Type3),
                    _ => Err(format!("bad type {s:?}")),
                })?
            }
            "--modes" => {
                modes_given = true;
                c.modes = list(cli, &flag, |s| match s {
                    "cpu" => Ok(Mode::Cpu),
                    "gpu" => Ok(Mode::GpuHost),
                    "device" => Ok(Mode::GpuDevice),
                    "finufft" => Ok(Mode::Finufft),
                    _ => Err(format!("bad mode {s:?}")),
                })?
            }
            "--reps" => c.reps = cli.count(&flag)?,
            "--samples" => c.samples = cli.count(&flag)?,
            "--tol32" => c.tol32 = cli.number(&flag)?,
            "--tol64" => c.tol64 = cli.number(&flag)?,
            "--max-cpu-points" => c.max_cpu_points = cli.count(&flag)?,
            "--type3-m" => c.type3_m = cli.count(&flag)?,
            other => return Err(cli.unknown(other)),
        }
    }
    if c.vs_finufft {
        if !dims_given {
            c.dims = vec![1, 2, 3];
        }
        if !fracs_given {
            c.fracs = vec![1.0];
        }
        c.precs = vec!["f32".into(), "f64".into()];
        c.tol32 = 1e-6;
        c.tol64 = 1e-6;
        if !modes_given {
            c.modes = vec![Mode::Cpu, Mode::Finufft];
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
