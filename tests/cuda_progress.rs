//! Progress and cancellation on the GPU (see tests/progress_common): DWT transform and
//! denoise batches, which run chunk by chunk through the CUDA backend when a callback is
//! set. Without a CUDA device the test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1
//! makes that a failure.

mod progress_common;

use progress_common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use std::ptr;

fn gpu() -> Option<Context> {
    let mut c = ptr::null_mut();
    match sg_context_create(SG_BACKEND_CUDA, 0, &mut c) {
        SG_OK => Some(Context(c)),
        s => {
            let required = std::env::var("SEISGPU_REQUIRE_CUDA").is_ok_and(|v| v.trim() == "1");
            assert!(
                !required,
                "SEISGPU_REQUIRE_CUDA=1 but no CUDA device ({s}): {}",
                last_error()
            );
            println!("skipped: no CUDA device: {}", last_error());
            None
        }
    }
}

#[test]
fn gpu_dwt_batches_report_and_cancel() {
    let Some(ctx) = gpu() else { return };
    dwt_batches(&ctx);
}
