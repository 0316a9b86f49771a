//! The USFFT bench's flags and the configuration they give.

use crate::harness::cli::Cli;
use seisgpu::usfft::{KernelShape, TransformType};

pub const USAGE: &str = "\
usage: cargo bench --bench usfft -- [options]

  --quick             N = 64, 128, 256 at M = N³, f32 tol 1e-6 and N = 256 f64 tol 1e-9,
                      GPU only unless --modes says otherwise (about a minute of device time)
  --n LIST            mode counts per dimension (64,128,256)
  --frac LIST         M as fractions of N³ (0.25,0.5,1)
  --prec LIST         f32,f64 (f32); f32 uses --tol32 (1e-6), f64 --tol64 (1e-9)
  --kernel LIST       es,gauss (es)
  --type LIST         1,2 (both)
  --modes LIST        cpu,gpu,device (all that are available)
  --reps N            timed executes per row (5); one untimed call before
  --samples N         output entries checked against direct sums (16)
  --max-cpu-points N  skip CPU rows above N points (2^22; the CPU is slow on 256³)";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Cpu,
    GpuHost,
    GpuDevice,
}

impl Mode {
    pub fn label(self, threads: usize) -> String {
        match self {
            Mode::Cpu => format!("CPU {threads} thr"),
            Mode::GpuHost => "GPU host→host".into(),
            Mode::GpuDevice => "GPU device-resident".into(),
        }
    }
}

pub struct Config {
    pub ns: Vec<usize>,
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
    let num = |s: &str| s.parse::<f64>().map_err(|_| format!("bad number {s:?}"));
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--quick" => c.quick = true,
            "--n" => {
                c.ns = list(cli, &flag, |s| {
                    s.parse().map_err(|_| format!("bad N {s:?}"))
                })?
            }
            "--frac" => c.fracs = list(cli, &flag, num)?,
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
                    _ => Err(format!("bad kernel {s:?}")),
                })?
            }
            "--type" => {
                c.types = list(cli, &flag, |s| match s {
                    "1" => Ok(TransformType::Type1),
                    "2" => Ok(TransformType::Type2),
                    _ => Err(format!("bad type {s:?}")),
                })?
            }
            "--modes" => {
                modes_given = true;
                c.modes = list(cli, &flag, |s| match s {
                    "cpu" => Ok(Mode::Cpu),
                    "gpu" => Ok(Mode::GpuHost),
                    "device" => Ok(Mode::GpuDevice),
                    _ => Err(format!("bad mode {s:?}")),
                })?
            }
            "--reps" => c.reps = cli.count(&flag)?,
            "--samples" => c.samples = cli.count(&flag)?,
            "--tol32" => c.tol32 = cli.number(&flag)?,
            "--tol64" => c.tol64 = cli.number(&flag)?,
            "--max-cpu-points" => c.max_cpu_points = cli.count(&flag)?,
            other => return Err(cli.unknown(other)),
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
