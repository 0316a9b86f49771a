//! The plan's calls on traces already in device memory, ordered on the context's caller
//! stream (`sg_context_set_stream`) without waiting for it.

use super::cuda::{denoise_on, transform_on, DeviceIo};
use super::denoise::DenoiseOptions;
use super::traces::Direction;
use super::{thresholds_wanted, DwtPlan};
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::sample::Sample;

impl DwtPlan {
    /// `transform` on device arrays, queued on the caller's stream; returns without waiting.
    /// Non-finite samples are looked for only with device checks on (reported when the
    /// context synchronises); they reach the outputs.
    pub fn transform_device<T: Sample>(
        &self,
        direction: Direction,
        levels: u32,
        io: DeviceIo<T>,
        batch: TraceBatch,
    ) -> Result<()> {
        let gpu = self.ctx.gpu_for("a device DWT")?;
        let levels = self.resolve_levels(levels)?;
        self.check_device_batch(&batch)?;
        let stream = gpu.caller_stream();
        io.check_finite(gpu, &stream, &batch, "a device DWT")?;
        let mut work = self.workspace();
        self.held.scope("a device DWT", || {
            let w = &self.wavelet;
            let queued = transform_on(gpu, w, direction, levels, io, batch, &stream, &mut work);
            finished(queued, work.finish(&stream))
        })
    }

    /// `denoise` on device arrays, queued on the caller's stream. With `thresholds` (host
    /// memory, n_traces × levels) the call waits for the stream to read them; without, it
    /// returns at once.
    pub fn denoise_device<T: Sample>(
        &self,
        options: &DenoiseOptions,
        io: DeviceIo<T>,
        batch: TraceBatch,
        thresholds: Option<&mut [f64]>,
    ) -> Result<()> {
        options.validate()?;
        let gpu = self.ctx.gpu_for("a device DWT denoise")?;
        let levels = self.resolve_levels(options.levels)?;
        self.check_device_batch(&batch)?;
        let wanted = thresholds_wanted(&batch, levels, thresholds.as_deref())?;
        let stream = gpu.caller_stream();
        io.check_finite(gpu, &stream, &batch, "a device DWT denoise")?;
        let mut work = self.workspace();
        let used = self.held.scope("a device DWT denoise", || {
            let w = &self.wavelet;
            let used = denoise_on(gpu, w, options, levels, io, batch, &stream, &mut work).and_then(
                |medians| match thresholds.is_some() {
                    true => medians.thresholds(gpu, &stream).map(Some),
                    false => Ok(None),
                },
            );
            // After the medians are read: the next call may reuse them.
            finished(used, work.finish(&stream))
        })?;
        if let (Some(t), Some(used)) = (thresholds, used) {
            t[..wanted].copy_from_slice(&used);
        }
        Ok(())
    }

    fn check_device_batch(&self, batch: &TraceBatch) -> Result<()> {
        if batch.n_samples != self.n_samples {
            return Err(crate::invalid!(
                "batch has {} samples per trace but the plan was made for {}",
                batch.n_samples,
                self.n_samples
            ));
        }
        Ok(())
    }
}

/// A call's outcome, unless marking the end of its use of the workspace failed.
fn finished<R>(queued: Result<R>, finish: Result<()>) -> Result<R> {
    let r = queued?;
    finish.map(|()| r)
}
