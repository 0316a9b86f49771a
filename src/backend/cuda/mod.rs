//! The CUDA backend, through cudarc: driver, NVRTC, cuFFT and cuBLAS, all loaded at
//! run time so that the library loads and works (on the CPU) without them.

pub mod adopt;
pub mod array;
pub mod blas;
pub mod blas_pool;
pub mod buffers;
pub mod caller;
pub mod checks;
pub mod disk_cache;
pub mod fft;
pub mod kernels;
pub mod launch;
pub mod memory;
pub mod module_cache;
pub mod nvrtc;
pub mod peer;
pub mod probe;
pub mod replay;
pub mod staging;
pub mod tracked;
pub mod workspace;

use crate::error::{Error, Result};
use cudarc::driver::{sys::CUdevice_attribute, CudaContext, CudaStream, DriverError};
use std::sync::{Arc, Mutex};

/// The device's primary context, retained once per process and kept until exit, as the
/// CUDA runtime keeps it: a later context on the device starts without the driver's
/// context set-up, and the libraries' own per-context allocations (cuFFT keeps one of
/// about 7 MB after its plans are destroyed) are freed by their unload at exit rather
/// than outliving a released context (which compute-sanitizer reports as a leak).
fn primary_context(ordinal: usize) -> Result<Arc<CudaContext>> {
    static RETAINED: Mutex<Vec<(usize, Arc<CudaContext>)>> = Mutex::new(Vec::new());
    let mut held = RETAINED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, ctx)) = held.iter().find(|(o, _)| *o == ordinal) {
        return Ok(ctx.clone());
    }
    let ctx = CudaContext::new(ordinal).map_err(driver_error("creating the CUDA context"))?;
    // SAFETY: the library uses each of its buffers on the one stream it was made on, and
    // orders work across streams itself (joins, events, `caller::ordered_on`). cudarc's
    // per-buffer events would add a wait on the buffer's last use at every address taken,
    // which a stream being captured into a graph may not make (an uncaptured event).
    unsafe { ctx.disable_event_tracking() };
    held.push((ordinal, ctx.clone()));
    Ok(ctx)
}

pub struct CudaBackend {
    /// cuBLAS handles lent to calls; first, so dropped first (fields drop in order), while
    /// all the context's other parts still stand.
    pub blas: blas_pool::BlasPool,
    pub ctx: Arc<CudaContext>,
    /// The NVRTC target of the device, e.g. "sm_90".
    pub arch: String,
    pub modules: module_cache::ModuleCache,
    pub staging: staging::StagingPool,
    /// Largest dynamic shared memory a block may opt in to, in bytes.
    pub max_shared_bytes: usize,
    pub multiprocessors: usize,
    /// The stream device calls are ordered on (`sg_context_set_stream`).
    pub caller: caller::CallerStream,
    /// The device checks of device calls' inputs (off unless asked for).
    pub checks: checks::DeviceChecks,
    /// Where the context's device memory comes from, and how much it holds.
    pub memory: Arc<memory::DeviceMemory>,
    description: String,
}

/// The CUDA libraries the backend needs, each found, and the number of devices (at least
/// one): `CudaUnavailable` saying what is missing otherwise.
fn libraries_and_devices() -> Result<(probe::Libraries, usize)> {
    let libs = probe::probe();
    if let Some(why) = libs.missing_required() {
        return Err(Error::CudaUnavailable(why));
    }
    let count = CudaContext::device_count().map_err(|e| {
        Error::CudaUnavailable(format!("the CUDA driver could not be initialised: {e:?}"))
    })?;
    if count <= 0 {
        return Err(Error::CudaUnavailable(
            "the CUDA driver reports no device".into(),
        ));
    }
    Ok((libs, count as usize))
}

