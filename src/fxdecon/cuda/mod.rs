//! F-X / F-XY prediction filtering on the GPU, f32 (kernels/fxdecon.cu).
//!
//! Per slab of traces (`slab.rs`, the same for host and device arrays): cut time windows
//! (`fx_extract`), one batched cuFFT R2C over every trace × window, `fx_init_out`, one
//! `fx_window_solve` launch for every (frequency, time window, spatial window), one batched
//! C2R, `fx_overlap_add`. Volumes are cut into slabs of spatial windows along y (the
//! crossline index, the slowest axis), each with the traces its windows gather (their
//! halo); a trace covered by windows of two slabs gets both contributions, the later slab's
//! added to the earlier's.
//!
//! Host arrays (`execute`, here): slabs are staged through page-locked buffers on two
//! streams, so that one slab's copies and kernels overlap the other's host work; shared
//! traces are added on the host. Device arrays (`resident.rs`): the slabs read and write
//! the caller's volume on one stream, shared traces added by `fx_overlap_add` in the same
//! order and roundings. The plan keeps the streams, buffers and cuFFT plans for its next
//! call (`Cache`).
//!
//! Progress is reported once a slab's device work is done, before it reaches the output,
//! so a stop there leaves that slab and the later ones untouched; a stop after the first
//! slab of a volume of several leaves the slabs already written filtered (as on the CPU).

mod host;
mod launches;
mod resident;
mod slab;
mod slots;
mod tables;

pub use launches::{fits, prelude};
pub use resident::{execute_on, DeviceIo};
pub use slots::{set_slab_bytes, Cache};

use super::geometry::{Setup, Slab};
use super::options::OutOfBand;
use super::volume::Volume;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{part, part_mut};
use crate::backend::cuda::{driver_error, kernels, CudaBackend};
use crate::error::Result;
use crate::progress::Reporter;
use cudarc::driver::CudaModule;
use host::Output;
use launches::{check_fits, Kernels, Lines};
use slab::filter_slab;
use slots::{Resources, Slot, Slots};
use std::sync::Arc;
use tables::SharedTables;

/// The caller's volumes: `input` filtered into `output`, both laid out as `layout`.
pub struct Volumes<'a> {
    pub input: &'a [f32],
    pub output: &'a mut [f32],
    pub layout: Volume,
}

pub fn execute(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    s: &Setup,
    cache: &Cache,
    v: Volumes,
    reporter: &mut Reporter,
) -> Result<()> {
    gpu.bind()?;
    check_fits(gpu, s)?;
    let output = Output::new(v.output, v.layout);
    if s.band.is_empty() {
        // Nothing to filter: the input, or zeros when the band alone is kept.
        output.fill(cpu, v.input, s.out_of_band == OutOfBand::Pass);
        return Ok(());
    }
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::FXDECON, &prelude())?;
    let tables = SharedTables::upload(gpu, s)?;
    // Declared after the tables: on an early return the slots' streams are synchronised
    // (Slots::drop) before the tables are freed.
    let Resources { slabs, slots } = cache.take_or_make(gpu, s)?;
    let mut slots = Slots { gpu, slots };
    Pipeline {
        gpu,
        cpu,
        s,
        module: &module,
        tables: &tables,
        slabs: &slabs,
        input: v.input,
        layout: v.layout,
        output,
        reporter,
    }
    .run(&mut slots.slots)?;
    cache.put(Resources {
        slabs,
        slots: std::mem::take(&mut slots.slots),
    });
    Ok(())
}

/// One call's slabs on their way through the slots: staged, filtered on the slot's
/// stream, written out once the stream is done.
struct Pipeline<'a> {
    gpu: &'a CudaBackend,
    cpu: &'a CpuBackend,
    s: &'a Setup,
    module: &'a Arc<CudaModule>,
    tables: &'a SharedTables,
    slabs: &'a [Slab],
    input: &'a [f32],
    layout: Volume,
    output: Output<'a>,
    reporter: &'a mut Reporter,
}

