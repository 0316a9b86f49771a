//! Batches of traces in caller memory: `n_traces` traces of `n_samples` samples,
//! trace `t` starting at element `t * trace_stride` (fastest dimension first).

use crate::backend::cpu::CpuBackend;
use crate::error::{Error, Result};
use crate::sample::Finite;

/// Batches of fewer samples than this are checked for non-finite values on the calling thread.
const PARALLEL_SCAN_MIN: usize = 1 << 20;
/// Samples per piece of a parallel scan.
const SCAN_PIECE: usize = 1 << 16;

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
    /// between them). Large batches are scanned on `cpu`'s threads, long traces in pieces
    /// (one 2^26-sample trace is otherwise a single thread's work); small ones on the
    /// calling thread, where waking the pool would cost more than the scan.
    pub fn find_non_finite<T: Finite>(
        &self,
        data: &[T],
        cpu: &CpuBackend,
    ) -> Option<(usize, usize)> {
        use rayon::prelude::*;
        let n = self.n_samples;
        let pieces = n.div_ceil(SCAN_PIECE);
        // Pieces in trace order, then sample order: the first hit is the first sample.
        let scan = |k: usize| {
            let (t, at) = (k / pieces, (k % pieces) * SCAN_PIECE);
            let trace = &data[t * self.trace_stride..t * self.trace_stride + n];
            first_non_finite(&trace[at..n.min(at + SCAN_PIECE)]).map(|i| (t, at + i))
        };
        let all = 0..self.n_traces * pieces;
        if self.n_traces.saturating_mul(n) < PARALLEL_SCAN_MIN {
            all.into_iter().find_map(scan)
        } else {
            cpu.install(|| all.into_par_iter().find_map_first(scan))
        }
    }

    /// `Err(NonFinite)` naming the first non-finite sample.
    pub fn check_finite<T: Finite>(&self, data: &[T], cpu: &CpuBackend) -> Result<()> {
        match self.find_non_finite(data, cpu) {
            None => Ok(()),
            Some((t, i)) => Err(non_finite_at(t, i)),
        }
    }
}

/// The error of a batch whose first non-finite sample is sample `i` of trace `t`.
pub fn non_finite_at(t: usize, i: usize) -> Error {
    Error::NonFinite(format!(
        "the input holds a non-finite value (NaN or infinity) at trace {t}, sample {i}; nothing was written"
    ))
}

/// The index of the first non-finite value of one contiguous array: on `cpu`'s threads from
/// PARALLEL_SCAN_MIN values (in pieces of SCAN_PIECE), else on the calling thread.
pub fn find_non_finite_in<T: Finite>(x: &[T], cpu: &CpuBackend) -> Option<usize> {
    use rayon::prelude::*;
    if x.len() < PARALLEL_SCAN_MIN {
        return first_non_finite(x);
    }
    cpu.install(|| {
        x.par_chunks(SCAN_PIECE)
            .enumerate()
            .find_map_first(|(p, piece)| first_non_finite(piece).map(|i| p * SCAN_PIECE + i))
    })
}

/// The index of the first non-finite value: a branch-free pass per block (vectorised), the
/// position looked for only in the block that holds one.
pub fn first_non_finite<T: Finite>(x: &[T]) -> Option<usize> {
    const BLOCK: usize = 256;
    x.chunks(BLOCK).enumerate().find_map(|(b, block)| {
        if block.iter().fold(true, |ok, v| ok & v.finite()) {
            return None;
        }
        block
            .iter()
            .position(|v| !v.finite())
            .map(|i| b * BLOCK + i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_non_finite_sample_is_found_wherever_it_lies() {
        let mut x = vec![1.5f32; 1000];
        assert_eq!(first_non_finite(&x), None);
        for (i, bad) in [
            (0, f32::NAN),
            (255, f32::INFINITY),
            (256, f32::NEG_INFINITY),
            (999, f32::NAN),
        ] {
            x.fill(1.5);
            x[i] = bad;
            // A later one too: the first is wanted.
            if i + 300 < x.len() {
                x[i + 300] = f32::NAN;
            }
            assert_eq!(first_non_finite(&x), Some(i), "bad value at {i}");
        }
        // Large batches scan on the pool and find the first by trace, then by sample.
        let cpu = CpuBackend::new().unwrap();
        let batch = TraceBatch::new(1024, 2048, 1030).unwrap();
        let mut data = vec![0.25f64; batch.span()];
        assert_eq!(batch.find_non_finite(&data, &cpu), None);
        data[1030 * 1500 + 7] = f64::NAN;
        data[1030 * 1700 + 3] = f64::NAN;
        // Between traces (the stride's gap): not a sample.
        data[1030 * 10 + 1027] = f64::NAN;
        assert_eq!(batch.find_non_finite(&data, &cpu), Some((1500, 7)));
        // One long trace scans in pieces on the pool; the first piece holding one wins.
        let long = TraceBatch::new(3 << 20, 1, 3 << 20).unwrap();
        let mut data = vec![0.5f32; long.span()];
        assert_eq!(long.find_non_finite(&data, &cpu), None);
        data[(2 << 20) + 11] = f32::INFINITY;
        data[(5 << 18) + 3] = f32::NAN;
        assert_eq!(long.find_non_finite(&data, &cpu), Some((0, (5 << 18) + 3)));
        data[SCAN_PIECE - 1] = f32::NAN;
        assert_eq!(long.find_non_finite(&data, &cpu), Some((0, SCAN_PIECE - 1)));
    }
}
