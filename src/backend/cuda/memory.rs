//! Device memory the library holds: where it comes from (the driver, or an application's
//! allocator hooks), how much a context holds, and how much each plan holds.
//!
//! Every device buffer the library makes is a [`DeviceBuf`]. It is allocated from the
//! *current* memory of the calling thread: the context's, made current by reaching the
//! context's CUDA backend (`Context::cuda`), as binding makes its CUDA context current.
//! With hooks set, the bytes come from the application's `alloc` and go back to its
//! `free`; otherwise from `cuMemAllocAsync` on the buffer's stream. A buffer keeps the
//! hooks that made it, so hooks replaced later still free it correctly.
//!
//! A plan's creation (and any call that allocates for it) runs inside [`Tally::scope`], so
//! each buffer made there counts towards that plan's workspace for as long as it lives.

use super::bind;
use crate::error::{Error, Result};
use cudarc::driver::{result, sys, CudaSlice, CudaStream, DeviceRepr};
use std::cell::RefCell;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// An application's device allocation: writes the address of `bytes` bytes of device
/// memory of the context's device into `*ptr` and returns 0, or returns non-zero.
pub type AllocFn =
    unsafe extern "C" fn(user: *mut c_void, bytes: usize, stream: u64, ptr: *mut u64) -> i32;
/// Gives back what `AllocFn` gave, once the work queued on `stream` before it no longer
/// needs it.
pub type FreeFn = unsafe extern "C" fn(user: *mut c_void, ptr: u64, bytes: usize, stream: u64);

/// The alignment the kernels may assume of a buffer (what `cuMemAlloc` gives).
pub const ALIGNMENT: u64 = 256;

/// An application's allocator.
pub struct Hooks {
    pub alloc: AllocFn,
    pub free: FreeFn,
    pub user: *mut c_void,
}

// SAFETY: the C contract of `sg_context_set_device_allocator`: the hooks may be called from
// any thread, with `user` as given.
unsafe impl Send for Hooks {}
unsafe impl Sync for Hooks {}

/// The device memory of one context: its allocator and what it holds.
#[derive(Default)]
pub struct DeviceMemory {
    hooks: Mutex<Option<Arc<Hooks>>>,
    in_use: AtomicUsize,
    peak: AtomicUsize,
}

impl DeviceMemory {
    /// Allocations made after this call use `hooks` (None: the driver).
    pub fn set_hooks(&self, hooks: Option<Hooks>) {
        *self.hooks.lock().unwrap_or_else(|e| e.into_inner()) = hooks.map(Arc::new);
    }

    /// (bytes the library holds now, most it held at once) on this context.
    pub fn usage(&self) -> (usize, usize) {
        (
            self.in_use.load(Ordering::Relaxed),
            self.peak.load(Ordering::Relaxed),
        )
    }

    fn hooks(&self) -> Option<Arc<Hooks>> {
        self.hooks.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn add(&self, bytes: usize) {
        let now = self.in_use.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
}

/// Live device bytes of one plan (and of the plans it makes, which count towards it too),
/// and the most it may hold (0: no limit).
#[derive(Default, Debug)]
pub struct Tally {
    bytes: AtomicUsize,
    limit: AtomicUsize,
}

impl Tally {
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Refuses, from now on, any allocation that would take the tally past `limit` bytes
    /// (0: none): a plan's `max_device_bytes`.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// The refusal of `bytes` more where they would take this tally past its limit.
    fn check(&self, bytes: usize, what: &str) -> Result<()> {
        let (limit, held) = (self.limit.load(Ordering::Relaxed), self.bytes());
        if limit == 0 || held.saturating_add(bytes) <= limit {
            return Ok(());
        }
        Err(Error::DeviceOutOfMemory(format!(
            "the plan's max_device_bytes of {limit} refuses {bytes} more bytes while {what}, \
             the plan holding {held} bytes"
        )))
    }

    /// Runs `body` with the buffers it makes counted towards this tally (and those of any
    /// enclosing scope); an out-of-memory error is prefixed with `plan`.
    pub fn scope<R>(self: &Arc<Self>, plan: &str, body: impl FnOnce() -> Result<R>) -> Result<R> {
        TALLIES.with(|t| t.borrow_mut().push(self.clone()));
        let _pop = PopOnDrop;
        body().map_err(|e| match e {
            Error::DeviceOutOfMemory(m) => Error::DeviceOutOfMemory(format!("{plan}: {m}")),
            e => e,
        })
    }
}

/// Runs `body` with the buffers it makes counted towards no plan: what a call hands to its
/// result (spectra, histograms), which outlives the call and is not the plan's.
pub fn untallied<R>(body: impl FnOnce() -> R) -> R {
    let outer = TALLIES.with(|t| std::mem::take(&mut *t.borrow_mut()));
    struct Restore(Vec<Arc<Tally>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = std::mem::take(&mut self.0);
            TALLIES.with(|t| *t.borrow_mut() = outer);
        }
    }
    let _restore = Restore(outer);
    body()
}

struct PopOnDrop;
impl Drop for PopOnDrop {
    fn drop(&mut self) {
        TALLIES.with(|t| t.borrow_mut().pop());
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<DeviceMemory>>> = const { RefCell::new(None) };
    static TALLIES: RefCell<Vec<Arc<Tally>>> = const { RefCell::new(Vec::new()) };
}

/// Makes `memory` the one this thread's allocations use (until another is made current).
pub fn make_current(memory: &Arc<DeviceMemory>) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if !c.as_ref().is_some_and(|m| Arc::ptr_eq(m, memory)) {
            *c = Some(memory.clone());
        }
    });
}

