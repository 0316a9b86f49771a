//! Run-time compilation of the embedded kernels with NVRTC.

use crate::error::{Error, Result};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

/// Compiles `prelude` + `source` (one file of `kernels/`) to PTX for `arch`
/// (e.g. "sm_90"). The prelude bakes in compile-time constants.
pub fn compile(file: &str, source: &str, prelude: &str, arch: &str) -> Result<Ptx> {
    // SAFETY: probing only dlopens; compile_ptx would panic if NVRTC were absent.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "NVRTC (libnvrtc) was not found by the dynamic loader; add its folder to LD_LIBRARY_PATH".into(),
        ));
    }
    let text = format!("{prelude}\n#line 1 \"{file}\"\n{source}");
    let options = CompileOptions {
        name: Some(file.to_string()),
        options: vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()],
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(text, options).map_err(|e| match e {
        CompileError::CompileError { log, .. } => Error::KernelCompile(format!(
            "NVRTC could not compile {file} for {arch}:\n{}",
            log.to_string_lossy()
        )),
        other => Error::KernelCompile(format!("NVRTC failed on {file} for {arch}: {other}")),
    })
}
