//! The table, the records (CSV/JSON), the seed's Table 2 figures and the targets summary.

use crate::config::{seed_levels, Case, Config};
use crate::harness::report::{thousands, Record, Table, Value};
use crate::rows::Row;

/// Where a row ran.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Cpu,
    Gpu,
}

/// One finished row with what it ran.
pub struct Line {
    pub case: Case,
    pub mode: Mode,
    /// CPU threads of the context (the whole transform on CPU rows).
    pub threads: usize,
    /// Why the row was not run, if it was not.
    pub skipped: Option<String>,
    pub row: Row,
}

/// The seed's Table 2 (seconds): N, TITAN X forward and adjoint, 20-core Xeon E5-2650
/// forward and adjoint; 350 directions and 1/3/5 levels.
const SEED: [(usize, [f64; 4]); 3] = [
    (64, [26.0, 57.0, 220.0, 232.0]),
    (128, [313.0, 556.0, 1992.0, 2153.0]),
    (256, [3234.0, 4956.0, 20313.0, 23332.0]),
];

/// The seed's figures for the case, where it is one of the seed's.
fn seed(case: Case, cfg: &Config) -> Option<[f64; 4]> {
    let same =
        cfg.directions == 350 && case.levels == seed_levels(case.n) && case.lateral == case.n;
    SEED.iter().find(|s| same && s.0 == case.n).map(|s| s.1)
}

pub fn case_name(case: Case, cfg: &Config) -> String {
    let lv = if case.levels == 1 { "level" } else { "levels" };
    format!(
        "{}, {} dirs, {} {lv}",
        case.label(),
        cfg.directions,
        case.levels
    )
}

impl Line {
    fn mode_name(&self) -> String {
        match self.mode {
            Mode::Cpu => format!("CPU, {} threads", self.threads),
            Mode::Gpu => "GPU host→host".to_string(),
        }
    }

    fn forward_s(&self) -> Option<f64> {
        self.row.forward.as_ref().map(|m| m.median_ms * 1e-3)
    }

    fn adjoint_s(&self) -> Option<f64> {
        self.row.adjoint.as_ref().map(|m| m.median_ms * 1e-3)
    }
}

fn secs(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.1}")
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

pub fn table(lines: &[Line], cfg: &Config) -> Table {
    let mut t = Table::new(&[
        "case",
        "mode",
        ">redundancy",
        ">plan s",
        ">forward s (reps)",
        ">adjoint s (reps)",
        ">device-resident fwd / adj s",
        ">‖Cf‖²/‖f‖²",
        ">round trip (CG it.)",
        ">GPU MB plan / after",
        ">seed TITAN X fwd / adj s",
        ">× TITAN X fwd / adj",
        "notes",
    ]);
    for l in lines {
        let r = &l.row;
        let timed = |m: &Option<crate::harness::timing::Measured<()>>| {
            opt(m.as_ref(), |m| {
                format!("{} ({})", secs(m.median_ms * 1e-3), m.reps)
            })
        };
        let s = seed(l.case, cfg);
        let speedup = match (s, l.forward_s(), l.adjoint_s()) {
            (Some(s), Some(f), Some(a)) => format!("{:.0} / {:.0}", s[0] / f, s[1] / a),
            _ => "—".into(),
        };
        let mb = |b: Option<f64>| opt(b, |b| format!("{:.0}", b / 1e6));
        let mut notes = r.notes.clone();
        if let Some(e) = &r.error {
            notes.push(format!("error: {e}"));
        }
        if let Some(why) = &l.skipped {
            notes.push(format!("not run: {why}"));
        }
        if let (Some(f), Some(a)) = (r.first_forward_ms, r.first_adjoint_ms) {
            notes.push(format!(
                "first calls {} / {} s",
                secs(f * 1e-3),
                secs(a * 1e-3)
            ));
        }
        if let Some(e) = r.adjoint_err {
            notes.push(format!("‖C*Cf − f‖/‖f‖ {e:.1e}"));
        }
        if let (Some(f), Some(i)) = (r.filter_ms, r.inverse_ms) {
            notes.push(format!(
                "filter {} s, inverse {} s",
                secs(f * 1e-3),
                secs(i * 1e-3)
            ));
        }
        if let Some(u) = r.uncovered {
            notes.push(format!(
                "{:.2} % of f's energy outside every box",
                100.0 * u
            ));
        }
        if let Some((e, it, _)) = r.round_trip_in_band {
            notes.push(format!(
                "f band-limited to the boxes: round trip {e:.1e} ({it})"
            ));
        }
        if let Some(n) = r.n_coefficients {
            notes.push(format!("{} coefficients", thousands(n)));
        }
        t.row(vec![
            case_name(l.case, cfg),
            l.mode_name(),
            opt(r.redundancy, |x| format!("{x:.1}")),
            opt(r.plan_ms, |ms| secs(ms * 1e-3)),
            timed(&r.forward),
            timed(&r.adjoint),
            match (&r.forward_device, &r.adjoint_device) {
                (Some(f), Some(a)) => format!(
                    "{} / {}",
                    secs(f.median_ms * 1e-3),
                    secs(a.median_ms * 1e-3)
                ),
                _ => "—".into(),
            },
            opt(r.energy, |x| format!("{x:.4}")),
            opt(r.round_trip, |(e, it, _)| format!("{e:.1e} ({it})")),
            match l.mode {
                Mode::Gpu => format!("{} / {}", mb(r.gpu_plan_bytes), mb(r.gpu_after_bytes)),
                Mode::Cpu => "—".into(),
            },
            opt(s, |s| format!("{:.0} / {:.0}", s[0], s[1])),
            speedup,
            notes.join("; "),
        ]);
    }
    t
}

