//! The C ABI's device calls (`sg_*_device_*`) on a CUDA context, each against its host-array
//! call on the same GPU: equal bit for bit, bit-identical over five runs, queued on the
//! context's stream, and refusing what the driver can tell is not the context's device
//! memory (a host pointer, a range too short). Arrays are allocated with cudarc on the
//! device's primary context, as an application's `cudaMalloc` would be.

#![allow(dead_code)] // each capability's file uses part of it

mod chain;
mod checks;
mod dwt;
mod emlog;
mod fxdecon;
mod graph;
mod memory;
mod memory_volume;
mod other_device;
mod own_context;
mod streams;
mod usfft;
mod wavepacket;
mod wavepacket_iterations;
mod wavepacket_more;
mod wavepacket_setup;
mod wavepacket_volume;
mod workspaces;
mod xcorr;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};
use seisgpu::ffi::context::*;
use seisgpu::ffi::last_error::sg_last_error_message;
use seisgpu::ffi::status::*;
use std::ffi::CStr;
use std::sync::Arc;

pub fn message() -> String {
    // SAFETY: documented as a valid NUL-terminated string.
    unsafe { CStr::from_ptr(sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// A CUDA context made through the C ABI (None, reported skipped, without a device; a
/// failure under SEISGPU_REQUIRE_CUDA=1), and the application's view of the same device.
pub struct Gpu {
    pub ctx: *mut sg_context,
    pub cuda: Arc<CudaContext>,
    /// The stream the application queues its copies on; device calls are ordered on it.
    pub stream: Arc<CudaStream>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        sg_context_destroy(self.ctx);
    }
}

pub fn gpu() -> Option<Gpu> {
    crate::cuda_common::gpu_context()?;
    let mut ctx = std::ptr::null_mut();
    assert_eq!(
        sg_context_create(SG_BACKEND_CUDA, 0, &mut ctx),
        SG_OK,
        "{}",
        message()
    );
    let cuda = CudaContext::new(0).expect("the device's primary context");
    // SAFETY: the tests order their arrays' uses themselves (one application stream, explicit
    // synchronisation). With cudarc's event tracking on, a wrapper's first stream
    // synchronises the whole context, which fails while another test's call is capturing
    // a graph (the library captures a call repeating the previous call's arrays).
    unsafe { cuda.disable_event_tracking() };
    let stream = cuda.new_stream().expect("an application stream");
    let raw = stream.cu_stream() as u64;
    assert_eq!(sg_context_set_stream(ctx, raw), SG_OK, "{}", message());
    Some(Gpu { ctx, cuda, stream })
}

/// An application's device array.
pub struct Dev<T> {
    pub slice: CudaSlice<T>,
}

impl Gpu {
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Dev<T> {
        Dev {
            slice: self.stream.clone_htod(host).expect("upload"),
        }
    }

    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Dev<T> {
        Dev {
            slice: self.stream.alloc_zeros(len.max(1)).expect("alloc"),
        }
    }

    /// The array's contents once the stream has run what was queued (device calls included).
    pub fn download<T: DeviceRepr + Default + Clone>(&self, d: &Dev<T>) -> Vec<T> {
        let v = self.stream.clone_dtoh(&d.slice).expect("download");
        self.stream.synchronize().expect("the stream");
        v
    }

    /// What `queue` puts on the application's stream, captured into a CUDA graph
    /// (thread-local mode: the other tests of the process go on making calls that global
    /// mode forbids). Arrays' addresses must be taken before (reading a cudarc slice's
    /// address waits on its last write's event, which a capturing stream may not).
    pub fn capture(&self, queue: impl FnOnce()) -> cudarc::driver::CudaGraph {
        use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .expect("begin capture");
        queue();
        self.stream
            .end_capture(CUgraphInstantiate_flags(0))
            .expect("end capture")
            .expect("a graph")
    }

    /// Waits through the library (`sg_context_synchronize`): the device calls' stream.
    pub fn synchronize(&self) {
        assert_eq!(sg_context_synchronize(self.ctx), SG_OK, "{}", message());
    }
}

impl<T> Dev<T> {
    /// The array's `CUdeviceptr`.
    pub fn addr(&self) -> u64 {
        let (p, _record) = self.slice.device_ptr(self.slice.stream());
        p
    }

    /// The address of element `i` (for a range that runs past the end).
    pub fn addr_at(&self, i: usize) -> u64 {
        self.addr() + (i * std::mem::size_of::<T>()) as u64
    }
}

/// The bits of a float array, for equality that tells −0 from 0 and NaN payloads apart.
pub fn bits<T: Copy + Into<f64>>(v: &[T]) -> Vec<u64> {
    v.iter().map(|&x| x.into().to_bits()).collect()
}

/// Asserts `got` equals `want` within `rel` of want's largest magnitude, element by
/// element (for results that add with atomics, whose order follows the threads' timing);
/// where `want` is all zero (an empty band zeroes the traces), `got` must be all zero too.
pub fn assert_close<T: Copy + Into<f64>>(what: &str, got: &[T], want: &[T], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().map(|&v| v.into().abs()).fold(0.0, f64::max);
    if scale == 0.0 {
        let nonzero = got.iter().position(|&v| v.into() != 0.0);
        assert!(
            nonzero.is_none(),
            "{what}: element {nonzero:?} is not zero where every expected value is"
        );
        return;
    }
    let worst = got
        .iter()
        .zip(want)
        .map(|(&a, &b)| (a.into() - b.into()).abs())
        .enumerate()
        .fold((0, 0.0), |w, (i, d)| if d > w.1 { (i, d) } else { w });
    assert!(
        worst.1 <= rel * scale,
        "{what}: element {}: off by {:e} of the largest value {scale:e} (tolerance {rel:e})",
        worst.0,
        worst.1 / scale
    );
}

/// Runs `call` five times and checks each output equals the first, bit for bit (twice in
/// the sanitizer's reduced mode: the same kernels, one repetition to compare).
pub fn five_times_equal(what: &str, mut call: impl FnMut() -> Vec<u64>) -> Vec<u64> {
    let first = call();
    let runs = if crate::cuda_common::sanitize_small() {
        2
    } else {
        5
    };
    for run in 1..runs {
        assert!(call() == first, "{what}: run {run} differs from run 0");
    }
    first
}

/// The end of the allocation the driver records around `addr` (for pool memory, the pool's
/// mapping that holds it).
pub fn allocation_end(addr: u64) -> u64 {
    use cudarc::driver::sys::{cuPointerGetAttribute, CUpointer_attribute::*};
    let (mut start, mut size) = (0u64, 0usize);
    // SAFETY: each attribute written into a value of its documented type.
    unsafe {
        let a = (&mut start as *mut u64).cast();
        cuPointerGetAttribute(a, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, addr)
            .result()
            .unwrap();
        let b = (&mut size as *mut usize).cast();
        cuPointerGetAttribute(b, CU_POINTER_ATTRIBUTE_RANGE_SIZE, addr)
            .result()
            .unwrap();
    }
    start + size as u64
}

/// A device call given a host pointer where device memory is due, and one given an address
/// whose allocation ends one element before the `needed` elements of `T` the call touches:
/// each refused with SG_ERR_INVALID_ARGUMENT and a message that names the argument and what
/// the driver reported. `of` is any device array (the short address is cut from its
/// allocation's end).
pub fn check_refusals<T>(
    name: &str,
    host: u64,
    of: &Dev<T>,
    needed: usize,
    mut call: impl FnMut(u64) -> sg_status,
) {
    let s = call(host);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{name} with a host pointer");
    let m = message();
    assert!(m.contains(name) && m.contains("host"), "{m}");
    let size = std::mem::size_of::<T>() as u64;
    let short = allocation_end(of.addr()) - (needed as u64 - 1) * size;
    let s = call(short);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "{name} one element short");
    let m = message();
    assert!(m.contains(name) && m.contains("bytes from there"), "{m}");
}

/// The host time inside `call` (its enqueue cost), median of `reps` calls queued back to
/// back, and the device time per call (events around them all); printed, for the record.
/// Skipped in the sanitizer's reduced mode: a pure timing loop (on large data) whose
/// kernels the test's checks have launched already, and whose times mean nothing there.
pub fn enqueue_cost(g: &Gpu, what: &str, reps: usize, mut call: impl FnMut() -> sg_status) {
    use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
    if crate::cuda_common::sanitize_small() {
        println!("enqueue {what}: not timed in the sanitizer's reduced mode");
        return;
    }
    assert_eq!(call(), SG_OK, "{what}: {}", message());
    g.synchronize();
    let start = g.stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
    let mut host = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = std::time::Instant::now();
        assert_eq!(call(), SG_OK, "{what}: {}", message());
        host.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let end = g.stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
    end.synchronize().unwrap();
    let device_ms = start.elapsed_ms(&end).unwrap() as f64 / reps as f64;
    host.sort_by(f64::total_cmp);
    println!(
        "enqueue {what}: median {:.1} µs on the host (max {:.1}), {device_ms:.3} ms on the device per call",
        host[reps / 2],
        host[reps - 1]
    );
}
