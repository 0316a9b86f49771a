//! The box stage on the GPU (`kernels/wavepacket.cu`): the device half of `cpu.rs` and
//! `boxfft.rs`, run between the data and the USFFTs' lattice values without leaving the
//! device. Forward: gather (window · lattice value, · grid shift) → one batched cuFFT per
//! group of boxes of one shape → phase into the coefficient array. Adjoint: the transpose,
//! each lattice value summed over its boxes by one thread (no atomics, a fixed order).
//!
//! The stage owns the layout, the USFFT plan (type 2; the adjoint runs as its adjoint) and
//! its device arrays. The plan's tables
//! live on the device from creation: windows, the box table (in work order: boxes grouped
//! by shape), the phases, the lattices' box lists (`tables`). Working buffers (work,
//! lattice values, modes) too, so that a plan that does not fit fails at creation. The box
//! FFTs are in `ffts`, the kernels in `launches`, the calls in `calls` (those on the
//! caller's device arrays, ordered on the caller's stream, in `caller`).

mod box_order;
mod caller;
mod calls;
mod ffts;
mod launches;
mod select;
mod tables;
mod tiled;
mod tiled_host;
mod windows;

use super::lattice_groups::LatticeGroup;
use super::layout::Layout;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::part;
use crate::backend::cuda::array::Part;
use crate::backend::cuda::buffers::{alloc, download};
use crate::backend::cuda::memory::{DeviceBuf, Tally};
use crate::backend::cuda::{bind, driver_error, kernels, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::sample::Sample;
use crate::usfft::UsfftPlan;
use box_order::BoxRuns;
use caller::CallReplays;
use cudarc::driver::{CudaModule, CudaStream};
use ffts::{BoxReplays, FftGroup};
pub use launches::ThresholdAt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tables::{DeviceTables, GroupRows, HostTables};
pub use tiled::{GridPart, TileGeometry, TileTables};
pub use tiled_host::{tiled_host, TileGpu, TiledCall};
pub use windows::table_bytes as window_table_bytes;

/// The NVRTC prelude for one precision.
pub fn prelude<T: Sample>() -> String {
    format!("#define REAL {}\n", T::C_TYPE)
}

/// Every prelude the library compiles `wavepacket.cu` with, labelled.
pub fn preludes() -> Vec<(String, String)> {
    vec![
        ("f32".to_string(), prelude::<f32>()),
        ("f64".to_string(), prelude::<f64>()),
    ]
}

pub use super::Pass;

/// A plan's box stage on the device. Every call runs on `stream` (the USFFT's).
pub struct BoxStage<T: Real> {
    /// Data → lattice values (type 2, sign −1); the adjoint runs as this plan's adjoint
    /// (type 1, sign +1) on the same sorted points, fine grid and FFT plan.
    usfft: UsfftPlan<T>,
    layout: Arc<Layout>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    tables: DeviceTables<T>,
    groups: Vec<FftGroup>,
    /// Box indices in work order.
    order: Vec<usize>,
    /// Elements of the work array (the boxes in work order).
    n_work: usize,
    /// The groups of directions whose lattice values the stage holds one at a time, in
    /// work order.
    directions: Vec<GroupRows>,
    /// Each box's place in the work array and in the coefficients (host-to-host calls).
    box_runs: BoxRuns,
    buffers: Mutex<Buffers<T>>,
    /// The plan's device bytes: the buffers calls make count towards it.
    held: Arc<Tally>,
    /// ‖ψ_b‖ by box.
    norms: Vec<f64>,
    windows_time: Duration,
    /// What each part of the stage holds, bytes, as made at creation.
    parts: Vec<(&'static str, usize)>,
}

/// The device bytes each step of the stage's creation added to the plan's tally.
struct Parts<'a> {
    held: &'a Tally,
    last: usize,
    parts: Vec<(&'static str, usize)>,
}

impl<'a> Parts<'a> {
    fn start(held: &'a Tally) -> Self {
        Parts {
            held,
            last: 0,
            parts: Vec::new(),
        }
    }

    fn lap(&mut self, part: &'static str) {
        let now = self.held.bytes();
        self.parts.push((part, now.saturating_sub(self.last)));
        self.last = now;
    }

    fn done(self) -> Vec<(&'static str, usize)> {
        self.parts
    }
}

/// One call's device arrays, one call at a time.
struct Buffers<T> {
    scratch: Scratch<T>,
    /// The data (n reals) of host-to-host calls, made on their first use (their
    /// coefficients are staged to and from the work array: `box_order`); a tiled volume's
    /// tile and its coefficients (2·m reals), made with the volume's tables.
    data: Option<DeviceBuf<T>>,
    tile_coeffs: Option<DeviceBuf<T>>,
    /// The state of a selection on the device (`select`: keep-largest, the noise
    /// estimate's median), made with the stage so that device calls allocate nothing.
    select: DeviceBuf<u64>,
    /// The noise estimate's samples (`select`), made on its first call.
    noise: Option<select::NoiseSamples>,
}

/// Interleaved complex as reals: `work` (the boxes in work order), `values` (lattice
/// values), `modes` (the data as complex); the last host-shifted call's shift tables (where
/// and the factors: kept, as its queued kernels read them); the first non-finite input value
/// found (u64::MAX: none); the captured box FFTs, and C and C* captured on a caller's
/// arrays.
struct Scratch<T> {
    work: DeviceBuf<T>,
    values: DeviceBuf<T>,
    modes: DeviceBuf<T>,
    shifts: Option<(DeviceBuf<i64>, DeviceBuf<T>)>,
    first_bad: DeviceBuf<u64>,
    box_replays: BoxReplays,
    calls: CallReplays,
}

/// One call's grid-shift tables on the device (`tables::shift_factors`): where each box's
/// factors start (work order; −1: none) and the factors (interleaved complex).
pub(super) struct Shifts<'a, T> {
    at: Part<'a, i64>,
    factors: Part<'a, T>,
}

/// A host-shifted call's uploaded shift tables (where, factors) as the kernels take them.
fn whole_shifts<T>((at, factors): &(DeviceBuf<i64>, DeviceBuf<T>)) -> Shifts<'_, T> {
    Shifts {
        at: part(at, 0, at.len()),
        factors: part(factors, 0, factors.len()),
    }
}

