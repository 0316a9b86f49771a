//! What every stage of a call uses: the module, a stream, the device memory it may plan
//! for, batched FFT plans and launch shapes.

use crate::backend::cuda::fft::{self, FftPlan, Shape};
use crate::backend::cuda::{kernels, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::{CudaModule, CudaStream, LaunchConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Largest device working set a call aims for (further capped by free memory).
const BUDGET: usize = 6 << 30;

/// A cap on the bytes one call plans for, 0 for none (see `set_memory_budget`).
static BUDGET_CAP: AtomicUsize = AtomicUsize::new(0);

/// Caps the device memory one call plans its chunks and tiles for (None: a quarter of the
/// free memory, at most 6 GiB). Small caps make small inputs take the several-chunk and
/// several-tile paths, for tests.
pub fn set_memory_budget(bytes: Option<usize>) {
    BUDGET_CAP.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The module and a stream for one call.
pub(super) struct Kit<'a> {
    pub(super) gpu: &'a CudaBackend,
    pub(super) module: Arc<CudaModule>,
    pub(super) stream: Arc<CudaStream>,
}

impl<'a> Kit<'a> {
    pub(super) fn new(gpu: &'a CudaBackend) -> Result<Kit<'a>> {
        let module = gpu.modules.get(&gpu.ctx, &gpu.arch, &kernels::XCORR, "")?;
        Ok(Kit {
            gpu,
            module,
            stream: gpu.stream()?,
        })
    }

    /// Bytes a call may use: a quarter of the free device memory, at most BUDGET (and at
    /// most the cap of `set_memory_budget`).
    pub(super) fn budget(&self) -> usize {
        let free = self
            .gpu
            .ctx
            .mem_get_info()
            .map(|(f, _)| f)
            .unwrap_or(1 << 30);
        match BUDGET_CAP.load(Ordering::Relaxed) {
            0 => (free / 4).min(BUDGET),
            cap => (free / 4).min(BUDGET).min(cap),
        }
    }

    /// A batched 1D cuFFT plan of `n` points, R2C or C2R (basic layout: rows of n reals
    /// and n/2 + 1 complex values).
    pub(super) fn fft_plan(&self, n: usize, shape: Shape, batch: usize) -> Result<FftPlan> {
        let complex = n / 2 + 1;
        let dist = if shape == Shape::R2C {
            (n, complex)
        } else {
            (complex, n)
        };
        let kind = fft::kind::<f32>(shape);
        FftPlan::many(&[n], dist, kind, batch, &self.stream, "batched FFTs")
    }
}

/// A launch of `grid` blocks of `block` threads (x, y), without dynamic shared memory.
pub(super) fn blocks(grid: (u32, u32), block: (u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0, grid.1, 1),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: 0,
    }
}

/// `n` (at least 1) as a grid extent, refused where one launch cannot index it.
pub(super) fn grid_dim(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n.max(1))
        .ok()
        .filter(|&g| g < i32::MAX as u32)
        .ok_or_else(|| {
            Error::Unsupported(format!("{what} exceeds what one kernel launch can index"))
        })
}
