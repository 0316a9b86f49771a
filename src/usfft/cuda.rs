//! The USFFT on the GPU: kernels/usfft.cu (NVRTC, one module per dimension, kernel width,
//! kernel shape and precision) and cuFFT on the fine grid.
//!
//! Set-points folds and bin-sorts the points on the device (histogram with ranks, scan,
//! scatter of the permutation, gather; host coordinates are uploaded first) into the sorted
//! (i0, d) per dimension, the permutation and the bin offsets. Type 1 in 2D and 3D spreads with one block per bin and
//! one thread per row of its padded tile, the row's sums in registers (no atomics until the
//! row is added to the grid); in 1D, or on grids smaller than those bins, into a padded tile
//! in shared memory (shared atomics in the hot loop; one global atomic per non-zero tile
//! cell at the end); a tile too large for shared memory falls back to global atomics in
//! sorted order. Type 2 stages each bin's padded tile in shared memory once per block of
//! sorted points and gathers from there (usfft_interp_sm); where the tile does not fit, one
//! warp (wide kernels: one thread) per sorted point gathers from the grid. Both loop over
//! the batch's vectors inside the kernel; cuFFT runs the batch as one plan.

use super::grid::Tiling;
use super::kernel::{KernelShape, SpreadKernel};
use super::points::MAX_POINTS;
use super::spec::{TransformType, UsfftSpec, MIN_TOL_F32, MIN_TOL_F64};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::buffers::{alloc, as_reals, as_reals_mut, dptr, upload, DevPtr};
use crate::backend::cuda::fft::{self, FftKind, FftPlan};
use crate::backend::cuda::kernels;
use crate::backend::cuda::launch::launch;
use crate::backend::cuda::{driver_error, staging, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::sample::Sample;
use cudarc::cufft::result as cufft_result;
use cudarc::driver::{
    result, CudaEvent, CudaModule, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use num_complex::Complex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const THREADS: u32 = 256;
/// Shared memory a spreading tile may use before a larger one is considered (bytes): two
/// blocks per multiprocessor on sm_80/sm_90.
const TILE_BUDGET: usize = 100 * 1024;

/// Threads of a usfft_spread_rows block, at most (its launch bound).
const ROW_THREADS_MAX: usize = 512;

/// Sorted points per usfft_interp_sm block: enough to cover several bins (each bin's tile is
/// staged once per block that touches it), few enough to spread clustered points over blocks.
const INTERP_CHUNK: usize = 1024;

/// The largest tile usfft_interp_sm may stage (bytes; 0: the GPU's limit). Process-wide, so
/// that tests can take the fallback on a GPU where every tile fits.
static INTERP_TILE_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the shared memory of usfft_interp_sm (None: the GPU's limit) for plans whose points
/// are set afterwards; tiles above the cap interpolate from the grid instead. Process-wide.
pub fn set_interp_tile_bytes(bytes: Option<usize>) {
    INTERP_TILE_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Lanes of usfft_interp_sm per point split the planes (3D) or rows (2D) in two for f32:
/// 8 lanes cover a row's taps, and a request phase reads 16 f32 cells (8 f64 cells).
fn interp_split(dim: usize, real_bytes: usize) -> usize {
    if dim >= 2 && real_bytes == 4 {
        2
    } else {
        1
    }
}

/// Cells between the slowest-axis slices (3D planes, 2D rows) of usfft_interp_sm's staged
/// tile: with the split, ≡ 8 (mod 16) so that the two slices one phase reads fall in
/// different banks.
fn interp_pitch(spec: &UsfftSpec, tiling: &Tiling, real_bytes: usize) -> usize {
    let padded = |d: usize| tiling.tile[d] + spec.kernel.width - 1;
    let slice = match spec.dim {
        3 => padded(0) * padded(1),
        _ => padded(0),
    };
    if interp_split(spec.dim, real_bytes) == 2 {
        slice + (24 - slice % 16) % 16
    } else {
        slice
    }
}

/// Shared memory of usfft_interp_sm: one bin's padded tile of complex cells, slices `pitch`
/// cells apart.
fn interp_tile_bytes(spec: &UsfftSpec, tiling: &Tiling, real_bytes: usize) -> usize {
    let slices = match spec.dim {
        1 => 1,
        d => tiling.tile[d - 1] + spec.kernel.width - 1,
    };
    interp_pitch(spec, tiling, real_bytes) * slices * 2 * real_bytes
}

/// The fastest-axis bin size of usfft_spread_rows: each thread keeps the padded row's
/// (tile + w − 1) complex sums in registers, so wide f64 kernels take shorter rows.
fn row_tile1(width: usize, real_bytes: usize) -> usize {
    if real_bytes * (16 + width - 1) <= 4 * 24 {
        16
    } else {
        8
    }
}

/// The NVRTC prelude for one dimension, kernel and precision.
pub fn prelude<T: Sample>(dim: usize, width: usize, shape: KernelShape) -> String {
    format!(
        "#define REAL {}\n#define DIM {dim}\n#define NSPREAD {width}\n#define KERNEL_ES {}\n#define ROW_TILE1 {}\n#define INTERP_SPLIT {}\n",
        T::C_TYPE,
        (shape == KernelShape::ExpSemicircle) as i32,
        row_tile1(width, std::mem::size_of::<T>()),
        interp_split(dim, std::mem::size_of::<T>())
    )
}

/// Every prelude the library can produce, labelled ("3d es w8 f32"): each dimension, kernel
/// shape and precision with every width its tolerances reach (f32 down to 1e-6, f64 to 1e-14).
pub fn usfft_kernel_preludes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dim in 1..=3 {
        for (shape, name) in [
            (KernelShape::ExpSemicircle, "es"),
            (KernelShape::Gaussian, "gauss"),
        ] {
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F32) {
                out.push((
                    format!("{dim}d {name} w{w} f32"),
                    prelude::<f32>(dim, w, shape),
                ));
            }
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F64) {
                out.push((
                    format!("{dim}d {name} w{w} f64"),
                    prelude::<f64>(dim, w, shape),
                ));
            }
        }
    }
    out
}

/// Candidate bin shapes per dimension count, in order of preference.
fn tile_candidates(dim: usize) -> Vec<[usize; 3]> {
    match dim {
        1 => [8192, 4096, 2048, 1024, 512, 256, 128, 64, 32]
            .iter()
            .map(|&t| [t, 1, 1])
            .collect(),
        2 => vec![
            [64, 64, 1],
            [64, 32, 1],
            [32, 32, 1],
            [32, 16, 1],
            [16, 16, 1],
            [16, 8, 1],
            [8, 8, 1],
        ],
        _ => vec![
            [16, 16, 16],
            [16, 16, 8],
            [16, 8, 8],
            [8, 8, 8],
            [8, 8, 4],
            [8, 4, 4],
            [4, 4, 4],
        ],
    }
}

/// How type 1 spreads: register rows (2D, 3D), shared-memory tiles of a given shape, or
/// global atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadMethod {
    RegisterRows { threads: u32 },
    SharedTiles { shared_bytes: usize },
    GlobalAtomics,
}

