//! Compute backends and the choice between them.

pub mod cpu;
pub mod cuda;

/// The backend a context runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Cpu,
    Cuda,
}

/// What the caller asked for when creating a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendRequest {
    /// The GPU when the driver, NVRTC, cuFFT and a device are present, else the CPU.
    Auto,
    Cpu,
    Cuda,
}

impl BackendRequest {
    /// Applies `SEISGPU_BACKEND=cpu|cuda`, which overrides `Auto` only: a caller's
    /// explicit choice is never second-guessed.
    pub fn with_environment(self) -> crate::Result<(BackendRequest, Option<String>)> {
        if self != BackendRequest::Auto {
            return Ok((self, None));
        }
        match std::env::var("SEISGPU_BACKEND") {
            Err(_) => Ok((self, None)),
            Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
                "" | "auto" => Ok((self, None)),
                "cpu" => Ok((BackendRequest::Cpu, Some(format!("SEISGPU_BACKEND={v}")))),
                "cuda" | "gpu" => Ok((BackendRequest::Cuda, Some(format!("SEISGPU_BACKEND={v}")))),
                _ => Err(crate::invalid!(
                    "SEISGPU_BACKEND={v:?} is not one of \"cpu\", \"cuda\", \"auto\""
                )),
            },
        }
    }
}
