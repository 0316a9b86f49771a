//! The summary against the DWT targets: one line per target and case, met only where
//! the row's output also passed its check.

use crate::case::Case;
use crate::config::Config;
use crate::harness::report::{cell, fmt_ms};
use crate::report::median_of;
use crate::row_types::{Mode, Row};
use std::fmt::Write as _;

/// PASS/FAIL of a row against a target, its output check included.
fn verdict(r: &Row, met: bool) -> &'static str {
    match r.result.as_ref().ok().and_then(|m| m.check) {
        Some(c) if !c.ok() => "FAIL (wrong output)",
        None if met => "PASS (unchecked)",
        _ if met => "PASS",
        _ => "FAIL",
    }
}

pub fn summary(rows: &[Row], cfg: &Config) -> String {
    let mut s = String::from(
        "## Targets\n\n| target | case | measured | verdict |\n| --- | --- | --- | --- |\n",
    );
    let find = |case: Case, mode: Mode| rows.iter().find(|r| r.case == case && r.mode == mode);
    // Device-resident absolute targets.
    for (case, limit, name) in [
        (
            Case {
                traces: 65536,
                n: 1024,
            },
            0.35,
            "65,536 × 1,024 device-resident ≤ 0.35 ms",
        ),
        (Case::single(26), 1.0, "1 × 2^26 device-resident ≤ 1 ms"),
    ] {
        let (mut measured, v) = match find(case, Mode::GpuDevice) {
            None if !cfg.cases.contains(&case) => ("—".into(), "not run (case not selected)"),
            None => (
                "—".into(),
                "not run (no CUDA context, or mode not selected)",
            ),
            Some(r) => match &r.result {
                Err(e) => (format!("error: {}", cell(e)), "FAIL (error)"),
                Ok(m) => (
                    format!("{} ms", fmt_ms(m.median_ms)),
                    verdict(r, m.median_ms <= limit),
                ),
            },
        };
        // What the target asks of the memory system on this GPU.
        if let Some(d) = median_of(rows, case, Mode::RefD2d) {
            let _ = write!(
                measured,
                " (D2D copy {} ms: the target needs ≥ {:.0}% of D2D BW)",
                fmt_ms(d),
                100.0 * d / limit
            );
        }
        let _ = writeln!(s, "| {name} | {} | {measured} | {v} |", case.label());
    }
    // Per-case relative targets.
    for case in &cfg.cases {
        let Some(r) = find(*case, Mode::GpuHost) else {
            continue;
        };
        let (measured, v) = match (&r.result, median_of(rows, *case, Mode::RefPinned)) {
            (Err(e), _) => (format!("error: {}", cell(e)), "FAIL (error)"),
            (Ok(_), None) => ("—".into(), "not run (no pinned reference)"),
            (Ok(m), Some(p)) => (
                format!(
                    "{} ms = {:.2}× pinned {} ms",
                    fmt_ms(m.median_ms),
                    m.median_ms / p,
                    fmt_ms(p)
                ),
                verdict(r, m.median_ms <= 1.5 * p),
            ),
        };
        let _ = writeln!(
            s,
            "| host-to-host ≤ 1.5× pinned H→D + D→H | {} | {measured} | {v} |",
            case.label()
        );
    }
    for case in &cfg.cases {
        let Some(r) = find(*case, Mode::Cpu) else {
            continue;
        };
        let (measured, v) = match (&r.result, median_of(rows, *case, Mode::Gsl)) {
            (Err(e), _) => (format!("error: {}", cell(e)), "FAIL (error)"),
            (Ok(_), None) => ("—".into(), "not run (no GSL reference)"),
            (Ok(m), Some(g)) => (
                format!(
                    "{:.2}× ({} ms vs GSL {} ms)",
                    g / m.median_ms,
                    fmt_ms(m.median_ms),
                    fmt_ms(g)
                ),
                verdict(r, g / m.median_ms >= 2.0),
            ),
        };
        let _ = writeln!(
            s,
            "| CPU ≥ 2× faster than GSL | {} | {measured} | {v} |",
            case.label()
        );
    }
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| {
            r.result
                .as_ref()
                .ok()
                .and_then(|m| m.check)
                .is_some_and(|c| !c.ok())
        })
        .map(|r| format!("{} / {}", r.case.label(), r.label))
        .collect();
    let errors = rows.iter().filter(|r| r.result.is_err()).count();
    let _ = writeln!(
        s,
        "\nOutput checks: {}; rows with errors: {errors}.",
        if wrong.is_empty() {
            "every checked row within tolerance".to_string()
        } else {
            format!("WRONG OUTPUT in {}", wrong.join(", "))
        }
    );
    s
}
