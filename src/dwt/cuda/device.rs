//! Device-resident operations on typed arrays: the work of one chunk, or of `denoise_device`.

use super::geometry::Kind;
use super::kit::Kit;
use super::long::{LongPlan, ShrinkTable};
use super::rows::{check_rows, whole, whole_mut, Io, Rows, Shape};
use super::shrink::Rules;
use super::tiles::LongGroup;
use super::tuning::LONG_GROUP_TRACES;
use crate::backend::cuda::array::{part_mut, Part, PartMut};
use crate::backend::cuda::buffers::alloc;
use crate::dwt::denoise::{DenoiseOptions, ThresholdMode};

use crate::dwt::traces::Direction;
pub(super) use crate::dwt::traces::Op;
use crate::error::{Error, Result};
use crate::sample::Sample;

/// A batch in device memory: its traces and the arrays they are read from and written to.
pub(super) struct DevBatch<'x, T> {
    pub(super) shape: Shape,
    pub(super) io: Io<'x, T>,
}

impl Op<'_> {
    pub(super) fn kind(&self) -> Kind {
        match self {
            Op::Transform(Direction::Forward) => Kind::Forward,
            Op::Transform(Direction::Inverse) => Kind::Inverse,
            Op::Denoise(_) => Kind::Denoise,
        }
    }
}

/// Queues `op` on `kit.stream`. Denoising writes medians (traces × seg_levels) to `medians`
/// (None only for the fixed rule, which has none). The whole-trace kernels may run in
/// place; the long path may not.
pub(super) fn run_on_device<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    levels: u32,
    b: DevBatch<T>,
    medians: Option<PartMut<T>>,
) -> Result<()> {
    b.io.check(b.shape)?;
    let plan = kit.long_plan(b.shape.n, levels, op.kind());
    if !plan.is_long() {
        // One launch of a whole-trace kernel.
        return match op {
            Op::Transform(Direction::Forward) => kit.whole_forward(b.shape, levels, b.io),
            Op::Transform(Direction::Inverse) => {
                kit.whole_inverse(b.shape, levels, b.io, &ShrinkTable::none())
            }
            Op::Denoise(options) => {
                let rules = Rules::<T>::new(options, levels, b.shape.n);
                kit.whole_denoise(&rules, b.shape, levels, b.io, medians)
            }
        };
    }
    let Io::Apart(input, output) = b.io else {
        return Err(Error::Internal(
            "the long-signal DWT cannot run in place".into(),
        ));
    };
    let n = b.shape.n;
    match op {
        Op::Transform(Direction::Forward) if output.stride != n => {
            Err(Error::Internal("long forward output must be dense".into()))
        }
        Op::Transform(Direction::Inverse) if input.stride != n => {
            Err(Error::Internal("long inverse input must be dense".into()))
        }
        _ => run_long(kit, op, &plan, b.shape.traces, (input, output), medians),
    }
}

/// Long traces: groups of traces, so that grids and median segments stay in range.
fn run_long<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    plan: &LongPlan,
    traces: usize,
    (input, mut output): (Rows<Part<T>>, Rows<PartMut<T>>),
    mut medians: Option<PartMut<T>>,
) -> Result<()> {
    let n = plan.n;
    let segs = match op {
        Op::Denoise(options) => Rules::<T>::new(options, plan.levels, n).seg_levels as usize,
        Op::Transform(_) => 0,
    };
    if let Some(m) = &medians {
        check_rows(m, traces, segs, segs, "DWT medians")?;
    }
    for first in (0..traces).step_by(LONG_GROUP_TRACES) {
        let count = LONG_GROUP_TRACES.min(traces - first);
        let input = input.traces(first, count, n);
        let output = output.traces_mut(first, count, n);
        let mut group = LongGroup::new(kit, plan, count)?;
        match op {
            Op::Transform(Direction::Forward) => {
                // Dense (checked): the output rows are the coefficient rows.
                let mut coef = output.data;
                group.forward(input, &mut coef)?;
            }
            Op::Transform(Direction::Inverse) => {
                group.inverse(input.data, output, &ShrinkTable::none())?;
            }
            Op::Denoise(options) => {
                let medians = medians
                    .as_mut()
                    .map(|m| part_mut(m, first * segs, count * segs));
                long_denoise(kit, &mut group, options, (input, output), medians)?;
            }
        }
    }
    Ok(())
}

/// Denoises one group of long traces: forward passes into a coefficient array, the
/// thresholds from its details, and inverse passes that apply them as they read them.
fn long_denoise<T: Sample>(
    kit: &Kit<T>,
    group: &mut LongGroup<T>,
    options: &DenoiseOptions,
    (input, output): (Rows<Part<T>>, Rows<PartMut<T>>),
    medians: Option<PartMut<T>>,
) -> Result<()> {
    let (n, levels, count) = (group.plan().n, group.plan().levels, group.traces());
    let rules = Rules::<T>::new(options, levels, n);
    let mut coef = alloc::<T>(kit.stream, count * n, "allocating DWT coefficients")?;
    let mut lam = alloc::<T>(
        kit.stream,
        count * levels as usize,
        "allocating DWT thresholds",
    )?;
    group.forward(input, &mut whole_mut(&mut coef))?;
    let shape = Shape { n, traces: count };
    kit.long_thresholds(&rules, shape, levels, whole(&coef), medians, &mut lam)?;
    let shrink = ShrinkTable {
        lam: Some(whole(&lam)),
        stride: levels as usize,
        level0: 0,
        mask: options.level_mask,
        hard: options.mode == ThresholdMode::Hard,
    };
    group.inverse(whole(&coef), output, &shrink)
}
