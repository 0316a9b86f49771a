//! The CUDA backend of each capability against the CPU one. Without a CUDA device every
//! test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.
//!
//! Each module turns only its own capability's tuning knobs (the DWT's single-kernel limit,
//! the USFFT's tile size, F-X slabs, the xcorr memory budget), so the modules can share a
//! process; scripts/gpu_run.sh still runs each module in a process of its own
//! (`cuda cuda_dwt::`), for timings per capability.
//! `cargo test --release --test cuda` runs them all.

#[path = "../support/cuda_common/mod.rs"]
mod cuda_common;
#[path = "../support/emlog_support/mod.rs"]
mod emlog_support;
#[path = "../support/fxdecon_data/mod.rs"]
mod fxdecon_data;
#[path = "../support/usfft3_support/mod.rs"]
mod usfft3_support;
#[path = "../support/usfft_support/mod.rs"]
mod usfft_support;
#[path = "../support/wavepacket_support/mod.rs"]
mod wavepacket_support;
#[path = "../support/xcorr_common/mod.rs"]
mod xcorr_common;

mod cuda_blas_pool;
mod cuda_dwt;
mod cuda_emlog;
mod cuda_fxdecon;
mod cuda_usfft;
mod cuda_usfft3;
mod cuda_usfft_lattice;
mod cuda_wavepacket;
mod cuda_wavepacket_volume;
mod cuda_wavepacket_windows;
mod cuda_xcorr;
mod device_calls;
