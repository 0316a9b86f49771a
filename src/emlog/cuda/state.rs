//! What an EM-logging plan keeps on the device for its searches (CUDA contexts), made with
//! the plan: its own stream, the direct mode's weighted matrix Ã followed by d, the
//! reductions every search adds to (the count, each block's best), and the search tables'
//! workspace. The tables follow a search's grid and pairs, which come with the search, not
//! the plan: they are cut from a workspace grown to the largest search seen and kept, so
//! that searches of a grid no larger than an earlier one allocate nothing for them. A
//! search waits for its results, so it cannot be captured into a graph: growing the
//! workspace at a search costs one allocation, not a refused capture.
//!
//! A device search's histograms are its result's (`SearchResult::histogram_device` copies
//! from them), made by each search and given back with the result.

use super::super::matrix::Problem;
use crate::backend::cuda::buffers::{alloc, upload};
use crate::backend::cuda::memory::{DeviceBuf, Tally};
use crate::backend::cuda::workspace::Workspace;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::Result;
use cudarc::driver::CudaStream;
use std::sync::{Arc, Mutex, MutexGuard};

/// The plan's device state; one search at a time uses it.
pub struct PlanState(Mutex<Held>);

/// The arrays a search reads and adds to.
pub struct Held {
    pub stream: Arc<CudaStream>,
    /// Ã (column-major, n × p) followed by d (n); `a_len` = n·p.
    pub a_d: DeviceBuf<f64>,
    pub a_len: usize,
    /// The count of equivalent models and each block's best decision value and model.
    pub total: DeviceBuf<u64>,
    pub block_q: DeviceBuf<f64>,
    pub block_index: DeviceBuf<u64>,
    /// The search tables (`search.rs`).
    pub tables: Workspace,
    /// The plan's device bytes, which the tables count towards as they grow.
    pub tally: Arc<Tally>,
}

/// Blocks of a search's launches on `gpu` (the reductions hold one value per block).
pub fn blocks(gpu: &CudaBackend) -> usize {
    (gpu.multiprocessors * 8).max(1)
}

impl PlanState {
    /// The state of a plan of `problem` on `gpu`; waits for the copies (the plan's host
    /// arrays are what they read).
    pub fn new(gpu: &CudaBackend, problem: &Problem, tally: &Arc<Tally>) -> Result<PlanState> {
        gpu.bind()?;
        let stream = gpu.stream()?;
        let what = "copying the EM-logging matrix to the device";
        let mut a_d = problem.a_w.clone();
        a_d.extend_from_slice(&problem.d);
        let a_d = upload(&stream, &a_d, what)?;
        let what = "allocating the EM-logging search's reductions";
        let held = Held {
            a_len: problem.a_w.len(),
            a_d,
            total: alloc(&stream, 1, what)?,
            block_q: alloc(&stream, blocks(gpu), what)?,
            block_index: alloc(&stream, blocks(gpu), what)?,
            tables: Workspace::default(),
            tally: tally.clone(),
            stream,
        };
        held.stream.synchronize().map_err(driver_error(what))?;
        Ok(PlanState(Mutex::new(held)))
    }

    /// The state, for one search.
    pub fn lock(&self) -> MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
