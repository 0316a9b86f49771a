//! A plan from device memory: the searched columns of A and their σ₀ gathered on the
//! device (kernels/emlog.cu: emlog_gather) with f₀, f_exp and δ into one buffer, and that
//! buffer copied to the host: n·(p + 3) + p values, whatever A's other columns hold.

use super::super::matrix::Shape;
use super::{i32s, prelude};
use crate::backend::cuda::array::{part_mut, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{alloc, copy, download, upload};
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::{kernels, CudaBackend};
use crate::error::Result;
use cudarc::driver::{CudaModule, CudaStream};
use std::sync::Arc;

const WHAT: &str = "gathering the searched columns of A";

/// The plan's arrays in device memory: A (spanning the shape's strides), σ₀ (m), f₀,
/// f_exp and δ (n).
pub struct DeviceProblem<A> {
    pub a: A,
    pub sigma0: A,
    pub f0: A,
    pub f_exp: A,
    pub delta: A,
}

/// What the weighted problem reads, on the host: A's searched columns (column-major,
/// n × p), their σ₀ (p), f₀, f_exp and δ (n each).
pub struct HostCopy {
    pub columns: Vec<f64>,
    pub sigma0: Vec<f64>,
    pub f0: Vec<f64>,
    pub f_exp: Vec<f64>,
    pub delta: Vec<f64>,
}

/// Gathers on the caller's stream, after what the caller queued there, and waits for it.
/// `shape` is checked (sizes, strides, searched columns below m).
pub fn gather<A: DeviceArray<f64>>(
    gpu: &CudaBackend,
    shape: &Shape,
    arrays: &DeviceProblem<A>,
) -> Result<HostCopy> {
    gpu.bind()?;
    let (n, p) = (shape.n, shape.searched.len());
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::EMLOG, &prelude(p))?;
    let stream = gpu.caller_stream();
    let cols = upload(&stream, &i32s(shape.searched.iter().copied())?, WHAT)?;
    let len = n * (p + 3) + p;
    let mut all = alloc::<f64>(&stream, len, WHAT)?;
    let strides = (shape.row_stride as u64, shape.col_stride as u64);
    let at = &mut part_mut(&mut all, 0, n * p);
    launch_gather(&module, &stream, &arrays.a, strides, &cols, n, p, at)?;
    let at = &mut part_mut(&mut all, n * p, p);
    launch_gather(&module, &stream, &arrays.sigma0, (0, 1), &cols, 1, p, at)?;
    for (k, v) in [&arrays.f0, &arrays.f_exp, &arrays.delta]
        .into_iter()
        .enumerate()
    {
        copy(
            &stream,
            v,
            &mut part_mut(&mut all, n * p + p + k * n, n),
            WHAT,
        )?;
    }
    let mut host = vec![0.0; len];
    download(&stream, &all, &mut host, WHAT)?;
    let (columns, rest) = host.split_at(n * p);
    let (sigma0, rest) = rest.split_at(p);
    let (f0, rest) = rest.split_at(n);
    let (f_exp, delta) = rest.split_at(n);
    Ok(HostCopy {
        columns: columns.to_vec(),
        sigma0: sigma0.to_vec(),
        f0: f0.to_vec(),
        f_exp: f_exp.to_vec(),
        delta: delta.to_vec(),
    })
}

/// `out[k·n + i] = src[i·row_stride + cols[k]·col_stride]`.
#[allow(clippy::too_many_arguments)]
fn launch_gather(
    module: &Arc<CudaModule>,
    stream: &CudaStream,
    src: &impl DeviceArray<f64>,
    (row_stride, col_stride): (u64, u64),
    cols: &impl DeviceArray<i32>,
    n: usize,
    p: usize,
    out: &mut impl DeviceArrayMut<f64>,
) -> Result<()> {
    let mut l = Launch::new(module, stream, "emlog_gather", for_elems(n * p))?;
    l.input(src)
        .scalar(row_stride)
        .scalar(col_stride)
        .input(cols)
        .scalar(n as u64)
        .scalar(p as i32)
        .output(out);
    // SAFETY: emlog_gather(const double* src, u64 row_stride, u64 col_stride,
    // const int* cols, u64 n, int p, double* out): the threads stride over out's n·p
    // elements; cols holds p column indices below m (Shape::check_searched), so each read
    // src[i·row_stride + c·col_stride] (i < n) lies within the span the strides give,
    // which the caller's array holds (A: the span; σ₀: m elements with n = 1, strides (0, 1)).
    unsafe { l.run() }
}
