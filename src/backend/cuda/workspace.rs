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

use super::array::{piece_bytes, DeviceArray, DeviceArrayMut, PartMut, Pieces};
use super::buffers::{alloc, write};
use super::driver_error;
use super::memory::DeviceBuf;
use crate::error::Result;
use cudarc::driver::sys::CUstreamCaptureStatus;
use cudarc::driver::{CudaEvent, CudaStream, DeviceRepr};
use std::cell::RefCell;
use std::sync::Arc;

/// Bytes kept for a plan's calls, and the ordering of their uses across streams.
#[derive(Default)]
pub struct Workspace {
    /// The stream the buffer is allocated and freed on: the plan's own (None: the first
    /// call's), never a caller's stream, which the application may destroy first.
    home: Option<Arc<CudaStream>>,
    buf: Option<DeviceBuf<u64>>,
    /// Recorded after the last use, on `last`'s stream (`cu_stream` value, only compared).
    fence: Option<CudaEvent>,
    last: Option<u64>,
    /// A call has used the workspace since the last `finish`.
    in_use: bool,
}

impl Workspace {
    /// An empty workspace whose memory will be allocated and freed on `home` (a stream the
    /// plan owns), while calls use it on theirs.
    pub fn on(home: Arc<CudaStream>) -> Workspace {
        let mut w = Workspace::default();
        w.home = Some(home);
        w
    }

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
        let home = self.home.get_or_insert_with(|| stream.clone()).clone();
        // The old buffer goes first (freed on `home` after its last use), so that the new
        // one may reuse its bytes.
        self.order_after_last(&home)?;
        self.buf = None;
        self.buf = Some(alloc(&home, bytes.div_ceil(8), what)?);
        // Calls on other streams wait for the allocation.
        self.in_use = true;
        self.finish(&home)
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
        self.in_use = true;
        let buf = self.buf.as_mut().expect("reserved above");
        Ok(Pieces::of(&mut **buf))
    }

    /// What the workspace holds now (None: nothing), for a call queued on `stream` after any
    /// use on another stream; `finish` must follow once the call's work is queued.
    pub fn pieces(&mut self, stream: &Arc<CudaStream>) -> Result<Option<Pieces<'_>>> {
        if !capturing(stream)? {
            self.order_after_last(stream)?;
        }
        self.in_use = true;
        Ok(self.buf.as_mut().map(|b| Pieces::of(&mut **b)))
    }

    /// Marks the end of a call's use on `stream` (nothing when the call did not use the
    /// workspace, or while `stream` is captured: the graph orders its own work).
    pub fn finish(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        if !std::mem::take(&mut self.in_use) || capturing(stream)? {
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

    /// The use of the workspace last queued, on whatever stream (for `Drop`).
    fn last_use_elsewhere(&self) -> Option<(&Arc<CudaStream>, &CudaEvent)> {
        let (home, fence, last) = (self.home.as_ref()?, self.fence.as_ref()?, self.last?);
        (last != home.cu_stream() as u64).then_some((home, fence))
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

impl Drop for Workspace {
    fn drop(&mut self) {
        // The buffer is freed on `home`, after the last call's use on its own stream.
        if let (Some((home, fence)), Some(_)) = (self.last_use_elsewhere(), &self.buf) {
            let _ = super::bind(home.context());
            let _ = home.wait(fence);
        }
    }
}

/// Whether `stream` is being captured into a graph.
pub fn capturing(stream: &CudaStream) -> Result<bool> {
    let status = stream
        .capture_status()
        .map_err(driver_error("asking whether a stream is captured"))?;
    Ok(status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// The work arrays of one call whose sizes come out as it runs (many stages, each sizing
/// its own, arrays made and dropped in loops): a stack of arrays, each placed after those
/// still in use, in a plan's kept workspace where it has room and otherwise made for the
/// call (given back when dropped). The most bytes the stack held at once is what the plan
/// keeps for its next call (`Workspace::reserve` once the call is queued), so that a call
/// like an earlier one allocates nothing. Without a workspace (host calls) every array is
/// made for the call, as its own buffer.
pub struct Arena<'w> {
    stream: Arc<CudaStream>,
    kept: Option<Pieces<'w>>,
    stack: RefCell<Stack>,
}

/// Arrays in use, bottom to top: (first byte, end, dropped); and the highest end so far.
#[derive(Default)]
struct Stack {
    entries: Vec<(usize, usize, bool)>,
    peak: usize,
}

/// One work array: in the plan's workspace, or made for the call; either way its place on
/// the arena's stack, freed when it drops.
pub struct Work<'s, T> {
    memory: Memory<'s, T>,
    _slot: Slot<'s>,
}

enum Memory<'s, T> {
    Kept(PartMut<'s, T>),
    Own(DeviceBuf<T>),
}

struct Slot<'s> {
    stack: &'s RefCell<Stack>,
    index: usize,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut s = self.stack.borrow_mut();
        s.entries[self.index].2 = true;
        while s.entries.last().is_some_and(|e| e.2) {
            s.entries.pop();
        }
    }
}

impl<'w> Arena<'w> {
    /// Work arrays on `stream`, in `workspace` where it has room.
    pub fn new(stream: &Arc<CudaStream>, workspace: Option<&'w mut Workspace>) -> Result<Self> {
        let kept = match workspace {
            Some(w) => w.pieces(stream)?,
            None => None,
        };
        Ok(Arena {
            stream: stream.clone(),
            kept,
            stack: RefCell::default(),
        })
    }

    /// An uninitialised array of `len` (at least 1) elements. While the stream is being
    /// captured, one the workspace has no room for is refused (nothing may be allocated).
    pub fn take<T: DeviceRepr>(&self, len: usize, what: &'static str) -> Result<Work<'_, T>> {
        let (start, end) = {
            let s = self.stack.borrow();
            let start = s.entries.last().map_or(0, |e| e.1);
            (start, start + piece_bytes::<T>(len))
        };
        let memory = match &self.kept {
            // SAFETY: [start, end) lies above every array of the stack still in use (which
            // are the only ones cut from these pieces), so it overlaps none of them.
            Some(k) if end <= k.capacity() => Memory::Kept(unsafe { k.at(start, len) }),
            // Asked when it matters: a plan's stream joins a capture within the call.
            _ if capturing(&self.stream)? => {
                return Err(crate::invalid!(
                    "{what}: the plan's workspace has no room for this call's work arrays, and \
                     the stream is being captured into a graph, where nothing may be allocated; \
                     make the same call once before the capture (the plan keeps what it used)"
                ))
            }
            _ => Memory::Own(alloc(&self.stream, len, what)?),
        };
        let mut s = self.stack.borrow_mut();
        s.entries.push((start, end, false));
        s.peak = s.peak.max(end);
        let index = s.entries.len() - 1;
        Ok(Work {
            memory,
            _slot: Slot {
                stack: &self.stack,
                index,
            },
        })
    }

    /// A device copy of `host` (at least one element), on the arena's stream.
    pub fn upload<T: DeviceRepr>(&self, host: &[T], what: &'static str) -> Result<Work<'_, T>> {
        let mut a = self.take::<T>(host.len(), what)?;
        write(&self.stream, host, &mut a, what)?;
        Ok(a)
    }

    /// The most bytes the call's arrays took at once (each rounded as `Pieces` cuts it).
    pub fn asked(&self) -> usize {
        self.stack.borrow().peak
    }
}

// SAFETY: the address and length of memory the value owns or borrows for writing.
unsafe impl<T> DeviceArray<T> for Work<'_, T> {
    fn addr(&self) -> u64 {
        match &self.memory {
            Memory::Kept(p) => p.addr(),
            Memory::Own(b) => b.addr(),
        }
    }
    fn len(&self) -> usize {
        match &self.memory {
            Memory::Kept(p) => p.len(),
            Memory::Own(b) => DeviceArray::len(b),
        }
    }
}
// SAFETY: as above; the memory is the holder's to write.
unsafe impl<T> DeviceArrayMut<T> for Work<'_, T> {}
