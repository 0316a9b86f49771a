//! Type 1's spreading of the strengths onto the fine grids, one function per method. Each
//! loops over the batch's vectors inside the kernel.
//!
//! - Register rows (2D, 3D): one block per bin, one thread per row of its padded tile, the
//!   row's sums in registers (no atomics until the row is added to the grid).
//! - Shared tiles (1D, or grids smaller than those bins): one block per bin, a warp per point
//!   into the padded tile in shared memory (shared atomics in the hot loop; one global atomic
//!   per non-zero tile cell at the end).
//! - Global atomics (a tile too large for shared memory): a thread per point, in sorted order.

use super::heuristics::SpreadMethod;
use super::plan::{DevicePoints, PointSet};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::launch::{for_elems, Launch, MAX_GRID_Y, THREADS};
use crate::error::Result;
use crate::sample::Real;
use cudarc::driver::LaunchConfig;

impl<T: Real> DevicePoints<T> {
    /// Adds the m points' strengths `c` (2·n_vectors·m reals) of `set` (the plan's points
    /// or one group of them) into the fine grids `grid` (2·n_vectors·N reals), by the
    /// method chosen at set-points.
    pub(super) fn spread(
        &self,
        set: &PointSet<T>,
        c: &impl DeviceArray<T>,
        grid: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        match set.method {
            SpreadMethod::RegisterRows { threads } => {
                // A vector per blockIdx.y (the kernel loops past the grid's y extent): a
                // batch's vectors spread over more blocks.
                let mut cfg = block_per_bin(set, threads, 0);
                cfg.grid_dim.1 = self.spec.n_vectors.clamp(1, MAX_GRID_Y) as u32;
                let kernel = match set.on_lattices() {
                    true => "usfft_spread_rows_lattice",
                    false => "usfft_spread_rows",
                };
                self.spread_by_bins(set, kernel, cfg, c, grid)
            }
            SpreadMethod::SharedTiles { shared_bytes } => {
                let cfg = block_per_bin(set, THREADS, shared_bytes as u32);
                self.spread_by_bins(set, "usfft_spread_sm", cfg, c, grid)
            }
            SpreadMethod::GlobalAtomics => self.spread_global(set, c, grid),
        }
    }

    /// usfft_spread_rows (and its _lattice twin) and usfft_spread_sm: the same parameters,
    /// one block per bin.
    fn spread_by_bins(
        &self,
        set: &PointSet<T>,
        kernel: &str,
        cfg: LaunchConfig,
        c: &impl DeviceArray<T>,
        grid: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let mut l = Launch::new(&self.module, &self.stream, kernel, cfg)?;
        l.input(&set.sorted.bin_start);
        set.push_sorted(&mut l).input(c).output(grid);
        set.push_sizes(&mut l, &self.spec);
        set.push_bins(&mut l).scalar(self.beta());
        // SAFETY: (const unsigned* bin_start, the sorted points as push_sorted pushes them,
        // const REAL* c, REAL* grid, long long m, int nvec, int nf1..nf3, int t1..t3, int
        // nb1, int nb2, REAL beta). Block (b, y), b < n_bins, takes the vectors v ≡ y (mod
        // gridDim.y) below nvec; it reads bin_start[b..=b+1] (n_bins + 1 values) and the
        // sorted points between (< m; perm and each stored array hold m, lattice points are
        // computed from their table), their
        // strengths c[2(v·m + perm[p])..+2] for v < nvec (c holds 2·nvec·m: checked by the
        // callers), and adds into grid cells wrapped into the nvec fine grids (grid holds
        // 2·nvec·N). The rows kernel's registers and the tiles' shared memory (cfg) are
        // sized for this tiling at set-points.
        unsafe { l.run() }
    }

    fn spread_global(
        &self,
        set: &PointSet<T>,
        c: &impl DeviceArray<T>,
        grid: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let cfg = for_elems(set.m);
        let mut l = Launch::new(&self.module, &self.stream, "usfft_spread_gm", cfg)?;
        set.push_sorted(&mut l).input(c).output(grid);
        set.push_sizes(&mut l, &self.spec).scalar(self.beta());
        // SAFETY: usfft_spread_gm(the sorted points as push_sorted pushes them, const REAL* c,
        // REAL* grid, long long m, int nvec, int nf1..nf3, REAL beta): thread p < m reads
        // sorted point p (perm and each stored array hold m; lattice points are computed
        // from their table) and its strengths for the nvec
        // vectors (c holds 2·nvec·m), and adds into wrapped cells of the nvec fine grids
        // (grid holds 2·nvec·N).
        unsafe { l.run() }
    }
}

/// One block per bin of `set`'s tiling.
fn block_per_bin<T>(set: &PointSet<T>, threads: u32, shared_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (set.tiling.n_bins() as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: shared_bytes,
    }
}
