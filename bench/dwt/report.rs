//! The DWT bench's table and records: the derived columns (GB/s, fraction of the D2D
//! copy bandwidth, × the pinned transfer, speed-up vs GSL) and the notes.

use crate::case::Case;
use crate::harness::report::{fmt_ms, fmt_opt, Record, Table, Value};
use crate::row_types::{Mode, Row};
use crate::{BYTES_PER_SAMPLE, TOLERANCE};

struct Derived {
    gbps: Option<f64>,
    d2d_frac: Option<f64>,
    x_pinned: Option<f64>,
    x_gsl: Option<f64>,
}

/// The median time of the case's row of `mode`, if it ran.
pub fn median_of(rows: &[Row], case: Case, mode: Mode) -> Option<f64> {
    rows.iter()
        .find(|r| r.case == case && r.mode == mode)
        .and_then(|r| r.result.as_ref().ok())
        .map(|m| m.median_ms)
}

fn derive(rows: &[Row], r: &Row) -> Derived {
    let Ok(m) = &r.result else {
        return Derived {
            gbps: None,
            d2d_frac: None,
            x_pinned: None,
            x_gsl: None,
        };
    };
    let t = m.median_ms;
    let of = |mode| median_of(rows, r.case, mode);
    Derived {
        gbps: (t > 0.0).then(|| r.case.total() as f64 * BYTES_PER_SAMPLE / (t * 1e6)),
        d2d_frac: match r.mode {
            Mode::GpuDevice | Mode::RefD2d => of(Mode::RefD2d).map(|d| d / t),
            _ => None,
        },
        x_pinned: match r.mode {
            Mode::GpuHost | Mode::RefPinned => of(Mode::RefPinned).map(|p| t / p),
            _ => None,
        },
        x_gsl: match r.mode {
            Mode::Cpu | Mode::GpuHost | Mode::GpuDevice => of(Mode::Gsl).map(|g| g / t),
            _ => None,
        },
    }
}

pub fn fmt_err(e: f64) -> String {
    if e == 0.0 {
        "0".into()
    } else {
        format!("{e:.1e}")
    }
}

fn notes(r: &Row) -> String {
    let m = match &r.result {
        Err(e) => {
            let short: String = e.chars().take(140).collect();
            let more = if short.len() < e.len() { "…" } else { "" };
            return format!("error: {short}{more}");
        }
        Ok(m) => m,
    };
    let mut v = Vec::new();
    if let [h2d, d2h] = m.parts_median[..] {
        v.push(format!("H→D {} + D→H {} ms", fmt_ms(h2d), fmt_ms(d2h)));
    }
    if matches!(r.mode, Mode::GpuDevice | Mode::RefD2d | Mode::RefPinned) {
        v.push(format!("wall {} ms", fmt_ms(m.wall_median_ms)));
    }
    if matches!(r.mode, Mode::GpuHost | Mode::GpuDevice) {
        v.push(format!("1st call {} ms", fmt_ms(m.first_ms)));
    }
    if let Some(t) = m.check.and_then(|c| c.thr_err) {
        v.push(format!("thresholds err {}", fmt_err(t)));
    }
    if m.check.is_some_and(|c| !c.ok()) {
        v.push(format!("WRONG OUTPUT (tolerance {TOLERANCE:.0e})"));
    }
    v.push(format!("min {} ms", fmt_ms(m.min_ms)));
    v.join("; ")
}

pub fn table(rows: &[Row]) -> String {
    let mut t = Table::new(&[
        "case",
        "mode",
        ">reps",
        ">median ms",
        ">GB/s",
        ">% of D2D BW",
        ">× pinned xfer",
        ">speed-up vs GSL",
        "max rel err (vs)",
        "notes",
    ]);
    for r in rows {
        let d = derive(rows, r);
        let (reps, med, err) = match &r.result {
            Ok(m) => (
                m.reps.to_string(),
                fmt_ms(m.median_ms),
                m.check.map_or("—".into(), |c| {
                    let fail = if c.ok() { "" } else { " FAIL" };
                    format!("{} ({}){fail}", fmt_err(c.err), c.vs)
                }),
            ),
            Err(_) => ("—".into(), "—".into(), "—".into()),
        };
        t.row(vec![
            r.case.label(),
            r.label.clone(),
            reps,
            med,
            fmt_opt(d.gbps, |g| format!("{g:.1}")),
            fmt_opt(d.d2d_frac, |f| format!("{:.0}%", f * 100.0)),
            fmt_opt(d.x_pinned, |x| format!("{x:.2}×")),
            fmt_opt(d.x_gsl, |x| format!("{x:.2}×")),
            err,
            notes(r),
        ]);
    }
    t.markdown()
}

/// Every row with the values unrounded (the CSV and JSON output).
pub fn records(rows: &[Row]) -> Vec<Record> {
    rows.iter()
        .map(|r| {
            let d = derive(rows, r);
            let m = r.result.as_ref().ok();
            let c = m.and_then(|m| m.check);
            vec![
                ("case", r.case.label().into()),
                ("n_traces", r.case.traces.into()),
                ("n_samples", r.case.n.into()),
                ("mode", r.label.as_str().into()),
                ("warmup", m.map(|m| m.warmup).into()),
                ("reps", m.map(|m| m.reps).into()),
                ("median_ms", m.map(|m| m.median_ms).into()),
                ("min_ms", m.map(|m| m.min_ms).into()),
                ("first_ms", m.map(|m| m.first_ms).into()),
                ("wall_median_ms", m.map(|m| m.wall_median_ms).into()),
                ("gb_per_s", d.gbps.into()),
                ("d2d_fraction", d.d2d_frac.into()),
                ("x_pinned", d.x_pinned.into()),
                ("x_gsl", d.x_gsl.into()),
                ("max_rel_err", c.map(|c| c.err).into()),
                ("err_vs", c.map_or("", |c| c.vs).into()),
                ("threshold_err", c.and_then(|c| c.thr_err).into()),
                (
                    "ok",
                    match (&r.result, c) {
                        (Err(_), _) => "error".into(),
                        (Ok(_), Some(c)) => c.ok().to_string().into(),
                        (Ok(_), None) => "unchecked".into(),
                    },
                ),
                (
                    "note",
                    match &r.result {
                        Err(e) => Value::Text(format!("error: {e}")),
                        Ok(_) => notes(r).into(),
                    },
                ),
            ]
        })
        .collect()
}