/// Rows of a usfft_spread_rows block that let two blocks share a multiprocessor at the
/// kernel's 128 registers per thread. Measured on an H200 (f64, N = 256, M = N³): spreading
/// took 60 ms at w = 10 with 8 × 8 × 8 bins (289 rows, one block per multiprocessor) and
/// 39 ms with 8 × 7 × 7 (256 rows); 64 → 50 ms at w = 11 with 8 × 6 × 6. Type 2 keeps the
/// larger bins: usfft_interp_sm stages a tile per bin, and smaller ones cost it 16–34 %.
const ROW_THREADS_TWO_BLOCKS: usize = 256;

/// The bins of usfft_spread_rows (2D, 3D): ROW_TILE1 along the fastest axis, the others the
/// largest candidate whose padded rows fit one block (type 1: two blocks per multiprocessor
/// where a candidate allows); None where the grid is smaller than the bins (the tiles would
/// wrap onto themselves). Type 2 sorts its points into the same bins.
fn row_tiling(spec: &UsfftSpec, real_bytes: usize) -> Option<(Tiling, SpreadMethod)> {
    let w = spec.kernel.width;
    let t1 = row_tile1(w, real_bytes);
    let candidates: &[[usize; 2]] = match spec.dim {
        2 => &[[32, 1], [16, 1], [8, 1]],
        3 => &[[8, 8], [7, 7], [6, 6], [5, 5], [8, 4], [4, 4]],
        _ => return None,
    };
    let within = |max_rows: usize| {
        candidates.iter().find_map(|&[t2, t3]| {
            let tile = [t1, t2, if spec.dim == 3 { t3 } else { 1 }];
            let rows: usize = (1..spec.dim).map(|d| tile[d] + w - 1).product();
            let fits = (0..spec.dim).all(|d| spec.fine[d] >= tile[d] + w);
            (fits && rows <= max_rows).then(|| {
                (
                    Tiling::new(spec.fine, tile),
                    SpreadMethod::RegisterRows {
                        threads: rows.next_multiple_of(32) as u32,
                    },
                )
            })
        })
    };
    match spec.kind {
        TransformType::Type1 => within(ROW_THREADS_TWO_BLOCKS).or_else(|| within(ROW_THREADS_MAX)),
        TransformType::Type2 => within(ROW_THREADS_MAX),
    }
}

