//! Batched 1D discrete wavelet transforms, GSL-compatible, and wavelet denoising.
//!
//! Periodic boundaries, power-of-two lengths, and GSL's coefficient layout: after L
//! levels of an n-sample trace, [a_L | d_L | d_{L−1} | … | d_1] with d_j of length n/2^j
//! at offset n/2^j (a full transform has L = log2 n and a single approximation value).

pub mod chunks;
pub mod cpu;
pub mod cuda;
pub mod denoise;
mod device_calls;
pub mod filters;
pub mod traces;
pub mod transform;
pub mod wavelet;

use crate::backend::cuda::memory::Tally;
use crate::backend::cuda::workspace::Workspace;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::sample::Sample;
use denoise::DenoiseOptions;
use std::sync::{Arc, Mutex, MutexGuard};
pub use traces::{Direction, Job, Op, Traces};
use wavelet::{Family, Wavelet};

/// A transform of one wavelet and trace length, on one context. Any number of threads
/// may execute one plan at once (device calls take turns with its workspace).
pub struct DwtPlan {
    ctx: Arc<Context>,
    wavelet: Wavelet,
    n_samples: usize,
    /// The device calls' work memory (a denoise's medians, the long path's arrays), sized
    /// by their batches: kept, grown to the largest batch seen or reserved (`reserve`).
    work: Mutex<Workspace>,
    /// Device bytes the plan holds.
    held: Arc<Tally>,
}

impl DwtPlan {
    /// Device bytes the plan holds (0 on a CPU context): the device calls' workspace, as
    /// reserved or grown to their largest batch. Host calls take their chunk buffers from
    /// the context's allocator per call and give them back when they return.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    /// Makes room for device calls of up to `n_traces` traces, any depth, rule and sample
    /// type, and loads their kernels, so that they allocate and load nothing (and may be
    /// captured into a CUDA graph). Nothing on a CPU context.
    pub fn reserve(&self, n_traces: usize) -> Result<()> {
        let Some(gpu) = self.ctx.cuda() else {
            return Ok(());
        };
        cuda::load_kernels::<f32>(gpu, &self.wavelet)?;
        cuda::load_kernels::<f64>(gpu, &self.wavelet)?;
        let bytes = (1..=self.max_levels())
            .map(|levels| self.reserve_bytes(gpu, levels, n_traces))
            .max()
            .unwrap_or(0);
        let stream = gpu.caller_stream();
        self.held.scope("reserving the DWT plan's workspace", || {
            let mut work = self.workspace();
            work.reserve(&stream, bytes, "reserving the DWT plan's workspace")?;
            work.finish(&stream)
        })
    }

    /// The most any device call of `levels` levels over `n_traces` traces uses.
    fn reserve_bytes(
        &self,
        gpu: &crate::backend::cuda::CudaBackend,
        levels: u32,
        n: usize,
    ) -> usize {
        use denoise::{NoiseEstimate, ThresholdRule};
        let per_level = DenoiseOptions {
            rule: ThresholdRule::Universal,
            noise: NoiseEstimate::PerLevel,
            ..Default::default()
        };
        let ops = [
            Op::Transform(Direction::Forward),
            Op::Transform(Direction::Inverse),
            Op::Denoise(&per_level),
        ];
        let (w, len) = (&self.wavelet, self.n_samples);
        ops.into_iter()
            .flat_map(|op| {
                [
                    cuda::work_bytes::<f32>(gpu, w, op, levels, len, n),
                    cuda::work_bytes::<f64>(gpu, w, op, levels, len, n),
                ]
            })
            .max()
            .unwrap_or(0)
    }

    fn workspace(&self) -> MutexGuard<'_, Workspace> {
        self.work.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn new(
        ctx: Arc<Context>,
        family: Family,
        member: u32,
        n_samples: usize,
    ) -> Result<DwtPlan> {
        if n_samples < 2 || !n_samples.is_power_of_two() {
            return Err(Error::Unsupported(format!(
                "n_samples is {n_samples}; the periodic wavelet transform needs a power of two ≥ 2"
            )));
        }
        // One trace must fit the host (in single precision, the smaller sample) before a
        // plan for it is made.
        crate::alloc::host_bytes(&[n_samples], 4, "one trace of n_samples f32 samples")?;
        let wavelet = Wavelet::new(family, member)?;
        // The workspace is allocated and freed on a stream of the plan's own (calls use it
        // on the caller's, which the application may destroy before the plan).
        let work = match ctx.cuda() {
            Some(gpu) => Workspace::on(gpu.stream()?),
            None => Workspace::default(),
        };
        Ok(DwtPlan {
            ctx,
            wavelet,
            n_samples,
            work: Mutex::new(work),
            held: Arc::default(),
        })
    }

