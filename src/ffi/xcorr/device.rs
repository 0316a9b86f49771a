//! The correlation plan's calls on arrays in device memory (`sg_xcorr_*_device_f32`).

use super::super::args::arg_ref;
use super::super::arrays::optional_mut;
use super::super::device_arrays::{device_array, overlap};
use super::super::guard;
use super::super::status::sg_status;
use super::substacks::SubstackRows;
use super::{days_and_pairs, rows_span, sg_xcorr_plan, sg_xcorr_spectra, station_batch};
use crate::backend::cuda::array::{part, part_mut};
use crate::xcorr::device_calls::DeviceStacks;

/// `sg_xcorr_preprocess_f32` on device memory: `station_days` (and `valid`, if not 0) are
/// `CUdeviceptr` values (addresses in the context's device memory, from `cudaMalloc`,
/// `cuMemAlloc`, a pool or managed memory) in the host call's layout; `valid` 0 means no
/// gaps. The spectra stay on the device, in the handle `*out` receives (the caller owns it:
/// `sg_xcorr_spectra_destroy`). Queued on the context's stream (`sg_context_set_stream`)
/// after what the caller queued there; the call then waits for the stream, because the
/// handle keeps which windows were kept on the host (the correlations are planned with
/// them); the inputs may be reused once it returns. Non-finite samples reach the spectra, and
/// are reported by `sg_context_synchronize` with device checks on
/// (`sg_context_set_device_checks`). Progress callbacks are not called. `SG_ERR_INVALID_ARGUMENT`
/// for an address the driver does not know as device memory of the context's device
/// holding the station-days; `SG_ERR_UNSUPPORTED` on a CPU context. The spectra equal
/// those of `sg_xcorr_preprocess_f32` on the same GPU bit for bit (both cut the stations
/// into the same chunks while the device's free memory allows the same ones).
#[no_mangle]
pub extern "C" fn sg_xcorr_preprocess_device_f32(
    plan: *const sg_xcorr_plan,
    station_days: u64,
    n_stations: usize,
    n_samples: usize,
    station_stride: usize,
    valid: u64,
    out: *mut *mut sg_xcorr_spectra,
) -> sg_status {
    super::super::create(plan, "plan", out, |plan| {
        let plan = &plan.0;
        let gpu = plan.context().gpu_for("sg_xcorr_preprocess_device_f32")?;
        let batch = station_batch(n_samples, n_stations, station_stride)?;
        let span = batch.span();
        let days = device_array::<f32>(gpu, station_days, span, "station_days")?;
        let mask = match valid {
            0 => None,
            v => Some(device_array::<u8>(gpu, v, span, "valid")?),
        };
        let days = part(&days, 0, span);
        let mask = mask.as_ref().map(|m| part(m, 0, span));
        plan.preprocess_device(days, batch, mask)
            .map(sg_xcorr_spectra)
    })
}

/// `sg_xcorr_correlate_f32` into device memory: `stacks` is a `CUdeviceptr` (device memory
/// of the context's device) in the host call's layout, pair p's lags at
/// `stacks[p * pair_stride]`; elements between rows are not written. `days` and
/// `n_windows` (may be NULL) are host memory as in the host call; the window counts are
/// known on the host, so the call does not wait for them. Queued on the context's stream
/// (`sg_context_set_stream`): returns without waiting, the stacks are ready when the
/// stream has run; the days' spectra may be destroyed at once (their memory is released
/// after the work). Progress callbacks are not called. `SG_ERR_INVALID_ARGUMENT` for an
/// address the driver does not know as device memory of the context's device holding the
/// stacks; `SG_ERR_UNSUPPORTED` on a CPU context. Bit for bit the stacks of
/// `sg_xcorr_correlate_f32` on the same GPU. Work arrays: the plan's workspace
/// (`sg_xcorr_plan_workspace_bytes`).
#[no_mangle]
pub extern "C" fn sg_xcorr_correlate_device_f32(
    plan: *const sg_xcorr_plan,
    days: *const *const sg_xcorr_spectra,
    n_days: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    stacks: u64,
    pair_stride: usize,
    n_windows: *mut u32,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let gpu = plan.context().gpu_for("sg_xcorr_correlate_device_f32")?;
        let block = (i0, ni, j0, nj);
        let (spectra, n_pairs) = days_and_pairs(plan, days, n_days, block)?;
        let len = rows_span(n_pairs, pair_stride, plan)?;
        let mut out = device_array::<f32>(gpu, stacks, len, "stacks")?;
        let all = DeviceStacks {
            out: part_mut(&mut out, 0, len),
            pair_stride,
            counts: optional_mut(n_windows, n_pairs, "n_windows")?,
        };
        plan.correlate_device(&spectra, block, all, None)?;
        Ok(())
    })
}

/// `sg_xcorr_correlate_substacks_f32` into device memory: `stacks` and `substacks` are
/// `CUdeviceptr` values (device memory of the context's device, not overlapping) in the
/// host call's layouts; `days`, `labels`, `n_windows` and `substack_windows` (the last two
/// may be NULL) are host memory, and the counts are known on the host: the call does not
/// wait for them. Queued on the context's stream: returns without waiting, the stacks are
/// ready when the stream has run. Progress callbacks are not called.
/// `SG_ERR_INVALID_ARGUMENT` for an address the driver does not know as device memory of
/// the context's device holding the rows, or for overlapping outputs; `SG_ERR_UNSUPPORTED`
/// on a CPU context. Bit for bit the stacks and substacks of
/// `sg_xcorr_correlate_substacks_f32` on the same GPU.
#[no_mangle]
pub extern "C" fn sg_xcorr_correlate_substacks_device_f32(
    plan: *const sg_xcorr_plan,
    days: *const *const sg_xcorr_spectra,
    n_days: usize,
    i0: usize,
    ni: usize,
    j0: usize,
    nj: usize,
    labels: *const i32,
    n_groups: usize,
    stacks: u64,
    pair_stride: usize,
    n_windows: *mut u32,
    substacks: u64,
    substack_windows: *mut u32,
) -> sg_status {
    guard(|| {
        let plan = &arg_ref(plan, "plan")?.0;
        let call = "sg_xcorr_correlate_substacks_device_f32";
        let gpu = plan.context().gpu_for(call)?;
        let block = (i0, ni, j0, nj);
        let (spectra, n_pairs) = days_and_pairs(plan, days, n_days, block)?;
        let rows = SubstackRows::new(plan, &spectra, (labels, n_groups), n_pairs, pair_stride)?;
        rows.apart(|na, ns| overlap::<f32>(stacks, na, substacks, ns))?;
        let (na, ns) = (rows.na, rows.ns);
        let mut all_out = device_array::<f32>(gpu, stacks, na, "stacks")?;
        let mut sub_out = device_array::<f32>(gpu, substacks, ns, "substacks")?;
        let all = DeviceStacks {
            out: part_mut(&mut all_out, 0, na),
            pair_stride,
            counts: optional_mut(n_windows, n_pairs, "n_windows")?,
        };
        let sub = DeviceStacks {
            out: part_mut(&mut sub_out, 0, ns),
            pair_stride,
            counts: optional_mut(substack_windows, rows.n_sub, "substack_windows")?,
        };
        plan.correlate_device(&spectra, block, all, Some((&rows.groups, sub)))?;
        Ok(())
    })
}
