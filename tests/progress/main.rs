//! Progress and cancellation (CPU and GPU) and the F-X slabs: the tests that change the
//! process-wide slab sizes, memory budgets and report interval of long calls, apart from the
//! tests whose results those settings would change by their last bits.
//!
//! `cargo test --release --test progress` runs them all.

use std::sync::Mutex;

#[path = "../support/cuda_common/mod.rs"]
mod cuda_common;
#[path = "../support/fxdecon_data/mod.rs"]
mod fxdecon_data;
#[path = "../support/progress_common/mod.rs"]
mod progress_common;
#[path = "../support/xcorr_common/mod.rs"]
mod xcorr_common;

mod cuda_progress;
mod fxdecon_slabs;
mod progress_cancel;

/// Held by the CPU F-X tests: a test that changes the process-wide slab size changes how a
/// concurrent call is split (and so its last bits).
pub static FX_SLABS: Mutex<()> = Mutex::new(());
