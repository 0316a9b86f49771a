//! A plan's device state: its module, stream, mode tables, fine grids, cuFFT plan and
//! sorted points. Made once per plan (at its first set-points) and reused by later calls.

use super::heuristics::{choose_tiling, per_point, InterpMethod, SpreadMethod};
use super::prelude::prelude;
use crate::backend::cuda::buffers::{alloc, upload};
use crate::backend::cuda::fft::{self, FftPlan, Shape};
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::replay::{RepeatedReplay, Replay};
use crate::backend::cuda::{bind, kernels, CudaBackend};
use crate::error::Result;
use crate::sample::Real;
use crate::usfft::grid::Tiling;
use crate::usfft::spec::{TransformType, UsfftSpec};
use cudarc::driver::{CudaModule, CudaStream, DeviceRepr};
use std::sync::{Arc, Mutex};

/// A plan's points on the device, its fine grid, its cuFFT plan and its stream.
pub struct DevicePoints<T: Real> {
    /// First, so that it is destroyed before the buffers and the stream. None for a type-3
    /// plan's spreading stage, which has no FFT of its own.
    pub(super) fft: Option<FftPlan>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) module: Arc<CudaModule>,
    /// The points (none once they are set in groups).
    pub(super) set: PointSet<T>,
    /// The points set in groups (`set_lattice_groups`), each sorted on its own into the
    /// same bins; executed one group at a time on the plan's fine grid
    /// (`execute_in_groups`).
    pub(super) groups: Vec<PointSet<T>>,
    pub(super) sort: SortScratch<T>,
    pub(super) tables: ModeTables<T>,
    /// Fine grids (n_vectors of them) and host-to-host staging buffers, one execute at a time.
    pub(super) work: Mutex<Work<T>>,
    pub(super) spec: UsfftSpec,
}

/// One set of sorted points and how the kernels run over it: its count, bins, spreading and
/// interpolation methods.
pub(super) struct PointSet<T> {
    /// Shared with another plan over the same points (`reuse`): read-only while shared.
    pub(super) sorted: Arc<Sorted<T>>,
    pub(super) m: usize,
    pub(super) tiling: Tiling,
    pub(super) method: SpreadMethod,
    pub(super) interp: InterpMethod,
}

/// Sorted points (capacity ≥ m): caller index, and per dimension i0 and d; the sorted
/// positions of bin b are bin_start[b]..bin_start[b + 1]. Made on `stream`, where they are
/// freed.
pub(super) struct Sorted<T> {
    pub(super) perm: DeviceBuf<i32>,
    pub(super) first: [DeviceBuf<i32>; 3],
    pub(super) offset: [DeviceBuf<T>; 3],
    pub(super) bin_start: DeviceBuf<u32>,
    /// Points on lattices (`usfft::lattice`): the kernels compute each point's (i0, d) from
    /// this table and `perm`, and `first` and `offset` hold nothing.
    pub(super) lattices: Option<DeviceLattices>,
    pub(super) stream: Arc<CudaStream>,
}

/// The lattices' table on the device (`lattice::device_table`): 12 reals, 6 integers and a
/// first point per lattice.
pub(super) struct DeviceLattices {
    pub(super) frames: DeviceBuf<f64>,
    pub(super) shapes: DeviceBuf<i64>,
    pub(super) first: DeviceBuf<i64>,
    /// The number of lattices.
    pub(super) n: usize,
}

impl<T: Real> Sorted<T> {
    /// Room for no points yet, and `n_bins` bins.
    pub(super) fn new(s: &Arc<CudaStream>, n_bins: usize) -> Result<Sorted<T>> {
        let what = "allocating USFFT points";
        Ok(Sorted {
            perm: alloc(s, 1, what)?,
            first: [alloc(s, 1, what)?, alloc(s, 1, what)?, alloc(s, 1, what)?],
            offset: [alloc(s, 1, what)?, alloc(s, 1, what)?, alloc(s, 1, what)?],
            bin_start: alloc(s, n_bins + 1, what)?,
            lattices: None,
            stream: s.clone(),
        })
    }
}

