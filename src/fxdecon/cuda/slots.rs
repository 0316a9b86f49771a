//! The slabs of a call and the two streams ("slots") they alternate on, each with work
//! buffers for the largest slab and FFT plans, and for calls on host arrays page-locked and
//! device copies of a slab (made on first use); kept by the plan for its next call
//! (`Cache`).

use super::launches::SlabBuffers;
use super::tables::{SharedTables, SlabTables};
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::fft::{self, FftPlan, Shape};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::PinnedBuffer;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::Result;
use crate::fxdecon::geometry::{Setup, Slab};
use cudarc::driver::CudaStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Input bytes per slab: small enough that several slabs pipeline, large enough to keep
/// the device busy.
const SLAB_BYTES: usize = 64 << 20;

/// 0: slabs of `SLAB_BYTES`.
pub(super) static SLAB_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the input bytes of a slab (None: the default) for plans made after the call, so that
/// tests can run many slabs on small volumes. Process-wide.
pub fn set_slab_bytes(bytes: Option<usize>) {
    SLAB_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Device bytes per trace of a slab: input, windows, two spectra, output.
fn bytes_per_trace(s: &Setup) -> usize {
    let ntw = s.time.count();
    4 * s.n_samples * 2 + 4 * ntw * s.nfft + 16 * ntw * s.n_freq()
}

/// Slabs within the slab byte limit whose device buffers fit `budget` bytes.
pub(super) fn plan_slabs(s: &Setup, budget: usize) -> Vec<Slab> {
    let per_y = s.nx * bytes_per_trace(s);
    let in_per_y = s.nx * s.n_samples * 4;
    let slab_bytes = match SLAB_LIMIT.load(Ordering::Relaxed) {
        0 => SLAB_BYTES,
        b => b,
    };
    s.slabs((slab_bytes / in_per_y).min(budget / per_y))
}

/// Forward and inverse plans by batch size (the last slab may be smaller).
#[derive(Default)]
pub(super) struct Ffts(Vec<(usize, FftPlan, FftPlan)>);

impl Ffts {
    /// The R2C and C2R plans of `batch` time windows, made on first use.
    pub(super) fn for_batch(
        &mut self,
        stream: &Arc<CudaStream>,
        s: &Setup,
        batch: usize,
    ) -> Result<(&FftPlan, &FftPlan)> {
        let (nfft, nf) = (s.nfft, s.n_freq());
        let plan = |dist, shape, what| {
            FftPlan::many(&[nfft], dist, fft::kind::<f32>(shape), batch, stream, what)
        };
        if !self.0.iter().any(|f| f.0 == batch) {
            let r2c = plan((nfft, nf), Shape::R2C, "the forward FFTs")?;
            let c2r = plan((nf, nfft), Shape::C2R, "the inverse FFTs")?;
            self.0.push((batch, r2c, c2r));
        }
        let (_, r2c, c2r) = self.0.iter().find(|f| f.0 == batch).unwrap();
        Ok((r2c, c2r))
    }
}

/// One stream's buffers and FFT plans.
pub(super) struct Slot {
    pub(super) stream: Arc<CudaStream>,
    pub(super) work: SlabBuffers,
    pub(super) ffts: Ffts,
    /// The largest slab's traces read and written.
    read: usize,
    write: usize,
    /// Calls on host arrays only; device calls read and write the caller's arrays.
    pub(super) staging: Option<Staging>,
    /// Index of the slab in flight.
    pub(super) pending: Option<usize>,
}

/// A slab on its way from and to host memory: its read lines staged and copied up
/// (`pinned_in`, `traces`), its written lines copied down (`out`, `pinned_out`), dense
/// ([line][ix][sample]).
pub(super) struct Staging {
    pub(super) pinned_in: PinnedBuffer,
    pub(super) pinned_out: PinnedBuffer,
    pub(super) traces: DeviceBuf<f32>,
    pub(super) out: DeviceBuf<f32>,
}

impl Slot {
    /// The slot's staging buffers, made on first use.
    pub(super) fn staging(&mut self, gpu: &CudaBackend, n: usize) -> Result<&mut Staging> {
        if self.staging.is_none() {
            let what = "allocating device memory for a slab of traces";
            let (read, write) = (self.read * n, self.write * n);
            self.staging = Some(Staging {
                pinned_in: gpu.staging.take(&gpu.ctx, read * 4)?,
                pinned_out: gpu.staging.take(&gpu.ctx, write * 4)?,
                traces: alloc(&self.stream, read, what)?,
                out: alloc(&self.stream, write, what)?,
            });
        }
        Ok(self.staging.as_mut().unwrap())
    }
}

/// A call's slots; on drop (an early return) each stream is waited for before its staging
/// buffers go back to the pool.
pub(super) struct Slots<'g> {
    pub(super) gpu: &'g CudaBackend,
    pub(super) slots: Vec<Slot>,
}

