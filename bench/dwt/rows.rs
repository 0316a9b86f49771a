//! The rows of one case: what each mode runs and how its output is checked. The host
//! rows are here (GSL, the CPU context, the GPU host-to-host); the device-resident and
//! reference rows in `device_rows`; the types both use in `row_types`.

use crate::case::Case;
use crate::config::Config;
use crate::device_rows::{self, Gpu};
use crate::gsl::GslDenoiser;
use crate::harness::compare::max_rel_err;
use crate::harness::cpu_threads;
use crate::harness::timing::{guarded, measure, Measured, Reps, Sample};
use crate::row_types::{CaseRefs, Check, Mode, Row, Rows, Work};
use crate::{lib_err, MEMBER};
use seisgpu::context::Context;
use seisgpu::dwt::denoise::DenoiseOptions;
use seisgpu::dwt::wavelet::Family;
use seisgpu::dwt::{DwtPlan, Traces};
use seisgpu::layout::TraceBatch;
use std::sync::Arc;
use std::time::Instant;

impl Config {
    pub fn host_reps(&self) -> Reps {
        Reps {
            warmup: self.warmup,
            max: self.reps,
            budget_s: self.budget_s,
        }
    }

    /// GPU rows warm up at least 3 times (compilation, clocks).
    pub fn gpu_reps(&self) -> Reps {
        Reps {
            warmup: self.warmup.max(3),
            max: self.gpu_reps,
            budget_s: self.budget_s,
        }
    }
}

pub fn run_case(cfg: &Config, case: Case, cpu_ctx: &Arc<Context>, gpu: Option<&Gpu>) -> Vec<Row> {
    let n = case.n;
    let len = case.total();
    let levels = n.trailing_zeros() as usize;
    let mut rows = Rows {
        case,
        rows: Vec::new(),
    };
    rows.progress("generating input");
    let input = case.input();
    let work = Work {
        input: &input,
        batch: TraceBatch::new(n, case.traces, n).expect("valid batch"),
        opts: DenoiseOptions::default(),
    };
    let mut refs = CaseRefs {
        gsl_out: None,
        cpu_out: None,
        cpu_thr: None,
    };
    // (1) GSL, one thread, f64.
    if cfg.gsl {
        rows.progress("GSL reference");
        let mut out = vec![0.0f32; len];
        let r = guarded(|| {
            let mut g = GslDenoiser::new(n)?;
            measure(cfg.host_reps(), |_| {
                let t0 = Instant::now();
                g.denoise(&input, &mut out)?;
                Ok((Sample::since(t0), None))
            })
        });
        if r.is_ok() {
            refs.gsl_out = Some(out);
        }
        rows.push(Mode::Gsl, "GSL, 1 thread, f64", r);
    }

    // (2) seisgpu CPU context, host to host.
    if cfg.cpu {
        rows.progress("seisgpu CPU");
        let (mut out, mut thr) = (vec![0.0f32; len], vec![0.0f64; case.traces * levels]);
        let gsl_out = refs.gsl_out.as_deref();
        let r = guarded(|| {
            let plan =
                DwtPlan::new(cpu_ctx.clone(), Family::Daubechies, MEMBER, n).map_err(lib_err)?;
            host_denoise(
                &plan,
                &work,
                cfg.host_reps(),
                &mut out,
                &mut thr,
                |out, _| {
                    gsl_out.map(|g| Check {
                        err: max_rel_err(out, g),
                        vs: "GSL",
                        thr_err: None,
                    })
                },
            )
        });
        if r.is_ok() {
            refs.cpu_out = Some(out);
            refs.cpu_thr = Some(thr);
        }
        let label = format!("seisgpu CPU, {} threads", cpu_threads(cpu_ctx));
        rows.push(Mode::Cpu, &label, r);
    }

    let Some(gpu) = gpu else { return rows.rows };

    // (3) seisgpu GPU, host to host, pageable caller memory.
    if cfg.gpu {
        rows.progress("seisgpu GPU host-to-host");
        let r = guarded(|| {
            let plan =
                DwtPlan::new(gpu.ctx.clone(), Family::Daubechies, MEMBER, n).map_err(lib_err)?;
            let (mut out, mut thr) = (vec![0.0f32; len], vec![0.0f64; case.traces * levels]);
            host_denoise(
                &plan,
                &work,
                cfg.gpu_reps(),
                &mut out,
                &mut thr,
                |out, thr| refs.check_gpu(out, Some(thr)),
            )
        });
        rows.push(Mode::GpuHost, "seisgpu GPU host→host (pageable)", r);
    }

    device_rows::run(cfg, gpu, &work, &refs, &mut rows);
    rows.rows
}

/// A plan's denoise timed host array in, host array out; `check` sees the output and the
/// thresholds of the checked calls.
fn host_denoise(
    plan: &DwtPlan,
    work: &Work,
    reps: Reps,
    out: &mut [f32],
    thr: &mut [f64],
    check: impl Fn(&[f32], &[f64]) -> Option<Check>,
) -> Result<Measured<Check>, String> {
    measure(reps, |checked| {
        let traces = Traces::Separate {
            input: work.input,
            output: out,
        };
        let t0 = Instant::now();
        plan.denoise(&work.opts, traces, work.batch, checked.then_some(&mut *thr))
            .map_err(lib_err)?;
        let s = Sample::since(t0);
        Ok((s, if checked { check(out, thr) } else { None }))
    })
}
