//! The plan's USFFTs over the lattice points of every box: type 2 (data → lattice values)
//! and its adjoint. The points are set from the lattices (on a CUDA context only their
//! table and the sort are kept: `usfft::lattice`) and sorted once. On a CUDA context the
//! type-2 plan runs the adjoint too; on the CPU a type-1 plan takes its sorted points.

use super::lattice_groups::LatticeGroup;
use super::layout::Layout;
use super::phases::{Laps, PlanPhases};
use crate::context::Context;
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use std::sync::Arc;

/// The type-2 plan of `layout` with its points set: all at once (the CPU's; a type-1 plan
/// takes them for the adjoint), or in `groups` of lattices (a CUDA context: the adjoint
/// runs on the same plan, `UsfftPlan::execute_in_groups`); `phases` gets the points' time
/// and the plan's.
pub(super) fn type2_plan<T: Real>(
    ctx: &Arc<Context>,
    layout: &Layout,
    groups: Option<&[LatticeGroup]>,
    laps: &mut Laps,
    phases: &mut PlanPhases,
) -> Result<UsfftPlan<T>> {
    let points = |r: std::ops::Range<usize>| -> Vec<_> {
        layout.lattices[r].iter().map(|l| l.points()).collect()
    };
    phases.points = laps.lap();
    let mut type2 = plan(ctx, layout, TransformType::Type2, -1)?;
    match groups {
        Some(groups) => {
            let lattices: Vec<Vec<_>> = groups.iter().map(|g| points(g.lattices.clone())).collect();
            type2.set_points_on_lattice_groups(&lattices)?
        }
        None => type2.set_points_on_lattices(&points(0..layout.lattices.len()))?,
    }
    phases.usfft[0] = laps.lap();
    Ok(type2)
}

/// The type-1 plan (the adjoint) on the points of `type2`, sorted once; `phases` gets its
/// time.
pub(super) fn type1_plan<T: Real>(
    ctx: &Arc<Context>,
    layout: &Layout,
    type2: &UsfftPlan<T>,
    laps: &mut Laps,
    phases: &mut PlanPhases,
) -> Result<UsfftPlan<T>> {
    let mut type1 = plan(ctx, layout, TransformType::Type1, 1)?;
    if !type1.set_points_of(type2)? {
        return Err(crate::error::Error::Internal(
            "the wave-packet USFFT plans sort points differently".into(),
        ));
    }
    phases.usfft[1] = laps.lap();
    Ok(type1)
}

fn plan<T: Real>(
    ctx: &Arc<Context>,
    layout: &Layout,
    kind: TransformType,
    sign: i32,
) -> Result<UsfftPlan<T>> {
    let spec = UsfftSpec::new::<T>(
        kind,
        layout.dim,
        layout.shape,
        sign,
        layout.tolerance,
        1,
        UsfftOptions::default(),
    )?;
    UsfftPlan::new(ctx.clone(), spec)
}
