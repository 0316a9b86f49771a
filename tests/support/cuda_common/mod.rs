//! The CUDA context of the GPU tests: None (the test reports "skipped") without a usable
//! device, unless SEISGPU_REQUIRE_CUDA=1 makes that a failure (the device machine's runs).
//! `sanitizing()`: the run is under compute-sanitizer; `sanitize_small()`: its reduced mode.

#![allow(dead_code)] // each test uses part of it

use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use std::sync::Arc;

pub fn gpu_context() -> Option<Arc<Context>> {
    match Context::new(BackendRequest::Cuda, 0) {
        Ok(c) => Some(c),
        Err(e) => {
            let required = std::env::var("SEISGPU_REQUIRE_CUDA").is_ok_and(|v| v.trim() == "1");
            assert!(!required, "SEISGPU_REQUIRE_CUDA=1 but no CUDA device: {e}");
            println!("skipped: no CUDA device ({e})");
            None
        }
    }
}

/// True under scripts/gpu_sanitize.sh (SEISGPU_SANITIZING=1): the sanitizers slow kernels
/// 100–1000×, so the long tests run each kernel path once on small data instead.
pub fn sanitizing() -> bool {
    std::env::var("SEISGPU_SANITIZING").is_ok_and(|v| v.trim() == "1")
}

/// True in the sanitizer's reduced mode (SEISGPU_SANITIZE_SMALL=1, set by
/// scripts/gpu_sanitize.sh for racecheck, where a shared-memory access costs most): the
/// tests too long under it take smaller sizes and fewer repetitions and skip their pure
/// timing loops, while still launching every kernel the full test launches (one case per
/// method, precision and dimension at least). Their assertions stay as they are.
pub fn sanitize_small() -> bool {
    std::env::var("SEISGPU_SANITIZE_SMALL").is_ok_and(|v| v.trim() == "1")
}
