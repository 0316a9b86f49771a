//! The addresses a device call's arrays get: on a CUDA context, device memory of the
//! context's device holding exactly what the call touches (allocated here, as an
//! application's `cudaMalloc` would be); else, and on any context, one the library must refuse
//! before it queues anything: NULL, a small integer, a misaligned address, a host pointer,
//! garbage, `u64::MAX`, an allocation one element short, memory of another device.

use super::super::{Faults, Fuzz, Snapshot};
use cudarc::driver::{CudaContext, CudaStream, DevicePtr, DeviceRepr};
use seisgpu::ffi::context::{sg_context_backend, SG_BACKEND_CUDA};
use std::any::Any;
use std::sync::Arc;

/// The element types of the device arrays, with the values their arrays are filled with.
pub trait Elem: DeviceRepr + Copy + 'static {
    fn sample(f: &mut Fuzz) -> Self;
}
impl Elem for f32 {
    fn sample(f: &mut Fuzz) -> f32 {
        f.rng.symmetric() as f32
    }
}
impl Elem for f64 {
    fn sample(f: &mut Fuzz) -> f64 {
        f.rng.symmetric()
    }
}
/// Masks: 1 marks a valid sample.
impl Elem for u8 {
    fn sample(_: &mut Fuzz) -> u8 {
        1
    }
}
/// Histogram bins and model indices (outputs).
impl Elem for u64 {
    fn sample(_: &mut Fuzz) -> u64 {
        0
    }
}

/// The chance that one array of a call gets an address the library must refuse.
const P_BAD: f64 = 0.1;
/// No allocation of the fuzzer is larger: an array that needs more gets a refused address.
const MAX_ELEMENTS: usize = 1 << 22;
/// Host buffers passed as device addresses hold at most this many elements.
const MAX_HOST: usize = 1 << 12;

/// What an argument's address is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Valid,
    Null,
    Small,
    Misaligned,
    Host,
    Garbage,
    Max,
    Short,
    OtherDevice,
}

const BAD: &[Kind] = &[
    Kind::Null,
    Kind::Small,
    Kind::Misaligned,
    Kind::Host,
    Kind::Garbage,
    Kind::Max,
    Kind::Short,
    Kind::OtherDevice,
];

/// A device (the application's view of it) and the stream its allocations are made and
/// freed on: the legacy default stream, which the library's device calls are ordered on
/// while no stream is set, so that a buffer is freed only after the work that uses it.
struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Gpu {
    fn new(ordinal: usize) -> Gpu {
        let ctx = CudaContext::new(ordinal).expect("the device's primary context");
        let stream = ctx.default_stream();
        Gpu { ctx, stream }
    }
}

/// One address handed to a call: where it points and whether the library must refuse it.
#[derive(Clone, Copy, Debug)]
pub struct Addr {
    pub at: u64,
    pub bad: bool,
}

/// The device memory and host buffers of the call being made, and how to make more.
pub struct Memory {
    /// On a CUDA context: device 0, the context's device.
    gpu: Option<Gpu>,
    /// On a CUDA context of a machine with two devices or more: device 1.
    other: Option<Gpu>,
    /// This call's allocations and host buffers, released after it.
    held: Vec<Box<dyn Any>>,
    /// Host buffers passed as device addresses: a failing call must leave them alone.
    snaps: Vec<Snapshot>,
}

impl Memory {
    /// Memory for the calls on `f`'s context (real device memory only on a CUDA one).
    pub fn new(f: &Fuzz) -> Memory {
        let mut backend = -1;
        sg_context_backend(f.ctx, &mut backend);
        let cuda = backend == SG_BACKEND_CUDA;
        let gpu = cuda.then(|| Gpu::new(0));
        let devices = if cuda {
            CudaContext::device_count().unwrap_or(1)
        } else {
            0
        };
        Memory {
            gpu,
            other: (devices > 1).then(|| Gpu::new(1)),
            held: Vec::new(),
            snaps: Vec::new(),
        }
    }

    pub fn cuda(&self) -> bool {
        self.gpu.is_some()
    }

    /// Faults every device call starts with: on a CPU context, the context itself.
    pub fn faults(&self) -> Faults {
        let mut k = Faults::default();
        if !self.cuda() {
            k.plant("CUDA context");
        }
        k
    }

