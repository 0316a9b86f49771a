//! Compiled modules, once per context, keyed by kernel file and compile-time constants.

use super::kernels::KernelSource;
use super::{driver_error, nvrtc};
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct ModuleCache {
    modules: Mutex<HashMap<(&'static str, String), Arc<CudaModule>>>,
}

impl ModuleCache {
    /// The module for `kernel` with `prelude`, compiled for `arch` on first use.
    pub fn get(
        &self,
        ctx: &Arc<CudaContext>,
        arch: &str,
        kernel: &KernelSource,
        prelude: &str,
    ) -> Result<Arc<CudaModule>> {
        let key = (kernel.file, prelude.to_string());
        if let Some(m) = self.modules.lock().unwrap().get(&key) {
            return Ok(m.clone());
        }
        // Compile outside the lock: NVRTC takes a while and other kernels may be wanted.
        let ptx = nvrtc::compile(kernel.file, kernel.source, prelude, arch)?;
        let module = ctx
            .load_module(ptx)
            .map_err(driver_error("loading a compiled module"))?;
        Ok(self
            .modules
            .lock()
            .unwrap()
            .entry(key)
            .or_insert(module)
            .clone())
    }
}
