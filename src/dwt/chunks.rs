//! Progress and cancellation of DWT batches. With a progress callback on the context, a
//! batch runs in chunks of traces (any backend) into a scratch copy of the caller's
//! layout, and reaches the caller's output only once every chunk is done: a cancelled call
//! writes nothing, also in place. Without a callback the batch runs as before, directly.

use super::Traces;
use crate::error::{try_vec, Result};
use crate::layout::TraceBatch;
use crate::progress::Reporter;
use crate::sample::Sample;

/// Runs `run` on the whole batch, or, when `reporter` listens, chunk by chunk (each
/// chunk's per-trace results appended in trace order) as the stage `stage`.
pub(crate) fn run_batch<T: Sample>(
    reporter: &mut Reporter,
    stage: &'static str,
    traces: Traces<T>,
    batch: TraceBatch,
    mut run: impl FnMut(Traces<T>, TraceBatch) -> Result<Vec<f64>>,
) -> Result<Vec<f64>> {
    if !reporter.is_active() {
        return run(traces, batch);
    }
    let (n, stride) = (batch.n_samples, batch.trace_stride);
    let mut scratch = try_vec(
        batch.span(),
        T::zero(),
        "the batch kept until the call ends",
    )?;
    let mut results = Vec::new();
    reporter.stage(stage, 1.0, batch.n_traces);
    let input = traces.input();
    reporter.for_chunks(batch.n_traces, 1, |range| {
        let chunk = TraceBatch {
            n_samples: n,
            n_traces: range.len(),
            trace_stride: stride,
        };
        let at = range.start * stride;
        let span = chunk.span();
        results.extend(run(
            Traces::Separate {
                input: &input[at..at + span],
                output: &mut scratch[at..at + span],
            },
            chunk,
        )?);
        Ok(())
    })?;
    let output = match traces {
        Traces::InPlace(d) => d,
        Traces::Separate { output, .. } => output,
    };
    for t in 0..batch.n_traces {
        let at = t * stride;
        output[at..at + n].copy_from_slice(&scratch[at..at + n]);
    }
    Ok(results)
}
