//! The caller's traces: shape, strides and the checks on them.

use crate::error::{Error, Result};
use crate::sample::Sample;

/// Traces in caller memory: trace (ix, iy) of `nx × ny` starts at element
/// `ix·stride_x + iy·stride_y` and holds `n_samples` samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume {
    pub n_samples: usize,
    pub nx: usize,
    pub ny: usize,
    pub stride_x: usize,
    pub stride_y: usize,
}

impl Volume {
    /// Checks that the traces do not overlap and the span fits the address space.
    pub fn new(
        n_samples: usize,
        nx: usize,
        ny: usize,
        stride_x: usize,
        stride_y: usize,
    ) -> Result<Volume> {
        let v = Volume {
            n_samples,
            nx,
            ny,
            stride_x,
            stride_y,
        };
        let fits = |sa: usize, na: usize, sb: usize| {
            sa >= n_samples
                && (na - 1)
                    .checked_mul(sa)
                    .and_then(|e| e.checked_add(n_samples))
                    .is_some_and(|e| sb >= e)
        };
        let disjoint = match (nx > 1, ny > 1) {
            (false, false) => true,
            (true, false) => stride_x >= n_samples,
            (false, true) => stride_y >= n_samples,
            (true, true) => fits(stride_x, nx, stride_y) || fits(stride_y, ny, stride_x),
        };
        if !disjoint {
            return Err(crate::invalid!(
                "strides ({stride_x}, {stride_y}) make traces of {n_samples} samples overlap"
            ));
        }
        v.span_checked()
            .ok_or_else(|| crate::invalid!("the strides overflow the address space"))?;
        Ok(v)
    }

    fn span_checked(&self) -> Option<usize> {
        (self.nx - 1)
            .checked_mul(self.stride_x)?
            .checked_add((self.ny - 1).checked_mul(self.stride_y)?)?
            .checked_add(self.n_samples)
            .filter(|&l| l.checked_mul(8).is_some())
    }

    /// Elements from the first sample of the first trace to the last of the last.
    pub fn span(&self) -> usize {
        self.span_checked().expect("checked in Volume::new")
    }

    /// First element of trace (ix, iy).
    pub fn offset(&self, ix: usize, iy: usize) -> usize {
        ix * self.stride_x + iy * self.stride_y
    }

    /// `Err(NonFinite)` naming the first non-finite sample.
    pub fn check_finite<T: Sample>(&self, data: &[T]) -> Result<()> {
        use rayon::prelude::*;
        let bad = (0..self.nx * self.ny).into_par_iter().find_map_first(|t| {
            let (ix, iy) = (t % self.nx, t / self.nx);
            let o = self.offset(ix, iy);
            data[o..o + self.n_samples]
                .iter()
                .position(|x| !x.is_finite())
                .map(|i| (ix, iy, i))
        });
        match bad {
            None => Ok(()),
            Some((ix, iy, i)) => {
                let trace = if self.nx == 1 {
                    format!("trace {iy}")
                } else {
                    format!("trace (inline {ix}, crossline {iy})")
                };
                Err(Error::NonFinite(format!(
                    "the input holds a non-finite value (NaN or infinity) at {trace}, sample {i}; nothing was written"
                )))
            }
        }
    }
}

impl Volume {
    /// The traces of crossline lines `lines` as separate mutable slices of `data` (which
    /// spans the volume), each with its index `ix + nx·(iy − lines.start)`, for writing
    /// from several threads. Safe splitting: the traces, disjoint by `Volume::new`, are
    /// cut off `data` in address order.
    pub fn lines_mut<'a, T>(
        &self,
        data: &'a mut [T],
        lines: std::ops::Range<usize>,
    ) -> Vec<(usize, &'a mut [T])> {
        let nx = self.nx;
        let mut order: Vec<(usize, usize)> = (0..lines.len() * nx)
            .map(|r| (self.offset(r % nx, lines.start + r / nx), r))
            .collect();
        order.sort_unstable();
        let mut out = Vec::with_capacity(order.len());
        let (mut rest, mut at) = (data, 0);
        for (o, r) in order {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(o - at);
            let (trace, tail) = tail.split_at_mut(self.n_samples);
            out.push((r, trace));
            (rest, at) = (tail, o + self.n_samples);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Volume;

    /// Each trace of the lines comes back once, at its offset, with its index; the gaps
    /// between traces are untouched.
    #[test]
    fn lines_mut_gives_each_trace_of_the_lines_at_its_offset() {
        // 3 × 4 traces of 5 samples, crossline-major with a gap of 2 (stride_x 28 > stride_y 7).
        let v = Volume::new(5, 3, 4, 28, 7).unwrap();
        let mut data = vec![-1i64; v.span()];
        for (r, trace) in v.lines_mut(&mut data, 1..3) {
            trace.iter_mut().for_each(|x| *x = r as i64);
        }
        for ix in 0..3 {
            for iy in 0..4 {
                let o = v.offset(ix, iy);
                let want = if (1..3).contains(&iy) {
                    (ix + 3 * (iy - 1)) as i64
                } else {
                    -1
                };
                assert!(
                    data[o..o + 5].iter().all(|&x| x == want),
                    "trace ({ix}, {iy})"
                );
            }
        }
        assert_eq!(data.iter().filter(|&&x| x >= 0).count(), 3 * 2 * 5);
    }
}