/// The GPU's bin shape and spreading method for a plan with `m` points: register rows in 2D
/// and 3D where the grid is large enough (row_tiling). Otherwise, per point, a bin
/// costs w^d shared atomics plus its share of the tile's flush (one global atomic per padded
/// cell, weighted ×8): the cheapest bin whose padded tile leaves room for two blocks per
/// multiprocessor (≤ `TILE_BUDGET`) wins, else the cheapest that fits shared memory at all,
/// else global atomics with small bins (the sort still gives locality).
pub fn choose_tiling(
    spec: &UsfftSpec,
    m: usize,
    real_bytes: usize,
    max_shared: usize,
) -> (Tiling, SpreadMethod) {
    if let Some(rows) = row_tiling(spec, real_bytes) {
        return rows;
    }
    let w = spec.kernel.width;
    let dim = spec.dim;
    let padded = |t: &[usize; 3]| -> usize { (0..dim).map(|d| t[d] + w - 1).product() };
    let bytes = |t: &[usize; 3]| padded(t) * 2 * real_bytes;
    let density = m.max(1) as f64 / spec.fine_count() as f64;
    let cost = |t: &[usize; 3]| -> f64 {
        let cells: usize = t.iter().product();
        let points = (cells as f64 * density).max(1.0);
        (w as f64).powi(dim as i32) + 8.0 * padded(t) as f64 / points
    };
    // Bins larger than the grid only waste shared memory.
    let clamp = |t: [usize; 3]| -> [usize; 3] {
        std::array::from_fn(|d| if d < dim { t[d].min(spec.fine[d]) } else { 1 })
    };
    let cands: Vec<[usize; 3]> = tile_candidates(dim).into_iter().map(clamp).collect();
    let pick = |limit: usize| {
        cands
            .iter()
            .filter(|t| bytes(t) <= limit)
            .min_by(|a, b| cost(a).partial_cmp(&cost(b)).unwrap())
            .copied()
    };
    match pick(TILE_BUDGET.min(max_shared)).or_else(|| pick(max_shared)) {
        Some(t) => (
            Tiling::new(spec.fine, t),
            SpreadMethod::SharedTiles {
                shared_bytes: bytes(&t),
            },
        ),
        None => (
            Tiling::new(spec.fine, *cands.last().unwrap()),
            SpreadMethod::GlobalAtomics,
        ),
    }
}

/// A plan's points on the device, its fine grid, its cuFFT plan and its stream. Made once per
/// plan (at its first set-points) and reused by later set-points calls.
pub struct DevicePoints<T: Real> {
    /// First, so that it is destroyed before the buffers and the stream.
    fft: FftPlan,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    pub m: usize,
    pub tiling: Tiling,
    pub method: SpreadMethod,
    /// Type 2 from each bin's tile staged in shared memory (usfft_interp_sm), with this many
    /// bytes of it; None where the tile does not fit (one warp or thread per point instead).
    interp_shared: Option<u32>,
    /// Sorted points (capacity ≥ m): caller index, and per dimension i0 and d.
    perm: CudaSlice<i32>,
    first: Vec<CudaSlice<i32>>,
    offset: Vec<CudaSlice<T>>,
    /// Sorted positions of bin b: bin_start[b]..bin_start[b + 1].
    bin_start: CudaSlice<u32>,
    sort: SortScratch<T>,
    fine_index: Vec<CudaSlice<i32>>,
    deconv: Vec<CudaSlice<T>>,
    /// Fine grids (n_vectors of them) and host-to-host staging buffers, one execute at a time.
    work: Mutex<Work<T>>,
    spec: UsfftSpec,
}

/// The counting sort's working arrays: each point's bin and rank within it, its coordinates
/// packed (four values per point), the bins' counts, and the first non-finite coordinate
/// found (3·j + axis).
struct SortScratch<T> {
    key: CudaSlice<u32>,
    rank: CudaSlice<u32>,
    packed: CudaSlice<T>,
    count: CudaSlice<u32>,
    bad: CudaSlice<u64>,
}

struct Work<T> {
    grid: CudaSlice<T>,
    c: Option<CudaSlice<T>>,
    f: Option<CudaSlice<T>>,
}

