//! A correlation plan's data: the options, the sizes they imply and the day filter. Its
//! stages (`preprocess`, `correlate`) are implemented in `mod.rs`, which dispatches them to
//! the backends; the backends read the plan through this file.

use super::butterworth::Section;
use super::cuda::held::DeviceCalls;
use super::geometry::Geometry;
use super::options::Options;
use super::preprocess;
use crate::backend::cuda::memory::Tally;
use crate::context::Context;
use crate::error::Result;
use std::sync::Arc;

/// A correlation plan: options and the sizes they imply, on one context. Immutable:
/// several threads may use one plan at once.
pub struct XcorrPlan {
    pub(super) ctx: Arc<Context>,
    pub(super) options: Options,
    pub(super) geometry: Geometry,
    pub(super) sections: Vec<Section>,
    /// What the plan's device calls keep between calls (CUDA contexts).
    pub(super) device: DeviceCalls,
    /// Device bytes the plan holds.
    pub(super) held: Arc<Tally>,
}

impl XcorrPlan {
    /// Device bytes the plan holds (0 on a CPU context): made at creation, its device
    /// calls' stream state (cuBLAS and its workspace for linear stacks, the filter and
    /// taper tables); then the cuFFT plans its device calls use (one per shape, kept) and
    /// their work arrays (kept, grown to the largest call). Host calls' buffers are made
    /// per call; spectra and stacks hold their own.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    pub fn new(ctx: Arc<Context>, options: Options) -> Result<XcorrPlan> {
        let geometry = Geometry::new(&options)?;
        let sections = preprocess::day_filter(&options);
        let plan = XcorrPlan {
            ctx,
            options,
            geometry,
            sections,
            device: DeviceCalls::default(),
            held: Arc::default(),
        };
        if let Some(gpu) = plan.ctx.cuda() {
            let linear = plan.options.stack_method == super::options::StackMethod::Linear;
            let (g, o) = (&plan.geometry, &plan.options);
            let (sos, taper) = super::cuda::tables::plan_tables(&plan.sections, g, o);
            plan.held.scope("creating the xcorr plan", || {
                plan.device.prepare(gpu, linear, &sos, &taper)
            })?;
        }
        Ok(plan)
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }
}