impl Drop for Slots<'_> {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            let staged = slot.staging.take().map(|s| [s.pinned_in, s.pinned_out]);
            let _ = self.gpu.staging.put_when_idle(
                &slot.stream,
                staged.into_iter().flatten(),
                "running F-X prediction filtering",
            );
        }
    }
}

/// Two streams (one for a single slab) with buffers for the largest slab.
fn new_slots(gpu: &CudaBackend, s: &Setup, slabs: &[Slab]) -> Result<Vec<Slot>> {
    let nx = s.nx;
    let read = slabs.iter().map(|sl| sl.read.len()).max().unwrap() * nx;
    let write = slabs.iter().map(|sl| sl.write.len()).max().unwrap() * nx;
    let mut slots = Vec::new();
    for _ in 0..slabs.len().min(2) {
        let stream = gpu.stream()?;
        slots.push(Slot {
            work: SlabBuffers::new(&stream, s, read)?,
            ffts: Ffts::default(),
            read,
            write,
            staging: None,
            pending: None,
            stream,
        });
    }
    Ok(slots)
}

/// The streams, device buffers, FFT plans and staging buffers of a finished call, and its
/// slabs (the same for calls on host and on device arrays, so that both sum the same
/// parts), kept by the plan for its next call (allocating device memory and planning FFTs
/// cost more than a small volume's filtering).
#[derive(Default)]
pub struct Cache(Mutex<Vec<Resources>>);

pub(super) struct Resources {
    pub(super) slabs: Vec<Slab>,
    /// The tables every slab reads, and each slab's own (`slab_tables[c]` for `slabs[c]`):
    /// uploaded once, so that a call copies nothing from the host but samples (and a
    /// device call nothing at all, which a CUDA graph capture needs).
    pub(super) tables: SharedTables,
    pub(super) slab_tables: Vec<SlabTables>,
    pub(super) slots: Vec<Slot>,
}

/// Calls that run at once on one plan keep at most this many sets.
const CACHE_KEEP: usize = 2;

impl Cache {
    /// A finished call's slabs and slots, or new ones for a quarter of the free memory.
    pub(super) fn take_or_make(&self, gpu: &CudaBackend, s: &Setup) -> Result<Resources> {
        let cached = self.0.lock().unwrap().pop();
        if let Some(r) = cached {
            return Ok(r);
        }
        let (free, _) = gpu
            .ctx
            .mem_get_info()
            .map_err(driver_error("reading free device memory"))?;
        let slabs = plan_slabs(s, (free / 4).max(1));
        let slots = new_slots(gpu, s, &slabs)?;
        // On the first slot's stream, which frees them in its order: device calls run on
        // that slot alone, and calls on host arrays wait for every slot before they return.
        let stream = &slots[0].stream;
        let tables = SharedTables::upload_on(stream, s)?;
        let slab_tables = slabs
            .iter()
            .map(|slab| SlabTables::upload(stream, s, slab))
            .collect::<Result<Vec<_>>>()?;
        stream
            .synchronize()
            .map_err(driver_error("copying F-X tables to the device"))?;
        Ok(Resources {
            slabs,
            tables,
            slab_tables,
            slots,
        })
    }

    /// Makes a set of resources and the FFT plans of every slab's batch, so that the calls
    /// that follow find them made (at the plan's creation).
    pub fn prepare(&self, gpu: &CudaBackend, s: &Setup) -> Result<()> {
        gpu.bind()?;
        let mut r = self.take_or_make(gpu, s)?;
        for slot in &mut r.slots {
            for slab in &r.slabs {
                let batch = slab.read.len() * s.nx * s.time.count();
                slot.ffts.for_batch(&slot.stream, s, batch)?;
            }
        }
        self.put(r);
        Ok(())
    }

    pub(super) fn put(&self, r: Resources) {
        let mut v = self.0.lock().unwrap();
        if v.len() < CACHE_KEEP {
            v.push(r);
        }
    }
}