/// Replaces `buf` by one of `len` elements if it is shorter.
fn grow<U: cudarc::driver::DeviceRepr>(
    buf: &mut CudaSlice<U>,
    len: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<()> {
    if buf.len() < len {
        *buf = alloc(stream, len, what)?;
    }
    Ok(())
}

/// Folds, sorts and uploads `m` host points into `slot` (made on first use: module, fine
/// grid, cuFFT plan). On error the points already there stay.
pub fn set_points<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    coords: [&[T]; 3],
    m: usize,
) -> Result<()> {
    check_count(m)?;
    let pts = points_slot(gpu, slot, spec)?;
    let s = pts.stream.clone();
    let dev: Vec<CudaSlice<T>> = (0..spec.dim)
        .map(|d| {
            let buf = alloc(&s, m, "allocating USFFT point coordinates")?;
            let to = dptr(&buf, &s);
            // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
            unsafe {
                staging::upload_staged_raw(&gpu.ctx, &gpu.staging, cpu, &s, to, &coords[d][..m])
            }?;
            Ok(buf)
        })
        .collect::<Result<_>>()?;
    let mut ptrs = [0; 3];
    for (d, c) in dev.iter().enumerate() {
        ptrs[d] = dptr(c, &s);
    }
    pts.sort(gpu, ptrs, m)
}

/// Sets `m` points whose coordinates already live on the device (`x`, `y`, `z`: device
/// addresses of at least `m` elements of T each, the first `dim` used), without a host copy.
/// The plan's stream first waits for the work queued on `after` (the coordinates' streams).
///
/// # Safety
/// The addresses must be valid device memory of this context, `m` elements of T long, ready
/// once the work on `after` is done.
pub unsafe fn set_points_device<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    coords: [DevPtr; 3],
    m: usize,
    after: &[Arc<CudaStream>],
) -> Result<()> {
    check_count(m)?;
    for (d, &c) in coords.iter().enumerate().take(spec.dim) {
        if c == 0 && m > 0 {
            return Err(Error::NullPointer(format!(
                "device coordinate array {} is NULL",
                ["x", "y", "z"][d]
            )));
        }
    }
    let pts = points_slot(gpu, slot, spec)?;
    for other in after {
        pts.stream
            .join(other)
            .map_err(driver_error("ordering the coordinates before set-points"))?;
    }
    pts.sort(gpu, coords, m)
}

fn check_count(m: usize) -> Result<()> {
    if m > MAX_POINTS {
        return Err(Error::Unsupported(format!(
            "{m} points; at most {MAX_POINTS} per plan"
        )));
    }
    Ok(())
}

/// The plan's device state, made on first use.
fn points_slot<'a, T: Real>(
    gpu: &CudaBackend,
    slot: &'a mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
) -> Result<&'a mut DevicePoints<T>> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    if slot.is_none() {
        *slot = Some(Box::new(DevicePoints::new(gpu, spec)?));
    }
    Ok(slot.as_mut().unwrap())
}

impl<T: Real> DevicePoints<T> {
    fn new(gpu: &CudaBackend, spec: &UsfftSpec) -> Result<DevicePoints<T>> {
        let stream = gpu.stream()?;
        let module = gpu.modules.get(
            &gpu.ctx,
            &gpu.arch,
            &kernels::USFFT,
            &prelude::<T>(spec.dim, spec.kernel.width, spec.kernel.shape),
        )?;
        let what = "uploading USFFT mode tables";
        let mut fine_index = Vec::new();
        let mut deconv = Vec::new();
        for d in 0..3 {
            let fi: Vec<i32> = spec.fine_index(d).into_iter().map(|i| i as i32).collect();
            fine_index.push(upload(&stream, &fi, what)?);
            let q: Vec<T> = spec.deconv[d]
                .iter()
                .map(|&x| T::from_f64(x).unwrap())
                .collect();
            deconv.push(upload(&stream, &q, what)?);
        }
        let nft = spec.fine_count();
        let grid = alloc(
            &stream,
            2 * nft * spec.n_vectors,
            "allocating the USFFT fine grid",
        )?;
        let fft = fine_grid_fft::<T>(spec, &stream)?;
        let what = "allocating USFFT points";
        let (tiling, method) =
            choose_tiling(spec, 0, std::mem::size_of::<T>(), gpu.max_shared_bytes);
        Ok(DevicePoints {
            perm: alloc(&stream, 1, what)?,
            first: (0..3)
                .map(|_| alloc(&stream, 1, what))
                .collect::<Result<_>>()?,
            offset: (0..3)
                .map(|_| alloc(&stream, 1, what))
                .collect::<Result<_>>()?,
            bin_start: alloc(&stream, tiling.n_bins() + 1, what)?,
            sort: SortScratch {
                key: alloc(&stream, 1, what)?,
                rank: alloc(&stream, 1, what)?,
                packed: alloc(&stream, 4, what)?,
                count: alloc(&stream, 1, what)?,
                bad: alloc(&stream, 1, what)?,
            },
            stream,
            module,
            m: 0,
            tiling,
            method,
            interp_shared: None,
            fine_index,
            deconv,
            work: Mutex::new(Work {
                grid,
                c: None,
                f: None,
            }),
            fft,
            spec: spec.clone(),
        })
    }

