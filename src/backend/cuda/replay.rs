//! A fixed sequence of work on buffers a plan owns, captured once into a CUDA graph and
//! replayed: one `cuGraphLaunch` instead of hundreds of launches (the wave packets' box
//! FFTs are one cuFFT execute per box shape). The host time of a call falls; the device
//! runs the same kernels on the same arrays, so the results are the same bit for bit.
//!
//! Work queued while the stream is itself being captured (the application building a graph
//! of its own) is queued directly instead, so that it becomes part of that graph.

use super::driver_error;
use crate::error::Result;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode, CUstreamCaptureStatus};
use cudarc::driver::{CudaGraph, CudaStream};
use std::sync::Arc;

/// A captured sequence and the key of the arrays it was captured on (their addresses: a
/// graph holds them, so other arrays need a new capture).
pub struct Replay<K = u64> {
    graph: CudaGraph,
    key: K,
}

// SAFETY: a CUDA graph may be launched and destroyed from any thread as long as its uses
// are serialised (the driver's rule for graph objects); the holders keep a replay behind
// the same lock as the buffers it writes, so one thread at a time touches it.
unsafe impl<K: Send> Send for Replay<K> {}

/// Queues `work` on `stream`: replays the capture in `slot` when it was made for `key`,
/// otherwise captures `work` (nothing runs during a capture), keeps it and replays it.
/// `work` must queue only on `stream`, allocate nothing and not wait; it must queue the
/// same work for the same `key` at every call.
///
/// A capture that fails is not the call's failure: a capture can be refused where the
/// same calls made directly are not (under many threads, cuFFT's execute has been seen to
/// fail inside a capture, one call in tens of thousands). The work is then queued directly,
/// and the next call tries to capture again; an error of the direct work is the call's.
pub fn run_or_replay<K: PartialEq>(
    slot: &mut Option<Replay<K>>,
    stream: &Arc<CudaStream>,
    key: K,
    mut work: impl FnMut() -> Result<()>,
) -> Result<()> {
    let what = "replaying captured work";
    let status = stream.capture_status().map_err(driver_error(what))?;
    if status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        return work();
    }
    if !matches!(slot, Some(r) if r.key == key) {
        *slot = None;
        match capture(stream, &mut work) {
            Ok(Some(graph)) => *slot = Some(Replay { graph, key }),
            Ok(None) => return Ok(()), // Nothing was queued: nothing to replay.
            Err(_) => return work(),
        }
    }
    let replay = slot.as_ref().expect("a capture was just kept");
    replay.graph.launch().map_err(driver_error(what))
}

/// A call on arrays an application passes, whose addresses may change from call to call:
/// its capture, and the key of the call before.
pub struct RepeatedReplay<K> {
    slot: Option<Replay<K>>,
    last: Option<K>,
}

impl<K> Default for RepeatedReplay<K> {
    fn default() -> Self {
        RepeatedReplay {
            slot: None,
            last: None,
        }
    }
}

impl<K: PartialEq + Copy> RepeatedReplay<K> {
    /// `run_or_replay` for such a call: one whose `key` is neither the call before's nor
    /// the capture's runs `work` directly, so that an application passing new arrays at
    /// every call never pays for captures it would not replay; the second call in a row on
    /// the same arrays captures, and the calls after it replay.
    pub fn run(
        &mut self,
        stream: &Arc<CudaStream>,
        key: K,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        let repeated = self.last == Some(key) || matches!(&self.slot, Some(r) if r.key == key);
        self.last = Some(key);
        if repeated {
            run_or_replay(&mut self.slot, stream, key, work)
        } else {
            work()
        }
    }
}

/// `work` captured from `stream` (thread-local mode: other threads' CUDA calls go on);
/// `None` when it queued nothing.
fn capture(
    stream: &Arc<CudaStream>,
    work: &mut impl FnMut() -> Result<()>,
) -> Result<Option<CudaGraph>> {
    let what = "capturing work into a CUDA graph";
    let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    stream.begin_capture(mode).map_err(driver_error(what))?;
    let queued = work();
    // Ended in every case, so that the stream leaves capture mode.
    let graph = stream.end_capture(CUgraphInstantiate_flags(0));
    queued?;
    graph.map_err(driver_error(what))
}
