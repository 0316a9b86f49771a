//! The USFFTs' points made on the device: every lattice point of a layout, computed by
//! `wp_lattice_points` from a small table of the lattices, so that the coordinates (12 bytes
//! a point in f32; 689 M points at 256³) are neither computed on the host nor uploaded.

use super::prelude;
use crate::backend::cuda::buffers::{alloc, upload};
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{bind, kernels, CudaBackend};
use crate::error::Result;
use crate::sample::Real;
use crate::wavepacket::layout::Layout;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// The lattice points of `layout`, lattice after lattice (axis 1 fastest), as 2π·ξ in T:
/// one device array per dimension, queued on `stream` (the host's `lattice_coords`, equal
/// to it value for value).
pub fn lattice_points<T: Real>(
    gpu: &CudaBackend,
    layout: &Layout,
    stream: &Arc<CudaStream>,
) -> Result<Vec<DeviceBuf<T>>> {
    bind(&gpu.ctx)?;
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::WAVEPACKET, &prelude::<T>())?;
    let n = layout.lattices.len();
    let (mut frames, mut shapes, mut first) = (Vec::new(), Vec::new(), Vec::new());
    for l in &layout.lattices {
        frames.extend(l.axes.iter().flatten());
        frames.extend(l.period);
        shapes.extend(l.lo);
        shapes.extend(l.len.map(|v| v as i64));
        first.push(l.point_offset as i64);
    }
    let what = "uploading the wave-packet lattices";
    let frames = upload(stream, &frames, what)?;
    let shapes = upload(stream, &shapes, what)?;
    let first = upload(stream, &first, what)?;
    let m = layout.n_points;
    let mut coords = (0..layout.dim)
        .map(|_| alloc::<T>(stream, m, "allocating the wave-packet lattice points"))
        .collect::<Result<Vec<_>>>()?;
    let [x, y, rest @ ..] = coords.as_mut_slice() else {
        unreachable!("a layout has 2 or 3 dimensions")
    };
    let mut l = Launch::new(&module, stream, "wp_lattice_points", for_elems(m))?;
    l.input(&frames)
        .input(&shapes)
        .input(&first)
        .scalar(n as i32)
        .scalar(m as i64)
        .scalar(std::f64::consts::TAU)
        .output(x)
        .output(y)
        .optional_output(rest.first_mut());
    // SAFETY: wp_lattice_points(const double* frames, const long long* shapes, const long
    // long* first, int n_lattices, long long m, double tau, REAL* x, REAL* y, REAL* z):
    // frames holds 12 and shapes 6 values per lattice, first one (ascending from 0, the
    // layout's point offsets); thread j < m finds its lattice l < n_lattices by first and
    // writes x[j], y[j] and, for 3D, z[j] (m each; z is NULL in 2D and not written).
    unsafe { l.run() }?;
    Ok(coords)
}
