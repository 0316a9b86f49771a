//! The CUDA backend, through cudarc: driver, NVRTC, cuFFT and cuBLAS, all loaded at
//! run time so that the library loads and works (on the CPU) without them.

pub mod dwt;
pub mod fxdecon;
pub mod kernels;
pub mod module_cache;
pub mod nvrtc;
pub mod probe;
pub mod staging;
pub mod xcorr;

use crate::error::{Error, Result};
use cudarc::driver::{sys::CUdevice_attribute, CudaContext, CudaStream, DriverError};
use std::sync::Arc;

pub struct CudaBackend {
    pub ctx: Arc<CudaContext>,
    /// The NVRTC target of the device, e.g. "sm_90".
    pub arch: String,
    pub modules: module_cache::ModuleCache,
    pub staging: staging::StagingPool,
    /// Largest dynamic shared memory a block may opt in to, in bytes.
    pub max_shared_bytes: usize,
    pub multiprocessors: usize,
    description: String,
}

impl CudaBackend {
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
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
        if ordinal >= count as usize {
            return Err(Error::CudaUnavailable(format!(
                "device_ordinal {ordinal} asked for, but the driver reports {count} device(s)"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_error("creating the CUDA context"))?;
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
        let mut nvrtc_version = (0, 0);
        // SAFETY: NVRTC was found by the probe; the pointers are valid locals.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut nvrtc_version.0, &mut nvrtc_version.1) };
        let description = format!(
            "device {ordinal}: {name}, compute capability {major}.{minor}, {} multiprocessors, {:.1} GiB\n\
             NVRTC {}.{}, kernels compiled for sm_{major}{minor}\n{}",
            multiprocessors,
            total as f64 / (1u64 << 30) as f64,
            nvrtc_version.0,
            nvrtc_version.1,
            libs.describe()
        );
        Ok(CudaBackend {
            staging: staging::StagingPool::default(),
            ctx,
            arch: format!("sm_{major}{minor}"),
            modules: module_cache::ModuleCache::default(),
            max_shared_bytes,
            multiprocessors,
            description,
        })
    }

    pub fn describe(&self) -> &str {
        &self.description
    }

    /// A fresh stream for one call, so that calls from several threads overlap.
    pub fn stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx
            .new_stream()
            .map_err(driver_error("creating a stream"))
    }
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
