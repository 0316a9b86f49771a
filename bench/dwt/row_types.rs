//! What the rows of a case are made of, shared by the host rows (`rows`) and the
//! device-resident ones (`device_rows`): the modes, the checks, the rows and their
//! collector, the reference outputs, and the work every row does.

use crate::case::Case;
use crate::harness::compare::{max_rel_err, max_rel_err_f64};
use crate::harness::timing::{Measured, Verdict};
use crate::TOLERANCE;
use seisgpu::dwt::denoise::DenoiseOptions;
use seisgpu::layout::TraceBatch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Gsl,
    Cpu,
    GpuHost,
    GpuDevice,
    RefPinned,
    RefD2d,
}

#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// max |out − ref| / max |ref|
    pub err: f64,
    pub vs: &'static str,
    /// The same measure on the thresholds the call returned.
    pub thr_err: Option<f64>,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.err <= TOLERANCE && self.thr_err.is_none_or(|e| e <= TOLERANCE)
    }

    /// Against the input (the reference rows only copy it).
    pub fn copy_of(out: &[f32], input: &[f32]) -> Check {
        Check {
            err: max_rel_err(out, input),
            vs: "input",
            thr_err: None,
        }
    }
}

impl Verdict for Check {
    fn worse(self, b: Check) -> Check {
        if b.err > self.err || !b.ok() {
            b
        } else {
            self
        }
    }
}

pub struct Row {
    pub case: Case,
    pub mode: Mode,
    pub label: String,
    pub result: Result<Measured<Check>, String>,
}

/// The outputs later rows of the case are checked against.
pub struct CaseRefs {
    pub gsl_out: Option<Vec<f32>>,
    pub cpu_out: Option<Vec<f32>>,
    pub cpu_thr: Option<Vec<f64>>,
}

impl CaseRefs {
    /// The output GPU rows are checked against: the CPU's, else GSL's.
    pub fn for_gpu(&self) -> Option<(&[f32], &'static str)> {
        match (&self.cpu_out, &self.gsl_out) {
            (Some(c), _) => Some((c, "CPU")),
            (None, Some(g)) => Some((g, "GSL")),
            _ => None,
        }
    }

    /// A GPU call's output and thresholds against the references.
    pub fn check_gpu(&self, out: &[f32], thr: Option<&[f64]>) -> Option<Check> {
        self.for_gpu().map(|(r, vs)| Check {
            err: max_rel_err(out, r),
            vs,
            thr_err: thr
                .zip(self.cpu_thr.as_deref())
                .map(|(a, b)| max_rel_err_f64(a, b)),
        })
    }
}

/// Collects a case's rows, reporting errors as they happen.
pub struct Rows {
    pub case: Case,
    pub rows: Vec<Row>,
}

impl Rows {
    pub fn push(&mut self, mode: Mode, label: &str, result: Result<Measured<Check>, String>) {
        if let Err(e) = &result {
            eprintln!("[{}] {label}: error: {e}", self.case.label());
        }
        self.rows.push(Row {
            case: self.case,
            mode,
            label: label.into(),
            result,
        });
    }

    pub fn progress(&self, what: &str) {
        eprintln!("[{}] {what}", self.case.label());
    }
}

/// What every row of a case denoises.
pub struct Work<'a> {
    pub input: &'a [f32],
    pub batch: TraceBatch,
    pub opts: DenoiseOptions,
}