    /// An array of `need` elements of `T` (random values) that the call names `name`
    /// (spelled as the library's messages spell it, e.g. "`input`").
    pub fn array<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        k: &mut Faults,
        name: &'static str,
        need: usize,
    ) -> Addr {
        self.array_in::<T>(f, k, name, need, need, None)
    }

    /// `array` for an argument where 0 means none (a NULL draw is then no fault).
    pub fn optional<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        k: &mut Faults,
        name: &'static str,
        need: usize,
    ) -> u64 {
        let a = self.array::<T>(f, &mut Faults::default(), name, need);
        if a.bad && a.at != 0 && need > 0 {
            k.plant(name);
        }
        a.at
    }

    /// `array` holding the given values.
    pub fn array_of<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        k: &mut Faults,
        name: &'static str,
        values: &[T],
    ) -> Addr {
        let n = values.len();
        self.array_in(f, k, name, n, n, Some(values))
    }

    /// An array the call checks for `need` elements, in an allocation of `room` ≥ `need`
    /// (the room a call's `len` promises); with `values`, they fill it. A refused address
    /// is a planted fault named `name`, unless `need` is 0 (an empty array is not looked at).
    pub fn array_in<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        k: &mut Faults,
        name: &'static str,
        need: usize,
        room: usize,
        values: Option<&[T]>,
    ) -> Addr {
        let mut kind = if f.rng.chance(P_BAD) {
            f.rng.pick(BAD)
        } else {
            Kind::Valid
        };
        // What cannot be made here becomes garbage (refused all the same). Bytes are
        // never misaligned: one byte into an allocation is a valid address of a shorter
        // array, which a pool's mapping may well hold.
        let real = matches!(kind, Kind::Valid | Kind::Short | Kind::Misaligned);
        if (real && self.gpu.is_some() && room > MAX_ELEMENTS)
            || (kind == Kind::Short && (self.gpu.is_none() || need == 0))
            || (kind == Kind::OtherDevice && self.other.is_none())
            || (kind == Kind::Misaligned && std::mem::align_of::<T>() == 1)
        {
            kind = Kind::Garbage;
        }
        let at = self.address::<T>(f, kind, [need, room], values);
        // An address the library cannot take for a device array of this context; on a CPU
        // context even a "valid" one is refused (for the context, planted by `faults`).
        let bad = kind != Kind::Valid;
        if bad && need > 0 {
            k.plant(name);
        }
        Addr { at, bad }
    }

    fn address<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        kind: Kind,
        [need, room]: [usize; 2],
        values: Option<&[T]>,
    ) -> u64 {
        let size = std::mem::size_of::<T>() as u64;
        match kind {
            Kind::Null => 0,
            Kind::Small => f.rng.range(1, 4096) as u64,
            Kind::Garbage => match f.rng.range(0, 2) {
                0 => 0xdead_beef_0000,
                // Non-canonical or kernel-space: never an application's mapping.
                1 => 0xffff_8000_0000_1000,
                _ => (f.rng.next() | 1 << 62) & !7,
            },
            Kind::Max => u64::MAX,
            Kind::Host => {
                let host: Vec<T> = (0..room.min(MAX_HOST)).map(|_| T::sample(f)).collect();
                self.snaps.push(Snapshot::of_slice(
                    "a host buffer passed as device memory",
                    &host,
                ));
                let at = host.as_ptr() as u64;
                self.held.push(Box::new(host));
                at
            }
            Kind::Valid | Kind::Misaligned if self.gpu.is_none() => {
                // A CPU context: an address where device memory could be (never touched).
                let fake = 0x7f00_0000_0000 + 256 * f.rng.range(0, 1 << 20) as u64;
                fake + (kind == Kind::Misaligned) as u64
            }
            Kind::Valid => self.allocate(f, false, room, values),
            // One byte past an allocation's start: misaligned for every element type.
            Kind::Misaligned => self.allocate(f, false, room, values) + 1,
            Kind::OtherDevice => self.allocate(f, true, room, values),
            Kind::Short => {
                // The allocation the driver records may be larger (a pool's mapping): cut
                // the address from its end, so that one element of what the call checks is
                // missing.
                let start = self.allocate(f, false, room, values);
                allocation_end(start) - (need as u64 - 1) * size
            }
        }
    }

    /// A new allocation of `len` elements (at least one) on the context's device (or the
    /// other one), filled with `values` or random ones; its address.
    fn allocate<T: Elem>(
        &mut self,
        f: &mut Fuzz,
        other: bool,
        len: usize,
        values: Option<&[T]>,
    ) -> u64 {
        let host: Vec<T> = match values {
            Some(v) if !v.is_empty() => v.to_vec(),
            _ => (0..len.max(1)).map(|_| T::sample(f)).collect(),
        };
        let gpu = if other { &self.other } else { &self.gpu };
        let gpu = gpu.as_ref().expect("allocations only on a CUDA context");
        let slice = gpu.stream.clone_htod(&host).expect("a device allocation");
        let at = slice.device_ptr(&gpu.stream).0;
        self.held.push(Box::new(slice));
        at
    }

    /// The host buffers given as device addresses since the last `release`.
    pub fn snapshots(&mut self) -> Vec<Snapshot> {
        std::mem::take(&mut self.snaps)
    }

    /// Frees what the call used (device memory on the legacy stream, after the call's work).
    pub fn release(&mut self) {
        self.snaps.clear();
        self.held.clear();
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        self.release();
    }
}

/// The end of the allocation the driver records around `addr` (for pool memory, the
/// pool's mapping that holds it).
fn allocation_end(addr: u64) -> u64 {
    use cudarc::driver::sys::{cuPointerGetAttribute, CUpointer_attribute::*};
    let (mut start, mut size) = (0u64, 0usize);
    // SAFETY: each attribute written into a value of its documented type; `addr` is only
    // looked up.
    unsafe {
        let a = (&mut start as *mut u64).cast();
        cuPointerGetAttribute(a, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, addr)
            .result()
            .expect("the allocation's start");
        let b = (&mut size as *mut usize).cast();
        cuPointerGetAttribute(b, CU_POINTER_ATTRIBUTE_RANGE_SIZE, addr)
            .result()
            .expect("the allocation's size");
    }
    start + size as u64
}
