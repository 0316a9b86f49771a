//! The wave-packet bench's flags and the configuration they give.

use crate::harness::cli::Cli;

pub const USAGE: &str = "\
usage: cargo bench --bench wavepacket -- [options]

  --n LIST           cube sizes N (N × N × N), comma-separated (default 64; the seed's
                     Table 2: 64,128,256)
  --levels LIST      directional levels, one per N or one for all (default: the seed's,
                     1/3/5 for N = 64/128/256, else max(1, log2 N − 5))
  --lateral L        volumes of N samples × L × L traces instead of cubes (one layout;
                     the seed's levels for N)
  --directions D     Lebedev rule size (default 350, the seed's)
  --cutoff C         windows cut below C of their peak (default 0.2; the library's
                     default is 1e-3: larger boxes, more redundancy)
  --modes LIST       subset of cpu,gpu (default both; gpu only where a CUDA context can
                     be made)
  --reps N           most timed calls of forward and of adjoint per row (default 3)
  --budget S         about S seconds of timed calls each way per row (default 10); at
                     least one timed call always
  --tol X            relative residual the inverse stops at (default 1e-5)
  --max-iter K       most conjugate-gradient iterations of the inverse (default 20)
  --inverse-max-n N  skip the round trip (the inverse) for cubes larger than N
  --cpu-max-n N      skip CPU rows for cubes larger than N
  --deadline S       start no row (and no inverse) after S seconds of the run
  --device N         CUDA device ordinal (default 0)
  --small            N = 32, 26 directions, 1 level: seconds (what runs without --bench)
  --tiles K          also a volume of K × K tiles of each cube through the tiled plan:
                     its forward and adjoint against K² single tiles (the cost of the
                     common grid), and its coefficients against K² tiles apart
  --tiles-deep D     the tiled volume D tiles deep (default 1): D·N samples
  --max-device-gb G  GPU plans capped at G·10^9 bytes of device memory: the lattice
                     values in the fewest groups of directions that fit; a tiled
                     volume's common grids on the host where they do not fit beside it

Without --bench (which `cargo bench` passes), e.g. under `cargo test --benches`, the
--small case runs unless --n is given. SEISGPU_NUM_THREADS sets the CPU threads.";

/// One volume: N samples of L × L traces (a cube when L = N) and its directional levels.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub n: usize,
    pub lateral: usize,
    pub levels: usize,
}

impl Case {
    /// The layout's shape, axis 1 (samples) first.
    pub fn shape(&self) -> [usize; 3] {
        [self.n, self.lateral, self.lateral]
    }

    /// "N³", or "N × L × L".
    pub fn label(&self) -> String {
        match self.lateral == self.n {
            true => format!("{}³", self.n),
            false => format!("{} × {l} × {l}", self.n, l = self.lateral),
        }
    }
}

pub struct Config {
    pub cases: Vec<Case>,
    pub directions: usize,
    pub cutoff: f64,
    pub cpu: bool,
    pub gpu: bool,
    pub reps: usize,
    pub budget_s: f64,
    pub tol: f64,
    pub max_iter: usize,
    pub inverse_max_n: usize,
    pub cpu_max_n: usize,
    pub deadline_s: f64,
    pub ordinal: i32,
    /// Tiles per lateral axis of the tiled rows (0: none).
    pub tiles: usize,
    /// Tiles along axis 1 of the tiled rows.
    pub tiles_deep: usize,
    /// The GPU plans' device memory cap, bytes (0: none).
    pub max_device_bytes: usize,
}

/// The seed's levels for its cube sizes; others by the same rule (5 below log2 N).
pub fn seed_levels(n: usize) -> usize {
    match n {
        64 => 1,
        128 => 3,
        256 => 5,
        _ => (n.max(1).ilog2() as usize).saturating_sub(5).max(1),
    }
}

pub fn parse(cli: &mut Cli) -> Result<Config, String> {
    let (mut ns, mut levels, mut directions) = (None::<Vec<usize>>, None::<Vec<usize>>, None);
    let mut small = false;
    let mut lateral = None;
    let mut c = Config {
        cases: Vec::new(),
        directions: 350,
        cutoff: 0.2,
        cpu: true,
        gpu: true,
        reps: 3,
        budget_s: 10.0,
        tol: 1e-5,
        max_iter: 20,
        inverse_max_n: usize::MAX,
        cpu_max_n: usize::MAX,
        deadline_s: f64::INFINITY,
        ordinal: 0,
        tiles: 0,
        tiles_deep: 1,
        max_device_bytes: 0,
    };
    let counts = |cli: &mut Cli, flag: &str| -> Result<Vec<usize>, String> {
        cli.list(flag)?
            .iter()
            .map(|s| {
                s.parse()
                    .map_err(|_| format!("{flag}: {s:?} is not a count"))
            })
            .collect()
    };
    while let Some(flag) = cli.next_flag()? {
        match flag.as_str() {
            "--n" => ns = Some(counts(cli, &flag)?),
            "--levels" => levels = Some(counts(cli, &flag)?),
            "--directions" => directions = Some(cli.count(&flag)?),
            "--lateral" => lateral = Some(cli.count(&flag)?),
            "--cutoff" => c.cutoff = cli.number(&flag)?,
            "--modes" => {
                let m = cli.list(&flag)?;
                if let Some(bad) = m.iter().find(|m| *m != "cpu" && *m != "gpu") {
                    return Err(format!("--modes: unknown mode {bad:?} (cpu, gpu)"));
                }
                c.cpu = m.iter().any(|m| m == "cpu");
                c.gpu = m.iter().any(|m| m == "gpu");
            }
            "--reps" => c.reps = cli.count(&flag)?.max(1),
            "--budget" => c.budget_s = cli.number(&flag)?,
            "--tol" => c.tol = cli.number(&flag)?,
            "--max-iter" => c.max_iter = cli.count(&flag)?,
            "--inverse-max-n" => c.inverse_max_n = cli.count(&flag)?,
            "--cpu-max-n" => c.cpu_max_n = cli.count(&flag)?,
            "--deadline" => c.deadline_s = cli.number(&flag)?,
            "--device" => c.ordinal = cli.number(&flag)?,
            "--small" => small = true,
            "--tiles" => c.tiles = cli.count(&flag)?,
            "--tiles-deep" => c.tiles_deep = cli.count(&flag)?.max(1),
            "--max-device-gb" => c.max_device_bytes = (cli.number::<f64>(&flag)? * 1e9) as usize,
            other => return Err(cli.unknown(other)),
        }
    }
    if !cli.bench && ns.is_none() && !small {
        eprintln!("note: run without --bench (not by `cargo bench`): the --small case; pass --n for others");
        small = true;
    }
    if small {
        ns.get_or_insert_with(|| vec![32]);
        levels.get_or_insert_with(|| vec![1]);
        directions.get_or_insert(26);
    }
    let ns = ns.unwrap_or_else(|| vec![64]);
    c.directions = directions.unwrap_or(c.directions);
    let pairs: Vec<(usize, usize)> = match levels.as_deref() {
        None => ns.iter().map(|&n| (n, seed_levels(n))).collect(),
        Some([l]) => ns.iter().map(|&n| (n, *l)).collect(),
        Some(ls) if ls.len() == ns.len() => ns.iter().copied().zip(ls.iter().copied()).collect(),
        Some(ls) => {
            return Err(format!(
                "--levels has {} values for {} sizes; give one, or one per size",
                ls.len(),
                ns.len()
            ))
        }
    };
    c.cases = pairs
        .into_iter()
        .map(|(n, levels)| Case {
            n,
            lateral: lateral.unwrap_or(n),
            levels,
        })
        .collect();
    if !(c.tol > 0.0 && c.tol < 1.0) {
        return Err(format!("--tol is {}; expected a value in (0, 1)", c.tol));
    }
    Ok(c)
}
