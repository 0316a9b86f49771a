//! What a plan keeps for its device calls: its own stream, a cuBLAS handle (linear stacks)
//! with its workspace, the day filter's sections and the whitening taper, all made with the
//! plan on a CUDA context; the cuFFT plans those calls used; and the work arrays of their
//! station-day chunks, in a workspace grown to the largest call and kept. Destroying a
//! cuBLAS handle waits for the whole device and a cuFFT plan may only go once its
//! transforms ran, so device calls keep them here instead of waiting; they go when the
//! plan goes (after its stream has run).

use crate::backend::cuda::blas::Blas;
use crate::backend::cuda::buffers::upload;
use crate::backend::cuda::fft::{FftKind, FftPlan};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::workspace::Workspace;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::Result;
use cudarc::driver::CudaStream;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// cuFFT plans kept at most; past that a call waits for the stream once and lets the idle
/// ones go.
const MAX_FFT_PLANS: usize = 16;

/// A cuFFT plan's shape: dims, (input, output) distance, kind, batch.
type FftKey = (Vec<usize>, (usize, usize), FftKind, usize);

/// A cuBLAS handle kept by a plan.
pub(super) struct HeldBlas(pub(super) Blas);

// SAFETY: a cuBLAS handle may be used from any thread; the plan's mutex (`DeviceCalls`)
// lets one call at a time use it.
unsafe impl Send for HeldBlas {}
// SAFETY: as above: shared only within the call that holds the plan's mutex.
unsafe impl Sync for HeldBlas {}

/// The state of a plan's device calls, made by the first one.
pub struct Held {
    pub(super) stream: Arc<CudaStream>,
    pub(super) blas: Option<Arc<HeldBlas>>,
    ffts: Vec<(FftKey, Arc<FftPlan>)>,
}

impl Held {
    /// The kept plan of this shape, made on first use (bound to the plan's stream).
    pub(super) fn fft(
        &mut self,
        key: FftKey,
        make: impl FnOnce(&Arc<CudaStream>) -> Result<FftPlan>,
    ) -> Result<Arc<FftPlan>> {
        if let Some((_, p)) = self.ffts.iter().find(|(k, _)| *k == key) {
            return Ok(p.clone());
        }
        if crate::backend::cuda::workspace::capturing(&self.stream)? {
            // A new plan allocates its work area: not while the stream is captured.
            return Err(crate::invalid!(
                "a device xcorr call needs an FFT plan of a new shape, and the stream is being \
                 captured into a graph, where nothing may be allocated; make the same call once \
                 before the capture (the plan keeps what it used)"
            ));
        }
        if self.ffts.len() >= MAX_FFT_PLANS {
            self.stream
                .synchronize()
                .map_err(driver_error("releasing FFT plans"))?;
            // Plans the call in progress holds stay: it may queue more work with them.
            self.ffts.retain(|(_, p)| Arc::strong_count(p) > 1);
        }
        let plan = Arc::new(make(&self.stream)?);
        self.ffts.push((key, plan.clone()));
        Ok(plan)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // The handle and plans go only once the work queued with them has run.
        let _ = self.stream.synchronize();
    }
}

/// A plan's device-call state; one device call of the plan at a time queues its work.
#[derive(Default)]
pub struct DeviceCalls {
    held: Mutex<Option<Held>>,
    /// The work arrays of device calls (a preprocess's chunks and window flags), sized by
    /// their station-days: kept, grown to the largest call.
    work: Mutex<Workspace>,
    tables: OnceLock<PlanTables>,
}

/// The day filter's sections (5 values each; one 0 without any) and the whitening taper
/// (band_len values), on the device.
pub struct PlanTables {
    pub sos: DeviceBuf<f64>,
    pub taper: DeviceBuf<f32>,
}

impl DeviceCalls {
    /// Makes the state with the plan on `gpu`: the stream, cuBLAS (with `linear` stacks,
    /// where the loader finds it) and the tables; waits for their copies.
    pub fn prepare(
        &self,
        gpu: &CudaBackend,
        linear: bool,
        sos: &[f64],
        taper: &[f32],
    ) -> Result<()> {
        gpu.bind()?;
        let stream = gpu.stream()?;
        // Without cuBLAS the plan still preprocesses; its first correlation says what is missing.
        let blas = match linear && Blas::available() {
            true => Some(Arc::new(HeldBlas(Blas::new(
                &stream,
                "the GPU correlation",
            )?))),
            false => None,
        };
        let what = "copying the xcorr plan's tables to the device";
        let tables = PlanTables {
            sos: upload(&stream, sos, what)?,
            taper: upload(&stream, taper, what)?,
        };
        stream.synchronize().map_err(driver_error(what))?;
        let _ = self.tables.set(tables);
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some(Held {
            stream,
            blas,
            ffts: Vec::new(),
        });
        Ok(())
    }

    /// The tables made with the plan.
    pub fn tables(&self) -> Option<&PlanTables> {
        self.tables.get()
    }

    /// The device calls' workspace, for one call (take it after `lock`).
    pub fn work(&self) -> MutexGuard<'_, Workspace> {
        self.work.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, made on first use on `gpu`, locked for one call.
    pub fn lock(&self, gpu: &CudaBackend) -> Result<HeldGuard<'_>> {
        let mut guard = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(Held {
                stream: gpu.stream()?,
                blas: None,
                ffts: Vec::new(),
            });
        }
        Ok(HeldGuard(guard))
    }
}

/// The locked state of a plan's device calls.
pub struct HeldGuard<'a>(MutexGuard<'a, Option<Held>>);

impl HeldGuard<'_> {
    pub fn held(&mut self) -> &mut Held {
        self.0.as_mut().expect("made by DeviceCalls::lock")
    }

    /// The plan's stream for device calls.
    pub fn stream(&mut self) -> Arc<CudaStream> {
        self.held().stream.clone()
    }
}
