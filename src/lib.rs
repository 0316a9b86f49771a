//! seisgpu: GPU (CUDA, loaded at run time) and multi-core CPU kernels for seismic and
//! well-log processing, behind a stable C ABI (`include/seisgpu.h`).
//!
//! Layout (see ARCHITECTURE.md): `ffi` is the C ABI and nothing else; one folder per
//! capability (`dwt`, `usfft`, `fxdecon`, `xcorr`) with its plan, types, CPU half and CUDA
//! host half; `backend` is the shared machinery (CPU pool, CUDA context, NVRTC, staging).

pub mod alloc;
pub mod backend;
pub mod context;
pub mod dwt;
pub mod emlog;
pub mod error;
#[allow(non_camel_case_types)]
pub mod ffi;
pub mod fft_len;
pub mod fxdecon;
pub mod layout;
pub mod progress;
pub mod sample;
pub mod status;
pub mod usfft;
pub mod wavepacket;
pub mod xcorr;

pub use error::{Error, Result};
