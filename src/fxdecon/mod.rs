//! F-X (2D) and F-XY (3D) prediction filtering: random-noise attenuation of sections and
//! volumes.
//!
//! Each trace is cut into overlapping time windows and Fourier transformed; in every
//! frequency slice and spatial window a prediction operator is estimated by least squares
//! (normal equations from the window's autocorrelation, solved exactly) and the
//! predictable part of the slice, the signal, is kept; windows are blended with weights
//! that sum to one. An SU-compatible mode reproduces Seismic Unix `sufxdecon`.

pub mod cpu;
pub mod cuda;
mod device_calls;
pub mod filter;
pub mod geometry;
pub mod options;
pub mod solve;
pub mod volume;

use crate::backend::cuda::memory::Tally;
use crate::context::Context;
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Sample;
use geometry::Setup;
use options::FxdeconOptions;
use std::sync::Arc;
pub use volume::Volume;

/// A filter for one shape (2D section or 3D volume) and one set of options, on one
/// context. Immutable: any number of threads may execute one plan at once.
pub struct FxdeconPlan {
    ctx: Arc<Context>,
    dims: usize,
    setup: Setup,
    /// GPU buffers and FFT plans kept between calls.
    gpu_cache: cuda::Cache,
    /// Device bytes the plan holds.
    held: Arc<Tally>,
}

impl FxdeconPlan {
    /// A plan for sections of `n_traces` traces of `n_samples` samples.
    pub fn new_2d(
        ctx: Arc<Context>,
        options: &FxdeconOptions,
        n_samples: usize,
        n_traces: usize,
    ) -> Result<FxdeconPlan> {
        let setup = Setup::new(options, n_samples, 1, n_traces, 2)?;
        FxdeconPlan {
            ctx,
            dims: 2,
            setup,
            gpu_cache: Default::default(),
            held: Default::default(),
        }
        .prepared()
    }

    /// A plan for volumes of `n_inline × n_crossline` traces.
    pub fn new_3d(
        ctx: Arc<Context>,
        options: &FxdeconOptions,
        n_samples: usize,
        n_inline: usize,
        n_crossline: usize,
    ) -> Result<FxdeconPlan> {
        let setup = Setup::new(options, n_samples, n_inline, n_crossline, 3)?;
        FxdeconPlan {
            ctx,
            dims: 3,
            setup,
            gpu_cache: Default::default(),
            held: Default::default(),
        }
        .prepared()
    }

    /// The plan with its device resources made (on a CUDA context whose GPU runs it), so
    /// that its calls find them: slab buffers, tables, streams and FFT plans.
    fn prepared(self) -> Result<FxdeconPlan> {
        let s = &self.setup;
        if let Some(gpu) = self.ctx.cuda().filter(|gpu| cuda::fits(gpu, s)) {
            if !s.pass_through && !s.band.is_empty() {
                self.held
                    .scope("creating the F-X plan", || self.gpu_cache.prepare(gpu, s))?;
            }
        }
        Ok(self)
    }

    /// Device bytes the plan holds (0 on a CPU context): the slab buffers, tables and FFT
    /// plans made at creation, and the staging buffers of host calls and further sets for
    /// calls running at once, made on first use and kept.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The caller's layout for this plan, 2D: trace t at `t · trace_stride`.
    pub fn layout_2d(&self, trace_stride: usize) -> Result<Volume> {
        Volume::new(self.setup.n_samples, 1, self.setup.ny, 0, trace_stride)
    }

    /// 3D: trace (il, xl) at `il · inline_stride + xl · crossline_stride`.
    pub fn layout_3d(&self, inline_stride: usize, crossline_stride: usize) -> Result<Volume> {
        Volume::new(
            self.setup.n_samples,
            self.setup.nx,
            self.setup.ny,
            inline_stride,
            crossline_stride,
        )
    }

    /// Filters `input` into `output` (same layout; the samples between traces are left
    /// alone). Non-finite input is refused and nothing is written.
    pub fn execute<T: Sample>(&self, input: &[T], output: &mut [T], layout: Volume) -> Result<()> {
        self.check_layout(&layout)?;
        let need = layout.span();
        if input.len() < need || output.len() < need {
            return Err(crate::invalid!(
                "arrays shorter than the {need} elements the data span"
            ));
        }
        layout.check_finite(input)?;
        let mut reporter = self.ctx.reporter();
        self.filter(input, output, layout, &mut reporter)?;
        reporter.finish();
        Ok(())
    }

    fn check_layout(&self, layout: &Volume) -> Result<()> {
        let s = &self.setup;
        if (layout.n_samples, layout.nx, layout.ny) != (s.n_samples, s.nx, s.ny) {
            return Err(crate::invalid!(
                "the layout does not match the plan's shape"
            ));
        }
        Ok(())
    }

    /// `execute` after its checks.
    fn filter<T: Sample>(
        &self,
        input: &[T],
        output: &mut [T],
        layout: Volume,
        reporter: &mut Reporter,
    ) -> Result<()> {
        let s = &self.setup;
        if s.pass_through {
            for iy in 0..s.ny {
                for ix in 0..s.nx {
                    let o = layout.offset(ix, iy);
                    output[o..o + s.n_samples].copy_from_slice(&input[o..o + s.n_samples]);
                }
            }
            return Ok(());
        }
        // f64 data, and operators too large for a block's shared memory, run on the CPU.
        let gpu = self.ctx.cuda().filter(|gpu| cuda::fits(gpu, s));
        if let (Some(gpu), Some(input), Some(output)) =
            (gpu, T::as_f32(input), T::as_f32_mut(output))
        {
            let volumes = cuda::Volumes {
                input,
                output,
                layout,
            };
            return self.held.scope("an F-X call", || {
                cuda::execute(gpu, &self.ctx.cpu, s, &self.gpu_cache, volumes, reporter)
            });
        }
        cpu::execute(&self.ctx.cpu, s, input, output, layout, reporter)
    }
}
