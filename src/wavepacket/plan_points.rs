//! The plan's two USFFTs over the lattice points of every box: type 2 (data → lattice
//! values) and type 1 (its adjoint). The points are made once, on the CPU threads or, on a
//! CUDA context, on the device (`cuda::lattice_points`), and sorted once: the type-1 plan
//! takes the type-2 plan's sorted points.

use super::layout::Layout;
use super::phases::{Laps, PlanPhases};
use crate::context::Context;
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::{TransformType, UsfftOptions, UsfftPlan, UsfftSpec};
use rayon::prelude::*;
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
    let m = layout.n_points;
    let mut type2 = make(TransformType::Type2, -1)?;
    match ctx.cuda() {
        Some(gpu) => {
            let stream = gpu.stream()?;
            let c = super::cuda::lattice_points::<T>(gpu, layout, &stream)?;
            phases.points = laps.lap();
            type2.set_points_device(m, &c[0], Some(&c[1]), c.get(2).map(|z| &**z))?;
            // (set_points_device has waited for its reads of the coordinates.)
        }
        None => {
            let c = ctx.cpu.install(|| lattice_coords::<T>(layout))?;
            phases.points = laps.lap();
            let opt = |d: usize| (d < dim).then(|| c[d].as_slice());
            type2.set_points(m, &c[0], opt(1), opt(2))?;
        }
    }
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

/// The lattice points of every lattice in turn (axis 1 fastest), per dimension, in the
/// USFFTs' radians (2π·ξ); the lattices in parallel on the calling pool.
fn lattice_coords<T: Real>(layout: &Layout) -> Result<[Vec<T>; 3]> {
    let dim = layout.dim;
    let mut coords: [Vec<T>; 3] = Default::default();
    for c in coords.iter_mut().take(dim) {
        *c = crate::error::try_vec(layout.n_points, T::zero(), "wave-packet lattice points")?;
    }
    // Each lattice's part of each array (empty for unused dimensions).
    let mut parts: Vec<[&mut [T]; 3]> = Vec::with_capacity(layout.lattices.len());
    let mut rest = coords.each_mut().map(|c| c.as_mut_slice());
    for l in &layout.lattices {
        let split = rest.map(|r| r.split_at_mut(l.n_points().min(r.len())));
        let (mine, after): (Vec<_>, Vec<_>) = split.into_iter().unzip();
        parts.push(mine.try_into().unwrap());
        rest = after.try_into().unwrap();
    }
    parts
        .into_par_iter()
        .zip(layout.lattices.par_iter())
        .for_each(|(out, l)| {
            let mut j = 0;
            for t3 in 0..l.len[2] {
                for t2 in 0..l.len[1] {
                    for t1 in 0..l.len[0] {
                        let t = [
                            l.lo[0] + t1 as i64,
                            l.lo[1] + t2 as i64,
                            l.lo[2] + t3 as i64,
                        ];
                        let xi = l.point(t);
                        for d in 0..dim {
                            out[d][j] = T::from_f64(std::f64::consts::TAU * xi[d]).unwrap();
                        }
                        j += 1;
                    }
                }
            }
        });
    Ok(coords)
}