/// The USFFT's stream.
fn usfft_stream<T: Real>(plan: &UsfftPlan<T>) -> Result<Arc<CudaStream>> {
    plan.device_points()
        .map(|p| p.stream().clone())
        .ok_or_else(|| Error::Unsupported("the wave-packet USFFT has no device points".into()))
}

impl<T: Real> BoxStage<T> {
    /// The device tables of `layout`, its windows made on the device (`windows`), on the
    /// stream of `usfft` (data → lattice values, type 2, its points set in `groups` on a
    /// CUDA context: `UsfftPlan::set_points_on_lattice_groups`).
    pub fn new(
        layout: Arc<Layout>,
        usfft: UsfftPlan<T>,
        lattice_groups: Vec<LatticeGroup>,
        held: Arc<Tally>,
    ) -> Result<BoxStage<T>> {
        let ctx = usfft.context().clone();
        let gpu = ctx.cuda().ok_or_else(|| {
            Error::Unsupported("the wave-packet box stage needs a CUDA context".into())
        })?;
        bind(&gpu.ctx)?;
        let stream = usfft_stream(&usfft)?;
        let module = gpu
            .modules
            .get(&gpu.ctx, &gpu.arch, &kernels::WAVEPACKET, &prelude::<T>())?;
        let mut parts = Parts::start(&held);
        parts.lap("USFFT plan");
        let started = Instant::now();
        let (windows, norms) = windows::device_windows::<T>(gpu, &ctx.cpu, &layout, &stream)?;
        let windows_time = started.elapsed();
        parts.lap("windows");
        let host = HostTables::<T>::new(&layout, &lattice_groups);
        let groups = ffts::plan_groups::<T>(&host.runs, &stream)?;
        parts.lap("box FFT plans");
        let by_work: Vec<f64> = host.order.iter().map(|&b| norms[b]).collect();
        let tables = DeviceTables::upload(&host, windows, &by_work, &stream)?;
        let box_runs = BoxRuns::new(&host.boxes.table, tables::BOX_FIELDS);
        parts.lap("tables");
        let values = lattice_groups.iter().map(|g| g.points.len()).max();
        let values = values.unwrap_or(0);
        let scratch = Scratch::new(&layout, host.n_work, values, &stream)?;
        let what = "allocating the wave-packet selection";
        let select = alloc(&stream, select::SEL_WORDS, what)?;
        parts.lap("work arrays");
        let parts = parts.done();
        let stage = BoxStage {
            usfft,
            stream: stream.clone(),
            module,
            tables,
            groups,
            order: host.order,
            n_work: host.n_work,
            directions: host.groups,
            box_runs,
            buffers: Mutex::new(Buffers {
                scratch,
                data: None,
                tile_coeffs: None,
                select,
                noise: None,
            }),
            layout,
            held,
            norms,
            windows_time,
            parts,
        };
        // `by_work` and the tables are host memory the copies read from.
        stream
            .synchronize()
            .map_err(driver_error("uploading the wave-packet tables"))?;
        drop(by_work);
        Ok(stage)
    }

