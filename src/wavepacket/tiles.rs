//! Volumes larger than one layout (the seed's §3.5): the volume is cut into tiles of the
//! layout's shape (the last tile along an axis zero-padded past the volume's end), each tile is
//! decomposed on its own, and every box's coefficient grid is shifted by the modulation rule
//! onto one grid per box common to all tiles.
//!
//! Box b's grid step along its axis e_a is h_a = P_a/L_a. A tile whose origin lies at o
//! (samples) from the first tile's sits s_a = o·e_a/h_a steps along e_a: its grid is moved by
//! the fraction δ_a = s_a − k_a (k_a = round(s_a)), so that its coefficient y (centred:
//! y − L_a when y ≥ L_a − ⌊L_a/2⌋) is the packet at common index k_a + y. Neighbouring tiles'
//! windows overlap there (each reaches a margin past its tile); their coefficients add. By
//! linearity the sum is the decomposition of the whole volume: an event that crosses a tile
//! border keeps the packets it has inside a tile, instead of two cut pieces.
//!
//! The common grid is kept sparse: per box, rows along axis 1 (one per index pair on axes 2
//! and 3), each covering the span of the tile windows that meet it. The adjoint gathers each
//! tile's window from the common grid, undoes the shift and sums into the tile, so it is the
//! exact transpose; the inverse is conjugate gradients on C*C from the tiles' correction
//! filters.
//!
//! On CUDA contexts a host call keeps the common grids on the devices for the call where
//! they fit beside the tile transforms (`cuda/tiled_host.rs`): the tiles are then added
//! there, in tile order, with the same arithmetic. Over several GPUs that reach each
//! other's memory the grids are cut by boxes into one part per GPU, and each tile's
//! coefficients are added into every part after the previous tile's. Elsewhere (a CPU
//! context, GPUs without a peer path, or a cap that leaves no room) on the host, as below.
//!
//! Given several contexts (one per GPU, say), a plan makes one tile transform on each and
//! deals the tiles out in turn (tile i to context i mod K). On the host, one thread per
//! context transforms its tiles and the calling thread adds each tile's coefficients into
//! the common grids in tile order. Either way each coefficient is summed in tile order, so
//! the result does not depend on how many contexts there are. Processes that share the tiles
//! (MPI ranks) take the same steps apart, one tile at a time (`tile_steps`).

use super::cpu::box_slices;
use super::cuda::{GridPart, Pass, TileGeometry, TileTables};
use super::inverse::{invert, CorrectionFilter, Frame, InverseReport, Stop};
use super::layout::{dot, Layout, LayoutOptions};
use super::{check_array_sizes, check_data_finite, check_finite, WavepacketPlan};
use crate::backend::cuda::buffers::{as_reals, as_reals_mut};
use crate::context::Context;
use crate::error::{try_vec, try_zeros, Error, Result};
use crate::sample::{Real, ZeroBits};
use num_complex::Complex;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// One box's coefficients on the common grid: rows along axis 1 (fastest), indexed by
/// (Y₂ − row_lo[0]) + (Y₃ − row_lo[1])·rows[0]; row r holds Y₁ = start[r], start[r] + 1, …
/// (as many as the tile windows that meet the row span) from `offset[r]` of the array.
#[derive(Clone, Debug)]
pub(super) struct BoxGrid {
    pub(super) row_lo: [i64; 2],
    pub(super) rows: [usize; 2],
    pub(super) start: Vec<i64>,
    pub(super) offset: Vec<usize>,
    /// The box's coefficients in the common array.
    range: Range<usize>,
}

impl BoxGrid {
    /// Index in the coefficient array of common index (Y₁, Y₂, Y₃), which must be stored.
    fn index(&self, y: [i64; 3]) -> usize {
        let r = (y[1] - self.row_lo[0]) as usize + (y[2] - self.row_lo[1]) as usize * self.rows[0];
        self.offset[r] + (y[0] - self.start[r]) as usize
    }
}

