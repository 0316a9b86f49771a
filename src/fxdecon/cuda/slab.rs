//! One slab from device input to device output, queued on one stream without waiting: the
//! same kernels and FFTs for calls on host arrays (a staged copy in, a dense buffer out) and
//! for calls on device arrays (the caller's volume in and out).

use super::launches::{Kernels, Lines, SlabBuffers, SlabTraces};
use super::slots::Ffts;
use super::tables::SlabTables;
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::error::Result;
use crate::fxdecon::geometry::Slab;

/// Filters `slab`: its read lines from `input`, its written lines into `output`, the first
/// `add_lines` of them added to what an earlier slab wrote there (windows of both slabs
/// cover them), the others assigned. `input` and `output` start at the slab's first read
/// and first written line.
pub(super) fn filter_slab<I: DeviceArray<f32>, O: DeviceArrayMut<f32>>(
    k: &Kernels,
    work: &mut SlabBuffers,
    ffts: &mut Ffts,
    (slab, y): (&Slab, &SlabTables),
    add_lines: usize,
    input: &Lines<I>,
    output: &mut Lines<O>,
) -> Result<()> {
    let s = k.s;
    let nx = s.nx;
    let t = SlabTraces {
        read: slab.read.len() * nx,
        write: slab.write.len() * nx,
        first: (slab.write.start - slab.read.start) * nx,
        add: add_lines.min(slab.write.len()) * nx,
        windows_y: slab.windows.len(),
    };
    let (r2c, c2r) = ffts.for_batch(k.stream, s, t.read * s.time.count())?;
    k.extract(work, t, input)?;
    work.forward_fft(r2c)?;
    k.filter_spectra(work, t, y)?;
    work.inverse_fft(c2r)?;
    k.overlap_add(work, t, output)
}