pub fn records(lines: &[Line], cfg: &Config) -> Vec<Record> {
    lines
        .iter()
        .map(|l| {
            let r = &l.row;
            let s = seed(l.case, cfg);
            let ms = |m: &Option<crate::harness::timing::Measured<()>>| {
                (
                    m.as_ref().map(|m| m.median_ms * 1e-3),
                    m.as_ref().map(|m| m.min_ms * 1e-3),
                    m.as_ref().map(|m| m.reps),
                )
            };
            let (fwd, fwd_min, fwd_reps) = ms(&r.forward);
            let (adj, adj_min, adj_reps) = ms(&r.adjoint);
            let (fwd_dev, _, _) = ms(&r.forward_device);
            let (adj_dev, _, _) = ms(&r.adjoint_device);
            let ratio = |i: usize, t: Option<f64>| s.zip(t).map(|(s, t)| s[i] / t);
            let error = r.error.clone().or_else(|| l.skipped.clone());
            let phase = |f: fn(&seisgpu::wavepacket::PlanPhases) -> std::time::Duration| {
                Value::from(r.plan_phases.as_ref().map(|p| f(p).as_secs_f64()))
            };
            let v: Record = vec![
                ("n", l.case.n.into()),
                ("lateral", l.case.lateral.into()),
                ("directions", cfg.directions.into()),
                ("levels", l.case.levels.into()),
                ("cutoff", cfg.cutoff.into()),
                ("mode", l.mode_name().into()),
                ("threads", l.threads.into()),
                ("n_coefficients", r.n_coefficients.into()),
                ("redundancy", r.redundancy.into()),
                ("plan_s", r.plan_ms.map(|x| x * 1e-3).into()),
                ("plan_layout_s", phase(|p| p.layout)),
                ("plan_windows_s", phase(|p| p.windows)),
                ("plan_points_s", phase(|p| p.points)),
                ("plan_usfft_type2_s", phase(|p| p.usfft[0])),
                ("plan_usfft_type1_s", phase(|p| p.usfft[1])),
                ("plan_tables_s", phase(|p| p.tables)),
                (
                    "forward_first_s",
                    r.first_forward_ms.map(|x| x * 1e-3).into(),
                ),
                ("forward_median_s", fwd.into()),
                ("forward_min_s", fwd_min.into()),
                ("forward_reps", fwd_reps.into()),
                (
                    "adjoint_first_s",
                    r.first_adjoint_ms.map(|x| x * 1e-3).into(),
                ),
                ("adjoint_median_s", adj.into()),
                ("adjoint_min_s", adj_min.into()),
                ("adjoint_reps", adj_reps.into()),
                ("forward_device_s", fwd_dev.into()),
                ("adjoint_device_s", adj_dev.into()),
                ("energy_ratio", r.energy.into()),
                ("adjoint_only_err", r.adjoint_err.into()),
                ("filter_s", r.filter_ms.map(|x| x * 1e-3).into()),
                ("inverse_s", r.inverse_ms.map(|x| x * 1e-3).into()),
                ("round_trip_err", r.round_trip.map(|x| x.0).into()),
                ("cg_iterations", r.round_trip.map(|x| x.1).into()),
                ("cg_residual", r.round_trip.map(|x| x.2).into()),
                ("uncovered_energy", r.uncovered.into()),
                (
                    "in_band_round_trip_err",
                    r.round_trip_in_band.map(|x| x.0).into(),
                ),
                (
                    "in_band_cg_iterations",
                    r.round_trip_in_band.map(|x| x.1).into(),
                ),
                ("inverse_tol", cfg.tol.into()),
                ("gpu_plan_mb", r.gpu_plan_bytes.map(|b| b / 1e6).into()),
                (
                    "gpu_after_calls_mb",
                    r.gpu_after_bytes.map(|b| b / 1e6).into(),
                ),
                ("seed_titanx_forward_s", s.map(|s| s[0]).into()),
                ("seed_titanx_adjoint_s", s.map(|s| s[1]).into()),
                ("seed_xeon20_forward_s", s.map(|s| s[2]).into()),
                ("seed_xeon20_adjoint_s", s.map(|s| s[3]).into()),
                ("speedup_titanx_forward", ratio(0, fwd).into()),
                ("speedup_titanx_adjoint", ratio(1, adj).into()),
                ("error", Value::Text(error.unwrap_or_default())),
            ];
            v
        })
        .collect()
}