fn current() -> Arc<DeviceMemory> {
    CURRENT.with(|c| {
        c.borrow_mut()
            .get_or_insert_with(|| Arc::new(DeviceMemory::default()))
            .clone()
    })
}

/// Where a buffer's bytes came from, so that they go back there.
enum Source {
    Driver,
    Hooks(Arc<Hooks>),
}

/// A device buffer the library owns: a cudarc slice whose memory came from the context's
/// allocator, counted while it lives.
pub struct DeviceBuf<T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    source: Source,
    memory: Arc<DeviceMemory>,
    tallies: Vec<Arc<Tally>>,
    bytes: usize,
}

/// The device's free bytes, for messages (0 when the driver cannot say).
pub fn free_bytes() -> usize {
    result::mem_get_info().map_or(0, |(free, _)| free)
}

/// The refusal of `bytes`, with what the plan being made or used held when it asked (the
/// innermost tally) and what the device had free.
fn out_of_memory(bytes: usize, refused_by: &str, what: &str) -> Error {
    let held = TALLIES.with(|t| t.borrow().last().map(|t| t.bytes()));
    let held = held.map_or(String::new(), |h| {
        format!(", the plan holding {h} bytes then")
    });
    Error::DeviceOutOfMemory(format!(
        "out of device memory while {what}: {bytes} bytes asked for{held}, refused by \
         {refused_by} ({} bytes free on the device)",
        free_bytes()
    ))
}

/// An uninitialised buffer of `len` elements on `stream` from the current allocator.
pub fn alloc_buf<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &'static str,
) -> Result<DeviceBuf<T>> {
    let memory = current();
    let bytes = len * std::mem::size_of::<T>();
    TALLIES.with(|t| t.borrow().iter().try_for_each(|t| t.check(bytes, what)))?;
    bind(stream.context())?;
    let (slice, source) = match memory.hooks() {
        Some(hooks) => {
            let mut ptr = 0u64;
            // SAFETY: the hook's C contract; `ptr` is a valid place for its answer.
            let status =
                unsafe { (hooks.alloc)(hooks.user, bytes, stream.cu_stream() as u64, &mut ptr) };
            if status != 0 || ptr == 0 {
                return Err(out_of_memory(bytes, "the application's allocator", what));
            }
            if ptr % ALIGNMENT != 0 {
                // SAFETY: given back as it came, never used.
                unsafe { (hooks.free)(hooks.user, ptr, bytes, stream.cu_stream() as u64) };
                return Err(crate::invalid!(
                    "the application's allocator gave {ptr:#x} while {what}; device memory \
                     must be aligned to {ALIGNMENT} bytes"
                ));
            }
            // SAFETY: the hook gave `bytes` bytes of device memory of this context, which
            // the slice owns until `leak` hands them back to `free` (Drop below).
            let slice = unsafe { stream.upgrade_device_ptr::<T>(ptr, len) };
            (slice, Source::Hooks(hooks))
        }
        None => {
            // SAFETY: every user writes before it reads.
            let slice = unsafe { stream.alloc::<T>(len) }.map_err(|e| match e.0 {
                sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => out_of_memory(bytes, "the driver", what),
                _ => super::driver_error(what)(e),
            })?;
            (slice, Source::Driver)
        }
    };
    memory.add(bytes);
    let tallies = TALLIES.with(|t| t.borrow().clone());
    for t in &tallies {
        t.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    Ok(DeviceBuf {
        slice: ManuallyDrop::new(slice),
        source,
        memory,
        tallies,
        bytes,
    })
}

impl<T> DeviceBuf<T> {
    /// Bytes of device memory the buffer holds.
    pub fn held_bytes(&self) -> usize {
        self.bytes
    }
}

impl<T> Drop for DeviceBuf<T> {
    fn drop(&mut self) {
        // SAFETY: the slice is taken once, here, and not used after.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        match &self.source {
            Source::Driver => drop(slice),
            Source::Hooks(hooks) => {
                // Held until the hook has freed on it: `leak` drops the slice's handle, which
                // may be the stream's last (a plan's last buffer), and a stream-ordered free
                // on a destroyed stream crashes in the driver.
                let stream = slice.stream().clone();
                // The buffer may be dropped on another thread than the one that made it; the
                // hook may call the driver.
                let _ = bind(stream.context());
                let ptr = slice.leak();
                // SAFETY: `ptr` came from this allocator's `alloc` with these bytes and
                // stream; work queued on the stream before this point is ordered before
                // any reuse the allocator makes on that stream, which is alive here.
                unsafe { (hooks.free)(hooks.user, ptr, self.bytes, stream.cu_stream() as u64) };
            }
        }
        self.memory.in_use.fetch_sub(self.bytes, Ordering::Relaxed);
        for t in &self.tallies {
            t.bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

impl<T> Deref for DeviceBuf<T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> DerefMut for DeviceBuf<T> {
    fn deref_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T> std::fmt::Debug for DeviceBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuf({} bytes)", self.bytes)
    }
}

// SAFETY: the address and length of the memory the buffer owns.
unsafe impl<T> super::array::DeviceArray<T> for DeviceBuf<T> {
    fn addr(&self) -> u64 {
        super::array::DeviceArray::addr(&*self.slice)
    }
    fn len(&self) -> usize {
        self.slice.len()
    }
}
// SAFETY: as above; the buffer is its owner's to write.
unsafe impl<T> super::array::DeviceArrayMut<T> for DeviceBuf<T> {}
