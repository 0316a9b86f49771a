//! The CUDA context of the GPU tests: None (the test reports "skipped") without a usable
//! device, unless SEISGPU_REQUIRE_CUDA=1 makes that a failure (the device machine's runs).

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