/// The counting sort's working arrays: each point's bin and rank within it, its coordinates
/// packed (four values per point), the bins' counts, and the first non-finite coordinate
/// found (3·j + axis).
pub(super) struct SortScratch<T> {
    pub(super) key: DeviceBuf<u32>,
    pub(super) rank: DeviceBuf<u32>,
    pub(super) packed: DeviceBuf<T>,
    pub(super) count: DeviceBuf<u32>,
    /// Per tile of the bins' counts (large grids of bins): its total, and its start.
    pub(super) tile_sums: DeviceBuf<u32>,
    pub(super) tile_starts: DeviceBuf<u32>,
    pub(super) bad: DeviceBuf<u64>,
    /// Set-points calls on this plan so far: from the second on, the per-point scratch is
    /// kept for the next call.
    pub(super) sets: u32,
}

/// Per dimension: the fine-grid cell of each mode and its deconvolution factor.
pub(super) struct ModeTables<T> {
    pub(super) fine_index: [DeviceBuf<i32>; 3],
    pub(super) deconv: [DeviceBuf<T>; 3],
}

pub(super) struct Work<T> {
    pub(super) grid: FineGrid<T>,
    pub(super) c: Option<DeviceBuf<T>>,
    pub(super) f: Option<DeviceBuf<T>>,
}

/// The fine grids (2·n_vectors·nf1·nf2·nf3 reals) and their FFT captured into a CUDA graph
/// on first use (`replay`: one graph launch costs the host less than a cuFFT execute); and
/// a whole execute on an application's arrays, captured when a call repeats the previous
/// call's arrays (`RepeatedReplay`; keyed by the strengths', modes' and grids'
/// addresses, and forgotten when points are set: the graph holds their count and bins).
pub(super) struct FineGrid<T> {
    pub(super) cells: DeviceBuf<T>,
    /// One per `Way` (a graph holds the FFT's direction).
    pub(super) fft_replay: [Option<Replay>; 2],
    pub(super) calls: RepeatedReplay<[u64; 3]>,
}

/// Replaces `buf` by one of `len` elements if it is shorter.
pub(super) fn grow<U: DeviceRepr>(
    buf: &mut DeviceBuf<U>,
    len: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<()> {
    if buf.len() < len {
        *buf = alloc(stream, len, what)?;
    }
    Ok(())
}

/// A device buffer of at least `len` elements, kept in `slot` between calls.
pub(super) fn ensure<'a, T: Real>(
    slot: &'a mut Option<DeviceBuf<T>>,
    len: usize,
    s: &Arc<CudaStream>,
) -> Result<&'a mut DeviceBuf<T>> {
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        *slot = None;
        *slot = Some(alloc(s, len, "allocating USFFT buffers")?);
    }
    Ok(slot.as_mut().unwrap())
}

/// The device state of a plan for `spec` (module, fine grid, its cuFFT plan and work area,
/// mode tables, point buffers of minimal size), made when the plan is created.
pub fn prepare<T: Real>(gpu: &CudaBackend, spec: &UsfftSpec) -> Result<Box<DevicePoints<T>>> {
    bind(&gpu.ctx)?;
    Ok(Box::new(DevicePoints::new(gpu, spec)?))
}

/// The plan's device state, made on first use if creation did not make it.
pub(super) fn points_slot<'a, T: Real>(
    gpu: &CudaBackend,
    slot: &'a mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
) -> Result<&'a mut DevicePoints<T>> {
    bind(&gpu.ctx)?;
    if slot.is_none() {
        *slot = Some(Box::new(DevicePoints::new(gpu, spec)?));
    }
    let pts = slot.as_mut().unwrap();
    // New points replace any set in groups.
    pts.groups.clear();
    // New points: an execute captured on the old ones is stale.
    let work = pts.work.get_mut().unwrap_or_else(|e| e.into_inner());
    work.grid.calls = RepeatedReplay::default();
    Ok(pts)
}

impl<T: Real> DevicePoints<T> {
    fn new(gpu: &CudaBackend, spec: &UsfftSpec) -> Result<DevicePoints<T>> {
        DevicePoints::new_on(gpu, spec, gpu.stream()?)
    }

