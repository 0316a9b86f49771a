//! Interpolation of missing traces by POCS with an `sg_wavepacket_layout`.

use super::layout::{sg_wavepacket_layout, transform};
use super::options::{pocs_options, sg_wavepacket_pocs_options};
use crate::error::Result;
use crate::ffi::arrays::{slice, slice_mut};
use crate::ffi::guard;
use crate::ffi::precision::Precision;
use crate::ffi::status::sg_status;
use crate::wavepacket::Layout;

fn pocs<T: Precision>(
    layout: *const sg_wavepacket_layout,
    data: *mut T,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> Result<()> {
    let t = transform::<T>(layout, "sg_wavepacket_pocs")?;
    let l = t.plan.layout();
    let mask = live_mask(l, live, n_traces)?;
    let opts = pocs_options(options)?;
    let d = slice_mut(data, l.n_samples(), "data")?;
    t.plan.pocs_interpolate(t.filter()?, d, &mask, &opts)
}

/// The trace mask `live` (`n_traces` values 0 or 1, the layout's trace count) as booleans.
pub(super) fn live_mask(l: &Layout, live: *const i32, n_traces: usize) -> Result<Vec<bool>> {
    let traces = l.n_samples() / l.shape[0];
    if n_traces != traces {
        return Err(crate::invalid!(
            "n_traces is {n_traces}; the layout's data has {traces} traces"
        ));
    }
    slice(live, n_traces, "live")?
        .iter()
        .enumerate()
        .map(|(i, &v)| match v {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(crate::invalid!("live[{i}] is {v}; expected 0 or 1")),
        })
        .collect()
}

/// Interpolation of missing traces by POCS, in place: `data` (n_samples values) holds
/// `n_traces` = n_samples / n1 traces of n1 samples (numbered over axes 2[, 3]); `live[t]` is
/// 1 where trace t was recorded, 0 where it is missing (its samples are not read and may be
/// anything). The iteration starts from linear interpolation between the nearest live traces
/// (beyond the outermost ones, their copies); padding the section with a few missing traces on
/// each side helps the packets at its edges. Each iteration takes the coefficients c of the
/// current estimate, ranks them by
/// |c|/‖ψ_b‖, and removes from the missing traces what the coefficients at or below the
/// iteration's threshold carry (the inverse's correction filter applied to C* of them); the
/// recorded traces come out unchanged. `options` may be NULL for the defaults.
/// A non-finite sample in a recorded trace gives `SG_ERR_NON_FINITE`. Progress: stage
/// "wave-packet POCS", one item per iteration. On failure `data` is not written.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_f32(
    layout: *const sg_wavepacket_layout,
    data: *mut f32,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    guard(|| pocs::<f32>(layout, data, live, n_traces, options))
}

/// `sg_wavepacket_pocs_f32` for a double-precision layout.
#[no_mangle]
pub extern "C" fn sg_wavepacket_pocs_f64(
    layout: *const sg_wavepacket_layout,
    data: *mut f64,
    live: *const i32,
    n_traces: usize,
    options: *const sg_wavepacket_pocs_options,
) -> sg_status {
    guard(|| pocs::<f64>(layout, data, live, n_traces, options))
}
