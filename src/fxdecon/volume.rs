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
