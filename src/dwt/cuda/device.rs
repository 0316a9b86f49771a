//! Device-resident operations on raw pointers: the work of one chunk, or of `denoise_device`.

use super::geometry::Kind;
use super::kit::{Kit, LongScratch};
use super::long::{ShrinkTable, NO_SHRINK};
use super::shrink::Rules;
use super::tuning::LONG_GROUP_TRACES;
use crate::backend::cuda::buffers::{dptr, DevPtr};
use crate::dwt::denoise::{DenoiseOptions, ThresholdMode};

use crate::dwt::traces::Direction;
use crate::error::{Error, Result};
use crate::sample::Sample;

/// A batch in device memory.
#[derive(Clone, Copy)]
pub(super) struct DevBatch {
    pub(super) n: usize,
    pub(super) traces: usize,
    pub(super) input: DevPtr,
    pub(super) in_stride: usize,
    pub(super) output: DevPtr,
    pub(super) out_stride: usize,
}

#[derive(Clone, Copy)]
pub(super) enum Op<'o> {
    Transform(Direction),
    Denoise(&'o DenoiseOptions),
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

/// Queues `op` on `kit.stream`. Denoising writes medians (traces × seg_levels) to `medians`.
/// The whole-trace kernels may run in place (input == output); the long path may not.
pub(super) fn run_on_device<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    levels: u32,
    b: DevBatch,
    medians: DevPtr,
) -> Result<()> {
    let plan = kit.long_plan(b.n, levels, op.kind());
    if !plan.is_long() {
        return match op {
            Op::Transform(Direction::Forward) => kit.whole_forward(
                levels,
                b.input,
                b.in_stride,
                b.output,
                b.out_stride,
                b.n,
                b.traces,
            ),
            Op::Transform(Direction::Inverse) => kit.whole_inverse(
                levels,
                b.input,
                b.in_stride,
                b.output,
                b.out_stride,
                b.n,
                b.traces,
                &NO_SHRINK,
            ),
            Op::Denoise(options) => {
                let rules = Rules::<T>::new(options, levels, b.n);
                kit.whole_denoise(
                    &rules,
                    levels,
                    b.input,
                    b.in_stride,
                    b.output,
                    b.out_stride,
                    b.n,
                    b.traces,
                    medians,
                )
            }
        };
    }
    let size = std::mem::size_of::<T>() as u64;
    // Long traces: groups of traces, so that grids and median segments stay in range.
    for first in (0..b.traces).step_by(LONG_GROUP_TRACES) {
        let count = LONG_GROUP_TRACES.min(b.traces - first);
        let input = b.input + (first * b.in_stride) as u64 * size;
        let output = b.output + (first * b.out_stride) as u64 * size;
        let ws = LongScratch::new(kit, &plan, b.n, count)?;
        match op {
            Op::Transform(Direction::Forward) => {
                if b.out_stride != b.n {
                    return Err(Error::Internal("long forward output must be dense".into()));
                }
                kit.long_forward(&plan, levels, input, b.in_stride, output, b.n, count, &ws)?;
            }
            Op::Transform(Direction::Inverse) => {
                if b.in_stride != b.n {
                    return Err(Error::Internal("long inverse input must be dense".into()));
                }
                kit.long_inverse(
                    &plan,
                    levels,
                    input,
                    output,
                    b.out_stride,
                    b.n,
                    count,
                    &ws,
                    &NO_SHRINK,
                )?;
            }
            Op::Denoise(options) => {
                let rules = Rules::<T>::new(options, levels, b.n);
                let coef = kit.alloc::<T>(count * b.n, "allocating DWT coefficients")?;
                let lam = kit.alloc::<T>(count * levels as usize, "allocating DWT thresholds")?;
                let (pc, pl) = (dptr(&coef, kit.stream), dptr(&lam, kit.stream));
                kit.long_forward(&plan, levels, input, b.in_stride, pc, b.n, count, &ws)?;
                let med = medians + (first * rules.seg_levels as usize) as u64 * size;
                kit.long_thresholds(&rules, levels, pc, b.n, count, med, pl)?;
                let shrink = ShrinkTable {
                    lam: pl,
                    stride: levels as usize,
                    level0: 0,
                    mask: options.level_mask,
                    hard: options.mode == ThresholdMode::Hard,
                };
                kit.long_inverse(
                    &plan,
                    levels,
                    pc,
                    output,
                    b.out_stride,
                    b.n,
                    count,
                    &ws,
                    &shrink,
                )?;
            }
        }
    }
    Ok(())
}
