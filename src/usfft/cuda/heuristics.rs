//! How the GPU arranges a plan's work: the bins the points are sorted into, how type 1
//! spreads (register rows, shared-memory tiles, global atomics) and how type 2 interpolates
//! (staged tiles, a warp or a thread per point), and the sizes those kernels are built for.

use crate::backend::cuda::launch::THREADS;
use crate::usfft::grid::Tiling;
use crate::usfft::spec::{TransformType, UsfftSpec};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Shared memory a spreading tile may use before a larger one is considered (bytes): two
/// blocks per multiprocessor on sm_80/sm_90.
const TILE_BUDGET: usize = 100 * 1024;

/// Threads of a usfft_spread_rows block, at most (its launch bound).
const ROW_THREADS_MAX: usize = 512;

/// Sorted points per usfft_interp_sm block: enough to cover several bins (each bin's tile is
/// staged once per block that touches it), few enough to spread clustered points over blocks.
pub(super) const INTERP_CHUNK: usize = 1024;

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
pub(super) fn interp_split(dim: usize, real_bytes: usize) -> usize {
    if dim >= 2 && real_bytes == 4 {
        2
    } else {
        1
    }
}

/// Cells between the slowest-axis slices (3D planes, 2D rows) of usfft_interp_sm's staged
/// tile: with the split, ≡ 8 (mod 16) so that the two slices one phase reads fall in
/// different banks.
pub(super) fn interp_pitch(spec: &UsfftSpec, tiling: &Tiling, real_bytes: usize) -> usize {
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
/// (tile + w − 1) complex sums in registers and adds every point of its bin into all of
/// them, of which only w are the point's. In 3D, 8 cells: measured on an H100 (f32, N = 256,
/// M = N³), spreading took 12.5 ms with 8 × 8 × 8 bins against 16.6 ms with 16 × 8 × 8 at
/// w = 8, and 8.6 against 10.9 ms at w = 6 (4 × 8 × 8: 15.3 ms, the grid's atomics grow).
/// In 2D, 16 where the row's sums fit (f32), else 8.
pub(super) fn row_tile1(dim: usize, width: usize, real_bytes: usize) -> usize {
    if dim < 3 && real_bytes * (16 + width - 1) <= 4 * 24 {
        16
    } else {
        8
    }
}

/// The `__launch_bounds__` minimum of usfft_spread_rows' blocks per multiprocessor: 2 (64
/// registers a thread at 512 threads) where a row's sums take at most 30 registers (3D f32,
/// w ≤ 8), else 1 (128 registers). Measured on an H100 (f32, N = 256, M = N³, 8 × 8 × 8
/// bins): the compiler otherwise takes 94–108 registers, two 256-thread blocks a
/// multiprocessor, and spreading took 18.1 / 17.1 / 12.2 ms at w = 8 / 7 / 6 against
/// 13.5 / 11.9 / 9.6 ms with two blocks' bound (a few dozen bytes spilled).
pub(super) fn row_min_blocks(dim: usize, width: usize, real_bytes: usize) -> usize {
    let row_cells = row_tile1(dim, width, real_bytes) + width - 1;
    if real_bytes == 4 && row_cells <= 15 {
        2
    } else {
        1
    }
}

/// Candidate bin shapes per dimension count, in order of preference: from a cube, each
/// candidate halves one axis of the one before, the last axis first (1D: 8192 … 32; 2D:
/// 64×64 … 8×8; 3D: 16³ … 4³).
fn tile_candidates(dim: usize) -> Vec<[usize; 3]> {
    let (dim, side, count) = match dim {
        1 => (1, 8192, 9),
        2 => (2, 64, 7),
        _ => (3, 16, 7),
    };
    let mut t = [1; 3];
    t[..dim].fill(side);
    let mut out = vec![t];
    for k in 0..count - 1 {
        t[dim - 1 - k % dim] /= 2;
        out.push(t);
    }
    out
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
    let t1 = row_tile1(spec.dim, w, real_bytes);
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
        // Type 3 spreads as type 1 does (its inner type 2 has a spec of its own).
        TransformType::Type1 | TransformType::Type3 => {
            within(ROW_THREADS_TWO_BLOCKS).or_else(|| within(ROW_THREADS_MAX))
        }
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

/// How type 2 interpolates: from each bin's tile staged in shared memory (usfft_interp_sm,
/// with this many bytes of it), or, where the tile does not fit, from the grid by a warp or
/// a thread per sorted point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpMethod {
    StagedTiles { shared_bytes: u32 },
    WarpPerPoint,
    ThreadPerPoint,
}

/// Staged tiles where the bins' padded tile fits the GPU's shared memory (and the cap of
/// `set_interp_tile_bytes`), else `per_point`. Points on lattices (`on_lattices`) are placed
/// a block's worth at a time into shared memory after the tile (`lattice_stage_bytes`).
pub(super) fn choose_interp(
    spec: &UsfftSpec,
    tiling: &Tiling,
    real_bytes: usize,
    max_shared: usize,
    on_lattices: bool,
) -> InterpMethod {
    let stage = if on_lattices {
        lattice_stage_bytes(real_bytes)
    } else {
        0
    };
    let tile_bytes = interp_tile_bytes(spec, tiling, real_bytes) + stage;
    let limit = match INTERP_TILE_LIMIT.load(Ordering::Relaxed) {
        0 => max_shared,
        cap => cap.min(max_shared),
    };
    if tile_bytes <= limit {
        InterpMethod::StagedTiles {
            shared_bytes: tile_bytes as u32,
        }
    } else {
        per_point(spec.kernel.width)
    }
}

/// usfft_interp_sm's stage of points on lattices: (i0, d) per dimension of each of a block's
/// points, after the tile (aligned to 16 bytes).
fn lattice_stage_bytes(real_bytes: usize) -> usize {
    16 + THREADS as usize * 3 * (4 + real_bytes)
}

/// A warp per point while a warp covers ≥ 3 rows per pass (w ≤ 10); measured on an H100,
/// one thread per point is faster for wider kernels.
pub(super) fn per_point(width: usize) -> InterpMethod {
    if width <= 10 {
        InterpMethod::WarpPerPoint
    } else {
        InterpMethod::ThreadPerPoint
    }
}

#[cfg(test)]
mod tests {
    use super::tile_candidates;

    #[test]
    fn tile_candidates_halve_one_axis_at_a_time() {
        let shapes = |dim| format!("{:?}", tile_candidates(dim));
        let one = "[[8192, 1, 1], [4096, 1, 1], [2048, 1, 1], [1024, 1, 1], [512, 1, 1], [256, 1, 1], [128, 1, 1], [64, 1, 1], [32, 1, 1]]";
        let two = "[[64, 64, 1], [64, 32, 1], [32, 32, 1], [32, 16, 1], [16, 16, 1], [16, 8, 1], [8, 8, 1]]";
        let three =
            "[[16, 16, 16], [16, 16, 8], [16, 8, 8], [8, 8, 8], [8, 8, 4], [8, 4, 4], [4, 4, 4]]";
        assert_eq!(shapes(1), one);
        assert_eq!(shapes(2), two);
        assert_eq!(shapes(3), three);
    }
}
