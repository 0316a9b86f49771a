//! The transform calls on device memory of layouts and of tiled volumes alike: C, C* and
//! the inverse, from the C arguments (the handle's plan of the call's precision found on a
//! GPU context, the data and coefficient arrays checked as its device's memory and apart,
//! before any work).

use super::calls::{CountAndResidual, TransformHandle, Transforms};
use crate::backend::cuda::array::CallerArray;
use crate::backend::cuda::CudaBackend;
use crate::context::Context;
use crate::error::Result;
use crate::ffi::device_arrays::apart;
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;
use crate::sample::Real;
use crate::wavepacket::inverse::{InverseReport, Stop};
use crate::wavepacket::Pass;

/// What the device transform calls need of a plan beyond the host calls' `Transforms`: the
/// context whose device holds the arrays (a volume's first), and C, C* and the inverse on
/// device arrays (data n reals, coefficients 2·m interleaved reals).
pub(crate) trait DeviceTransforms<T: Real>: Transforms<T> {
    fn context(&self) -> &Context;
    fn transform_on_device(
        &self,
        pass: Pass,
        input: &CallerArray<T>,
        output: &mut CallerArray<T>,
    ) -> Result<()>;
    fn inverse_on_device(
        &self,
        coeffs: &CallerArray<T>,
        data: &mut CallerArray<T>,
        stop: Stop,
    ) -> Result<InverseReport>;
}

/// The handle's plan for the device call `verb` (`forward`, …) on `T`, with its context's
/// GPU (a CPU context: `Unsupported` naming the call).
pub(crate) fn plan_on_gpu<'a, H: TransformHandle, T: Precision>(
    handle: *const H,
    verb: &str,
) -> Result<(&'a H::Plan<T>, &'a CudaBackend)>
where
    H::Plan<T>: DeviceTransforms<T>,
{
    let call = format!("{}_{verb}_device", H::CALLS);
    let plan = H::plan::<T>(handle, &call)?;
    let gpu = plan.context().gpu_for(&format!("{call}_{}", T::SUFFIX))?;
    Ok((plan, gpu))
}

/// The call's data (n reals) and coefficients (2·m reals) in device memory, checked and
/// apart: `(data, coeffs)`.
pub(crate) fn arrays<'a, T: Precision>(
    plan: &impl Transforms<T>,
    gpu: &CudaBackend,
    data: u64,
    coeffs: u64,
) -> Result<(CallerArray<'a, T>, CallerArray<'a, T>)> {
    let (n, m) = plan.sizes();
    apart(gpu, (data, n, "data"), (coeffs, 2 * m, "coeffs"))
}

/// C (`data` → `coeffs`) or C* (`coeffs` → `data`) on device memory.
pub(crate) fn transform<H: TransformHandle, T: Precision>(
    handle: *const H,
    pass: Pass,
    [data, coeffs]: [u64; 2],
) -> sg_status
where
    H::Plan<T>: DeviceTransforms<T>,
{
    guard(|| {
        let (plan, gpu) = plan_on_gpu::<H, T>(handle, pass.verb())?;
        let (mut d, mut c) = arrays(plan, gpu, data, coeffs)?;
        match pass {
            Pass::Forward => plan.transform_on_device(pass, &d, &mut c),
            Pass::Adjoint => plan.transform_on_device(pass, &c, &mut d),
        }
    })
}

/// The inverse on device memory, `coeffs` → `data`; `*iterations` and `*residual` (host
/// memory, each may be NULL) receive what it took.
pub(crate) fn inverse<H: TransformHandle, T: Precision>(
    handle: *const H,
    [coeffs, data]: [u64; 2],
    tolerance: f64,
    max_iterations: usize,
    iterations: *mut usize,
    residual: *mut f64,
) -> sg_status
where
    H::Plan<T>: DeviceTransforms<T>,
{
    guard(|| {
        let (plan, gpu) = plan_on_gpu::<H, T>(handle, "inverse")?;
        // Refused before any array is checked or any work is done (a layout's correction
        // filter, built at its first inverse, costs one C and one C*).
        crate::wavepacket::check_tolerance(tolerance)?;
        let (mut d, c) = arrays(plan, gpu, data, coeffs)?;
        let outs = CountAndResidual::new((iterations, "iterations"), residual)?;
        let stop = Stop::new(tolerance, max_iterations);
        let report = plan.inverse_on_device(&c, &mut d, stop)?;
        outs.set(report.iterations, report.residual);
        Ok(())
    })
}