    /// The device state of `spec` with its work queued on `stream` (a type-3 plan's two
    /// stages share one).
    pub(super) fn new_on(
        gpu: &CudaBackend,
        spec: &UsfftSpec,
        stream: Arc<CudaStream>,
    ) -> Result<DevicePoints<T>> {
        let module = gpu.modules.get(
            &gpu.ctx,
            &gpu.arch,
            &kernels::USFFT,
            &prelude::<T>(spec.dim, spec.kernel.width, spec.kernel.shape),
        )?;
        let tables = ModeTables::new(spec, &stream)?;
        let nft = spec.fine_count();
        let grid = alloc(
            &stream,
            2 * nft * spec.n_vectors,
            "allocating the USFFT fine grid",
        )?;
        let fft = match spec.kind {
            TransformType::Type3 => None,
            _ => Some(fine_grid_fft::<T>(spec, &stream)?),
        };
        let what = "allocating USFFT points";
        let (tiling, method) =
            choose_tiling(spec, 0, std::mem::size_of::<T>(), gpu.max_shared_bytes);
        let s = &stream;
        Ok(DevicePoints {
            set: PointSet {
                sorted: Arc::new(Sorted::new(s, tiling.n_bins())?),
                m: 0,
                tiling,
                method,
                interp: per_point(spec.kernel.width),
            },
            groups: Vec::new(),
            sort: SortScratch {
                key: alloc(s, 1, what)?,
                rank: alloc(s, 1, what)?,
                packed: alloc(s, 4, what)?,
                count: alloc(s, 1, what)?,
                tile_sums: alloc(s, 1, what)?,
                tile_starts: alloc(s, 1, what)?,
                bad: alloc(s, 1, what)?,
                sets: 0,
            },
            module,
            tables,
            work: Mutex::new(Work {
                grid: FineGrid {
                    cells: grid,
                    fft_replay: [None, None],
                    calls: RepeatedReplay::default(),
                },
                c: None,
                f: None,
            }),
            fft,
            spec: spec.clone(),
            stream,
        })
    }

    /// The sorted points to write new ones into: this plan's own, made afresh on its stream
    /// where they are another plan's or shared (that plan goes on reading the old ones).
    pub(super) fn own_sorted(&mut self) -> Result<&mut Sorted<T>> {
        let own = Arc::get_mut(&mut self.set.sorted)
            .is_some_and(|s| s.stream.cu_stream() == self.stream.cu_stream());
        if !own {
            self.let_go_of_sorted()?;
            self.set.sorted = Arc::new(Sorted::new(&self.stream, self.set.tiling.n_bins())?);
        }
        Ok(Arc::get_mut(&mut self.set.sorted).expect("made above"))
    }

    /// Orders the stream the sorted points were made on (and are freed on) after this
    /// plan's work, before this plan lets go of points another plan made: a free there then
    /// waits for this plan's reads.
    pub(super) fn let_go_of_sorted(&self) -> Result<()> {
        let owner = &self.set.sorted.stream;
        if owner.cu_stream() != self.stream.cu_stream() {
            owner
                .join(&self.stream)
                .map_err(crate::backend::cuda::driver_error(
                    "ordering shared USFFT points' release after a plan's work",
                ))?;
        }
        Ok(())
    }

    /// The stream every execute of this plan runs on (for events around device-resident calls).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The points' count (of the whole set; 0 where they are set in groups).
    pub fn m(&self) -> usize {
        self.set.m
    }

    /// The points' bins (those of every group).
    pub fn tiling(&self) -> &Tiling {
        &self.set.tiling
    }

    /// How the points are spread.
    pub fn method(&self) -> SpreadMethod {
        self.set.method
    }

    /// The kernel's shape parameter β in the plan's precision.
    pub(super) fn beta(&self) -> T {
        T::from_f64(self.spec.kernel.beta).unwrap()
    }
}