/// One line per row that made a plan: its creation, phase by phase (`PlanPhases`).
pub fn plan_phases(lines: &[Line], cfg: &Config) -> String {
    let mut out = String::new();
    for l in lines {
        if let Some(p) = &l.row.plan_phases {
            let s = |d: std::time::Duration| secs(d.as_secs_f64());
            out += &format!(
                "plan phases ({}, {}): layout {} s, windows {} s, points {} s, usfft {} s \
                 (type 2 {}, type 1 {}), tables {} s\n",
                case_name(l.case, cfg),
                l.mode_name(),
                s(p.layout),
                s(p.windows),
                s(p.points),
                s(p.usfft[0] + p.usfft[1]),
                s(p.usfft[0]),
                s(p.usfft[1]),
                s(p.tables),
            );
        }
    }
    out
}

/// The targets: met, missed or not run, one line each.
pub fn targets(lines: &[Line], cfg: &Config) -> String {
    let find = |n: usize, mode: Mode| {
        lines.iter().find(|l| {
            l.case.n == n && l.mode == mode && seed(l.case, cfg).is_some() && l.skipped.is_none()
        })
    };
    let mut out = String::from("Targets (the seed's cases: 350 directions, 1/3/5 levels):\n");
    let checks: [(&str, usize, Mode, bool, f64); 4] = [
        (
            "N = 256 GPU forward ≤ 1 s (TITAN X 3,234 s)",
            256,
            Mode::Gpu,
            true,
            1.0,
        ),
        (
            "N = 256 GPU adjoint ≤ 1 s (TITAN X 4,956 s)",
            256,
            Mode::Gpu,
            false,
            1.0,
        ),
        (
            "N = 64 CPU forward ≤ 2 s on 2 cores",
            64,
            Mode::Cpu,
            true,
            2.0,
        ),
        (
            "N = 64 CPU adjoint ≤ 2 s on 2 cores",
            64,
            Mode::Cpu,
            false,
            2.0,
        ),
    ];
    for (name, n, mode, fwd, limit) in checks {
        let line = find(n, mode);
        let t = line.and_then(|l| if fwd { l.forward_s() } else { l.adjoint_s() });
        let verdict = match (line, t) {
            (Some(_), Some(t)) if t <= limit => format!("met ({} s)", secs(t)),
            (Some(_), Some(t)) => format!("missed ({} s)", secs(t)),
            (Some(l), None) => format!("missed ({})", l.row.error.as_deref().unwrap_or("no time")),
            (None, _) => "not run".into(),
        };
        let threads = match line {
            Some(l) if mode == Mode::Cpu && l.threads != 2 => {
                format!(" [on {} threads]", l.threads)
            }
            _ => String::new(),
        };
        out += &format!("- {name}: {verdict}{threads}\n");
    }
    out
}
