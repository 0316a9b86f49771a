//! Set-points on the device: host coordinates are uploaded first; each point is then folded
//! and binned (a histogram with ranks), the coordinates checked, and the sort committed: a
//! scan of the bins' counts, the scatter of the permutation, the gather of the sorted
//! (i0, d) per dimension. One 8-byte read-back (the finiteness check) is the only
//! synchronisation.

use super::heuristics::{choose_interp, choose_tiling, SpreadMethod};
use super::plan::{
    grow, points_slot, push_bins, push_fine, DeviceLattices, DevicePoints, PointSet, Sorted,
};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{part, part_mut, DeviceArray, Part};
use crate::backend::cuda::buffers::{alloc, download, fill_bytes, fill_zero, upload};
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::upload_staged;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::sample::Real;
use crate::usfft::grid::Tiling;
use crate::usfft::lattice::{count_points, device_table, PointLattice};
use crate::usfft::points::{Frame, MAX_POINTS, RADIANS};
use crate::usfft::spec::UsfftSpec;
use cudarc::driver::{CudaModule, CudaStream, LaunchConfig};
use std::sync::Arc;

/// The device coordinates x, y, z of a set-points call, each of at least `m` elements:
/// None for the unused dimensions (and where a caller passed NULL).
pub type DeviceCoords<'a, T> = [Option<&'a dyn DeviceArray<T>>; 3];

/// Threads of a block of the scan kernels (their SCAN_THREADS).
const SCAN_THREADS: u32 = 1024;

/// Bins per tile of the scan kernels (their SCAN_TILE).
const SCAN_TILE: usize = 4 * SCAN_THREADS as usize;

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
    let dev = upload_coords(gpu, cpu, &pts.stream, coords, spec.dim, m)?;
    pts.sort(gpu, as_coords(&dev), m, &RADIANS)
}

/// The first `dim` coordinate arrays (`m` values each) copied to the device through the
/// staging buffers, on `s`.
pub(super) fn upload_coords<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    s: &Arc<CudaStream>,
    coords: [&[T]; 3],
    dim: usize,
    m: usize,
) -> Result<Vec<DeviceBuf<T>>> {
    (0..dim)
        .map(|d| {
            let mut buf = alloc(s, m, "allocating USFFT point coordinates")?;
            upload_staged(&gpu.ctx, &gpu.staging, cpu, s, &mut buf, &coords[d][..m])?;
            Ok(buf)
        })
        .collect()
}

/// Uploaded coordinates (`upload_coords`) as a set-points call takes them.
pub(super) fn as_coords<T: Real>(bufs: &[DeviceBuf<T>]) -> DeviceCoords<'_, T> {
    let mut coords: DeviceCoords<T> = [None; 3];
    for (c, b) in coords.iter_mut().zip(bufs) {
        *c = Some(b);
    }
    coords
}

