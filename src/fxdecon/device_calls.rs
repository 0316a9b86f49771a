//! The plan's calls on volumes already in device memory, ordered on the context's caller
//! stream (`sg_context_set_stream`) without waiting for it.

use super::cuda::{execute_on, DeviceIo};
use super::volume::Volume;
use super::FxdeconPlan;
use crate::error::Result;

impl FxdeconPlan {
    /// `execute` on device arrays (f32, the GPU path's precision), queued on the caller's
    /// stream; returns without waiting. Non-finite samples are looked for only with device
    /// checks on (reported when the context synchronises); they reach the output. The same kernels and slabs as `execute` on this GPU, so the same bits.
    pub fn execute_device(&self, io: DeviceIo, layout: Volume) -> Result<()> {
        let gpu = self.ctx.gpu_for("a device F-X filter")?;
        self.check_layout(&layout)?;
        let need = layout.span();
        if io.len() < need {
            return Err(crate::invalid!(
                "device arrays shorter than the {need} elements the data span"
            ));
        }
        let stream = gpu.caller_stream();
        io.check_finite(gpu, &stream, &layout)?;
        self.held.scope("a device F-X call", || {
            execute_on(gpu, &self.setup, &self.gpu_cache, io, layout, &stream)
        })
    }
}
