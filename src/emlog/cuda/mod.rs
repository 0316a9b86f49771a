//! The exhaustive search on the GPU (kernels/emlog.cu): models enumerated by index in
//! launches of whole rows, reduced on the device (count, histograms, each block's best);
//! the host adds the blocks' bests. Both modes decide on the same f64 value as the CPU
//! (bit for bit: the same order, unfused roundings), so the two backends agree exactly.
//! The first equivalent models, when asked for, are listed by the CPU over the rows of the
//! first launches that found any (the GPU's count says which).
//! With a progress callback, the rows run in groups sized to about the report interval,
//! each group's launches waited for, reported (and a stop honoured) before the next.
//!
//! | file | job |
//! | --- | --- |
//! | `search.rs` | the device tables, one launch over rows, the reductions read back |
//! | `gather.rs` | a plan from device memory: the searched columns gathered and copied back |
//! | `resident.rs` | results written to the caller's device arrays |

pub mod gather;
pub mod resident;
pub mod search;
pub mod state;

use super::cpu;
use super::criterion::Mode;
use super::result::Tally;
use super::setup::SearchSetup;
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use search::DeviceSearch;
use state::{Held, PlanState};

/// Models per launch: fast, direct (per 1,000 measurements).
const FAST_MODELS: u64 = 1 << 30;
const DIRECT_MODEL_MEASUREMENTS: u64 = 1 << 36;

/// The prelude of kernels/emlog.cu for `p` parameters.
pub fn prelude(p: usize) -> String {
    format!("#define EM_P {p}\n")
}

/// Every prelude the library compiles (p = 1…16).
pub fn preludes() -> Vec<(String, String)> {
    (1..=super::matrix::MAX_PARAMETERS)
        .map(|p| (format!("p = {p}"), prelude(p)))
        .collect()
}

fn i32s(v: impl IntoIterator<Item = usize>) -> Result<Vec<i32>> {
    v.into_iter()
        .map(|x| {
            i32::try_from(x).map_err(|_| {
                Error::Unsupported(format!(
                    "a table index ({x}) exceeds what the kernels index"
                ))
            })
        })
        .collect()
}

/// The search on the plan's stream, with its device state; returns when it is done.
pub fn search(
    gpu: &CudaBackend,
    s: &SearchSetup,
    reporter: &mut Reporter,
    state: &PlanState,
) -> Result<Tally> {
    gpu.bind()?;
    Ok(run(gpu, s, reporter, &mut state.lock())?.0)
}

/// The search ordered after the caller's stream (`gpu.caller_stream()`), the caller's
/// stream then ordered after it; returns when it is done, with the histograms left on the
/// device (`Bins`'s flat layout). The same launches as [`search`], so the same tally.
pub fn search_device(
    gpu: &CudaBackend,
    s: &SearchSetup,
    reporter: &mut Reporter,
    state: &PlanState,
) -> Result<(Tally, DeviceBuf<u64>)> {
    gpu.bind()?;
    let mut held = state.lock();
    let stream = held.stream.clone();
    let caller = gpu.caller_stream();
    ordered_on(&caller, &stream, || run(gpu, s, reporter, &mut held))
}

/// Every launch of the search on the plan's stream, then the reductions read back.
fn run(
    gpu: &CudaBackend,
    s: &SearchSetup,
    reporter: &mut Reporter,
    held: &mut Held,
) -> Result<(Tally, DeviceBuf<u64>)> {
    let mut dev = DeviceSearch::new(gpu, s, held)?;
    let rows = s.grid.rows();
    let rows_per_launch = match s.mode {
        Mode::Fast => FAST_MODELS / dev.n0,
        Mode::Direct => DIRECT_MODEL_MEASUREMENTS / (s.problem.n as u64).max(1) / dev.n0,
    }
    .max(1);
    let k_max = s.options.max_models;
    let mut listed = Tally::new(s.bins.len);
    let mut seen = 0u64;
    reporter.stage("emlog search", 1.0, rows as usize);
    let active = reporter.is_active();
    reporter.for_chunks(rows as usize, 1, |group| {
        let (mut row, rows) = (group.start as u64, group.end as u64);
        while row < rows {
            let end = (row + rows_per_launch).min(rows);
            dev.launch(row, end)?;
            if listed.models.len() < k_max {
                let total = dev.count()?;
                if total > seen {
                    // This launch found some: list them on the CPU, stopping once there are enough.
                    list_models(s, &mut listed, row..end);
                    seen = total;
                }
            }
            row = end;
        }
        if active {
            // The group's launches are done before it is reported.
            dev.stream
                .synchronize()
                .map_err(driver_error("running the EM-logging search"))?;
        }
        Ok(())
    })?;
    dev.tally(listed)
}

/// The first equivalent models of `rows`, listed on the CPU after those already `listed`,
/// until there are `max_models`.
fn list_models(s: &SearchSetup, listed: &mut Tally, rows: std::ops::Range<u64>) {
    let step = cpu::chunk_rows(s);
    let mut r0 = rows.start;
    while r0 < rows.end && listed.models.len() < s.options.max_models {
        let r1 = (r0 + step).min(rows.end);
        let before = std::mem::replace(listed, Tally::new(0));
        *listed = cpu::scan_rows(s, before, r0, r1);
        r0 = r1;
    }
}