/// Where one tile sits: its origin (samples) and, per box, its grid shift and window offset.
#[derive(Clone, Debug)]
pub(super) struct Tile {
    pub(super) origin: [usize; 3],
    pub(super) shifts: Vec<[f64; 3]>,
    pub(super) offsets: Vec<[i64; 3]>,
}

/// A wave-packet transform of a volume cut into tiles of one layout.
pub struct TiledPlan<T: Real> {
    /// The tiles' device tables, one per context (none unless each is a CUDA context that
    /// holds them, and several reach each other's memory): host calls keep the common
    /// grids on the devices, and on one context the device calls use them
    /// (`tiles_device`). First, so that they go before the plans whose streams they were
    /// made on.
    pub(super) queued: Vec<TileTables<T>>,
    /// One tile transform per context (the first on the plan's context); the same layout.
    pub(super) plans: Vec<WavepacketPlan<T>>,
    filter: CorrectionFilter<T>,
    volume: [usize; 3],
    tiles: [usize; 3],
    pub(super) placements: Vec<Tile>,
    grids: Vec<BoxGrid>,
    n_coefficients: usize,
}

/// The centred local index of grid index y on an axis of length l: y, or y − l past the middle.
fn centred(y: usize, l: usize) -> i64 {
    if y < l - l / 2 {
        y as i64
    } else {
        y as i64 - l as i64
    }
}

impl<T: Real> TiledPlan<T> {
    /// Device bytes the plan's tile transforms hold (on all their contexts), with the device
    /// calls' tables on one context.
    pub fn device_bytes(&self) -> usize {
        self.plans.iter().map(|p| p.device_bytes()).sum()
    }

    /// A plan for a volume of shape `volume` in tiles of shape `tile` (each tile a layout made
    /// with `opts`); both have the same dimension, 2 or 3.
    pub fn new(
        ctx: Arc<Context>,
        volume: &[usize],
        tile: &[usize],
        opts: &LayoutOptions,
    ) -> Result<Self> {
        Self::on_contexts(&[ctx], volume, tile, opts)
    }

    /// `new` with the tiles dealt out over `contexts` (e.g. one per GPU), which run at once;
    /// progress reports and the plan's context are the first one's.
    pub fn on_contexts(
        contexts: &[Arc<Context>],
        volume: &[usize],
        tile: &[usize],
        opts: &LayoutOptions,
    ) -> Result<Self> {
        Self::on_contexts_capped(contexts, volume, tile, opts, 0)
    }

    /// `on_contexts` with each context's device memory capped at `max_device_bytes` (0:
    /// none), as `WavepacketPlan::with_cap` caps a tile's plan. What the cap leaves out is
    /// done on the host: the device calls' tables on one context (its device calls then
    /// pass through the host, as over several contexts), and the common grids of a host
    /// call (kept on the device beside the plan where they fit).
    pub fn on_contexts_capped(
        contexts: &[Arc<Context>],
        volume: &[usize],
        tile: &[usize],
        opts: &LayoutOptions,
        max_device_bytes: usize,
    ) -> Result<Self> {
        let Some(ctx) = contexts.first().cloned() else {
            return Err(crate::invalid!("no context given for the tiles"));
        };
        if volume.len() != tile.len() {
            return Err(crate::invalid!(
                "the volume has {} axes and the tile {}; they must agree",
                volume.len(),
                tile.len()
            ));
        }
        let mut vol = [1usize; 3];
        let mut tiles = [1usize; 3];
        for (a, (&v, &t)) in volume.iter().zip(tile).enumerate() {
            if v == 0 {
                return Err(crate::invalid!("volume shape[{a}] is 0"));
            }
            if t < 8 {
                return Err(crate::invalid!(
                    "tile shape[{a}] is {t}; a wave-packet layout needs at least 8 samples per axis"
                ));
            }
            vol[a] = v;
            tiles[a] = v.div_ceil(t);
        }
        // The caller's volume must be addressable, and the tiles' placements (a shift and an
        // offset per box) held, before they are computed.
        crate::alloc::host_bytes(&vol, std::mem::size_of::<T>(), "the tiled volume")?;
        let cap = max_device_bytes;
        let mut plans = vec![WavepacketPlan::with_cap(ctx, tile, opts, cap)?];
        for c in &contexts[1..] {
            plans.push(WavepacketPlan::with_cap(c.clone(), tile, opts, cap)?);
        }
        let plan = &plans[0];
        let layout = plan.layout();
        let n_tiles: usize = tiles.iter().product();
        crate::alloc::host_bytes(&[n_tiles, layout.boxes.len()], 48, "the tile placements")?;
        let mut placements = Vec::with_capacity(n_tiles);
        for t3 in 0..tiles[2] {
            for t2 in 0..tiles[1] {
                for t1 in 0..tiles[0] {
                    let origin = [
                        t1 * layout.shape[0],
                        t2 * layout.shape[1],
                        t3 * layout.shape[2],
                    ];
                    placements.push(place(layout, origin));
                }
            }
        }
        let (grids, n_coefficients) = common_grids(layout, &placements)?;
        crate::alloc::host_bytes(
            &[n_coefficients, 2],
            std::mem::size_of::<T>(),
            "tiled coefficients",
        )?;
        let filter = CorrectionFilter::new(plan)?;
        let queued = queued_tables(&plans, vol, &placements, &grids, cap > 0)?;
        Ok(TiledPlan {
            plans,
            filter,
            volume: vol,
            tiles,
            placements,
            grids,
            n_coefficients,
            queued,
        })
    }

