//! Set-points from another plan's sorted points: a type-1 and a type-2 plan over the same
//! points (an operator and its adjoint) sort them into the same bins, so the second one
//! shares the first one's sorted arrays on the device instead of uploading and sorting its
//! coordinates again, or holding a copy (at the wave packets' 10⁹ lattice points, 28 bytes
//! a point in f32). Shared arrays are only read; a plan that sets new points makes its own
//! (`DevicePoints::own_sorted`), and one that lets go of another's orders the owner's
//! stream, where they are freed, after its work (`let_go_of_sorted`).

use super::plan::{points_slot, DevicePoints, PointSet};
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::spec::UsfftSpec;

/// Whether plans of `a` and `b` sort points alike: the same dimension, fine grid and kernel
/// width (the bins and the (i0, d) placement depend on nothing else).
pub fn same_sort(a: &UsfftSpec, b: &UsfftSpec) -> bool {
    a.dim == b.dim && a.fine == b.fine && a.kernel.width == b.kernel.width
}

/// Sets in `slot` (made on first use) the points `from` holds, `from` being a plan whose
/// spec sorts as `spec` does (`same_sort`): its sorted arrays, shared. The slot's later work
/// is ordered after the work queued on `from`'s stream (the sort).
pub fn share_points<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    from: &DevicePoints<T>,
) -> Result<()> {
    let pts = points_slot(gpu, slot, spec)?;
    pts.stream.join(&from.stream).map_err(driver_error(
        "ordering a plan after the sort of the points it shares",
    ))?;
    pts.let_go_of_sorted()?;
    pts.set = PointSet {
        sorted: from.set.sorted.clone(),
        ..from.set
    };
    Ok(())
}
