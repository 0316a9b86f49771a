//! seisgpu: GPU (CUDA, loaded at run time) and multi-core CPU kernels for seismic and
//! well-log processing, behind a stable C ABI (`include/seisgpu.h`).
//!
//! Layout: `ffi` is the C ABI and nothing else; one module per capability (`dwt`, `usfft`,
//! `fxdecon`, `xcorr`);
//! backends in `backend::cpu` and `backend::cuda`; kernels in `kernels/*.cu`.

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
pub mod sample;
pub mod usfft;
pub mod xcorr;

pub use error::{Error, Result};
