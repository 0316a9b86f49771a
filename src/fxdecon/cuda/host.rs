//! The host side of the slabs: a slab's read lines gathered into its staging buffer, its
//! filtered lines written (or added) into the caller's output, and the output of a call
//! with nothing to filter.

use crate::backend::cpu::CpuBackend;
use crate::error::Error;
use crate::fxdecon::volume::Volume;
use rayon::prelude::*;
use std::ops::Range;

/// Copies the traces of lines `first_y..` of `input` into `staged` ([line][ix][sample]),
/// as many lines as `staged` holds.
pub(super) fn gather(
    cpu: &CpuBackend,
    input: &[f32],
    layout: Volume,
    first_y: usize,
    staged: &mut [f32],
) {
    let (n, nx) = (layout.n_samples, layout.nx);
    cpu.install(|| {
        staged.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
            let o = layout.offset(r % nx, first_y + r / nx);
            row.copy_from_slice(&input[o..o + n]);
        })
    });
}

/// The caller's output volume, written line by line from several threads.
pub(super) struct Output<'a> {
    data: &'a mut [f32],
    layout: Volume,
    /// The lines before this one hold a slab's output already.
    written_until: usize,
}

impl<'a> Output<'a> {
    /// `output` spans `layout` (checked by the plan).
    pub(super) fn new(data: &'a mut [f32], layout: Volume) -> Output<'a> {
        Output {
            data,
            layout,
            written_until: 0,
        }
    }

    /// A stop after a slab was written says which lines hold partly filtered data.
    pub(super) fn stopped(&self, e: Error) -> Error {
        match e {
            Error::Cancelled(m) if self.written_until > 0 => Error::Cancelled(format!(
                "{m}; the output traces of crossline lines 0 to {} hold partly filtered \
                 data (a volume filtered in slabs), the others are untouched",
                self.written_until - 1
            )),
            e => e,
        }
    }

    /// Writes lines `lines` from `staged` ([line][ix][sample]); a line an earlier slab
    /// wrote (its windows cover it too) gets this slab's part added.
    pub(super) fn write_lines(&mut self, cpu: &CpuBackend, lines: &Range<usize>, staged: &[f32]) {
        let (n, nx) = (self.layout.n_samples, self.layout.nx);
        let already = self.written_until;
        let traces = self.layout.lines_mut(self.data, lines.clone());
        cpu.install(|| {
            traces.into_par_iter().for_each(|(r, dst)| {
                let src = &staged[r * n..(r + 1) * n];
                if lines.start + r / nx < already {
                    dst.iter_mut().zip(src).for_each(|(d, &v)| *d += v);
                } else {
                    dst.copy_from_slice(src);
                }
            });
        });
        self.written_until = self.written_until.max(lines.end);
    }

    /// Every trace: a copy of `input`'s, or zeros.
    pub(super) fn fill(self, cpu: &CpuBackend, input: &[f32], copy: bool) {
        let layout = self.layout;
        let traces = layout.lines_mut(self.data, 0..layout.ny);
        cpu.install(|| {
            traces.into_par_iter().for_each(|(t, dst)| {
                let o = layout.offset(t % layout.nx, t / layout.nx);
                if copy {
                    dst.copy_from_slice(&input[o..o + layout.n_samples]);
                } else {
                    dst.fill(0.0);
                }
            })
        });
    }
}
