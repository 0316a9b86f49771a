//! The DWT on the CPU: traces spread over the pool's threads; a batch of fewer traces
//! than threads (one long signal, say) is instead split within each level.

use super::denoise::{self, DenoiseOptions};
use super::traces::{Direction, Job, Op, Traces};
use super::transform::Filters;
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Result};
use crate::layout::TraceBatch;
use crate::sample::Sample;
use rayon::prelude::*;

/// Output positions per parallel task when one signal is split.
const CHUNK: usize = 1 << 14;
/// Signals shorter than this are never split: the work per level is too small.
const SPLIT_MIN: usize = 1 << 16;
/// Batches of fewer samples in all than this run on the calling thread: waking the pool
/// would cost more than its threads save (measured with bench/dwt.rs, see bench/README.md).
const SERIAL_MAX: usize = 1 << 17;

/// Per-thread buffers, allocated up front so that exhaustion is a status, not an abort.
/// The trace itself is transformed in the caller's output.
struct Work<T> {
    tmp: Vec<T>,
    scratch: Vec<T>,
}

impl<T: Sample> Work<T> {
    fn new(n: usize) -> Result<Work<T>> {
        Ok(Work {
            tmp: try_vec(n, T::zero(), "a DWT work buffer")?,
            scratch: Vec::new(),
        })
    }
}

/// A call's filters and depth, and whether each level is split over the pool's threads.
struct Levels<'a, T> {
    f: &'a Filters<T>,
    levels: u32,
    split: bool,
}

impl<T: Sample> Levels<'_, T> {
    fn forward(&self, buf: &mut [T], w: &mut Work<T>) {
        let f = self.f;
        for l in 0..self.levels {
            let m = buf.len() >> l;
            let (x, out) = (&buf[..m], &mut w.tmp[..m]);
            let (a, d) = out.split_at_mut(m / 2);
            if self.split && m / 2 > CHUNK {
                a.par_chunks_mut(CHUNK)
                    .zip(d.par_chunks_mut(CHUNK))
                    .enumerate()
                    .for_each(|(c, (a, d))| f.forward(x, c * CHUNK, a, d));
            } else {
                f.forward(x, 0, a, d);
            }
            buf[..m].copy_from_slice(&w.tmp[..m]);
        }
    }

    fn inverse(&self, buf: &mut [T], w: &mut Work<T>) {
        let f = self.f;
        for l in (0..self.levels).rev() {
            let m = buf.len() >> l;
            let (a, d) = buf[..m].split_at(m / 2);
            let out = &mut w.tmp[..m];
            if self.split && m > CHUNK {
                out.par_chunks_mut(CHUNK)
                    .enumerate()
                    .for_each(|(c, o)| f.inverse(a, d, c * CHUNK, o));
            } else {
                f.inverse(a, d, 0, out);
            }
            buf[..m].copy_from_slice(&w.tmp[..m]);
        }
    }

    /// Forward, shrinkage of the detail levels `options` chooses, inverse; returns the
    /// thresholds, one per level.
    fn denoise(&self, options: &DenoiseOptions, buf: &mut [T], w: &mut Work<T>) -> Vec<f64> {
        let (n, levels) = (buf.len(), self.levels);
        self.forward(buf, w);
        let lambdas = denoise::level_thresholds(options, buf, levels, &mut w.scratch);
        for (j, &lambda) in (1..=levels).zip(&lambdas) {
            if options.thresholds_level(j) {
                denoise::shrink(&mut buf[n >> j..n >> (j - 1)], lambda, options.mode);
            }
        }
        self.inverse(buf, w);
        lambdas
    }
}

/// Runs `body` on every trace: the trace, copied to the output unless in place, is
/// transformed there by `body`. Returns what `body` returned, per trace.
fn for_each_trace<T: Sample, R: Send>(
    cpu: &CpuBackend,
    traces: Traces<T>,
    batch: TraceBatch,
    body: impl Fn(&mut [T], &mut Work<T>, bool) -> R + Sync,
) -> Result<Vec<R>> {
    let n = batch.n_samples;
    let serial = batch.n_traces * n < SERIAL_MAX;
    let split = !serial && batch.n_traces < cpu.threads() && n >= SPLIT_MIN;
    let groups = if serial || split {
        1
    } else {
        cpu.threads().min(batch.n_traces)
    };
    let mut works = (0..groups)
        .map(|_| Work::new(n))
        .collect::<Result<Vec<_>>>()?;
    let (input, output): (Option<&[T]>, &mut [T]) = match traces {
        Traces::InPlace(d) => (None, d),
        Traces::Separate { input, output } => (Some(input), output),
    };
    let mut outs: Vec<(usize, &mut [T])> = output[..batch.span()]
        .chunks_mut(batch.trace_stride)
        .map(|c| &mut c[..n])
        .enumerate()
        .collect();
    let per_group = batch.n_traces.div_ceil(groups);
    let body = &body;
    let mut run = move || {
        let run_group = |(group, w): (&mut [(usize, &mut [T])], &mut Work<T>)| -> Vec<R> {
            group
                .iter_mut()
                .map(|(t, out)| {
                    if let Some(inp) = input {
                        out.copy_from_slice(&inp[*t * batch.trace_stride..][..n]);
                    }
                    body(out, w, split)
                })
                .collect()
        };
        let per: Vec<Vec<R>> = if serial || split {
            outs.chunks_mut(per_group)
                .zip(works.iter_mut())
                .map(run_group)
                .collect()
        } else {
            outs.par_chunks_mut(per_group)
                .zip(works.par_iter_mut())
                .map(run_group)
                .collect()
        };
        Ok(per.into_iter().flatten().collect())
    };
    if serial {
        run()
    } else {
        cpu.install(run)
    }
}

/// Runs `job` on the pool; returns the thresholds used when denoising (n_traces × levels),
/// else nothing.
pub fn run<T: Sample>(cpu: &CpuBackend, job: Job<T>) -> Result<Vec<f64>> {
    let f = Filters::<T>::new(job.wavelet);
    let levels = job.levels;
    let per_trace = for_each_trace(cpu, job.traces, job.batch, |buf, w, split| {
        let run = Levels {
            f: &f,
            levels,
            split,
        };
        match job.op {
            Op::Transform(Direction::Forward) => run.forward(buf, w),
            Op::Transform(Direction::Inverse) => run.inverse(buf, w),
            Op::Denoise(options) => return run.denoise(options, buf, w),
        }
        Vec::new()
    })?;
    Ok(per_trace.into_iter().flatten().collect())
}
