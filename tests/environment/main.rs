//! Tests that set process-wide environment variables, apart from every other test:
//! `abi_errors` (SEISGPU_BACKEND and SEISGPU_NUM_THREADS, read by every context created
//! meanwhile; its own tests hold its `ENV` lock) and `kernel_disk_cache` (SEISGPU_CACHE_DIR,
//! XDG_CACHE_HOME and HOME, read only by the disk cache of CUDA contexts, which
//! `abi_errors` does not check). Neither reads what the other sets.
//!
//! `cargo test --release --test environment` runs both.

#[path = "../support/common/mod.rs"]
mod common;

mod abi_errors;
mod kernel_disk_cache;
