//! What every benchmark shares: the common flags (`cli`), timing by the median of
//! repetitions after warm-up (`timing`), CUDA event timers and the pinned-transfer
//! reference (`cuda`), output comparisons (`compare`), deterministic inputs (`random`),
//! and the Markdown table plus the CSV/JSON rows (`report`).
//!
//! Included by each bench with `mod harness;` (bench/dwt/main.rs: `#[path]`).

// Each bench binary compiles all of the harness and uses a part of it.
#![allow(dead_code)]

pub mod cli;
pub mod compare;
pub mod cuda;
pub mod random;
pub mod report;
pub mod timing;

/// The thread count of a CPU context, from its own "CPU: N threads" line (rayon's
/// global pool's where that line is missing).
pub fn cpu_threads(ctx: &seisgpu::context::Context) -> usize {
    ctx.describe()
        .lines()
        .find_map(|l| l.strip_prefix("CPU: "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(rayon::current_num_threads)
}

/// The CUDA context of a bench's GPU rows, its description printed; None, with the reason
/// printed, where no CUDA context can be made.
pub fn gpu_context(ordinal: i32) -> Option<std::sync::Arc<seisgpu::context::Context>> {
    match seisgpu::context::Context::new(seisgpu::backend::BackendRequest::Cuda, ordinal) {
        Ok(g) => {
            println!("{}\n", g.describe());
            Some(g)
        }
        Err(e) => {
            println!("no GPU rows: {e}\n");
            None
        }
    }
}
