//! The plan's two USFFTs over the lattice points of every box: type 2 (data → lattice
//! values) and type 1 (its adjoint). The points are set from the lattices (on a CUDA
//! context only their table and the sort are kept: `usfft::lattice`) and sorted once: the
//! type-1 plan takes the type-2 plan's sorted points.

use super::layout::Layout;
use super::phases::{Laps, PlanPhases};
use crate::context::Context;
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use std::sync::Arc;

/// The type-2 and type-1 plans of `layout` with their points set; `phases` gets the points'
/// time and each plan's.
pub(super) fn usfft_plans<T: Real>(
    ctx: &Arc<Context>,
    layout: &Layout,
    laps: &mut Laps,
    phases: &mut PlanPhases,
) -> Result<(UsfftPlan<T>, UsfftPlan<T>)> {
    let dim = layout.dim;
    let make = |kind, sign| {
        let spec = UsfftSpec::new::<T>(
            kind,
            dim,
            layout.shape,
            sign,
            layout.tolerance,
            1,
            UsfftOptions::default(),
        )?;
        UsfftPlan::new(ctx.clone(), spec)
    };
    let lattices: Vec<_> = layout.lattices.iter().map(|l| l.points()).collect();
    phases.points = laps.lap();
    let mut type2 = make(TransformType::Type2, -1)?;
    type2.set_points_on_lattices(&lattices)?;
    phases.usfft[0] = laps.lap();
    // The adjoint runs on the same points: sorted once.
    let mut type1 = make(TransformType::Type1, 1)?;
    if !type1.set_points_of(&type2)? {
        return Err(crate::error::Error::Internal(
            "the wave-packet USFFT plans sort points differently".into(),
        ));
    }
    phases.usfft[1] = laps.lap();
    Ok((type2, type1))
}
