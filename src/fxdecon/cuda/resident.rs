//! F-X filtering of volumes already in device memory (the device calls): each slab's kernels
//! (`filter_slab`) read the caller's input and write the caller's output directly, with no
//! host copy of samples and no wait.
//!
//! The slabs run in order on one of the plan's cached streams (its FFT plans are bound to
//! it and its work buffers are sized for the slabs), ordered after the caller's stream and
//! before the caller's stream goes on (`ordered_on`). A trace shared by two slabs is
//! assigned by the first and added to by the second (`fx_overlap_add`): the order and the
//! f32 roundings of the host path's sum, so both give the same bits.

use super::launches::{check_fits, grid_stride, Kernels, Lines};
use super::slab::filter_slab;
use super::slots::{Cache, Resources, Slot, Slots};
use crate::backend::cuda::array::{part, part_mut, DeviceArray, DeviceArrayMut, Part, PartMut};
use crate::backend::cuda::buffers::{alloc, copy};
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::{checks, kernels, CudaBackend};
use crate::error::Result;
use crate::fxdecon::geometry::Setup;
use crate::fxdecon::options::OutOfBand;
use crate::fxdecon::volume::Volume;
use cudarc::driver::{CudaModule, CudaStream};
use std::sync::Arc;

/// The caller's volumes in device memory: separate input and output arrays, or one array
/// filtered in place.
pub enum DeviceIo<'a> {
    Apart(Part<'a, f32>, PartMut<'a, f32>),
    InPlace(PartMut<'a, f32>),
}

impl<'a> DeviceIo<'a> {
    pub fn apart(
        input: &'a impl DeviceArray<f32>,
        output: &'a mut impl DeviceArrayMut<f32>,
    ) -> Self {
        let len = output.len();
        DeviceIo::Apart(part(input, 0, input.len()), part_mut(output, 0, len))
    }

    pub fn in_place(volume: &'a mut impl DeviceArrayMut<f32>) -> Self {
        let len = volume.len();
        DeviceIo::InPlace(part_mut(volume, 0, len))
    }

    /// With device checks on, a scan of the input volume's traces on `stream` (`checks.rs`).
    pub fn check_finite(&self, gpu: &CudaBackend, stream: &CudaStream, v: &Volume) -> Result<()> {
        let rows = checks::Rows {
            n: v.n_samples,
            nx: v.nx,
            stride_x: v.stride_x,
            ny: v.ny,
            stride_y: v.stride_y,
        };
        let name = || "a device F-X filter's input volume".to_string();
        match self {
            DeviceIo::Apart(input, _) => gpu.check_finite(stream, input, rows, name),
            DeviceIo::InPlace(volume) => gpu.check_finite(stream, volume, rows, name),
        }
    }

    /// The shorter of the arrays' lengths.
    pub fn len(&self) -> usize {
        match self {
            DeviceIo::Apart(i, o) => i.len().min(o.len()),
            DeviceIo::InPlace(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Filters the volume of `io` (laid out as `layout`, the arrays spanning it: checked by the
/// plan), queued after the work on `caller` without waiting for it. `pass_through` setups
/// (too few traces for the operator) and an empty band copy the input, or zero the output.
pub fn execute_on(
    gpu: &CudaBackend,
    s: &Setup,
    cache: &Cache,
    io: DeviceIo,
    layout: Volume,
    caller: &Arc<CudaStream>,
) -> Result<()> {
    gpu.bind()?;
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::FXDECON, &super::prelude())?;
    if s.pass_through {
        return copy_traces(&module, caller, io, layout, false);
    }
    check_fits(gpu, s)?;
    if s.band.is_empty() {
        let zero = s.out_of_band == OutOfBand::Zero;
        return copy_traces(&module, caller, io, layout, zero);
    }
    let mut r = cache.take_or_make(gpu, s)?;
    // On an early return the slots are dropped: their streams are waited for (Slots::drop).
    let mut slots = Slots {
        gpu,
        slots: std::mem::take(&mut r.slots),
    };
    let slot = &mut slots.slots[0];
    let stream = slot.stream.clone();
    ordered_on(caller, &stream, || {
        queue_slabs(&module, s, &r, slot, io, layout)
    })?;
    r.slots = std::mem::take(&mut slots.slots);
    cache.put(r);
    Ok(())
}

/// Every slab, in order, on the slot's stream.
fn queue_slabs(
    module: &Arc<CudaModule>,
    s: &Setup,
    r: &Resources,
    slot: &mut Slot,
    io: DeviceIo,
    layout: Volume,
) -> Result<()> {
    let stream = slot.stream.clone();
    let k = Kernels {
        module,
        stream: &stream,
        s,
        tables: &r.tables,
    };
    let span = layout.span();
    // In place: a slab's halo lines are read after the slab before wrote them, so the
    // slabs read a copy of the input (as the host call does).
    let mut copy_of_input;
    let (input, mut output) = match io {
        DeviceIo::Apart(input, output) => (input, output),
        DeviceIo::InPlace(volume) => {
            let what = "copying the input volume on the device (in place)";
            copy_of_input = alloc::<f32>(&stream, span, what)?;
            let mut c = part_mut(&mut copy_of_input, 0, span);
            copy(&stream, &part(&volume, 0, span), &mut c, what)?;
            (part(&copy_of_input, 0, span), volume)
        }
    };
    let mut written_until = 0usize;
    for (slab, y) in r.slabs.iter().zip(&r.slab_tables) {
        let at = layout.offset(0, slab.read.start);
        let read = Lines::strided(part(&input, at, span - at), layout);
        let at = layout.offset(0, slab.write.start);
        let mut write = Lines::strided(part_mut(&mut output, at, span - at), layout);
        let add = written_until.saturating_sub(slab.write.start);
        filter_slab(
            &k,
            &mut slot.work,
            &mut slot.ffts,
            (slab, y),
            add,
            &read,
            &mut write,
        )?;
        written_until = written_until.max(slab.write.end);
    }
    Ok(())
}

/// Each trace of `io`'s input copied into its output (nothing to do in place), or the
/// output's traces zeroed, on `stream`.
fn copy_traces(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    io: DeviceIo,
    layout: Volume,
    zero: bool,
) -> Result<()> {
    let (input, mut output) = match io {
        DeviceIo::Apart(i, o) => (Some(i), o),
        DeviceIo::InPlace(_) if !zero => return Ok(()),
        DeviceIo::InPlace(o) => (None, o),
    };
    let span = layout.span();
    let total = layout.nx * layout.ny * layout.n_samples;
    let mut out = part_mut(&mut output, 0, span);
    let mut l = Launch::new(module, stream, "fx_copy_traces", grid_stride(total))?;
    l.optional(input.as_ref())
        .output(&mut out)
        .scalar(total as i64)
        .scalar(layout.n_samples as i32)
        .scalar(layout.nx as i32)
        .scalar(layout.stride_x as i64)
        .scalar(layout.stride_y as i64)
        .scalar(zero as i32);
    // SAFETY: fx_copy_traces(const float* in, float* out, long long total, int n_samples,
    // int nx, long long sx, long long sy, int zero): threads stride over e < total =
    // nx·ny·n_samples and touch element (tr % nx)·sx + (tr / nx)·sy + e % n_samples of each
    // array, tr = e / n_samples < nx·ny: below the layout's span, which both arrays span;
    // `in` is NULL only when zeroing, which does not read it.
    unsafe { l.run() }
}
