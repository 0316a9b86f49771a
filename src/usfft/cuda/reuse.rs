//! Set-points from another plan's sorted points: a type-1 and a type-2 plan over the same
//! points (an operator and its adjoint) sort them into the same bins, so the second one
//! copies the first one's sorted arrays on the device instead of uploading and sorting its
//! coordinates again.

use super::plan::{grow, points_slot, DevicePoints};
use crate::backend::cuda::array::part;
use crate::backend::cuda::buffers::copy;
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
/// spec sorts as `spec` does (`same_sort`). The copies run on the slot's stream after the
/// work queued on `from`'s, which then waits for them (its arrays are read there).
pub fn copy_points<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    from: &DevicePoints<T>,
) -> Result<()> {
    let pts = points_slot(gpu, slot, spec)?;
    let s = pts.stream.clone();
    s.join(&from.stream)
        .map_err(driver_error("ordering the points' copy after their sort"))?;
    let (m, n_bins) = (from.m, from.tiling.n_bins());
    let what = "allocating USFFT points";
    // From here on the previous points are overwritten.
    pts.m = 0;
    let (src, dst) = (&from.sorted, &mut pts.sorted);
    grow(&mut dst.perm, m, &s, what)?;
    grow(&mut dst.bin_start, n_bins + 1, &s, what)?;
    let copying = "copying USFFT points";
    copy(&s, &part(&src.perm, 0, m), &mut dst.perm, copying)?;
    copy(
        &s,
        &part(&src.bin_start, 0, n_bins + 1),
        &mut dst.bin_start,
        copying,
    )?;
    for d in 0..spec.dim {
        grow(&mut dst.first[d], m, &s, what)?;
        grow(&mut dst.offset[d], m, &s, what)?;
        copy(&s, &part(&src.first[d], 0, m), &mut dst.first[d], copying)?;
        copy(&s, &part(&src.offset[d], 0, m), &mut dst.offset[d], copying)?;
    }
    from.stream.join(&s).map_err(driver_error(
        "ordering later work on the points after their copy",
    ))?;
    pts.m = m;
    pts.tiling = from.tiling;
    pts.method = from.method;
    pts.interp = from.interp;
    Ok(())
}