    /// ‖ψ_b‖ of every box (by box), from the windows on the device.
    pub fn packet_norms(&self) -> &[f64] {
        &self.norms
    }

    /// What each part of the stage held when it was made, bytes: the USFFT plan (its fine
    /// grid, FFT plan and sorted points), the windows, the box FFT plans, the tables, the
    /// work arrays.
    pub fn device_parts(&self) -> &[(&'static str, usize)] {
        &self.parts
    }

    /// How long the windows took to make (wall clock, the evaluator's tables included).
    pub fn windows_time(&self) -> Duration {
        self.windows_time
    }

    /// The windows of every box (by box), copied from the device.
    pub fn download_windows(&self) -> Result<Vec<Vec<T>>> {
        let mut all = vec![T::zero(); self.layout.n_coefficients];
        let what = "downloading the wave-packet windows";
        download(&self.stream, &self.tables.windows, &mut all, what)?;
        let mut rest = all.as_slice();
        let mut by_box = Vec::with_capacity(self.layout.boxes.len());
        for bx in &self.layout.boxes {
            let (w, tail) = rest.split_at(bx.n_coefficients());
            by_box.push(w.to_vec());
            rest = tail;
        }
        Ok(by_box)
    }

    /// The stream every call runs on (for events around device-resident calls).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The context's GPU and CPU pool (a CUDA context: checked at creation).
    fn backends(&self) -> (&CudaBackend, &CpuBackend) {
        let ctx = self.usfft.context();
        let gpu = ctx.cuda().expect("the box stage's context has a GPU");
        (gpu, &ctx.cpu)
    }

    /// The stage's buffers, and the right to queue work on its stream: every call that
    /// queues on the stream holds this, so that a capture of the box FFTs (`replay.rs`)
    /// never takes another thread's work into its graph (which fails the capture).
    fn lock(&self) -> std::sync::MutexGuard<'_, Buffers<T>> {
        self.buffers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the stream and reports one step of `stage` (only with a callback set).
    fn report(&self, reporter: &mut Reporter, stage: &'static str, share: f64) -> Result<()> {
        if reporter.is_active() {
            reporter.stage(stage, share, 1);
            self.stream
                .synchronize()
                .map_err(driver_error("running the wave-packet transform"))?;
            reporter.advance(1)?;
        }
        Ok(())
    }
}

impl<T: Real> Scratch<T> {
    /// The work array (`n_work` elements), the lattice values of the largest group of
    /// directions (`values` points), the modes, …
    fn new(
        layout: &Layout,
        n_work: usize,
        values: usize,
        s: &Arc<CudaStream>,
    ) -> Result<Scratch<T>> {
        Ok(Scratch {
            work: alloc(s, 2 * n_work, "allocating the wave-packet box work array")?,
            values: alloc(s, 2 * values, "allocating the wave-packet lattice values")?,
            modes: alloc(
                s,
                2 * layout.n_samples(),
                "allocating the wave-packet modes",
            )?,
            shifts: None,
            first_bad: alloc(s, 1, "allocating the wave-packet input check")?,
            box_replays: BoxReplays::default(),
            calls: CallReplays::default(),
        })
    }
}