    /// The layout of one tile (its boxes are the common grid's boxes).
    pub fn layout(&self) -> &Layout {
        self.plans[0].layout()
    }

    /// The volume's shape (1 for an unused axis).
    pub fn volume(&self) -> [usize; 3] {
        self.volume
    }

    /// Tiles along each axis.
    pub fn tiles(&self) -> [usize; 3] {
        self.tiles
    }

    /// Coefficients on the common grids of all boxes.
    pub fn n_coefficients(&self) -> usize {
        self.n_coefficients
    }

    /// Where box b's coefficients lie in the coefficient array (None past the last box).
    pub fn box_range(&self, b: usize) -> Option<Range<usize>> {
        self.grids.get(b).map(|g| g.range.clone())
    }

    pub fn context(&self) -> &Arc<Context> {
        self.plans[0].context()
    }

    /// How many contexts the tiles are dealt out over.
    pub fn n_contexts(&self) -> usize {
        self.plans.len()
    }

    fn n_samples(&self) -> usize {
        self.volume.iter().product()
    }

    /// The common grids cut by boxes into one part per context, of about equal size, in
    /// box order.
    pub(super) fn grid_parts(&self) -> Vec<GridPart> {
        let (layout, grids, k) = (self.layout(), &self.grids, self.plans.len());
        let total = self.n_coefficients;
        let local = |b: usize| {
            layout
                .boxes
                .get(b)
                .map_or(layout.n_coefficients, |x| x.offset)
        };
        let common = |b: usize| grids.get(b).map_or(total, |g| g.range.start);
        let mut parts = Vec::with_capacity(k);
        let mut b = 0;
        for p in 1..=k {
            let start = b;
            // Whole boxes up to the p-th k-th of the coefficients (the rest for the last).
            let end_at = total * p / k;
            while b < grids.len() && (p == k || grids[b].range.end <= end_at) {
                b += 1;
            }
            parts.push(GridPart {
                local: local(start)..local(b),
                common: common(start)..common(b),
            });
        }
        parts
    }

    pub(super) fn check_sizes(&self, data: usize, coeffs: usize) -> Result<()> {
        let shape = &self.volume[..self.layout().dim];
        let want = [self.n_samples(), self.n_coefficients];
        check_array_sizes(
            [data, coeffs],
            want,
            shape,
            ["the volume", "the tiled layout"],
        )
    }