/// Sets `m` points whose coordinates already live on the device (the first `dim` of
/// `coords`), without a host copy. The plan's stream first waits for the work queued on
/// `after` (the coordinates' streams).
pub fn set_points_device<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    coords: DeviceCoords<'_, T>,
    m: usize,
    after: &[Arc<CudaStream>],
) -> Result<()> {
    check_count(m)?;
    for (d, c) in coords.iter().enumerate().take(spec.dim) {
        if c.is_none() && m > 0 {
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
    pts.sort(gpu, coords, m, &RADIANS)
}

/// Sets the points of `lattices` (`usfft::lattice`): binned and sorted on the device from
/// the lattices' table, which the plan keeps with the permutation and the bins; no
/// coordinates are uploaded or stored (the kernels compute each point where they use it).
pub fn set_lattice_points<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    lattices: &[PointLattice],
) -> Result<()> {
    let pts = points_slot(gpu, slot, spec)?;
    sort_lattice_table(gpu, pts, lattices)
}

/// Sets the points of each group of lattices as its own sorted set, into the same bins
/// (`DevicePoints::groups`; the plan's own set is left empty): a group's values are then
/// interpolated or spread apart from the others' (`execute_in_groups`), so that a caller
/// holds one group's values at a time. Each group's sort frees its per-point scratch, so
/// that the sort holds the largest group's at most.
pub fn set_lattice_groups<T: Real>(
    gpu: &CudaBackend,
    slot: &mut Option<Box<DevicePoints<T>>>,
    spec: &UsfftSpec,
    groups: &[Vec<PointLattice>],
) -> Result<()> {
    let pts = points_slot(gpu, slot, spec)?;
    let mut sets = Vec::with_capacity(groups.len());
    for lattices in groups {
        pts.sort.sets = 0;
        sort_lattice_table(gpu, pts, lattices)?;
        sets.push(pts.take_set()?);
    }
    pts.groups = sets;
    Ok(())
}

/// Uploads the table of `lattices` and sorts their points into the plan's own set.
fn sort_lattice_table<T: Real>(
    gpu: &CudaBackend,
    pts: &mut DevicePoints<T>,
    lattices: &[PointLattice],
) -> Result<()> {
    let m = count_points(lattices)?;
    let s = pts.stream.clone();
    let s = &s;
    let (frames, shapes, first) = device_table(lattices);
    let what = "uploading USFFT point lattices";
    let table = DeviceLattices {
        frames: upload(s, &frames, what)?,
        shapes: upload(s, &shapes, what)?,
        first: upload(s, &first, what)?,
        n: lattices.len(),
    };
    pts.sort_lattices(gpu, table, m)?;
    // The host tables must outlive their copies.
    s.synchronize().map_err(driver_error(what))
}

/// Where a sort's points come from: coordinates placed in a frame (packed by the histogram),
/// or lattices (computed from their table).
enum Placement<'a> {
    Coordinates(&'a Frame),
    Lattices(Box<DeviceLattices>),
}

fn check_count(m: usize) -> Result<()> {
    if m > MAX_POINTS {
        return Err(Error::Unsupported(format!(
            "{m} points; at most {MAX_POINTS} per plan"
        )));
    }
    Ok(())
}

impl<T: Real> DevicePoints<T> {
    /// Bins the points (placed in `frame`), checks them, then commits them with the bins
    /// and methods chosen for their count.
    pub(super) fn sort(
        &mut self,
        gpu: &CudaBackend,
        coords: DeviceCoords<'_, T>,
        m: usize,
        frame: &Frame,
    ) -> Result<()> {
        check_count(m)?;
        let (tiling, method) = self.tiling_for(gpu, m)?;
        let coords = coords.map(|c| c.map(|c| part(c, 0, m)));
        self.bin_points(&coords, m, &tiling, frame)?;
        self.commit(m, &tiling, Placement::Coordinates(frame))?;
        self.adopt(gpu, m, tiling, method)
    }

    /// `sort` for the `m` points of the lattices in `table` (on the device already).
    fn sort_lattices(&mut self, gpu: &CudaBackend, table: DeviceLattices, m: usize) -> Result<()> {
        let (tiling, method) = self.tiling_for(gpu, m)?;
        self.bin_lattices(&table, m, &tiling)?;
        self.commit(m, &tiling, Placement::Lattices(Box::new(table)))?;
        self.adopt(gpu, m, tiling, method)
    }

    /// The plan's own set, left empty (no points, the same bins and methods) for the next
    /// group's sort.
    fn take_set(&mut self) -> Result<PointSet<T>> {
        let empty = PointSet {
            sorted: Arc::new(Sorted::new(&self.stream, 0)?),
            m: 0,
            ..self.set
        };
        Ok(std::mem::replace(&mut self.set, empty))
    }

    /// The bins and the spreading method for `m` points.
    fn tiling_for(&self, gpu: &CudaBackend, m: usize) -> Result<(Tiling, SpreadMethod)> {
        let real_bytes = std::mem::size_of::<T>();
        let chosen = choose_tiling(&self.spec, m, real_bytes, gpu.max_shared_bytes);
        let n_bins = chosen.0.n_bins();
        if n_bins >= u32::MAX as usize {
            return Err(Error::Unsupported(format!("{n_bins} bins is too many")));
        }
        Ok(chosen)
    }

    /// Takes the committed points' count, bins and methods (the interpolation's from them).
    fn adopt(
        &mut self,
        gpu: &CudaBackend,
        m: usize,
        tiling: Tiling,
        method: SpreadMethod,
    ) -> Result<()> {
        let real_bytes = std::mem::size_of::<T>();
        let max_shared = gpu.max_shared_bytes;
        let on_lattices = self.set.on_lattices();
        let set = &mut self.set;
        set.interp = choose_interp(&self.spec, &tiling, real_bytes, max_shared, on_lattices);
        set.m = m;
        set.tiling = tiling;
        set.method = method;
        Ok(())
    }

    /// The histogram's scratch for `m` points in `n_bins` bins (`packed` values of packed
    /// coordinates), the bins' counts zeroed.
    fn histogram_scratch(&mut self, m: usize, n_bins: usize, packed: usize) -> Result<()> {
        let s = &self.stream;
        let what = "allocating USFFT point bins";
        let sort = &mut self.sort;
        grow(&mut sort.key, m, s, what)?;
        grow(&mut sort.rank, m, s, what)?;
        grow(&mut sort.packed, packed, s, what)?;
        grow(&mut sort.count, n_bins, s, what)?;
        let clearing = "clearing USFFT bin counts";
        fill_zero(s, &mut part_mut(&mut sort.count, 0, n_bins), clearing)
    }

    /// The histogram of lattice points: each point's bin and rank in it, the bins' counts
    /// (lattice points are finite: nothing to check).
    fn bin_lattices(&mut self, table: &DeviceLattices, m: usize, tiling: &Tiling) -> Result<()> {
        self.histogram_scratch(m, tiling.n_bins(), 0)?;
        if m == 0 {
            return Ok(());
        }
        let (s, sort) = (&self.stream, &mut self.sort);
        let mut l = Launch::new(&self.module, s, "usfft_bin_lattice", for_elems(m))?;
        let n_lattices = table.n as i32;
        l.input(&table.frames)
            .input(&table.shapes)
            .input(&table.first)
            .scalar(n_lattices);
        push_fine(l.scalar(m as i64), &self.spec);
        push_bins(&mut l, tiling);
        l.output(&mut sort.key)
            .output(&mut sort.rank)
            .output(&mut sort.count);
        // SAFETY: usfft_bin_lattice(const double* lat_frame, const long long* lat_shape,
        // const long long* lat_first, int n_lat, long long m, int nf1..nf3, int t1..t3, int
        // nb1, int nb2, unsigned* key, unsigned* rank, unsigned* count): the table holds 12,
        // 6 and 1 values for each of its n_lat lattices, whose first points ascend from 0
        // and whose points number m (count_points); thread j < m finds its lattice among
        // them, writes key[j] and rank[j] (m each) and adds to count[bin] with bin < n_bins
        // (folded cells of this tiling; count holds n_bins).
        unsafe { l.run() }
    }

    /// The histogram (each point's bin and rank in it, the bins' counts, the packed
    /// coordinates), then the read-back of the first non-finite coordinate: such points are
    /// refused before anything of the points set before is overwritten.
    fn bin_points(
        &mut self,
        coords: &[Option<Part<'_, T>>; 3],
        m: usize,
        tiling: &Tiling,
        frame: &Frame,
    ) -> Result<()> {
        self.histogram_scratch(m, tiling.n_bins(), 4 * m)?;
        let (s, sort) = (&self.stream, &mut self.sort);
        fill_bytes(s, &mut sort.bad, 0xff, "clearing the USFFT points' check")?;
        if m > 0 {
            let mut l = Launch::new(&self.module, s, "usfft_bin_points", for_elems(m))?;
            let [x, y, z] = coords;
            l.optional(x.as_ref())
                .optional(y.as_ref())
                .optional(z.as_ref());
            push_fine(l.scalar(m as i64), &self.spec);
            push_frame(push_bins(&mut l, tiling), frame);
            l.output(&mut sort.key)
                .output(&mut sort.rank)
                .output(&mut sort.count);
            l.output(&mut sort.packed).output(&mut sort.bad);
            // SAFETY: usfft_bin_points(const REAL* x, y, z, long long m, int nf1..nf3, int
            // t1..t3, int nb1, int nb2, double c1, s1..c3, s3, unsigned* key, unsigned* rank, unsigned* count, xyz*
            // packed, unsigned long long* bad). Thread j < m reads coordinate j of the used
            // dimensions (parts of m elements, present: set_points_device refuses NULL ones;
            // the others are not read), writes key[j], rank[j] (m each), packed[4j..4j+4]
            // (4m), adds to count[bin] with bin < n_bins (folded cells of this tiling; count
            // holds n_bins) and lowers the one flag.
            unsafe { l.run() }?;
        }
        let mut flag = [0u64];
        download(s, &sort.bad, &mut flag, "checking USFFT points")?;
        if flag[0] != u64::MAX {
            let (j, axis) = (flag[0] / 3, flag[0] % 3);
            return Err(Error::NonFinite(format!(
                "coordinate {} of point {j} is not finite; no points were set",
                ["x", "y", "z"][axis as usize]
            )));
        }
        Ok(())
    }

    /// Commits the binned points (from here on the previous points are overwritten): the
    /// bins' starts, each sorted slot's point, the sorted (i0, d) per dimension of points
    /// given by coordinates (or the lattices' table); then frees the sort's per-point
    /// scratch.
    fn commit(&mut self, m: usize, tiling: &Tiling, placement: Placement<'_>) -> Result<()> {
        let what = "allocating USFFT points";
        let s = self.stream.clone();
        self.set.m = 0;
        let dim = self.spec.dim;
        let sorted = self.own_sorted()?;
        grow(&mut sorted.perm, m, &s, what)?;
        grow(&mut sorted.bin_start, tiling.n_bins() + 1, &s, what)?;
        let frame = match placement {
            Placement::Coordinates(frame) => {
                sorted.lattices = None;
                for d in 0..dim {
                    grow(&mut sorted.first[d], m, &s, what)?;
                    grow(&mut sorted.offset[d], m, &s, what)?;
                }
                Some(frame)
            }
            Placement::Lattices(table) => {
                sorted.lattices = Some(*table);
                for d in 0..dim {
                    sorted.first[d] = alloc(&s, 1, what)?;
                    sorted.offset[d] = alloc(&s, 1, what)?;
                }
                None
            }
        };
        self.scan_bins(tiling.n_bins())?;
        if m > 0 {
            self.scatter_points(m)?;
            if let Some(frame) = frame {
                self.gather_sorted(m, frame)?;
            }
        }
        // The sort's per-point scratch (24 or 40 bytes a point) is not needed again until the
        // next set-points. A plan's first set-points frees it in stream order, so that plans
        // whose points are set once (the wave packets' 10^8 and more lattice points) keep only
        // their sorted points; from the second on the plan keeps it, so that new points at
        // every call do not allocate: allocating and freeing it took 0.9 ms of a 2.8 ms call
        // at 16.8 M points (H100).
        self.sort.sets = self.sort.sets.saturating_add(1);
        if self.sort.sets < 2 {
            self.sort.key = alloc(&s, 1, what)?;
            self.sort.rank = alloc(&s, 1, what)?;
            self.sort.packed = alloc(&s, 4, what)?;
        }
        Ok(())
    }

    /// bin_start = the exclusive scan of the bins' counts (n_bins + 1 values): one block
    /// for up to two tiles of bins; beyond, the tiles' sums, their scan, and the tiles'
    /// scans from their starts, a block a tile (one block took 0.12 ms over 262,144 bins on
    /// an H100, a tenth of a set-points call).
    fn scan_bins(&mut self, n_bins: usize) -> Result<()> {
        let tiles = n_bins.div_ceil(SCAN_TILE);
        if tiles <= 2 {
            let sorted = own(&mut self.set.sorted);
            return scan_in_one_block(
                &self.module,
                &self.stream,
                &self.sort.count,
                &mut sorted.bin_start,
                n_bins,
            );
        }
        let s = self.stream.clone();
        let what = "allocating USFFT bin scan";
        grow(&mut self.sort.tile_sums, tiles, &s, what)?;
        grow(&mut self.sort.tile_starts, tiles + 1, &s, what)?;
        let per_tile = LaunchConfig {
            grid_dim: (tiles as u32, 1, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = Launch::new(&self.module, &s, "usfft_sum_tiles", per_tile)?;
        l.input(&self.sort.count)
            .output(&mut self.sort.tile_sums)
            .scalar(n_bins as i64);
        // SAFETY: usfft_sum_tiles(const unsigned* count, unsigned* sums, long long nbins):
        // block b < tiles reads count[b·SCAN_TILE ..) below nbins (count holds ≥ n_bins) and
        // writes sums[b] (tile_sums holds ≥ tiles).
        unsafe { l.run() }?;
        let sort = &mut self.sort;
        scan_in_one_block(
            &self.module,
            &s,
            &sort.tile_sums,
            &mut sort.tile_starts,
            tiles,
        )?;
        let mut l = Launch::new(&self.module, &s, "usfft_scan_tiles", per_tile)?;
        let sorted = own(&mut self.set.sorted);
        l.input(&self.sort.count)
            .input(&self.sort.tile_starts)
            .output(&mut sorted.bin_start)
            .scalar(n_bins as i64);
        // SAFETY: usfft_scan_tiles(const unsigned* count, const unsigned* tile_start,
        // unsigned* start, long long nbins): block b < tiles reads count[b·SCAN_TILE ..)
        // below nbins and tile_start[b] and tile_start[tiles] (tile_starts holds tiles + 1),
        // and writes start over the same bins and start[nbins] (bin_start holds ≥ n_bins + 1).
        unsafe { l.run() }
    }

    /// perm[start[key[j]] + rank[j]] = j: the caller index of each sorted slot.
    fn scatter_points(&mut self, m: usize) -> Result<()> {
        let s = &self.stream;
        let mut l = Launch::new(&self.module, s, "usfft_scatter_points", for_elems(m))?;
        let sorted = own(&mut self.set.sorted);
        l.scalar(m as i64)
            .input(&self.sort.key)
            .input(&self.sort.rank)
            .input(&sorted.bin_start)
            .output(&mut sorted.perm);
        // SAFETY: usfft_scatter_points(long long m, const unsigned* key, const unsigned*
        // rank, const unsigned* start, int* perm): thread j < m reads key[j], rank[j] (m
        // each) and start[key[j]] (a bin < n_bins); every point was binned (the finiteness
        // check passed), so start[key[j]] + rank[j] is a distinct slot < m of perm (m).
        unsafe { l.run() }
    }

    /// Sorted slot p takes point perm[p]'s (i0, d) per dimension.
    fn gather_sorted(&mut self, m: usize, frame: &Frame) -> Result<()> {
        let s = &self.stream;
        let mut l = Launch::new(&self.module, s, "usfft_sorted_coords", for_elems(m))?;
        let sorted = own(&mut self.set.sorted);
        l.input(&self.sort.packed).scalar(m as i64);
        push_frame(push_fine(&mut l, &self.spec), frame).input(&sorted.perm);
        let [i1, i2, i3] = &mut sorted.first;
        l.output(i1).output(i2).output(i3);
        let [d1, d2, d3] = &mut sorted.offset;
        l.output(d1).output(d2).output(d3);
        // SAFETY: usfft_sorted_coords(const xyz* packed, long long m, int nf1..nf3, double
        // c1, s1..c3, s3, const int* perm, int* i1, i2, i3, REAL* d1, d2, d3): thread p < m
        // reads perm[p] (< m) and packed[4·perm[p]..+4] (4m), writes i_d[p] and d_d[p] of
        // the used dimensions (m each; the others are not touched).
        unsafe { l.run() }
    }
}

/// Pushes `double c1, s1, c2, s2, c3, s3`: the frame the coordinates are placed in.
fn push_frame<'l, 's>(l: &'l mut Launch<'s>, frame: &Frame) -> &'l mut Launch<'s> {
    for &(c, scale) in frame {
        l.scalar(c).scalar(scale);
    }
    l
}

/// start = the exclusive scan of count[0..n) (n + 1 values) by one block of the scan kernel.
fn scan_in_one_block(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    count: &DeviceBuf<u32>,
    start: &mut DeviceBuf<u32>,
    n: usize,
) -> Result<()> {
    if count.len() < n || start.len() <= n {
        return Err(Error::Internal(format!(
            "a scan of {n} counts from {} into {} starts",
            count.len(),
            start.len()
        )));
    }
    let one_block = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (SCAN_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut l = Launch::new(module, stream, "usfft_scan_bins", one_block)?;
    l.input(count).output(start).scalar(n as i64);
    // SAFETY: usfft_scan_bins(const unsigned* count, unsigned* start, long long nbins), one
    // block of its SCAN_THREADS: reads count[0..n) and writes start[0..=n] (checked above:
    // count holds ≥ n, start ≥ n + 1).
    unsafe { l.run() }
}

/// The plan's own sorted points while it sets them (`DevicePoints::own_sorted` made them
/// its own before).
fn own<T>(sorted: &mut Arc<Sorted<T>>) -> &mut Sorted<T> {
    Arc::get_mut(sorted).expect("set-points writes the plan's own sorted points")
}
