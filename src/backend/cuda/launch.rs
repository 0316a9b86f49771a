//! One way to launch a kernel: find it in its module, let it take the dynamic shared memory
//! its launch asks for, push the arguments, launch on a stream.

use super::driver_error;
use crate::error::Result;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule};
use std::sync::Arc;

/// Above this many bytes of dynamic shared memory a kernel must opt in (per function).
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

/// Kernel `name` of `module`, allowed `shared_bytes` of dynamic shared memory.
pub fn kernel(module: &Arc<CudaModule>, name: &str, shared_bytes: usize) -> Result<CudaFunction> {
    let f = module
        .load_function(name)
        .map_err(driver_error("finding a kernel in its module"))?;
    if shared_bytes > DEFAULT_SHARED_LIMIT {
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared_bytes as i32,
        )
        .map_err(driver_error("raising a kernel's shared-memory limit"))?;
    }
    Ok(f)
}

/// `launch!(module, stream, "name", cfg, &arg, …)` launches kernel `name` of `module` on
/// `stream` with the `LaunchConfig` `cfg`. The arguments are references to locals whose
/// types match the kernel's parameters (i32 int, i64 long long, u64 device pointers, f32
/// float, f64 double); every call site vouches for that and for buffers spanning the sizes
/// it passes. Returns from the enclosing function with the error on failure.
macro_rules! launch {
    ($module:expr, $stream:expr, $name:expr, $cfg:expr, $($arg:expr),* $(,)?) => {{
        let cfg: cudarc::driver::LaunchConfig = $cfg;
        let f = $crate::backend::cuda::launch::kernel(&$module, $name, cfg.shared_mem_bytes as usize)?;
        let mut b = $stream.launch_builder(&f);
        $( b.arg($arg); )*
        // SAFETY: the call site passes the kernel's parameters and matching buffers (above).
        unsafe { b.launch(cfg) }.map_err($crate::backend::cuda::driver_error("launching a kernel"))?;
    }};
}
pub(crate) use launch;
