//! Compiled modules, once per context, keyed by kernel file and compile-time constants;
//! their images come from the on-disk cache when an earlier process compiled them.

use super::disk_cache::{self, DiskCache, Origin};
use super::kernels::KernelSource;
use super::{driver_error, nvrtc};
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct ModuleCache {
    /// By kernel file, then prelude: a lookup borrows the prelude (calls look their module
    /// up at every launch, and a DWT prelude is kilobytes long).
    modules: Mutex<HashMap<&'static str, HashMap<String, Arc<CudaModule>>>>,
    disk: DiskCache,
}

impl ModuleCache {
    /// The on-disk cache this context reads and fills.
    pub fn disk(&self) -> &DiskCache {
        &self.disk
    }

    /// `get` for a call queued on `stream`. Loading a module while the stream is captured
    /// into a graph would invalidate the capture, so a module not loaded yet is refused
    /// then, with `what` to say which call should run (or be prepared) before capturing.
    pub fn get_on(
        &self,
        ctx: &Arc<CudaContext>,
        arch: &str,
        kernel: &KernelSource,
        prelude: &str,
        stream: &CudaStream,
        what: &str,
    ) -> Result<Arc<CudaModule>> {
        if let Some(m) = self.loaded(kernel, prelude) {
            return Ok(m);
        }
        if super::workspace::capturing(stream)? {
            return Err(crate::invalid!(
                "{what}: its kernels are not loaded on this context yet, and loading them \
                 cannot be captured; run the call once before capturing it, or reserve the plan"
            ));
        }
        self.get(ctx, arch, kernel, prelude)
    }

    /// The module already loaded for `kernel` with `prelude`, if any.
    fn loaded(&self, kernel: &KernelSource, prelude: &str) -> Option<Arc<CudaModule>> {
        self.modules
            .lock()
            .unwrap()
            .get(kernel.file)
            .and_then(|by| by.get(prelude).cloned())
    }

    /// The module for `kernel` with `prelude`, compiled for `arch` on first use.
    pub fn get(
        &self,
        ctx: &Arc<CudaContext>,
        arch: &str,
        kernel: &KernelSource,
        prelude: &str,
    ) -> Result<Arc<CudaModule>> {
        if let Some(m) = self.loaded(kernel, prelude) {
            return Ok(m);
        }
        // Compile outside the lock: NVRTC takes a while and other kernels may be wanted.
        let compile = || nvrtc::compile(kernel.file, kernel.source, prelude, arch);
        let disk_key = disk_cache::cache_key(kernel.file, kernel.source, prelude, arch)?;
        let (image, origin) = self.disk.get_or_compile(&disk_key, compile)?;
        let module = match ctx.load_module(image.to_loadable()?) {
            Ok(m) => m,
            // An entry the driver refuses (a driver change the key cannot see): compile afresh.
            Err(_) if origin == Origin::Disk => {
                let fresh = compile()?;
                self.disk.store(&disk_key, &fresh);
                ctx.load_module(fresh.to_loadable()?)
                    .map_err(driver_error("loading a compiled module"))?
            }
            Err(e) => return Err(driver_error("loading a compiled module")(e)),
        };
        Ok(self
            .modules
            .lock()
            .unwrap()
            .entry(kernel.file)
            .or_default()
            .entry(prelude.to_string())
            .or_insert(module)
            .clone())
    }
}
