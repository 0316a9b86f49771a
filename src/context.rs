//! A context: the backend every plan created from it runs on.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::CudaBackend;
use crate::backend::{BackendKind, BackendRequest};
use crate::error::{Error, Result};
use crate::progress::{ProgressFn, Reporter};
use std::sync::{Arc, RwLock};

pub struct Context {
    /// Always present: the CPU backend runs CPU contexts and the host-side
    /// staging work of CUDA contexts.
    pub(crate) cpu: CpuBackend,
    /// Reached through `cuda()` / `gpu_for()` only, which make its device memory current.
    cuda: Option<CudaBackend>,
    description: String,
    /// The caller's progress callback, shared by every plan of this context.
    progress: RwLock<Option<ProgressFn>>,
}

impl Context {
    /// Creates a context. `device_ordinal` picks the GPU (ignored on the CPU).
    /// A forced CUDA request fails with `CudaUnavailable` rather than falling back.
    pub fn new(request: BackendRequest, device_ordinal: i32) -> Result<Arc<Context>> {
        let (request, forced_by) = request.with_environment()?;
        let cpu = CpuBackend::new()?;
        let (cuda, why) = match request {
            BackendRequest::Cpu => {
                let who = forced_by.unwrap_or_else(|| "the caller".into());
                (None, format!("CPU chosen by {who}"))
            }
            BackendRequest::Cuda | BackendRequest::Auto => {
                if device_ordinal < 0 {
                    return Err(crate::invalid!(
                        "device_ordinal is {device_ordinal}; expected 0 or more"
                    ));
                }
                match CudaBackend::new(device_ordinal as usize) {
                    Ok(cuda) => (Some(cuda), String::new()),
                    Err(e) if request == BackendRequest::Auto => {
                        (None, format!("CPU chosen automatically: {e}"))
                    }
                    Err(e) => {
                        let who = forced_by.map(|f| format!(" ({f})")).unwrap_or_default();
                        return Err(match e {
                            Error::CudaUnavailable(m) => Error::CudaUnavailable(format!(
                                "the CUDA backend was requested{who} but is unavailable: {m}"
                            )),
                            other => other,
                        });
                    }
                }
            }
        };
        Ok(Context::made(cpu, cuda, &why))
    }

    /// A CUDA context on the application's CUDA context `raw` (a `CUcontext`; see
    /// `backend::cuda::adopt`). `SEISGPU_BACKEND` does not apply: the caller asks for this
    /// CUDA context by name.
    ///
    /// # Safety
    /// `raw` is a live `CUcontext`, destroyed by the application only after the context
    /// returned and every plan made on it.
    pub unsafe fn adopting(raw: u64) -> Result<Arc<Context>> {
        let cpu = CpuBackend::new()?;
        // SAFETY: the caller's promise.
        let cuda = unsafe { CudaBackend::adopting(raw)? };
        Ok(Context::made(cpu, Some(cuda), ""))
    }

    /// The context of `cpu` and `cuda`, described (`why`: why the CPU, without a GPU).
    fn made(cpu: CpuBackend, cuda: Option<CudaBackend>, why: &str) -> Arc<Context> {
        let cpu_line = format!("CPU: {} threads", cpu.threads());
        let description = match &cuda {
            Some(c) => format!("backend: CUDA\n{}\n{cpu_line} (host staging)", c.describe()),
            None => format!("backend: CPU\n{why}\n{cpu_line}"),
        };
        Arc::new(Context {
            cpu,
            cuda,
            description,
            progress: RwLock::new(None),
        })
    }

    pub fn backend(&self) -> BackendKind {
        if self.cuda.is_some() {
            BackendKind::Cuda
        } else {
            BackendKind::Cpu
        }
    }

    /// The GPU of a CUDA context, for a call (named `call`) that takes device arrays;
    /// `Unsupported` on a CPU context.
    pub fn gpu_for(&self, call: &str) -> Result<&CudaBackend> {
        self.cuda().ok_or_else(|| {
            Error::Unsupported(format!(
                "{call} takes device memory and needs a CUDA context; this context runs on the CPU"
            ))
        })
    }

    /// The CUDA backend of a CUDA context. Reaching it makes the context's device memory
    /// (its allocator and counts) the calling thread's, as binding makes its CUDA context
    /// current: every buffer the thread makes from here on comes from this context.
    pub fn cuda(&self) -> Option<&CudaBackend> {
        let gpu = self.cuda.as_ref()?;
        crate::backend::cuda::memory::make_current(&gpu.memory);
        Some(gpu)
    }

    /// Several lines: backend, device, libraries found, or why the CPU was chosen.
    pub fn describe(&self) -> &str {
        &self.description
    }

    /// Sets (or, with None, removes) the progress callback of the long calls made on this
    /// context and its plans from now on.
    pub fn set_progress(&self, callback: Option<ProgressFn>) {
        // A poisoned lock only means a panic elsewhere while it was held; the slot is valid.
        *self.progress.write().unwrap_or_else(|e| e.into_inner()) = callback;
    }

    /// The reporter of one call, with the callback set when the call starts.
    pub fn reporter(&self) -> Reporter {
        Reporter::new(
            self.progress
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}
