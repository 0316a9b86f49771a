//! The host side of the slabs: a slab's read lines gathered into its staging buffer, its
//! filtered lines written (or added) into the caller's output, and the output of a call
//! with nothing to filter.

use crate::backend::cpu::CpuBackend;
use crate::error::Error;
use crate::fxdecon::volume::Volume;
use rayon::prelude::*;
use std::marker::PhantomData;
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

struct SharedOut(*mut f32);
// SAFETY: used only to write disjoint traces from several threads.
unsafe impl Sync for SharedOut {}

/// The caller's output volume, written line by line from several threads.
pub(super) struct Output<'a> {
    ptr: SharedOut,
    layout: Volume,
    /// The lines before this one hold a slab's output already.
    written_until: usize,
    _borrow: PhantomData<&'a mut [f32]>,
}

impl<'a> Output<'a> {
    /// `output` spans `layout` (checked by the plan).
    pub(super) fn new(output: &'a mut [f32], layout: Volume) -> Output<'a> {
        Output {
            ptr: SharedOut(output.as_mut_ptr()),
            layout,
            written_until: 0,
            _borrow: PhantomData,
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
        let (n, nx, layout) = (self.layout.n_samples, self.layout.nx, self.layout);
        let already = self.written_until;
        let out = &self.ptr;
        cpu.install(|| {
            (0..lines.len() * nx).into_par_iter().for_each(|r| {
                let (ix, iy) = (r % nx, lines.start + r / nx);
                let o = layout.offset(ix, iy);
                let src = &staged[r * n..(r + 1) * n];
                // SAFETY: traces are disjoint (Volume::new) and inside the output (checked
                // by the plan); each trace is written by one task.
                let dst = unsafe { std::slice::from_raw_parts_mut(out.0.add(o), n) };
                if iy < already {
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
        let out = &self.ptr;
        cpu.install(|| {
            (0..layout.nx * layout.ny).into_par_iter().for_each(|t| {
                let o = layout.offset(t % layout.nx, t / layout.nx);
                // SAFETY: disjoint traces inside the output, one task each.
                let dst = unsafe { std::slice::from_raw_parts_mut(out.0.add(o), layout.n_samples) };
                if copy {
                    dst.copy_from_slice(&input[o..o + layout.n_samples]);
                } else {
                    dst.fill(0.0);
                }
            })
        });
    }
}
