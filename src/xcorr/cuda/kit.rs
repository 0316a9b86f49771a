//! What every stage of a call uses: the module, a stream, the device memory it may plan
//! for, batched FFT plans and launch shapes.

use super::held::{Held, HeldBlas};
use crate::backend::cuda::blas::Blas;
use crate::backend::cuda::blas_pool::LentBlas;
use crate::backend::cuda::fft::{self, FftKind, FftPlan, Shape};
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::workspace::{Arena, Work, Workspace};
use crate::backend::cuda::{driver_error, kernels, CudaBackend};
use crate::error::{Error, Result};
use cudarc::driver::{CudaModule, CudaStream, DeviceRepr, LaunchConfig};
use std::cell::RefCell;
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

/// A cap on the bytes of a host call's result kept on the device, 0 for none (see
/// `set_result_budget`).
static RESULT_CAP: AtomicUsize = AtomicUsize::new(0);

/// Caps the bytes of a host call's result kept on the device until the call is done (None:
/// half the free memory). Larger results go to the host chunk by chunk, into a dense copy
/// written to the caller at the end; small caps make small calls take that path, for tests.
pub fn set_result_budget(bytes: Option<usize>) {
    RESULT_CAP.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Whether a host call's result of `bytes` may wait on `gpu` until every row is there:
/// within half the free memory (the call's tiles and chunks plan with a quarter of what is
/// left) and the cap of `set_result_budget`.
pub fn holds_result(gpu: &CudaBackend, bytes: usize) -> bool {
    let free = gpu.ctx.mem_get_info().map(|(f, _)| f).unwrap_or(0);
    let cap = RESULT_CAP.load(Ordering::Relaxed);
    bytes <= free / 2 && (cap == 0 || bytes <= cap)
}

/// The module and a stream for one call: a fresh stream (host calls), or a plan's stream
/// and what it keeps for its device calls (`held`, and the workspace its work arrays are
/// cut from: `arena`).
pub struct Kit<'a> {
    pub(super) gpu: &'a CudaBackend,
    pub(super) module: Arc<CudaModule>,
    pub(super) stream: Arc<CudaStream>,
    held: Option<RefCell<&'a mut Held>>,
    arena: Arena<'a>,
}

/// A cuBLAS handle for one call: the context's, lent, or the plan's.
pub(super) enum BlasFor<'a> {
    Lent(LentBlas<'a>),
    Held(Arc<HeldBlas>),
}

impl std::ops::Deref for BlasFor<'_> {
    type Target = Blas;
    fn deref(&self) -> &Blas {
        match self {
            BlasFor::Lent(b) => b,
            BlasFor::Held(b) => &b.0,
        }
    }
}

impl Kit<'_> {
    /// A launch of the kit's kernel `name` on the kit's stream.
    pub(super) fn launch(&self, name: &str, cfg: LaunchConfig) -> Result<Launch<'_>> {
        Launch::new(&self.module, &self.stream, name, cfg)
    }
}

impl<'a> Kit<'a> {
    pub(super) fn new(gpu: &'a CudaBackend) -> Result<Kit<'a>> {
        let module = gpu.modules.get(&gpu.ctx, &gpu.arch, &kernels::XCORR, "")?;
        let stream = gpu.stream()?;
        Ok(Kit {
            gpu,
            module,
            arena: Arena::new(&stream, None)?,
            stream,
            held: None,
        })
    }

    /// A kit for a device call on the plan's stream, with the handles it keeps and its
    /// workspace (`DeviceCalls::work`).
    pub fn held(
        gpu: &'a CudaBackend,
        held: &'a mut Held,
        work: &'a mut Workspace,
    ) -> Result<Kit<'a>> {
        let module = gpu.modules.get(&gpu.ctx, &gpu.arch, &kernels::XCORR, "")?;
        let stream = held.stream.clone();
        Ok(Kit {
            gpu,
            module,
            arena: Arena::new(&stream, Some(work))?,
            stream,
            held: Some(RefCell::new(held)),
        })
    }

    /// A work array of `len` elements for this call (`Arena::take`).
    pub(super) fn take<T: DeviceRepr>(
        &self,
        len: usize,
        what: &'static str,
    ) -> Result<Work<'_, T>> {
        self.arena.take(len, what)
    }

    /// A work array holding a copy of `host` (`Arena::upload`).
    pub(super) fn upload<T: DeviceRepr>(
        &self,
        host: &[T],
        what: &'static str,
    ) -> Result<Work<'_, T>> {
        self.arena.upload(host, what)
    }

    /// Bytes of work arrays the call asked for: what the plan keeps for the next one.
    pub fn asked(&self) -> usize {
        self.arena.asked()
    }

    /// The stream the call's work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// cuBLAS on the call's stream: a handle the context lends, or the plan's.
    pub(super) fn blas(&self, needed_by: &'static str) -> Result<BlasFor<'a>> {
        let Some(held) = &self.held else {
            return Ok(BlasFor::Lent(self.gpu.blas.lend(&self.stream, needed_by)?));
        };
        let mut held = held.borrow_mut();
        if held.blas.is_none() {
            held.blas = Some(Arc::new(HeldBlas(Blas::new(&self.stream, needed_by)?)));
        }
        Ok(BlasFor::Held(held.blas.clone().expect("made above")))
    }

    /// A cuFFT plan on the call's stream (`FftPlan::many`): made for the call, or kept by
    /// the plan for its device calls.
    pub(super) fn fft_many(
        &self,
        dims: &[usize],
        dist: (usize, usize),
        kind: FftKind,
        batch: usize,
        what: &'static str,
    ) -> Result<Arc<FftPlan>> {
        let make = |s: &Arc<CudaStream>| FftPlan::many(dims, dist, kind, batch, s, what);
        match &self.held {
            None => Ok(Arc::new(make(&self.stream)?)),
            Some(h) => h.borrow_mut().fft((dims.to_vec(), dist, kind, batch), make),
        }
    }

    /// Before a plan made for one part of a call is dropped: a host call waits for its
    /// transforms; a device call's plans are kept, so it does not.
    pub(super) fn release_one_off(&self, what: &'static str) -> Result<()> {
        match self.held {
            None => self.stream.synchronize().map_err(driver_error(what)),
            Some(_) => Ok(()),
        }
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
    pub(super) fn fft_plan(&self, n: usize, shape: Shape, batch: usize) -> Result<Arc<FftPlan>> {
        let complex = n / 2 + 1;
        let dist = if shape == Shape::R2C {
            (n, complex)
        } else {
            (complex, n)
        };
        let kind = fft::kind::<f32>(shape);
        self.fft_many(&[n], dist, kind, batch, "batched FFTs")
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
