//! The USFFT plan's calls on arrays in device memory (`sg_usfft_*_device_*`).

use super::super::args::{arg_mut, arg_ref};
use super::super::device_arrays::{device_array, overlap};
use super::super::guard;
use super::super::precision::Precision;
use super::super::status::sg_status;
use super::sg_usfft_plan;
use crate::backend::cuda::array::DeviceArray;
use crate::error::{Error, Result};
use crate::usfft::TransformType;

/// Sets the plan's `m` points from coordinates already in device memory: `x` (and `y`, `z`
/// as for `sg_usfft_set_points_f32`; unused ones may be 0) are `CUdeviceptr` values of at
/// least `m` floats each in the device memory of the plan's context, checked as in
/// `sg_dwt_execute_device_f32`. The points are folded and sorted on the GPU, with no host
/// copy, after the work queued on the context's stream (`sg_context_set_stream`); the call
/// waits for the sort's finiteness check (8 bytes read back). `SG_ERR_UNSUPPORTED` on a CPU
/// context; non-finite coordinates give `SG_ERR_NON_FINITE` and keep the previous points.
/// A type-3 plan gives `SG_ERR_INVALID_ARGUMENT` (its points and frequencies come from host
/// arrays, `sg_usfft_set_points3_f32`).
#[no_mangle]
pub extern "C" fn sg_usfft_set_points_device_f32(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: u64,
    y: u64,
    z: u64,
) -> sg_status {
    guard(|| set_points_device::<f32>(plan, m, [x, y, z]))
}

/// `sg_usfft_set_points_device_f32` for a double-precision plan (`m` doubles per array).
#[no_mangle]
pub extern "C" fn sg_usfft_set_points_device_f64(
    plan: *mut sg_usfft_plan,
    m: usize,
    x: u64,
    y: u64,
    z: u64,
) -> sg_status {
    guard(|| set_points_device::<f64>(plan, m, [x, y, z]))
}

/// The device-pointer `set_points` of the plan's precision.
fn set_points_device<T: Precision>(
    plan: *mut sg_usfft_plan,
    m: usize,
    xyz: [u64; 3],
) -> Result<()> {
    let plan = arg_mut(plan, "plan")?;
    let plan = plan.0.get_mut::<T>("plan", "sg_usfft_set_points_device")?;
    let gpu = plan.context().gpu_for("sg_usfft_set_points_device")?;
    let dim = plan.spec().dim;
    let names = ["x", "y", "z"];
    let mut arrays = Vec::with_capacity(dim);
    for d in 0..dim {
        if xyz[d] == 0 && m > 0 {
            return Err(Error::NullPointer(format!(
                "device coordinate array {} is NULL but the plan is {dim}D",
                names[d]
            )));
        }
        arrays.push(device_array::<T>(gpu, xyz[d], m, names[d])?);
    }
    let mut coords: [Option<&dyn DeviceArray<T>>; 3] = [None; 3];
    for (d, a) in arrays.iter().enumerate() {
        coords[d] = Some(a);
    }
    plan.set_points_device_arrays(m, coords)
}

fn execute<T: Precision>(plan: *const sg_usfft_plan, c: u64, f: u64) -> Result<()> {
    let call = "sg_usfft_execute_device";
    let plan = arg_ref(plan, "plan")?.0.get::<T>("plan", call)?;
    if plan.spec().kind == TransformType::Type3 {
        return Err(Error::Unsupported(
            "a type-3 plan executes from host arrays (sg_usfft_execute_f32/_f64)".into(),
        ));
    }
    let gpu = plan.context().gpu_for(call)?;
    let nv = plan.spec().n_vectors;
    // Interleaved (re, im) reals.
    let (nc, nf) = (2 * nv * plan.n_points(), 2 * nv * plan.spec().mode_count());
    if overlap::<T>(c, nc, f, nf) {
        return Err(crate::invalid!("`c` and `f` overlap"));
    }
    let mut cs = device_array::<T>(gpu, c, nc, "c")?;
    let mut fs = device_array::<T>(gpu, f, nf, "f")?;
    plan.execute_device_arrays(&mut cs, &mut fs)
}

/// `sg_usfft_execute_f32` on device memory: `c` and `f` are `CUdeviceptr` values in the
/// host call's layouts (interleaved complex), device memory of the plan's context, checked
/// as in `sg_dwt_execute_device_f32`; they must not overlap. Queued on the context's stream
/// (`sg_context_set_stream`) after the work it holds: returns without waiting, the output is
/// ready when the stream has run. Non-finite inputs reach the output, and are
/// reported by `sg_context_synchronize` with device checks on (`sg_context_set_device_checks`). Type 2 gives the
/// result of `sg_usfft_execute_f32` on the same GPU bit for bit, run after run; type 1
/// spreads the points with atomic additions, whose order follows the threads' timing, so
/// its modes agree to rounding. Several threads may execute one plan at once (their work
/// takes turns on the plan's stream). A type-3 plan gives `SG_ERR_UNSUPPORTED`: it executes
/// from host arrays.
#[no_mangle]
pub extern "C" fn sg_usfft_execute_device_f32(
    plan: *const sg_usfft_plan,
    c: u64,
    f: u64,
) -> sg_status {
    guard(|| execute::<f32>(plan, c, f))
}

/// `sg_usfft_execute_device_f32` for a double-precision plan.
#[no_mangle]
pub extern "C" fn sg_usfft_execute_device_f64(
    plan: *const sg_usfft_plan,
    c: u64,
    f: u64,
) -> sg_status {
    guard(|| execute::<f64>(plan, c, f))
}