impl<T: Real> PointSet<T> {
    /// Pushes the sorted points as the spreading and interpolation kernels take them
    /// (their POINTS_PARAMS): `perm, i1, i2, i3, d1, d2, d3` (the arrays of unused
    /// dimensions, and all six for points on lattices, are not read), then `lat_frame,
    /// lat_shape, lat_first, n_lat` (NULL and 0 for stored points).
    pub(super) fn push_sorted<'l, 's>(&self, l: &'l mut Launch<'s>) -> &'l mut Launch<'s> {
        let p = &self.sorted;
        l.input(&p.perm);
        for a in &p.first {
            l.input(a);
        }
        for a in &p.offset {
            l.input(a);
        }
        match &p.lattices {
            Some(t) => {
                let n = t.n as i32;
                l.input(&t.frames)
                    .input(&t.shapes)
                    .input(&t.first)
                    .scalar(n)
            }
            None => l
                .optional::<f64, DeviceBuf<f64>>(None)
                .optional::<i64, DeviceBuf<i64>>(None)
                .optional::<i64, DeviceBuf<i64>>(None)
                .scalar(0i32),
        }
    }

    /// Whether the points were set from lattices (the kernels compute them from a table).
    pub(super) fn on_lattices(&self) -> bool {
        self.sorted.lattices.is_some()
    }

    /// Pushes `long long m, int nvec, int nf1, int nf2, int nf3`.
    pub(super) fn push_sizes<'l, 's>(
        &self,
        l: &'l mut Launch<'s>,
        spec: &UsfftSpec,
    ) -> &'l mut Launch<'s> {
        l.scalar(self.m as i64).scalar(spec.n_vectors as i32);
        push_fine(l, spec)
    }

    /// Pushes the bins: `int t1, int t2, int t3, int nb1, int nb2`.
    pub(super) fn push_bins<'l, 's>(&self, l: &'l mut Launch<'s>) -> &'l mut Launch<'s> {
        push_bins(l, &self.tiling)
    }
}

impl<T: Real> Drop for DevicePoints<T> {
    fn drop(&mut self) {
        // Nothing to report to from a drop; the driver keeps the error for later calls.
        let _ = self.let_go_of_sorted();
    }
}

/// Pushes the fine grid's `int nf1, int nf2, int nf3`.
pub(super) fn push_fine<'l, 's>(l: &'l mut Launch<'s>, spec: &UsfftSpec) -> &'l mut Launch<'s> {
    let [nf1, nf2, nf3] = spec.fine.map(|n| n as i32);
    l.scalar(nf1).scalar(nf2).scalar(nf3)
}

/// Pushes `int t1, int t2, int t3, int nb1, int nb2` of `tiling`.
pub(super) fn push_bins<'l, 's>(l: &'l mut Launch<'s>, tiling: &Tiling) -> &'l mut Launch<'s> {
    let [t1, t2, t3] = tiling.tile.map(|t| t as i32);
    let [nb1, nb2] = [tiling.bins[0] as i32, tiling.bins[1] as i32];
    l.scalar(t1).scalar(t2).scalar(t3).scalar(nb1).scalar(nb2)
}

impl<T: Real> ModeTables<T> {
    fn new(spec: &UsfftSpec, stream: &Arc<CudaStream>) -> Result<ModeTables<T>> {
        let what = "uploading USFFT mode tables";
        let index = |d: usize| {
            let fi: Vec<i32> = spec.fine_index(d).into_iter().map(|i| i as i32).collect();
            upload(stream, &fi, what)
        };
        let factors = |d: usize| {
            let q: Vec<T> = spec.deconv[d]
                .iter()
                .map(|&x| T::from_f64(x).unwrap())
                .collect();
            upload(stream, &q, what)
        };
        Ok(ModeTables {
            fine_index: [index(0)?, index(1)?, index(2)?],
            deconv: [factors(0)?, factors(1)?, factors(2)?],
        })
    }
}

/// The batch of fine-grid FFTs, bound to the plan's stream.
fn fine_grid_fft<T: Real>(spec: &UsfftSpec, stream: &Arc<CudaStream>) -> Result<FftPlan> {
    let dims: Vec<usize> = (0..spec.dim).rev().map(|d| spec.fine[d]).collect();
    let nft = spec.fine_count();
    FftPlan::many(
        &dims,
        (nft, nft),
        fft::kind::<T>(Shape::C2C),
        spec.n_vectors,
        stream,
        "the fine-grid FFT",
    )
}