impl Pipeline<'_> {
    fn run(&mut self, slots: &mut [Slot]) -> Result<()> {
        self.reporter.stage("fx slabs", 1.0, self.slabs.len());
        let n_slots = slots.len();
        for c in 0..self.slabs.len() {
            let slot = &mut slots[c % n_slots];
            self.finish(slot)?;
            self.queue(slot, c)?;
        }
        // Finish in slab order, so that a trace shared by two slabs is assigned, then added.
        let mut order: Vec<usize> = (0..n_slots).collect();
        order.sort_by_key(|&i| slots[i].pending.unwrap_or(usize::MAX));
        for i in order {
            self.finish(&mut slots[i])?;
        }
        Ok(())
    }

    /// Waits for the slot's slab in flight, reports it and writes its lines.
    fn finish(&mut self, slot: &mut Slot) -> Result<()> {
        let Some(c) = slot.pending.take() else {
            return Ok(());
        };
        slot.stream
            .synchronize()
            .map_err(driver_error("running F-X prediction filtering"))?;
        self.reporter
            .advance(1)
            .map_err(|e| self.output.stopped(e))?;
        let lines = &self.slabs[c].write;
        let staged = slot
            .staging(self.gpu, self.s.n_samples)?
            .pinned_out
            .slice_mut::<f32>(lines.len() * self.s.nx * self.s.n_samples)?;
        self.output.write_lines(self.cpu, lines, staged);
        Ok(())
    }

    /// Slab `c` on the slot's stream: its lines staged and copied up, filtered
    /// (`filter_slab`) into the slot's dense output buffer, copied into the slot's staging
    /// buffer. Traces shared with an earlier slab are added on the host (`write_lines`).
    fn queue(&self, slot: &mut Slot, c: usize) -> Result<()> {
        let (s, slab) = (self.s, &self.slabs[c]);
        let (n, nx) = (s.n_samples, s.nx);
        let (read, write) = (slab.read.len() * nx * n, slab.write.len() * nx * n);
        let stream = slot.stream.clone();
        slot.staging(self.gpu, n)?;
        let Slot {
            staging,
            work,
            ffts,
            ..
        } = slot;
        let st = staging.as_mut().unwrap();
        let staged = st.pinned_in.slice_mut::<f32>(read)?;
        host::gather(self.cpu, self.input, self.layout, slab.read.start, staged);
        let what = "copying traces to the device";
        st.pinned_in
            .upload_to((0, read), &stream, &mut st.traces, what)?;
        let kernels = Kernels {
            module: self.module,
            stream: &stream,
            s,
            tables: self.tables,
        };
        let input = Lines::dense(part(&st.traces, 0, read), s);
        let mut output = Lines::dense(part_mut(&mut st.out, 0, write), s);
        filter_slab(&kernels, work, ffts, slab, 0, &input, &mut output)?;
        let what = "copying traces from the device";
        st.pinned_out.download_from(&stream, &st.out, write, what)?;
        slot.pending = Some(c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::slots::{plan_slabs, SLAB_LIMIT};
    use super::tables::AxisTables;
    use super::*;
    use crate::fxdecon::options::FxdeconOptions;
    use std::sync::atomic::Ordering;

    /// The host side of the slab decomposition: every window in one slab, every trace
    /// written, the passed-through shares summing to one, tables inside each slab.
    #[test]
    fn slabs_cover_every_window_and_trace_once() {
        let o = FxdeconOptions::default();
        for (nx, ny, dims, bytes) in [
            (1, 601, 2, 20 << 10),
            (40, 97, 3, 300 << 10),
            (30, 50, 3, 1),
        ] {
            let s = Setup::new(&o, 200, nx, ny, dims).unwrap();
            SLAB_LIMIT.store(bytes, Ordering::Relaxed);
            let slabs = plan_slabs(&s, usize::MAX);
            SLAB_LIMIT.store(0, Ordering::Relaxed);
            assert!(slabs.len() > 1, "{nx}×{ny}: one slab");
            let mut next = 0;
            let mut share = vec![0f64; ny];
            for sl in &slabs {
                assert_eq!(sl.windows.start, next);
                next = sl.windows.end;
                let ws = &s.y.windows[sl.windows.clone()];
                let t = AxisTables::new(ws, sl.read.start, s.y.local_len()).unwrap();
                assert!(t
                    .gather
                    .iter()
                    .all(|&g| g >= 0 && (g as usize) < sl.read.len()));
                for w in ws {
                    assert!(
                        sl.write.start <= w.out_first && w.out_first + w.out.len() <= sl.write.end
                    );
                    for (i, wt) in w.weights.iter().enumerate() {
                        share[w.out_first + i] += wt;
                    }
                }
                assert!(sl.write.start >= sl.read.start && sl.write.end <= sl.read.end);
            }
            assert_eq!(next, s.y.windows.len());
            assert!(share.iter().all(|v| (v - 1.0).abs() < 1e-12));
        }
    }
}
