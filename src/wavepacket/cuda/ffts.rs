//! The box FFTs: cuFFT plans batched over each run of boxes of one shape, in place over the
//! work array.

use super::tables::ShapeRun;
use crate::backend::cuda::array::{complex_mut, part_mut};
use crate::backend::cuda::fft::{self, Direction, FftPlan, Shape};
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::Result;
use crate::sample::Real;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// Most elements one cuFFT execute covers: bounds each plan's own work area.
const FFT_CHUNK: usize = 1 << 24;

/// The boxes of one shape: `count` boxes of `size` elements from work element `start`, their
/// FFTs run `batch` boxes per execute (the last count % batch by `rest`). No plans where
/// the boxes are single points (their FFT is the identity).
pub(super) struct FftGroup {
    start: usize,
    size: usize,
    count: usize,
    batch: usize,
    full: Option<FftPlan>,
    rest: Option<FftPlan>,
}

/// One group per run, its plans bound to `stream`.
pub(super) fn plan_groups<T: Real>(
    runs: &[ShapeRun],
    stream: &Arc<CudaStream>,
) -> Result<Vec<FftGroup>> {
    let kind = fft::kind::<T>(Shape::C2C);
    let what = "the wave-packet box FFTs";
    let mut groups = Vec::with_capacity(runs.len());
    for run in runs {
        let mut g = FftGroup {
            start: run.start,
            size: run.size,
            count: run.count,
            batch: 0,
            full: None,
            rest: None,
        };
        // cuFFT orders dimensions slowest first; an axis of length 1 is no transform.
        let dims: Vec<usize> = run.shape.iter().rev().copied().filter(|&n| n > 1).collect();
        if !dims.is_empty() {
            let dist = (g.size, g.size);
            g.batch = (FFT_CHUNK / g.size).clamp(1, g.count);
            g.full = Some(FftPlan::many(&dims, dist, kind, g.batch, stream, what)?);
            let rest = g.count % g.batch;
            if rest > 0 {
                g.rest = Some(FftPlan::many(&dims, dist, kind, rest, stream, what)?);
            }
        }
        groups.push(g);
    }
    Ok(groups)
}

/// The box FFTs over `work` (interleaved complex), in place.
pub(super) fn box_ffts<T: Real>(
    groups: &[FftGroup],
    work: &mut DeviceBuf<T>,
    direction: Direction,
) -> Result<()> {
    if groups.iter().all(|g| g.full.is_none()) {
        return Ok(());
    }
    // Boxes of several elements: the work array holds whole (re, im) pairs.
    let mut all = complex_mut(work);
    for g in groups {
        let Some(full) = &g.full else { continue };
        let mut done = 0;
        while done < g.count {
            let (plan, n) = match g.rest.as_ref() {
                Some(rest) if g.count - done < g.batch => (rest, g.count - done),
                _ => (full, g.batch),
            };
            let mut boxes = part_mut(&mut all, g.start + done * g.size, n * g.size);
            plan.exec_c2c_in_place::<T>(&mut boxes, direction)?;
            done += n;
        }
    }
    Ok(())
}
