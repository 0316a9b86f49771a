//! A correlation plan's data: the options, the sizes they imply and the day filter. Its
//! stages (`preprocess`, `correlate`) are implemented in `mod.rs`, which dispatches them to
//! the backends; the backends read the plan through this file.

use super::butterworth::Section;
use super::cuda::held::DeviceCalls;
use super::geometry::Geometry;
use super::options::Options;
use super::preprocess;
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
}

impl XcorrPlan {
    /// Device bytes the plan holds: none. A call's work buffers are sized by its stations,
    /// days and pairs, made when it starts and freed when it returns; spectra keep theirs.
    pub fn device_bytes(&self) -> usize {
        0
    }

    pub fn new(ctx: Arc<Context>, options: Options) -> Result<XcorrPlan> {
        let geometry = Geometry::new(&options)?;
        let sections = preprocess::day_filter(&options);
        Ok(XcorrPlan {
            ctx,
            options,
            geometry,
            sections,
            device: DeviceCalls::default(),
        })
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
