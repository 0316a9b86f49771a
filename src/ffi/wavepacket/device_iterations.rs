//! An `sg_wavepacket_layout`'s iterative calls on device memory
//! (`sg_wavepacket_*_device_*`): POCS interpolation and the sparse approximation.

use super::super::device_arrays::device_array;
use super::calls::CountAndResidual;
use super::device::transform_on_gpu;
use super::device_calls::arrays;
use super::layout::sg_wavepacket_layout;
use super::options::{pocs_options, sg_wavepacket_pocs_options};
use super::options::{sg_wavepacket_sparse_options, sparse_options};
use super::pocs::live_mask;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;

fn pocs<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: u64,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    guard(|| {
        let (t, gpu) = transform_on_gpu::<T>(layout, "pocs")?;
        let l = t.plan.layout();
        let mask = live_mask(l, live, n_traces)?;
        let opts = pocs_options(options)?;
        let mut d = device_array::<T>(gpu, data, l.n_samples(), "data")?;
        t.plan.pocs_on_device(t.filter()?, &mut d, &mask, &opts)
    })
}

fn sparse<T: Precision>(
    layout: *const sg_wavepacket_layout,
    [data, coeffs]: [u64; 2],
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    guard(|| {
        let (t, gpu) = transform_on_gpu::<T>(layout, "sparse_approximation")?;
        let (d, mut c) = arrays(t, gpu, data, coeffs)?;
        let opts = sparse_options(options)?;
        let outs = CountAndResidual::new((kept, "kept"), residual)?;
        let report = t
            .plan
            .sparse_approximation_on_device(&d, &mut c, s, &opts)?;
        outs.set(report.kept, report.residual);
        Ok(())
    })
}

/// `sg_wavepacket_pocs_f32` on device memory, in place: `data` a `CUdeviceptr` (n_samples
/// floats in the host call's layout, device memory of the context's device: `cudaMalloc`,
/// `cuMemAlloc`, a pool or managed memory); `live` (n_traces values) and `options` (NULL:
/// the defaults) stay host memory. The call **waits**: the host call's first estimate
/// (the dead traces filled linearly) and, in each iteration, the correction filter (FFTs on
/// the CPU threads) and the update of the dead traces run on the host between its
/// transforms (which run on the device), and a device copy of those steps, the filter's
/// FFTs by cuFFT, would round differently from the host call; so the data are read once
/// after the work queued on the context's stream (`sg_context_set_stream`), interpolated
/// as by the host call, and copied back ordered on that stream; the call cannot be
/// captured into a CUDA graph, although its iteration count is fixed by `options`. Non-finite
/// samples of recorded traces give `SG_ERR_NON_FINITE` (they are read on the host); the
/// progress callback is not called. On failure `data` is not written.
/// `SG_ERR_INVALID_ARGUMENT` for an address the driver does not know as device memory of
/// the context's device holding the array; `SG_ERR_UNSUPPORTED` on a CPU context. The
/// data equal those of `sg_wavepacket_pocs_f32` on the same GPU to rounding: each
/// iteration's adjoint accumulates with atomic additions, whose order follows the threads'
/// timing (as `sg_wavepacket_adjoint_device_f32`).
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_device_f32(
    layout: *const sg_wavepacket_layout,
    data: u64,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    pocs::<f32>(layout, data, live, n_traces, options)
}

/// `sg_wavepacket_pocs_device_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_device_f64(
    layout: *const sg_wavepacket_layout,
    data: u64,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    pocs::<f64>(layout, data, live, n_traces, options)
}

/// `sg_wavepacket_sparse_approximation_f32` on device memory: `data` (n_samples floats)
/// and `coeffs` (2·n_coefficients floats, interleaved re, im) are `CUdeviceptr` values in
/// the host call's layouts (device memory of the context's device); they must not overlap.
/// `options` (NULL: the defaults), `kept` and `residual` (each may be NULL) are host
/// memory. The call **waits**: the support is chosen and the refit's step lengths computed
/// on the host between the transforms (which run on the device, as in the host call), and
/// `*kept` and `*residual` are host outputs; the data are read once after the work queued
/// on the context's stream and the coefficients copied into `coeffs` ordered on it, so the
/// call cannot be captured into a CUDA graph. Non-finite data give `SG_ERR_NON_FINITE`
/// (they are read on the host); the progress callback is not called. On failure nothing is
/// written. `SG_ERR_INVALID_ARGUMENT` for an address the driver does not know as device
/// memory of the context's device holding the array; `SG_ERR_UNSUPPORTED` on a CPU
/// context. The results equal those of `sg_wavepacket_sparse_approximation_f32` on the
/// same GPU to rounding (the adjoint's atomic additions, as
/// `sg_wavepacket_adjoint_device_f32`); a support member whose score ties with another's
/// to rounding may be exchanged for it.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_device_f32(
    layout: *const sg_wavepacket_layout,
    data: u64,
    coeffs: u64,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    sparse::<f32>(layout, [data, coeffs], s, options, kept, residual)
}

/// `sg_wavepacket_sparse_approximation_device_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_sparse_approximation_device_f64(
    layout: *const sg_wavepacket_layout,
    data: u64,
    coeffs: u64,
    s: usize,
    options: *const sg_wavepacket_sparse_options,
    kept: *mut usize,
    residual: *mut f64,
) -> sg_status {
    sparse::<f64>(layout, [data, coeffs], s, options, kept, residual)
}
