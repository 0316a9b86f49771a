//! Batches of traces in caller memory: `n_traces` traces of `n_samples` samples,
//! trace `t` starting at element `t * trace_stride` (fastest dimension first).

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceBatch {
    pub n_samples: usize,
    pub n_traces: usize,
    pub trace_stride: usize,
}

impl TraceBatch {
    /// Checks the sizes and returns the batch, or a message naming the bad value.
    pub fn new(n_samples: usize, n_traces: usize, trace_stride: usize) -> Result<TraceBatch> {
        Self::named(
            n_samples,
            n_traces,
            trace_stride,
            ["n_traces", "trace_stride"],
        )
    }

    /// `new` for a call whose arguments have other names (e.g. `n_stations` and
    /// `station_stride`): the messages name the caller's arguments.
    pub fn named(
        n_samples: usize,
        n_traces: usize,
        trace_stride: usize,
        [count, stride]: [&str; 2],
    ) -> Result<TraceBatch> {
        if n_traces == 0 {
            return Err(crate::invalid!("{count} is 0; expected at least one trace"));
        }
        if trace_stride < n_samples {
            return Err(crate::invalid!(
                "{stride} {trace_stride} is smaller than a trace ({n_samples} samples)"
            ));
        }
        let batch = TraceBatch {
            n_samples,
            n_traces,
            trace_stride,
        };
        batch.span_checked().ok_or_else(|| {
            crate::invalid!(
                "{count} {n_traces} with {stride} {trace_stride} overflow the address space"
            )
        })?;
        Ok(batch)
    }

    /// Elements spanned in memory: from the first sample of the first trace to the last
    /// sample of the last trace.
    pub fn span(&self) -> usize {
        self.span_checked().expect("checked in TraceBatch::new")
    }

    fn span_checked(&self) -> Option<usize> {
        (self.n_traces - 1)
            .checked_mul(self.trace_stride)?
            .checked_add(self.n_samples)
            .filter(|&l| l.checked_mul(8).is_some())
    }

    /// The position of the first non-finite sample, if any (traces only, not the gaps
    /// between them).
    pub fn find_non_finite<T: num_traits::Float + Sync>(
        &self,
        data: &[T],
    ) -> Option<(usize, usize)> {
        use rayon::prelude::*;
        (0..self.n_traces).into_par_iter().find_map_first(|t| {
            let trace = &data[t * self.trace_stride..t * self.trace_stride + self.n_samples];
            trace.iter().position(|x| !x.is_finite()).map(|i| (t, i))
        })
    }

    /// `Err(NonFinite)` naming the first non-finite sample.
    pub fn check_finite<T: num_traits::Float + Sync>(&self, data: &[T]) -> Result<()> {
        match self.find_non_finite(data) {
            None => Ok(()),
            Some((t, i)) => Err(Error::NonFinite(format!(
                "the input holds a non-finite value (NaN or infinity) at trace {t}, sample {i}; nothing was written"
            ))),
        }
    }
}
