//! Device-resident operations on typed arrays: the work of one chunk, or of a
//! device-resident call (`resident.rs`).

use super::geometry::Kind;
use super::kit::{Kit, Sizing};
use super::long::{LongPlan, ShrinkTable};
use super::rows::{check_rows, whole, whole_mut, Io, Rows, Shape};
use super::select::select_bytes;
use super::shrink::Rules;
use super::tiles::{scratch_bytes, LongGroup};
use super::tuning::LONG_GROUP_TRACES;
use crate::backend::cuda::array::{part_mut, piece_bytes, Part, PartMut, Pieces};
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

/// Bytes of the long path's work memory (`Pieces`) for groups of up to `traces` traces:
/// the scratch approximations, and for a denoise the coefficients, thresholds and median
/// selection state of `seg_levels` segments per trace. None off the long path.
pub(super) fn long_bytes<T>(
    plan: &LongPlan,
    kind: Kind,
    seg_levels: usize,
    traces: usize,
) -> usize {
    if !plan.is_long() {
        return 0;
    }
    let count = traces.min(LONG_GROUP_TRACES);
    let mut bytes = scratch_bytes::<T>(plan, count);
    if kind == Kind::Denoise {
        bytes += piece_bytes::<T>(count * plan.n)
            + piece_bytes::<T>(count * plan.levels as usize)
            + select_bytes(count * seg_levels);
    }
    bytes
}

/// `long_bytes` of `op` over `traces` traces of `n` samples, `levels` levels.
pub(super) fn op_long_bytes<T: Sample>(
    sizing: &Sizing,
    op: Op,
    levels: u32,
    n: usize,
    traces: usize,
) -> usize {
    let plan = sizing.long_plan(n, levels, op.kind());
    let seg_levels = match op {
        Op::Denoise(options) => Rules::<T>::new(options, levels, n).seg_levels as usize,
        Op::Transform(_) => 0,
    };
    long_bytes::<T>(&plan, op.kind(), seg_levels, traces)
}

/// Queues `op` on `kit.stream`. Denoising writes medians (traces × seg_levels) to `medians`
/// (None only for the fixed rule, which has none). The whole-trace kernels may run in
/// place; the long path may not, and takes its work arrays from `work` (`long_bytes`).
pub(super) fn run_on_device<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    levels: u32,
    b: DevBatch<T>,
    medians: Option<PartMut<T>>,
    work: Option<PartMut<u64>>,
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
        _ => {
            let work = work.ok_or_else(|| {
                Error::Internal("the long-signal DWT without its work memory".into())
            })?;
            let io = (input, output);
            run_long(kit, op, &plan, b.shape.traces, io, medians, work)
        }
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
    mut work: PartMut<u64>,
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
        // Each group reuses the same work memory, after the previous one on the stream.
        let mut pieces = Pieces::of(&mut work);
        let mut group = LongGroup::new(kit, plan, count, &mut pieces)?;
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
                let io = (input, output);
                long_denoise(kit, &mut group, options, io, medians, &mut pieces)?;
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
    work: &mut Pieces,
) -> Result<()> {
    let (n, levels, count) = (group.plan().n, group.plan().levels, group.traces());
    let rules = Rules::<T>::new(options, levels, n);
    let mut coef = work.take::<T>(count * n);
    let mut lam = work.take::<T>(count * levels as usize);
    group.forward(input, &mut whole_mut(&mut coef))?;
    let shape = Shape { n, traces: count };
    kit.long_thresholds(&rules, shape, levels, whole(&coef), medians, &mut lam, work)?;
    let shrink = ShrinkTable {
        lam: Some(whole(&lam)),
        stride: levels as usize,
        level0: 0,
        mask: options.level_mask,
        hard: options.mode == ThresholdMode::Hard,
    };
    group.inverse(whole(&coef), output, &shrink)
}
