//! Type 2's interpolation from the fine grids at the points, one function per method. Each
//! loops over the batch's vectors inside the kernel.
//!
//! - Staged tiles: each bin's padded tile is staged in shared memory once per block of
//!   sorted points, and the block's points gather from there (usfft_interp_sm).
//! - Where the tile does not fit: a warp (narrow kernels) or a thread (wide kernels) per
//!   sorted point gathers from the grid.

use super::heuristics::{interp_pitch, InterpMethod, INTERP_CHUNK};
use super::plan::{DevicePoints, PointSet};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::launch::{for_elems, Launch, THREADS};
use crate::error::Result;
use crate::sample::Real;
use cudarc::driver::LaunchConfig;

/// Threads of a warp: usfft_interp gives each point one.
const WARP: usize = 32;

impl<T: Real> DevicePoints<T> {
    /// Writes the m values `c` (2·n_vectors·m reals) of the points of `set` (the plan's
    /// points or one group of them) from the fine grids `grid` (2·n_vectors·N reals), by
    /// the method chosen at set-points.
    pub(super) fn interp(
        &self,
        set: &PointSet<T>,
        grid: &impl DeviceArray<T>,
        c: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        match set.interp {
            InterpMethod::StagedTiles { shared_bytes } => {
                self.interp_tiles(set, shared_bytes, grid, c)
            }
            InterpMethod::WarpPerPoint => {
                let per_warp = for_elems(WARP * set.m);
                self.interp_per_point(set, "usfft_interp", per_warp, grid, c)
            }
            InterpMethod::ThreadPerPoint => {
                let per_thread = for_elems(set.m);
                self.interp_per_point(set, "usfft_interp_thread", per_thread, grid, c)
            }
        }
    }

    fn interp_tiles(
        &self,
        set: &PointSet<T>,
        shared_bytes: u32,
        grid: &impl DeviceArray<T>,
        c: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let t = &set.tiling;
        let pitch = interp_pitch(&self.spec, t, std::mem::size_of::<T>());
        let cfg = LaunchConfig {
            grid_dim: (set.m.div_ceil(INTERP_CHUNK) as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: shared_bytes,
        };
        let kernel = match set.on_lattices() {
            true => "usfft_interp_sm_lattice",
            false => "usfft_interp_sm",
        };
        let mut l = Launch::new(&self.module, &self.stream, kernel, cfg)?;
        l.input(&set.sorted.bin_start).scalar(t.n_bins() as i64);
        set.push_sorted(&mut l).input(grid).output(c);
        set.push_sizes(&mut l, &self.spec);
        set.push_bins(&mut l);
        l.scalar(INTERP_CHUNK as i32)
            .scalar(pitch as i32)
            .scalar(self.beta());
        // SAFETY: usfft_interp_sm[_lattice](const unsigned* bin_start, long long n_bins, the
        // sorted points as push_sorted pushes them, const REAL* grid, REAL* c, long long m,
        // int nvec, int nf1..nf3, int t1..t3, int nb1, int nb2, int chunk, int pitch, REAL
        // beta). Block k takes sorted points [k·chunk, (k+1)·chunk) ∩ [0, m) (perm and each
        // stored array hold m; lattice points are computed from their table) and their bins'
        // starts (bin_start holds n_bins + 1), stages a tile (and, on lattices, a block of
        // points after it) in `shared_bytes` (pitch and tile from this tiling, as
        // choose_interp sized them),
        // reads wrapped cells of the nvec fine grids (grid holds 2·nvec·N) and writes
        // c[2(v·m + perm[p])..+2] for v < nvec (c holds 2·nvec·m: checked by the callers).
        unsafe { l.run() }
    }

    /// usfft_interp (a warp per point) and usfft_interp_thread: the same parameters.
    fn interp_per_point(
        &self,
        set: &PointSet<T>,
        kernel: &str,
        cfg: LaunchConfig,
        grid: &impl DeviceArray<T>,
        c: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let mut l = Launch::new(&self.module, &self.stream, kernel, cfg)?;
        set.push_sorted(&mut l).input(grid).output(c);
        set.push_sizes(&mut l, &self.spec).scalar(self.beta());
        // SAFETY: (the sorted points as push_sorted pushes them, const REAL* grid, REAL* c,
        // long long m, int nvec, int nf1..nf3, REAL beta): the config gives each sorted point
        // p < m its warp or thread (the others return); it reads sorted point p (perm and
        // each stored array hold m; lattice points are computed from their table), wrapped cells of the nvec fine grids (grid holds
        // 2·nvec·N) and writes c[2(v·m + perm[p])..+2] for v < nvec (c holds 2·nvec·m).
        unsafe { l.run() }
    }
}