    /// Bins the points at device addresses `coords` (histogram with ranks), checks them, then
    /// commits: scan, scatter of the permutation, gather of the sorted (i0, d). One 8-byte read-back (the finiteness check)
    /// is the only synchronisation.
    fn sort(&mut self, gpu: &CudaBackend, coords: [DevPtr; 3], m: usize) -> Result<()> {
        let spec = &self.spec;
        let s = self.stream.clone();
        let (tiling, method) =
            choose_tiling(spec, m, std::mem::size_of::<T>(), gpu.max_shared_bytes);
        let n_bins = tiling.n_bins();
        if n_bins >= u32::MAX as usize {
            return Err(Error::Unsupported(format!("{n_bins} bins is too many")));
        }
        let what = "allocating USFFT point bins";
        grow(&mut self.sort.key, m, &s, what)?;
        grow(&mut self.sort.rank, m, &s, what)?;
        grow(&mut self.sort.packed, 4 * m, &s, what)?;
        grow(&mut self.sort.count, n_bins, &s, what)?;
        let [nf1, nf2, nf3] = spec.fine.map(|n| n as i32);
        let [t1, t2, t3] = tiling.tile.map(|t| t as i32);
        let [nb1, nb2] = [tiling.bins[0] as i32, tiling.bins[1] as i32];
        let [x, y, z] = coords;
        let m64 = m as i64;
        let per_point = LaunchConfig {
            grid_dim: ((m as u64).div_ceil(THREADS as u64).max(1) as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let key = dptr(&self.sort.key, &s);
        let count = dptr(&self.sort.count, &s);
        let rank = dptr(&self.sort.rank, &s);
        let packed = dptr(&self.sort.packed, &s);
        let bad = dptr(&self.sort.bad, &s);
        // SAFETY: the scratch arrays hold n_bins counts and one flag.
        unsafe {
            result::memset_d8_async(count, 0, 4 * n_bins, s.cu_stream())
                .map_err(driver_error("clearing USFFT bin counts"))?;
            result::memset_d8_async(bad, 0xff, 8, s.cu_stream())
                .map_err(driver_error("clearing USFFT bin counts"))?;
        }
        if m > 0 {
            // The arguments match usfft_bin_points; coordinates hold m values.
            launch!(
                self.module,
                s,
                "usfft_bin_points",
                per_point,
                &x,
                &y,
                &z,
                &m64,
                &nf1,
                &nf2,
                &nf3,
                &t1,
                &t2,
                &t3,
                &nb1,
                &nb2,
                &key,
                &rank,
                &count,
                &packed,
                &bad,
            );
        }
        let mut flag = [0u64];
        s.memcpy_dtoh(&self.sort.bad, &mut flag)
            .map_err(driver_error("checking USFFT points"))?;
        if flag[0] != u64::MAX {
            let (j, axis) = (flag[0] / 3, flag[0] % 3);
            return Err(Error::NonFinite(format!(
                "coordinate {} of point {j} is not finite; no points were set",
                ["x", "y", "z"][axis as usize]
            )));
        }
        // Commit: from here on the previous points are overwritten.
        let what = "allocating USFFT points";
        self.m = 0;
        grow(&mut self.perm, m, &s, what)?;
        grow(&mut self.bin_start, n_bins + 1, &s, what)?;
        for d in 0..spec.dim {
            grow(&mut self.first[d], m, &s, what)?;
            grow(&mut self.offset[d], m, &s, what)?;
        }
        let start = dptr(&self.bin_start, &s);
        let nb = n_bins as i64;
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        // The arguments match usfft_scan_bins; start holds n_bins + 1 values.
        launch!(
            self.module,
            s,
            "usfft_scan_bins",
            one_block,
            &count,
            &start,
            &nb,
        );
        if m > 0 {
            let perm = dptr(&self.perm, &s);
            let [i1, i2, i3] = [0, 1, 2].map(|d| dptr(&self.first[d], &s));
            let [d1, d2, d3] = [0, 1, 2].map(|d| dptr(&self.offset[d], &s));
            // The arguments match usfft_scatter_points; perm holds m values.
            launch!(
                self.module,
                s,
                "usfft_scatter_points",
                per_point,
                &m64,
                &key,
                &rank,
                &start,
                &perm,
            );
            // The arguments match usfft_sorted_coords; sorted arrays hold m values.
            launch!(
                self.module,
                s,
                "usfft_sorted_coords",
                per_point,
                &packed,
                &m64,
                &nf1,
                &nf2,
                &nf3,
                &perm,
                &i1,
                &i2,
                &i3,
                &d1,
                &d2,
                &d3,
            );
        }
        // The sort's per-point scratch (24 or 40 bytes a point) is not needed again until the
        // next set-points; freed in stream order, so that large plans (the wave packets' 10^8
        // and more lattice points) keep only their sorted points.
        self.sort.key = alloc(&s, 1, what)?;
        self.sort.rank = alloc(&s, 1, what)?;
        self.sort.packed = alloc(&s, 4, what)?;
        self.m = m;
        self.tiling = tiling;
        self.method = method;
        let tile_bytes = interp_tile_bytes(spec, &tiling, std::mem::size_of::<T>());
        let limit = match INTERP_TILE_LIMIT.load(Ordering::Relaxed) {
            0 => gpu.max_shared_bytes,
            cap => cap.min(gpu.max_shared_bytes),
        };
        self.interp_shared = (tile_bytes <= limit).then_some(tile_bytes as u32);
        Ok(())
    }
}

/// The batch of fine-grid FFTs, bound to the plan's stream.
fn fine_grid_fft<T: Real>(spec: &UsfftSpec, stream: &Arc<CudaStream>) -> Result<FftPlan> {
    let dims: Vec<usize> = (0..spec.dim).rev().map(|d| spec.fine[d]).collect();
    let nft = spec.fine_count();
    let kind = if std::mem::size_of::<T>() == 4 {
        FftKind::CUFFT_C2C
    } else {
        FftKind::CUFFT_Z2Z
    };
    FftPlan::many(
        &dims,
        (nft, nft),
        kind,
        spec.n_vectors,
        stream,
        "the fine-grid FFT",
    )
}

impl<T: Real> DevicePoints<T> {
    /// The stream every execute of this plan runs on (for events around device-resident calls).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Queues one execute on the plan's stream: `c` (2·n_vectors·M reals) and `f`
    /// (2·n_vectors·N1N2N3 reals) are device addresses; `grid` the fine grids.
    fn enqueue(
        &self,
        c: DevPtr,
        f: DevPtr,
        grid: &mut CudaSlice<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        let mark = |i: usize| -> Result<()> {
            match events {
                Some(e) => e[i]
                    .record(&self.stream)
                    .map_err(driver_error("recording an event")),
                None => Ok(()),
            }
        };
        let spec = &self.spec;
        let s = &self.stream;
        let g = {
            let (p, _r) = grid.device_ptr_mut(s);
            p
        };
        mark(0)?;
        // SAFETY: the fine grids span grid.len() elements of T.
        unsafe {
            result::memset_d8_async(g, 0, grid.len() * std::mem::size_of::<T>(), s.cu_stream())
        }
        .map_err(driver_error("clearing the USFFT fine grid"))?;
        let m = self.m as i64;
        let nvec = spec.n_vectors as i32;
        let [nf1, nf2, nf3] = spec.fine.map(|n| n as i32);
        let beta = T::from_f64(spec.kernel.beta).unwrap();
        let [i1, i2, i3] = [0, 1, 2].map(|d| dptr(&self.first[d], s));
        let [d1, d2, d3] = [0, 1, 2].map(|d| dptr(&self.offset[d], s));
        let perm = dptr(&self.perm, s);
        let per_point = LaunchConfig {
            grid_dim: ((self.m as u32).div_ceil(THREADS).max(1), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let deconvolve = |to_modes: i32| -> Result<()> {
            let total = spec.mode_count() * spec.n_vectors;
            let cfg = LaunchConfig {
                grid_dim: ((total as u64).div_ceil(THREADS as u64) as u32, 1, 1),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let [fi1, fi2, fi3] = [0, 1, 2].map(|d| dptr(&self.fine_index[d], s));
            let [q1, q2, q3] = [0, 1, 2].map(|d| dptr(&self.deconv[d], s));
            let [n1, n2, n3] = spec.modes.map(|n| n as i32);
            // The arguments match usfft_deconvolve; buffers span the plan's sizes.
            launch!(
                self.module,
                s,
                "usfft_deconvolve",
                cfg,
                &f,
                &g,
                &fi1,
                &fi2,
                &fi3,
                &q1,
                &q2,
                &q3,
                &n1,
                &n2,
                &n3,
                &nf1,
                &nf2,
                &nf3,
                &nvec,
                &to_modes,
            );
            Ok(())
        };
        match spec.kind {
            TransformType::Type1 => {
                if self.m > 0 {
                    match self.method {
                        SpreadMethod::RegisterRows { .. } | SpreadMethod::SharedTiles { .. } => {
                            // One block per bin: a thread per padded-tile row (rows), or a
                            // warp per point into the padded tile in shared memory (sm).
                            let (name, threads, shared) = match self.method {
                                SpreadMethod::RegisterRows { threads } => {
                                    ("usfft_spread_rows", threads, 0)
                                }
                                SpreadMethod::SharedTiles { shared_bytes } => {
                                    ("usfft_spread_sm", THREADS, shared_bytes as u32)
                                }
                                SpreadMethod::GlobalAtomics => unreachable!(),
                            };
                            let t = self.tiling;
                            let [t1, t2, t3] = t.tile.map(|x| x as i32);
                            let [nb1, nb2] = [t.bins[0] as i32, t.bins[1] as i32];
                            let bs = dptr(&self.bin_start, s);
                            let cfg = LaunchConfig {
                                grid_dim: (t.n_bins() as u32, 1, 1),
                                block_dim: (threads, 1, 1),
                                shared_mem_bytes: shared,
                            };
                            // The arguments match usfft_spread_rows and usfft_spread_sm.
                            launch!(
                                self.module,
                                s,
                                name,
                                cfg,
                                &bs,
                                &perm,
                                &i1,
                                &i2,
                                &i3,
                                &d1,
                                &d2,
                                &d3,
                                &c,
                                &g,
                                &m,
                                &nvec,
                                &nf1,
                                &nf2,
                                &nf3,
                                &t1,
                                &t2,
                                &t3,
                                &nb1,
                                &nb2,
                                &beta,
                            );
                        }
                        SpreadMethod::GlobalAtomics => {
                            // The arguments match usfft_spread_gm.
                            launch!(
                                self.module,
                                s,
                                "usfft_spread_gm",
                                per_point,
                                &perm,
                                &i1,
                                &i2,
                                &i3,
                                &d1,
                                &d2,
                                &d3,
                                &c,
                                &g,
                                &m,
                                &nvec,
                                &nf1,
                                &nf2,
                                &nf3,
                                &beta,
                            );
                        }
                    }
                }
                mark(1)?;
                self.fft(g)?;
                mark(2)?;
                deconvolve(1)?;
            }
            TransformType::Type2 => {
                deconvolve(0)?;
                mark(1)?;
                self.fft(g)?;
                mark(2)?;
                if let (true, Some(shared)) = (self.m > 0, self.interp_shared) {
                    let t = self.tiling;
                    let [t1, t2, t3] = t.tile.map(|x| x as i32);
                    let [nb1, nb2] = [t.bins[0] as i32, t.bins[1] as i32];
                    let n_bins = t.n_bins() as i64;
                    let chunk = INTERP_CHUNK as i32;
                    let pitch = interp_pitch(spec, &t, std::mem::size_of::<T>()) as i32;
                    let bs = dptr(&self.bin_start, s);
                    let cfg = LaunchConfig {
                        grid_dim: (self.m.div_ceil(INTERP_CHUNK) as u32, 1, 1),
                        block_dim: (THREADS, 1, 1),
                        shared_mem_bytes: shared,
                    };
                    // The arguments match usfft_interp_sm; bin_start holds n_bins + 1 values.
                    launch!(
                        self.module,
                        s,
                        "usfft_interp_sm",
                        cfg,
                        &bs,
                        &n_bins,
                        &perm,
                        &i1,
                        &i2,
                        &i3,
                        &d1,
                        &d2,
                        &d3,
                        &g,
                        &c,
                        &m,
                        &nvec,
                        &nf1,
                        &nf2,
                        &nf3,
                        &t1,
                        &t2,
                        &t3,
                        &nb1,
                        &nb2,
                        &chunk,
                        &pitch,
                        &beta,
                    );
                } else if self.m > 0 {
                    // Warp per point while a warp covers ≥ 3 rows per pass (w ≤ 10); measured
                    // on an H100, one thread per point is faster for wider kernels.
                    let warp = spec.kernel.width <= 10;
                    let name = if warp {
                        "usfft_interp"
                    } else {
                        "usfft_interp_thread"
                    };
                    // One warp per point.
                    let per_warp = LaunchConfig {
                        grid_dim: ((self.m as u64 * 32).div_ceil(THREADS as u64) as u32, 1, 1),
                        block_dim: (THREADS, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    // The arguments match usfft_interp.
                    launch!(
                        self.module,
                        s,
                        name,
                        if warp { per_warp } else { per_point },
                        &perm,
                        &i1,
                        &i2,
                        &i3,
                        &d1,
                        &d2,
                        &d3,
                        &g,
                        &c,
                        &m,
                        &nvec,
                        &nf1,
                        &nf2,
                        &nf3,
                        &beta,
                    );
                }
            }
        }
        mark(3)
    }

    fn fft(&self, grid: DevPtr) -> Result<()> {
        // cuFFT's forward direction is e^{−i…}: the direction code is the exponent's sign.
        let dir = self.spec.sign;
        // SAFETY: in place over the n_vectors fine grids the plan was made for.
        unsafe {
            if std::mem::size_of::<T>() == 4 {
                cufft_result::exec_c2c(self.fft.handle(), grid as *mut _, grid as *mut _, dir)
            } else {
                cufft_result::exec_z2z(self.fft.handle(), grid as *mut _, grid as *mut _, dir)
            }
        }
        .map_err(fft::error("running the fine-grid FFT"))
    }
}

/// A device buffer of at least `len` elements, kept in `slot` between calls.
fn ensure<'a, T: Real>(
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
    s: &Arc<CudaStream>,
) -> Result<&'a mut CudaSlice<T>> {
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        *slot = None;
        // SAFETY: written by a copy or a kernel before it is read.
        *slot = Some(
            unsafe { s.alloc::<T>(len.max(1)) }
                .map_err(driver_error("allocating USFFT buffers"))?,
        );
    }
    Ok(slot.as_mut().unwrap())
}

/// Host-to-host execute: uploads the input, runs, downloads the output, waits. The caller's
/// arrays move through page-locked pieces filled and emptied by the context's CPU pool
/// (`staging::upload_staged`), at the link's rate rather than one core's copy rate. With
/// a progress callback the device work is waited for and reported before the download, so
/// that a stop there writes nothing (the one cancellation point: one whole transform).
pub fn execute<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    pts: &DevicePoints<T>,
    c: &mut [Complex<T>],
    f: &mut [Complex<T>],
    reporter: &mut Reporter,
) -> Result<()> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let s = pts.stream.clone();
    let nc = 2 * spec.n_vectors * pts.m;
    let nm = 2 * spec.n_vectors * spec.mode_count();
    let mut work = pts.work.lock().unwrap();
    let Work { grid, c: cd, f: fd } = &mut *work;
    let cd = dptr(ensure(cd, nc, &s)?, &s);
    let fd = dptr(ensure(fd, nm, &s)?, &s);
    let (input, input_dev) = match spec.kind {
        TransformType::Type1 => (&as_reals(c)[..nc], cd),
        TransformType::Type2 => (&as_reals(f)[..nm], fd),
    };
    // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
    unsafe { staging::upload_staged_raw(&gpu.ctx, &gpu.staging, cpu, &s, input_dev, input) }?;
    pts.enqueue(cd, fd, grid, None)?;
    if reporter.is_active() {
        reporter.stage("usfft", 1.0, 1);
        s.synchronize().map_err(driver_error("running the USFFT"))?;
        reporter.advance(1)?;
    }
    let (output, output_dev) = match spec.kind {
        TransformType::Type1 => (&mut as_reals_mut(f)[..nm], fd),
        TransformType::Type2 => (&mut as_reals_mut(c)[..nc], cd),
    };
    // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
    unsafe { staging::download_staged_raw(&gpu.ctx, &gpu.staging, cpu, &s, output_dev, output) }
}

/// Device-resident execute, queued on the plan's stream (`DevicePoints::stream`) without
/// waiting: `c` holds 2·n_vectors·M reals (interleaved complex strengths, vector v at 2·v·M),
/// `f` 2·n_vectors·N1N2N3 reals. Type 1 reads c and writes f; type 2 reads f and writes c.
///
/// `events`, if given, are recorded at the start, after spreading (type 1) or the copy into
/// the fine grid (type 2), after the FFT, and at the end (for benchmarks).
pub fn execute_device<T: Real>(
    gpu: &CudaBackend,
    pts: &DevicePoints<T>,
    c: &mut CudaSlice<T>,
    f: &mut CudaSlice<T>,
    events: Option<&[CudaEvent; 4]>,
) -> Result<()> {
    let spec = &pts.spec;
    let nc = 2 * spec.n_vectors * pts.m;
    let nm = 2 * spec.n_vectors * spec.mode_count();
    if c.len() < nc || f.len() < nm {
        return Err(crate::invalid!(
            "device buffers hold {} and {} reals; the plan needs {nc} (strengths) and {nm} (modes)",
            c.len(),
            f.len()
        ));
    }
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let s = pts.stream.clone();
    let (cp, _rc) = c.device_ptr_mut(&s);
    let (fp, _rf) = f.device_ptr_mut(&s);
    let mut work = pts.work.lock().unwrap();
    pts.enqueue(cp, fp, &mut work.grid, events)
}
