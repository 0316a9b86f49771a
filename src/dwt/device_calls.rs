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
        transform_on(gpu, &self.wavelet, direction, levels, io, batch, &stream)
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
        let medians = denoise_on(gpu, &self.wavelet, options, levels, io, batch, &stream)?;
        if let Some(t) = thresholds {
            t[..wanted].copy_from_slice(&medians.thresholds(gpu, &stream)?);
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
