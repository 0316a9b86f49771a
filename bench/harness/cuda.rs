//! GPU timing: CUDA events on a stream (the time the device spent, without the host's
//! launch and synchronisation overhead), and the pinned host→device→host copy that is
//! the floor of every host-to-host GPU call.

use super::timing::{measure, ms_since, Measured, Reps, Sample, Verdict};
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, DriverError};
use std::sync::Arc;
use std::time::Instant;

/// A driver error as a row's error text.
pub fn drv_err(doing: &'static str) -> impl Fn(DriverError) -> String {
    move |e| format!("CUDA driver error while {doing}: {e:?}")
}

/// Timing events, created once per row and recorded on one stream.
pub struct Events {
    e: Vec<CudaEvent>,
}

impl Events {
    pub fn new(ctx: &Arc<CudaContext>, count: usize) -> Result<Events, String> {
        let e = (0..count)
            .map(|_| ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(drv_err("creating timing events"))?;
        Ok(Events { e })
    }

    /// The events themselves, for library calls that record them.
    pub fn array<const N: usize>(&self) -> Result<&[CudaEvent; N], String> {
        self.e
            .as_slice()
            .try_into()
            .map_err(|_| format!("{N} events wanted, {} made", self.e.len()))
    }

    pub fn record(&self, i: usize, stream: &CudaStream) -> Result<(), String> {
        self.e[i]
            .record(stream)
            .map_err(drv_err("recording an event"))
    }

    /// Milliseconds from event `from` to event `to` (both completed).
    pub fn ms(&self, from: usize, to: usize) -> Result<f64, String> {
        self.e[from]
            .elapsed_ms(&self.e[to])
            .map(|x| x as f64)
            .map_err(drv_err("reading an event interval"))
    }
}

/// `data` copied from page-locked host memory to the device and back on `stream`
/// (`memcpy_htod` then `memcpy_dtoh`), timed by events; the sample's two parts are the
/// two directions. When a call is checked, `check` sees what came back.
pub fn pinned_round_trip<C: Verdict>(
    stream: &Arc<CudaStream>,
    data: &[f32],
    reps: Reps,
    check: impl Fn(&[f32]) -> C,
) -> Result<Measured<C>, String> {
    let ctx = stream.context();
    let len = data.len();
    // SAFETY: filled before use (a) or only written by the device (b).
    let mut h_a = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }
        .map_err(drv_err("allocating pinned host memory"))?;
    let mut h_b = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }
        .map_err(drv_err("allocating pinned host memory"))?;
    h_a.as_mut_slice()
        .map_err(drv_err("mapping pinned memory"))?
        .copy_from_slice(data);
    // SAFETY: written by the copy before it is read.
    let mut d_tmp =
        unsafe { stream.alloc::<f32>(len) }.map_err(drv_err("allocating device memory"))?;
    let ev = Events::new(ctx, 3)?;
    measure(reps, |checked| {
        let t0 = Instant::now();
        ev.record(0, stream)?;
        stream
            .memcpy_htod(&h_a, &mut d_tmp)
            .map_err(drv_err("copying host to device"))?;
        ev.record(1, stream)?;
        stream
            .memcpy_dtoh(&d_tmp, &mut h_b)
            .map_err(drv_err("copying device to host"))?;
        ev.record(2, stream)?;
        stream
            .synchronize()
            .map_err(drv_err("synchronizing the stream"))?;
        let s = Sample {
            ms: ev.ms(0, 2)?,
            wall_ms: ms_since(t0),
            parts: vec![ev.ms(0, 1)?, ev.ms(1, 2)?],
        };
        let c = if checked {
            Some(check(
                h_b.as_slice().map_err(drv_err("mapping pinned memory"))?,
            ))
        } else {
            None
        };
        Ok((s, c))
    })
}
