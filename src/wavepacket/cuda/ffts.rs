//! The box FFTs: cuFFT plans batched over each run of boxes of one shape, in place over the
//! work array. The executes of each direction are captured once into a CUDA graph and
//! replayed (`replay`): a large layout has hundreds of shapes, and one graph launch costs
//! the host far less than as many cuFFT executes.

use super::tables::ShapeRun;
use super::{BoxStage, Scratch};
use crate::backend::cuda::array::{complex_mut, part_mut, DeviceArray};
use crate::backend::cuda::fft::{self, Direction, FftPlan, Shape};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::replay::{run_or_replay, Replay};
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

/// The captured box FFTs of each direction (made on a call's first use).
#[derive(Default)]
pub(super) struct BoxReplays {
    forward: Option<Replay>,
    inverse: Option<Replay>,
}

impl<T: Real> BoxStage<T> {
    /// The box FFTs over the scratch's work array, in place, queued on the stage's stream.
    pub(super) fn box_ffts(&self, scratch: &mut Scratch<T>, direction: Direction) -> Result<()> {
        let groups = &self.groups;
        if groups.iter().all(|g| g.full.is_none()) {
            return Ok(());
        }
        let slot = match direction {
            Direction::Forward => &mut scratch.box_replays.forward,
            Direction::Inverse => &mut scratch.box_replays.inverse,
        };
        let work = &mut scratch.work;
        let key = work.addr();
        run_or_replay(slot, &self.stream, key, || execs(groups, work, direction))
    }
}

/// One cuFFT execute per batch of boxes of one shape over `work` (interleaved complex).
fn execs<T: Real>(
    groups: &[FftGroup],
    work: &mut DeviceBuf<T>,
    direction: Direction,
) -> Result<()> {
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
