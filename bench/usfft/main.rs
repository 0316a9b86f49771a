//! USFFT benchmark: the seed's Table 1 cases (N = 64, 128, 256 modes per dimension,
//! M = N³/4, N³/2, N³ uniformly random points in the cube), types 1 (u2e) and 2 (e2u), on
//! the CPU and the GPU (host-to-host, device-resident), with set-points timed separately,
//! ns per point, the accuracy reached (relative ℓ2 error against direct sums on a random
//! subset of the output, `direct`), and the ratio to the seed's TITAN X times where the
//! seed gives one. Prints a Markdown table (lines starting with '|') and a summary against
//! the targets; `--json`/`--csv` also write the rows (a CPU row with FINUFFT's figures beside
//! it, so that runs compare row by row). Options: `config::USAGE`.

#[path = "../harness/mod.rs"]
mod harness;

mod config;
mod direct;
mod finufft;
mod rows;
mod type3;

/// The library's paths below its public plan API, in one place.
mod internal {
    pub use seisgpu::usfft::cuda::SpreadMethod;
}

use harness::cli::Cli;
use harness::report::{fmt_opt, write_records, Record, Table};
use rows::Row;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::usfft::TransformType;

fn main() {
    let mut cli = Cli::from_env(config::USAGE);
    let parsed = config::parse(&mut cli);
    let cfg = cli.or_exit(parsed);
    let cpu = Context::new(BackendRequest::Cpu, 0).expect("CPU context");
    let wants_gpu = cfg.modes.iter().any(|&m| m != config::Mode::Cpu);
    let gpu = if wants_gpu {
        match rows::gpu_context() {
            Ok(g) => Some(g),
            Err(e) => {
                println!("GPU rows left out: {e}");
                None
            }
        }
    } else {
        None
    };
    let fin = if cfg.modes.contains(&config::Mode::Finufft) {
        match finufft::probe() {
            Ok(f) => {
                println!("FINUFFT {} (Python)", f.version);
                Some(f)
            }
            Err(e) => {
                println!("finufft not installed ({e}): FINUFFT rows left out");
                None
            }
        }
    } else {
        None
    };
    let mut rows = Vec::new();
    for &dim in &cfg.dims {
        let ns = cfg.ns_for(dim);
        for &n in &ns {
            for &frac in &cfg.fracs {
                let m = (n.pow(dim as u32) as f64 * frac).round() as usize;
                for prec in &cfg.precs {
                    for &kernel in &cfg.kernels {
                        // The quick run: f64 only at N = 256.
                        if cfg.quick && prec == "f64" && n != *ns.iter().max().unwrap() {
                            continue;
                        }
                        let case = rows::Case { dim, n, m, kernel };
                        let on = rows::On {
                            cpu: &cpu,
                            gpu: gpu.as_ref(),
                            fin: fin.as_ref(),
                        };
                        match prec.as_str() {
                            "f32" => rows::run_case::<f32>(&cfg, on, case, cfg.tol32, &mut rows),
                            "f64" => rows::run_case::<f64>(&cfg, on, case, cfg.tol64, &mut rows),
                            _ => unreachable!("config::parse admits f32 and f64 only"),
                        }
                    }
                }
            }
        }
    }
    if cfg.types.contains(&TransformType::Type3) {
        let on = rows::On {
            cpu: &cpu,
            gpu: gpu.as_ref(),
            fin: None,
        };
        for prec in &cfg.precs {
            match prec.as_str() {
                "f32" => type3::run_type3::<f32>(&cfg, on, cfg.type3_m, cfg.tol32, &mut rows),
                _ => type3::run_type3::<f64>(&cfg, on, cfg.type3_m, cfg.tol64, &mut rows),
            }
        }
    }
    println!();
    print!("{}", table(&rows));
    println!();
    if fin.is_some() {
        println!("seisgpu CPU beside FINUFFT (same machine, threads, points and tolerance; target ≤ 1.5×):");
        print!("{}", versus_finufft(&rows));
        println!();
    }
    println!("Targets (H100, N = 256, M = N³, device-resident): f32 tol 1e-6 set points ≤ 2 ms, type 1 ≤ 12 ms, type 2 ≤ 8 ms; f64 tol 1e-9 set points ≤ 3 ms, type 1 ≤ 35 ms, type 2 ≤ 25 ms.");
    for r in rows
        .iter()
        .filter(|r| r.mode.starts_with("GPU device") && r.case.starts_with("3D N=256 M=16,777,216"))
    {
        let ms = r.exec_ms;
        let (set_limit, limit) = match (r.case.contains("f64"), r.case.contains("type 1")) {
            (false, true) => (2.0, 12.0),
            (false, false) => (2.0, 8.0),
            (true, true) => (3.0, 35.0),
            (true, false) => (3.0, 25.0),
        };
        let verdict = |ok: bool| if ok { "met" } else { "missed" };
        println!(
            "  {}: execute {ms:.2} ms ({}), set points {:.2} ms ({}), error {:.1e}",
            r.case,
            verdict(ms <= limit),
            r.set_ms,
            verdict(r.set_ms <= set_limit),
            r.err
        );
    }
    write_records(&cli, "usfft", &records(&rows));
}

