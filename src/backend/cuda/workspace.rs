//! A plan's work memory for calls whose sizes follow the call (a batch's trace count): one
//! buffer from the context's allocator, kept between calls and cut into typed arrays per
//! call ([`Pieces`]), grown when a call needs more than it holds.
//!
//! Why grow-and-keep with an explicit reserve, rather than a size fixed at creation: a
//! plan is made before its batches are known, and a buffer for the largest batch a plan
//! might see would hold memory most applications never use. Growing to the largest call
//! seen costs one allocation per new largest batch and none after; an application that
//! captures its calls into a CUDA graph reserves first (`reserve`), since nothing may be
//! allocated while a stream is captured: a call that would grow the workspace then is
//! refused instead, and says so.
//!
//! Calls of one plan may come from several threads on several streams: each use is
//! followed by an event on its stream, and a use on another stream first waits for it, so
//! that two calls never share the memory at once (the plan's lock orders the host side).

use super::array::Pieces;
use super::buffers::alloc;
use super::driver_error;
use super::memory::DeviceBuf;
use crate::error::Result;
use cudarc::driver::sys::CUstreamCaptureStatus;
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::Arc;

/// Bytes kept for a plan's calls, and the ordering of their uses across streams.
#[derive(Default)]
pub struct Workspace {
    buf: Option<DeviceBuf<u64>>,
    /// Recorded after the last use, on `last`'s stream (`cu_stream` value, only compared).
    fence: Option<CudaEvent>,
    last: Option<u64>,
}

impl Workspace {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.held_bytes())
    }

    /// Makes the workspace hold at least `bytes` (the old buffer, if smaller, goes back in
    /// the order of its last use). Not while `stream` is being captured. A graph captured
    /// with a call of the plan holds the workspace's address: growing it afterwards
    /// (a larger batch, a larger reserve) leaves that graph pointing at freed memory.
    pub fn reserve(
        &mut self,
        stream: &Arc<CudaStream>,
        bytes: usize,
        what: &'static str,
    ) -> Result<()> {
        if self.bytes() >= bytes {
            return Ok(());
        }
        if capturing(stream)? {
            return Err(crate::invalid!(
                "{what}: the plan's workspace holds {} bytes and this call needs {bytes}, but \
                 the stream is being captured into a graph, where nothing may be allocated; \
                 reserve the workspace for the largest batch before the capture",
                self.bytes()
            ));
        }
        self.order_after_last(stream)?;
        // The old buffer goes first, so that the new one may reuse its bytes.
        self.buf = None;
        self.buf = Some(alloc(stream, bytes.div_ceil(8), what)?);
        Ok(())
    }

    /// The workspace, at least `bytes` of it, for a call queued on `stream` after any use on
    /// another stream; `finish` must follow once the call's work is queued.
    pub fn for_call(
        &mut self,
        stream: &Arc<CudaStream>,
        bytes: usize,
        what: &'static str,
    ) -> Result<Pieces<'_>> {
        self.reserve(stream, bytes, what)?;
        if !capturing(stream)? {
            // A captured stream may not wait for an event recorded outside the capture.
            self.order_after_last(stream)?;
        }
        let buf = self.buf.as_mut().expect("reserved above");
        Ok(Pieces::of(&mut **buf))
    }

    /// Marks the end of a call's use on `stream` (nothing while `stream` is captured: the
    /// graph orders its own work).
    pub fn finish(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        if capturing(stream)? {
            return Ok(());
        }
        let what = "ordering a plan's workspace";
        if self.fence.is_none() {
            self.fence = Some(
                stream
                    .context()
                    .new_event(None)
                    .map_err(driver_error(what))?,
            );
        }
        let fence = self.fence.as_ref().expect("made above");
        fence.record(stream).map_err(driver_error(what))?;
        self.last = Some(stream.cu_stream() as u64);
        Ok(())
    }

    /// `stream` waits for the last use when it was on another stream.
    fn order_after_last(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        let (Some(last), Some(fence)) = (self.last, &self.fence) else {
            return Ok(());
        };
        if last != stream.cu_stream() as u64 {
            let what = "ordering a plan's workspace after its last use";
            stream.wait(fence).map_err(driver_error(what))?;
            self.last = Some(stream.cu_stream() as u64);
        }
        Ok(())
    }
}

/// Whether `stream` is being captured into a graph.
pub fn capturing(stream: &CudaStream) -> Result<bool> {
    let status = stream
        .capture_status()
        .map_err(driver_error("asking whether a stream is captured"))?;
    Ok(status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}
