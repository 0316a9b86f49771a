//! The DWT bench's flags and the configuration they give.

use crate::case::Case;
use crate::harness::cli::Cli;

pub const USAGE: &str = "\
usage: cargo bench --bench dwt -- [options]

  --quick          small cases only (1 × 2^16, 2^18, 2^20; 1,024 × 1,024); fewer reps
  --full           the full set of cases (the default under `cargo bench`)
  --cases LIST     comma-separated cases: K (one signal of 2^K samples, 1..=30) or
                   TxN (T traces of N samples), e.g. 16,26,65536x1024
  --max-log2 K     skip cases of more than 2^K samples in all
  --modes LIST     comma-separated subset of gsl,cpu,gpu,device,ref (default: all)
  --reps N         timed repetitions per host row (default 21; --quick: 11)
  --gpu-reps N     timed repetitions per GPU row (default 101; --quick: 21)
  --warmup N       untimed calls before timing host rows (default 1; GPU rows ≥ 3)
  --budget S       at most about S seconds of timed calls per row (default 10;
                   --quick: 2); at least 3 repetitions are always timed
  --device N       CUDA device ordinal (default 0)

Without --bench (which `cargo bench` passes), e.g. under `cargo test --benches`,
the --quick set runs unless --full or --cases is given. SEISGPU_BENCH_CSV=FILE
does what --csv FILE does.";

pub struct Config {
    pub cases: Vec<Case>,
    pub gsl: bool,
    pub cpu: bool,
    pub gpu: bool,
    pub device: bool,
    pub refs: bool,
    pub reps: usize,
    pub gpu_reps: usize,
    pub warmup: usize,
    pub budget_s: f64,
    pub ordinal: i32,
    pub quick: bool,
}

pub fn parse(cli: &mut Cli) -> Result<Config, String> {
    let (mut quick, mut full) = (false, false);
    let mut cases: Option<Vec<Case>> = None;
    let mut max_log2: Option<u32> = None;
    let mut modes: Option<Vec<String>> = None;
    let (mut reps, mut gpu_reps, mut warmup, mut budget) = (None, None, None, None);
    let mut ordinal = 0i32;
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--quick" => quick = true,
            "--full" => full = true,
            "--cases" => {
                cases = Some(
                    cli.list(&flag)?
                        .iter()
                        .map(|s| Case::parse(s))
                        .collect::<Result<_, _>>()?,
                )
            }
            "--max-log2" => max_log2 = Some(cli.number(&flag)?),
            "--modes" => modes = Some(cli.list(&flag)?),
            "--reps" => reps = Some(cli.count(&flag)?),
            "--gpu-reps" => gpu_reps = Some(cli.count(&flag)?),
            "--warmup" => warmup = Some(cli.count(&flag)?),
            "--budget" => budget = Some(cli.number::<f64>(&flag)?),
            "--device" => ordinal = cli.number(&flag)?,
            other => return Err(cli.unknown(other)),
        }
    }
    if cli.csv.is_none() {
        cli.csv = std::env::var("SEISGPU_BENCH_CSV")
            .ok()
            .filter(|s| !s.is_empty());
    }
    if quick && full {
        return Err("--quick and --full exclude each other".into());
    }
    if !cli.bench && !full && cases.is_none() && !quick {
        eprintln!("note: run without --bench (not by `cargo bench`): running the --quick set; pass --full for all cases");
        quick = true;
    }
    let mut cases = cases.unwrap_or_else(|| {
        let singles: &[u32] = if quick {
            &[16, 18, 20]
        } else {
            &[16, 18, 20, 22, 24, 26]
        };
        let mut v: Vec<Case> = singles.iter().map(|&k| Case::single(k)).collect();
        v.push(Case {
            traces: if quick { 1024 } else { 65536 },
            n: 1024,
        });
        v
    });
    if let Some(k) = max_log2 {
        cases.retain(|c| c.total() <= 1usize << k.min(62));
    }
    let (mut gsl, mut cpu, mut gpu, mut device, mut refs) = (true, true, true, true, true);
    if let Some(m) = modes {
        (gsl, cpu, gpu, device, refs) = (false, false, false, false, false);
        for name in &m {
            match name.as_str() {
                "gsl" => gsl = true,
                "cpu" => cpu = true,
                "gpu" => gpu = true,
                "device" => device = true,
                "ref" => refs = true,
                "all" => (gsl, cpu, gpu, device, refs) = (true, true, true, true, true),
                other => return Err(format!("--modes: unknown mode {other:?}")),
            }
        }
    }
    let reps = reps.unwrap_or(if quick { 11 } else { 21 });
    let gpu_reps = gpu_reps.unwrap_or(if quick { 21 } else { 101 });
    if reps == 0 || gpu_reps == 0 {
        return Err("--reps and --gpu-reps must be ≥ 1".into());
    }
    let budget_s = budget.unwrap_or(if quick { 2.0 } else { 10.0 });
    if !(budget_s.is_finite() && budget_s >= 0.0) {
        return Err("--budget must be a number of seconds ≥ 0".into());
    }
    Ok(Config {
        cases,
        gsl,
        cpu,
        gpu,
        device,
        refs,
        reps,
        gpu_reps,
        warmup: warmup.unwrap_or(1).max(1),
        budget_s,
        ordinal,
        quick,
    })
}