    pub fn n_samples(&self) -> usize {
        self.n_samples
    }

    pub fn wavelet(&self) -> &Wavelet {
        &self.wavelet
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// log2(n_samples): the depth of a full transform.
    pub fn max_levels(&self) -> u32 {
        self.n_samples.trailing_zeros()
    }

    /// The depth to use: 0 means all levels.
    pub fn resolve_levels(&self, requested: u32) -> Result<u32> {
        match requested {
            0 => Ok(self.max_levels()),
            l if l <= self.max_levels() => Ok(l),
            l => Err(crate::invalid!(
                "n_levels is {l}, but a {}-sample trace has at most {} levels",
                self.n_samples,
                self.max_levels()
            )),
        }
    }

    fn check<T: Sample>(&self, traces: &Traces<T>, batch: &TraceBatch) -> Result<()> {
        if batch.n_samples != self.n_samples {
            return Err(crate::invalid!(
                "batch has {} samples per trace but the plan was made for {}",
                batch.n_samples,
                self.n_samples
            ));
        }
        let need = batch.span();
        let short = match traces {
            Traces::InPlace(d) => d.len() < need,
            Traces::Separate { input, output } => input.len() < need || output.len() < need,
        };
        if short {
            return Err(crate::invalid!(
                "arrays shorter than the {need} elements the batch spans"
            ));
        }
        Ok(())
    }

    /// Forward or inverse transform of `levels` levels (0 = all) of every trace.
    /// The samples between traces (stride padding) are left untouched.
    pub fn transform<T: Sample>(
        &self,
        direction: Direction,
        levels: u32,
        traces: Traces<T>,
        batch: TraceBatch,
    ) -> Result<()> {
        let levels = self.resolve_levels(levels)?;
        self.check(&traces, &batch)?;
        self.run(Op::Transform(direction), levels, traces, batch)?;
        Ok(())
    }

    /// Forward transform, thresholding, inverse transform. `thresholds`, if given,
    /// receives n_traces × levels values (trace-major): the threshold applied to each
    /// level of each trace, 0 for levels left alone.
    pub fn denoise<T: Sample>(
        &self,
        options: &DenoiseOptions,
        traces: Traces<T>,
        batch: TraceBatch,
        thresholds: Option<&mut [f64]>,
    ) -> Result<()> {
        options.validate()?;
        let levels = self.resolve_levels(options.levels)?;
        self.check(&traces, &batch)?;
        let wanted = thresholds_wanted(&batch, levels, thresholds.as_deref())?;
        let used = self.run(Op::Denoise(options), levels, traces, batch)?;
        if let Some(t) = thresholds {
            t[..wanted].copy_from_slice(&used);
        }
        Ok(())
    }

    /// Runs `op` on every trace on the context's backend, in chunks when progress is
    /// reported; returns the thresholds used when denoising.
    fn run<T: Sample>(
        &self,
        op: Op,
        levels: u32,
        traces: Traces<T>,
        batch: TraceBatch,
    ) -> Result<Vec<f64>> {
        let stage = match op {
            Op::Transform(_) => "dwt traces",
            Op::Denoise(_) => "dwt denoise",
        };
        let mut reporter = self.ctx.reporter();
        // The GPU checks a batch's samples as it stages them; the CPU, and a batch run in
        // chunks for progress, scan them all first.
        let checked = self.ctx.cuda().is_none() || reporter.is_active();
        if checked {
            batch.check_finite(traces.input(), &self.ctx.cpu)?;
        }
        let used = chunks::run_batch(&mut reporter, stage, traces, batch, |traces, batch| {
            let job = Job {
                op,
                wavelet: &self.wavelet,
                levels,
                traces,
                batch,
                checked,
            };
            match self.ctx.cuda() {
                Some(gpu) => cuda::run(gpu, &self.ctx.cpu, job),
                None => cpu::run(&self.ctx.cpu, job),
            }
        })?;
        reporter.finish();
        Ok(used)
    }
}

/// The thresholds a denoise of `batch` at `levels` levels writes (n_traces × levels), after
/// refusing a caller's `thresholds` array too short for them.
fn thresholds_wanted(batch: &TraceBatch, levels: u32, thresholds: Option<&[f64]>) -> Result<usize> {
    let wanted = batch.n_traces * levels as usize;
    if let Some(t) = thresholds {
        if t.len() < wanted {
            return Err(crate::invalid!(
                "thresholds has {} elements; {wanted} needed",
                t.len()
            ));
        }
    }
    Ok(wanted)
}
