//! The C ABI as a C caller uses it, on the CPU backend (one module per former test file):
//! edge cases and limits, the reference comparisons (GSL, the denoise and F-X references,
//! xcorr cases), concurrency, the 16-thread stress test, the ABI fuzzer (whose batches
//! run in child processes of this executable: `fuzz_abi::fuzz_child`) and the soak (off
//! unless SEISGPU_SOAK_SECONDS is set; on CUDA by default: scripts/gpu_run.sh).
//!
//! One executable, so that the library is linked once for all of them. Nothing here changes
//! process-wide settings that other modules' results depend on (environment variables, slab
//! sizes: see tests/environment and tests/progress); the report interval set by
//! `wavepacket_abi` only makes progress reports more frequent.
//!
//! `cargo test --release --test abi` runs them all; `… --test abi limits::` one module.

#[path = "../support/common/mod.rs"]
mod common;
#[path = "../support/cuda_common/mod.rs"]
mod cuda_common;
mod fuzz;
#[path = "../support/fxdecon_data/mod.rs"]
mod fxdecon_data;
#[path = "../support/progress_common/mod.rs"]
mod progress_common;
#[path = "../support/wavepacket_support/mod.rs"]
mod wavepacket_support;
#[path = "../support/xcorr_common/mod.rs"]
mod xcorr_common;

mod concurrency;
mod denoise_median;
mod denoise_reference;
mod device_calls;
mod device_emlog;
mod device_fxdecon;
mod device_memory;
mod device_wavepacket;
mod device_wavepacket_coeffs;
mod device_wavepacket_iterations;
mod device_xcorr;
mod fuzz_abi;
mod fxdecon_edge_cases;
mod fxdecon_su_reference;
mod gsl_reference;
mod limits;
mod soak;
mod stress;
mod usfft3_abi;
mod usfft_abi;
mod wavepacket_abi;
mod wavepacket_volume_abi;
mod wavepacket_volume_tiles_abi;
mod xcorr_cases;