impl CudaBackend {
    /// The backend on device `ordinal`'s primary context.
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
        let (libs, count) = libraries_and_devices()?;
        if ordinal >= count {
            return Err(Error::CudaUnavailable(format!(
                "device_ordinal {ordinal} asked for, but the driver reports {count} device(s)"
            )));
        }
        let ctx = primary_context(ordinal)?;
        Self::on(ctx, ordinal, &libs, "the device's primary context")
    }

    /// The backend on the application's CUDA context `raw` (`adopt`).
    ///
    /// # Safety
    /// `raw` is a live `CUcontext`, which the application destroys only after every library
    /// context and plan made on it.
    pub unsafe fn adopting(raw: u64) -> Result<CudaBackend> {
        if raw == 0 {
            return Err(crate::invalid!(
                "cu_context is 0 (NULL); pass a live CUcontext (cuCtxGetCurrent after cudaSetDevice and cudaFree(0), or cuCtxCreate)"
            ));
        }
        let (libs, _) = libraries_and_devices()?;
        // SAFETY: the caller's promise.
        let (ordinal, ctx, primary) = unsafe { adopt::adopt(raw, primary_context)? };
        let whose = match primary {
            true => format!("the device's primary context, given by the application (0x{raw:x})"),
            false => format!("the application's CUDA context 0x{raw:x}"),
        };
        Self::on(ctx, ordinal, &libs, &whose)
    }

    /// The backend on `ctx`, device `ordinal`'s context `whose` (for the description).
    fn on(
        ctx: Arc<CudaContext>,
        ordinal: usize,
        libs: &probe::Libraries,
        whose: &str,
    ) -> Result<CudaBackend> {
        let (major, minor) = ctx
            .compute_capability()
            .map_err(driver_error("reading the compute capability"))?;
        let attr = |a| {
            ctx.attribute(a)
                .map_err(driver_error("reading a device attribute"))
        };
        let max_shared_bytes =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
                as usize;
        let multiprocessors =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        let name = ctx.name().unwrap_or_else(|_| "unknown device".into());
        let total = ctx.total_mem().unwrap_or(0);
        let arch = format!("sm_{major}{minor}");
        let (nvrtc_major, nvrtc_minor) = nvrtc::version()?;
        let kernels_as = match nvrtc::target(&arch) {
            Ok(t) => format!("{:?} for {}", t.kind, t.gpu_architecture),
            Err(e) => format!("nothing ({e})"),
        };
        let modules = module_cache::ModuleCache::default();
        let cache = modules
            .disk()
            .dir()
            .map_or("off".to_string(), |d| d.display().to_string());
        let description = format!(
            "device {ordinal}: {name}, compute capability {major}.{minor}, {} multiprocessors, {:.1} GiB\n\
             CUDA context: {whose}\n\
             NVRTC {nvrtc_major}.{nvrtc_minor}, kernels compiled to {kernels_as}, kernel cache: {cache}\n{}",
            multiprocessors,
            total as f64 / (1u64 << 30) as f64,
            libs.describe()
        );
        Ok(CudaBackend {
            staging: staging::StagingPool::default(),
            ctx,
            arch,
            modules,
            max_shared_bytes,
            multiprocessors,
            caller: caller::CallerStream::default(),
            checks: checks::DeviceChecks::default(),
            memory: Arc::default(),
            blas: Default::default(),
            description,
        })
    }

    pub fn describe(&self) -> &str {
        &self.description
    }

    /// Makes the context current on this thread (every driver call below needs it), and its
    /// device memory the source of the buffers the thread makes (`memory.rs`).
    pub fn bind(&self) -> Result<()> {
        memory::make_current(&self.memory);
        bind(&self.ctx)
    }

    /// The stream a device call starting now is ordered on.
    pub fn caller_stream(&self) -> Arc<CudaStream> {
        self.caller.get(&self.ctx)
    }

    /// A fresh stream for one call, so that calls from several threads overlap.
    pub fn stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx
            .new_stream()
            .map_err(driver_error("creating a stream"))
    }
}

/// Makes `ctx` current on this thread: the one place the library binds a context.
pub fn bind(ctx: &CudaContext) -> Result<()> {
    ctx.bind_to_thread()
        .map_err(driver_error("binding the context"))
}

/// cuFFT and cuBLAS set up a plan or handle with copies on the legacy default stream, and a
/// copy from pageable memory may return before it lands. The library's streams are
/// non-blocking and do not wait for that stream, so a kernel could read a half-made plan
/// (16 threads making plans faulted with an illegal address). Called after each plan or
/// handle is made, before its first use; it waits for that stream alone.
pub fn wait_for_library_setup(ctx: &CudaContext) -> Result<()> {
    bind(ctx)?;
    // SAFETY: CU_STREAM_LEGACY (the handle 0x1) names the context's legacy default stream.
    unsafe { cudarc::driver::sys::cuStreamSynchronize(1 as cudarc::driver::sys::CUstream) }
        .result()
        .map_err(driver_error("waiting for a library's set-up copies"))
}

/// Maps a driver error to a status: exhausted device memory is its own code so that
/// callers can retry with smaller batches; the context stays usable.
pub fn driver_error(doing: &'static str) -> impl Fn(DriverError) -> Error {
    move |e| {
        use cudarc::driver::sys::CUresult;
        match e.0 {
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Error::DeviceOutOfMemory(format!("out of device memory while {doing}"))
            }
            _ => Error::CudaDriver(format!("CUDA driver error while {doing}: {e:?}")),
        }
    }
}