    /// C: the volume (axis 1 fastest) → the coefficients on the common grids. Non-finite
    /// data is refused; a stop asked by the progress callback (one report per tile) leaves
    /// `coeffs` as it was.
    pub fn forward(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()> {
        self.check_sizes(data.len(), coeffs.len())?;
        check_data_finite(data, &self.context().cpu)?;
        self.reported(
            coeffs,
            |out, after_tile| {
                self.through_device(&[Pass::Forward], data, as_reals_mut(out), after_tile)
            },
            |after_tile| self.forward_with(data, after_tile),
        )
    }

    /// Runs `on_device` (the call with the common grids on the device, which writes the
    /// caller's array itself) or, where it cannot, `call` (`forward_with` or
    /// `adjoint_with`, whose result is copied to `out` once it has finished), with a report
    /// after each tile, as the stage "wave-packet tiles".
    fn reported<U: Copy + Send + Sync>(
        &self,
        out: &mut [U],
        on_device: impl FnOnce(&mut [U], &mut dyn FnMut() -> Result<()>) -> Result<bool>,
        call: impl FnOnce(&mut dyn FnMut() -> Result<()>) -> Result<Vec<U>>,
    ) -> Result<()> {
        let mut reporter = self.context().reporter();
        reporter.stage("wave-packet tiles", 1.0, self.placements.len());
        if !on_device(out, &mut || reporter.advance(1))? {
            let result = call(&mut || reporter.advance(1))?;
            self.context().cpu.copy(out, &result);
        }
        reporter.finish();
        Ok(())
    }

    /// C into new coefficients, calling `after_tile` after each tile.
    pub(super) fn forward_with(
        &self,
        data: &[T],
        after_tile: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Vec<Complex<T>>> {
        let l = self.layout();
        let mut sum = self.zeroed(self.n_coefficients, "tiled coefficients")?;
        let transform = |plan: &WavepacketPlan<T>, p: &Tile, local: &mut Vec<Complex<T>>| {
            let mut tile = try_vec(l.n_samples(), T::zero(), "tile samples")?;
            self.read_tile(data, p.origin, &mut tile);
            if local.is_empty() {
                // Faulted in by the threads that copy the tile's coefficients into it.
                *local = try_zeros(l.n_coefficients, "tile coefficients")?;
            }
            plan.forward_shifted(&tile, local, &p.shifts)
        };
        self.by_tile(transform, |p, local| {
            self.context()
                .cpu
                .install(|| self.scatter(p, local, &mut sum));
            after_tile()
        })?;
        Ok(sum)
    }

    /// `n` zeros, written on the CPU pool: a large array's pages are then faulted in by
    /// all its threads, each along its own part, rather than one by one by whichever
    /// thread touches them first.
    fn zeroed<U: ZeroBits + Send + Sync>(&self, n: usize, what: &str) -> Result<Vec<U>> {
        let mut v = try_zeros(n, what)?;
        let zero = v.first().copied();
        if let Some(zero) = zero {
            self.context()
                .cpu
                .install(|| v.par_chunks_mut(1 << 16).for_each(|c| c.fill(zero)));
        }
        Ok(v)
    }

    /// Runs `transform(plan, tile, out)` for every tile, dealt out over the plans (one thread
    /// each when there are several), and `then(tile, out)` on the calling thread in tile
    /// order. The first error stops the work; the other threads end after their current tile.
    fn by_tile<U: Send>(
        &self,
        transform: impl Fn(&WavepacketPlan<T>, &Tile, &mut Vec<U>) -> Result<()> + Sync,
        mut then: impl FnMut(&Tile, &[U]) -> Result<()>,
    ) -> Result<()> {
        let k = self.plans.len();
        if k == 1 {
            let mut out = Vec::new();
            for p in &self.placements {
                transform(&self.plans[0], p, &mut out)?;
                then(p, &out)?;
            }
            return Ok(());
        }
        std::thread::scope(|scope| {
            let transform = &transform;
            let mut results = Vec::with_capacity(k);
            for (w, plan) in self.plans.iter().enumerate() {
                // One tile ahead: the worker transforms its next tile while this thread
                // adds the last one.
                let (tx, rx) = mpsc::sync_channel::<Result<Vec<U>>>(1);
                results.push(rx);
                scope.spawn(move || {
                    for p in self.placements.iter().skip(w).step_by(k) {
                        let mut out = Vec::new();
                        let r = transform(plan, p, &mut out).map(|_| out);
                        let failed = r.is_err();
                        // A closed channel: the calling thread stopped.
                        if tx.send(r).is_err() || failed {
                            return;
                        }
                    }
                });
            }
            for (i, p) in self.placements.iter().enumerate() {
                let out = results[i % k].recv().map_err(|_| {
                    Error::Internal("a tile worker ended without its result".into())
                })??;
                then(p, &out)?;
            }
            Ok(())
        })
    }

    /// C*: the exact adjoint of `forward` (real part), one report per tile; a stop leaves
    /// `data` as it was.
    pub fn adjoint(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()> {
        self.check_sizes(data.len(), coeffs.len())?;
        check_finite(coeffs, &self.context().cpu)?;
        self.reported(
            data,
            |out, after_tile| {
                self.through_device(&[Pass::Adjoint], as_reals(coeffs), out, after_tile)
            },
            |after_tile| self.adjoint_with(coeffs, after_tile),
        )
    }

    /// C* into a new volume, calling `after_tile` after each tile.
    pub(super) fn adjoint_with(
        &self,
        coeffs: &[Complex<T>],
        after_tile: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Vec<T>> {
        let l = self.layout();
        let mut out = try_vec(self.n_samples(), T::zero(), "tiled volume")?;
        // One tile window per context, made once: the gather writes all of it every tile.
        let windows: Vec<_> = self.plans.iter().map(|_| Mutex::new(Vec::new())).collect();
        let transform = |plan: &WavepacketPlan<T>, p: &Tile, tile: &mut Vec<T>| {
            let w = self.plans.iter().position(|q| std::ptr::eq(q, plan));
            let mut guard = windows[w.unwrap_or(0)]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if guard.is_empty() {
                *guard = try_zeros(l.n_coefficients, "tile coefficients")?;
            }
            let local: &mut [Complex<T>] = &mut guard;
            plan.context().cpu.install(|| self.gather(p, coeffs, local));
            tile.resize(l.n_samples(), T::zero());
            plan.adjoint_shifted(local, tile, &p.shifts)
        };
        self.by_tile(transform, |p, tile| {
            self.write_tile(tile, p.origin, &mut out);
            after_tile()
        })?;
        Ok(out)
    }

    /// The volume whose coefficients are closest (least squares) to `coeffs`: each tile's
    /// correction filter applied to C*c, then conjugate gradients on C*C until the relative
    /// residual is ≤ `tolerance` or `max_iterations` were made. Progress: stage
    /// "wave-packet inverse", one item per iteration; `data` is written only at the end.
    pub fn inverse(
        &self,
        coeffs: &[Complex<T>],
        data: &mut [T],
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<InverseReport> {
        let stop = Stop::new(tolerance, max_iterations);
        invert(self, coeffs, data, stop, &mut self.context().reporter())
    }

    /// The tile at `origin` from the volume, zero past the volume's end.
    pub(super) fn read_tile(&self, volume: &[T], origin: [usize; 3], tile: &mut [T]) {
        tile.fill(T::zero());
        for (v, t, len) in self.tile_rows(origin) {
            tile[t..t + len].copy_from_slice(&volume[v..v + len]);
        }
    }

    /// The transpose of `read_tile`: the tile's samples inside the volume, written there.
    fn write_tile(&self, tile: &[T], origin: [usize; 3], volume: &mut [T]) {
        for (v, t, len) in self.tile_rows(origin) {
            volume[v..v + len].copy_from_slice(&tile[t..t + len]);
        }
    }

    /// The rows along axis 1 of the tile at `origin` that lie inside the volume: where each
    /// starts in the volume and in the tile, and their length.
    fn tile_rows(&self, origin: [usize; 3]) -> impl Iterator<Item = (usize, usize, usize)> {
        let n = self.layout().shape;
        let v = self.volume;
        let w1 = n[0].min(v[0] - origin[0]);
        let rows = (0..n[2].min(v[2] - origin[2]))
            .flat_map(move |i3| (0..n[1].min(v[1] - origin[1])).map(move |i2| (i2, i3)));
        rows.map(move |(i2, i3)| {
            let in_volume = ((origin[2] + i3) * v[1] + origin[1] + i2) * v[0] + origin[0];
            (in_volume, (i3 * n[1] + i2) * n[0], w1)
        })
    }

    /// Adds the tile's coefficients (`local`, layout order) into the common grids.
    pub(super) fn scatter(&self, p: &Tile, local: &[Complex<T>], common: &mut [Complex<T>]) {
        let boxes = &self.layout().boxes;
        split_boxes(&self.grids, common)
            .into_par_iter()
            .zip(boxes.par_iter().enumerate())
            .for_each(|(out, (b, bx))| {
                let g = &self.grids[b];
                let base = g.range.start;
                let src = &local[bx.offset..bx.offset + bx.n_coefficients()];
                for_each_run(bx.shape, p.offsets[b], g, |k, i, len| {
                    let o = &mut out[i - base..i - base + len];
                    for (v, s) in o.iter_mut().zip(&src[k..k + len]) {
                        *v = *v + *s;
                    }
                });
            });
    }

    /// The transpose of `scatter`: the tile's window of each box, from the common grids.
    pub(super) fn gather(&self, p: &Tile, common: &[Complex<T>], local: &mut [Complex<T>]) {
        let boxes = &self.layout().boxes;
        let all = 0..boxes.len();
        box_slices(self.layout(), all, local)
            .into_par_iter()
            .zip(boxes.par_iter().enumerate())
            .for_each(|(dst, (b, bx))| {
                let g = &self.grids[b];
                for_each_run(bx.shape, p.offsets[b], g, |k, i, len| {
                    dst[k..k + len].copy_from_slice(&common[i..i + len])
                });
            });
    }
}

/// A tile's shifts and window offsets on every box.
fn place(layout: &Layout, origin: [usize; 3]) -> Tile {
    let o = origin.map(|v| v as f64);
    let mut shifts = Vec::with_capacity(layout.boxes.len());
    let mut offsets = Vec::with_capacity(layout.boxes.len());
    for bx in &layout.boxes {
        let l = &layout.lattices[bx.lattice];
        let mut shift = [0.0; 3];
        let mut offset = [0i64; 3];
        for a in 0..layout.dim {
            let step = l.period[a] / bx.shape[a] as f64;
            let s = dot(&o, &l.axes[a]) / step;
            offset[a] = s.round() as i64;
            shift[a] = s - offset[a] as f64;
        }
        shifts.push(shift);
        offsets.push(offset);
    }
    Tile {
        origin,
        shifts,
        offsets,
    }
}

/// Calls `f(local index, common index, length)` for the runs of a tile's box (of `shape`, its
/// window at `offset` on the common grid `g`) that are contiguous in both: per row along
/// axis 1, the centred indices 0 … ⌈n1/2⌉ − 1 and then −⌊n1/2⌋ … −1, each a run.
fn for_each_run(
    shape: [usize; 3],
    offset: [i64; 3],
    g: &BoxGrid,
    mut f: impl FnMut(usize, usize, usize),
) {
    let [n1, n2, n3] = shape;
    let (low, high) = (n1 - n1 / 2, n1 / 2);
    let mut k = 0;
    for y3 in 0..n3 {
        for y2 in 0..n2 {
            let (r2, r3) = (offset[1] + centred(y2, n2), offset[2] + centred(y3, n3));
            f(k, g.index([offset[0], r2, r3]), low);
            if high > 0 {
                f(k + low, g.index([offset[0] - high as i64, r2, r3]), high);
            }
            k += n1;
        }
    }
}

/// The common grid of every box (rows spanning the tile windows that meet them), and the
/// total coefficient count.
fn common_grids(layout: &Layout, placements: &[Tile]) -> Result<(Vec<BoxGrid>, usize)> {
    let mut grids = Vec::with_capacity(layout.boxes.len());
    let mut total = 0usize;
    for (b, bx) in layout.boxes.iter().enumerate() {
        // The centred window of a tile along axis a: offset + [−⌊L/2⌋, L − ⌊L/2⌋).
        let lo = |p: &Tile, a: usize| p.offsets[b][a] - (bx.shape[a] / 2) as i64;
        let mut row_lo = [i64::MAX; 2];
        let mut row_hi = [i64::MIN; 2];
        for p in placements {
            for a in 1..3 {
                row_lo[a - 1] = row_lo[a - 1].min(lo(p, a));
                row_hi[a - 1] = row_hi[a - 1].max(lo(p, a) + bx.shape[a] as i64);
            }
        }
        let rows = [
            (row_hi[0] - row_lo[0]) as usize,
            (row_hi[1] - row_lo[1]) as usize,
        ];
        let n_rows = rows[0] * rows[1];
        let mut start = vec![i64::MAX; n_rows];
        let mut end = vec![i64::MIN; n_rows];
        for p in placements {
            let (a1, a2, a3) = (lo(p, 0), lo(p, 1), lo(p, 2));
            for y3 in a3..a3 + bx.shape[2] as i64 {
                for y2 in a2..a2 + bx.shape[1] as i64 {
                    let r = (y2 - row_lo[0]) as usize + (y3 - row_lo[1]) as usize * rows[0];
                    start[r] = start[r].min(a1);
                    end[r] = end[r].max(a1 + bx.shape[0] as i64);
                }
            }
        }
        let first = total;
        let mut offset = Vec::with_capacity(n_rows);
        for (s, e) in start.iter_mut().zip(&end) {
            let l = if *e > *s { (*e - *s) as usize } else { 0 };
            if l == 0 {
                *s = 0;
            }
            offset.push(total);
            total = total.checked_add(l).ok_or_else(|| {
                Error::OutOfMemory("a tiled layout has more coefficients than size_t counts".into())
            })?;
        }
        grids.push(BoxGrid {
            row_lo,
            rows,
            start,
            offset,
            range: first..total,
        });
    }
    Ok((grids, total))
}

/// The device calls' tables of a volume on one CUDA context (None on a CPU context, over
/// several contexts or where a `capped` plan's cap refuses them: device calls then pass
/// through the host).
fn queued_tables<T: Real>(
    plans: &[WavepacketPlan<T>],
    volume: [usize; 3],
    placements: &[Tile],
    grids: &[BoxGrid],
    capped: bool,
) -> Result<Vec<TileTables<T>>> {
    let stages: Option<Vec<_>> = plans.iter().map(|p| p.device_stage()).collect();
    let Some(stages) = stages else {
        return Ok(Vec::new());
    };
    let contexts: Vec<_> = stages.iter().map(|s| s.stream().context()).collect();
    if !crate::backend::cuda::peer::link_all(&contexts)? {
        return Ok(Vec::new());
    }
    let (mut grid, mut rows) = (Vec::new(), Vec::new());
    for (g, bx) in grids.iter().zip(&plans[0].layout().boxes) {
        let first_row = (rows.len() / 2) as i64;
        grid.extend(bx.shape.map(|n| n as i64));
        grid.extend([g.row_lo[0], g.row_lo[1], g.rows[0] as i64, first_row]);
        for (start, offset) in g.start.iter().zip(&g.offset) {
            rows.extend([*start, *offset as i64]);
        }
    }
    let geometry = TileGeometry {
        volume,
        origins: placements.iter().map(|p| p.origin).collect(),
        shifts: placements.iter().map(|p| p.shifts.as_slice()).collect(),
        offsets: placements
            .iter()
            .flat_map(|p| p.offsets.iter().flatten().copied())
            .collect(),
        grid,
        rows,
        n_common: grids.last().map_or(0, |g| g.range.end),
    };
    let mut tables = Vec::with_capacity(stages.len());
    for stage in stages {
        match stage.tile_tables(&geometry) {
            // Refused by the plan's cap: the calls pass through the host.
            Err(Error::DeviceOutOfMemory(_)) if capped => return Ok(Vec::new()),
            made => tables.push(made?),
        }
    }
    Ok(tables)
}

/// `common` cut into one mutable slice per box.
fn split_boxes<'a, T>(grids: &[BoxGrid], mut common: &'a mut [T]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(grids.len());
    for g in grids {
        let (head, tail) = common.split_at_mut(g.range.len());
        out.push(head);
        common = tail;
    }
    out
}

impl<T: Real> Frame<T> for TiledPlan<T> {
    fn context(&self) -> &Context {
        TiledPlan::context(self)
    }
    fn check_sizes(&self, data: usize, coeffs: usize) -> Result<()> {
        TiledPlan::check_sizes(self, data, coeffs)
    }
    fn adjoint_of(&self, coeffs: &[Complex<T>]) -> Result<Vec<T>> {
        self.volume_call(&[Pass::Adjoint], as_reals(coeffs), |plan| {
            plan.adjoint_with(coeffs, &mut || Ok(()))
        })
    }
    /// Each tile's correction filter, applied tile by tile.
    fn filtered(&self, b: &[T]) -> Vec<T> {
        let mut start = vec![T::zero(); b.len()];
        let mut tile = vec![T::zero(); self.layout().n_samples()];
        for p in &self.placements {
            self.read_tile(b, p.origin, &mut tile);
            self.write_tile(&self.filter.apply(&tile), p.origin, &mut start);
        }
        start
    }
    fn normal(&self, f: &[T]) -> Result<Vec<T>> {
        self.volume_call(&[Pass::Forward, Pass::Adjoint], f, |plan| {
            let c = plan.forward_with(f, &mut || Ok(()))?;
            plan.adjoint_with(&c, &mut || Ok(()))
        })
    }
}

impl<T: Real> TiledPlan<T> {
    /// `passes` (ending in C*) from `input` into a new volume, with the common grids on the
    /// device where they fit there, else by `on_host`.
    fn volume_call(
        &self,
        passes: &[Pass],
        input: &[T],
        on_host: impl FnOnce(&Self) -> Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        if self.queued.is_empty() {
            return on_host(self);
        }
        let mut out = try_vec(self.n_samples(), T::zero(), "tiled volume")?;
        match self.through_device(passes, input, &mut out, &mut || Ok(()))? {
            true => Ok(out),
            false => on_host(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendRequest;

    /// The common grids' parts cover every box once, in order, whole boxes each, with the
    /// tile's coefficients of the same boxes, and about equal shares.
    #[test]
    fn grid_parts_cut_the_grids_by_whole_boxes() {
        let cpu = || Context::new(BackendRequest::Cpu, 0).unwrap();
        let o = LayoutOptions {
            directions: 26,
            levels: 1,
            ..Default::default()
        };
        for k in 1..=3 {
            let contexts: Vec<_> = (0..k).map(|_| cpu()).collect();
            let plan =
                TiledPlan::<f32>::on_contexts(&contexts, &[20, 18, 23], &[12, 10, 12], &o).unwrap();
            let parts = plan.grid_parts();
            assert_eq!(parts.len(), k);
            let (l, m) = (plan.layout(), plan.n_coefficients());
            let starts = |b: usize| (l.boxes[b].offset, plan.box_range(b).unwrap().start);
            let (mut local, mut common) = (0, 0);
            for p in &parts {
                assert_eq!((p.local.start, p.common.start), (local, common));
                if p.local.end < l.n_coefficients {
                    let b = l
                        .boxes
                        .iter()
                        .position(|x| x.offset == p.local.end)
                        .unwrap();
                    assert_eq!(starts(b), (p.local.end, p.common.end), "{p:?}");
                }
                assert!(p.common.len() <= m / k + m / 4, "{k} parts: {p:?} of {m}");
                (local, common) = (p.local.end, p.common.end);
            }
            assert_eq!((local, common), (l.n_coefficients, m));
        }
    }
}