fn table(rows: &[Row]) -> String {
    let mut t = Table::new(&[
        "case",
        "mode",
        ">set points ms",
        ">execute ms (median)",
        ">ns/point",
        ">rel ℓ2 err (sampled)",
        ">× faster than seed TITAN X",
        "notes",
    ]);
    for r in rows {
        t.row(vec![
            r.case.clone(),
            r.mode.clone(),
            format!("{:.1}", r.set_ms),
            format!("{:.2}", r.exec_ms),
            format!("{:.2}", r.exec_ms * 1e6 / r.m as f64),
            format!("{:.1e}", r.err),
            fmt_opt(seed_ratio(r), |x| format!("{x:.0}×")),
            r.notes.clone(),
        ]);
    }
    t.markdown()
}

/// The FINUFFT row of `ours`'s case, for a CPU row.
fn finufft_beside<'a>(ours: &Row, rows: &'a [Row]) -> Option<&'a Row> {
    if !ours.mode.starts_with("CPU") {
        return None;
    }
    rows.iter()
        .find(|r| r.case == ours.case && r.mode.starts_with("FINUFFT"))
}

/// Each case with both a seisgpu CPU row and a FINUFFT row: times, errors and their ratio.
fn versus_finufft(rows: &[Row]) -> String {
    let mut t = Table::new(&[
        "case",
        ">seisgpu execute ms",
        ">seisgpu err",
        ">FINUFFT execute ms",
        ">FINUFFT err",
        ">seisgpu ÷ FINUFFT",
        ">set points ms (seisgpu / FINUFFT)",
    ]);
    for ours in rows {
        let Some(theirs) = finufft_beside(ours, rows) else {
            continue;
        };
        t.row(vec![
            ours.case.clone(),
            format!("{:.2}", ours.exec_ms),
            format!("{:.1e}", ours.err),
            format!("{:.2}", theirs.exec_ms),
            format!("{:.1e}", theirs.err),
            format!("{:.2}×", ours.exec_ms / theirs.exec_ms),
            format!("{:.1} / {:.1}", ours.set_ms, theirs.set_ms),
        ]);
    }
    t.markdown()
}

/// The seed's TITAN X time ÷ ours.
fn seed_ratio(r: &Row) -> Option<f64> {
    r.seed.map(|s| s * 1e3 / r.exec_ms)
}

fn records(rows: &[Row]) -> Vec<Record> {
    rows.iter()
        .map(|r| {
            let fin = finufft_beside(r, rows);
            vec![
                ("case", r.case.as_str().into()),
                ("mode", r.mode.as_str().into()),
                ("dims", r.dim.into()),
                (
                    "type",
                    match r.kind {
                        TransformType::Type1 => 1usize,
                        TransformType::Type2 => 2,
                        TransformType::Type3 => 3,
                    }
                    .into(),
                ),
                ("precision", r.prec.into()),
                ("tol", r.tol.into()),
                (
                    "points",
                    if r.clustered { "clustered" } else { "uniform" }.into(),
                ),
                ("n", r.n.into()),
                ("m", r.m.into()),
                ("set_points_ms", r.set_ms.into()),
                ("execute_ms", r.exec_ms.into()),
                ("ns_per_point", (r.exec_ms * 1e6 / r.m as f64).into()),
                ("rel_l2_err", r.err.into()),
                ("x_seed_titan_x", seed_ratio(r).into()),
                ("finufft_execute_ms", fin.map(|f| f.exec_ms).into()),
                ("finufft_rel_l2_err", fin.map(|f| f.err).into()),
                ("x_finufft", fin.map(|f| r.exec_ms / f.exec_ms).into()),
                ("notes", r.notes.as_str().into()),
            ]
        })
        .collect()
}
