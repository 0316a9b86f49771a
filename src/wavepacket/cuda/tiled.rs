//! A tiled volume's C and C* on one context's device arrays, queued on the caller's stream
//! without waiting. Forward: for each tile in tile order, the tile cut from the caller's
//! volume into the stage's data array (`wp_tile_cut`: copy, 0 past the volume's end), its
//! forward with the tile's grid shifts, and its coefficients added into the caller's common
//! grids (`wp_tile_add`), which start at zero. Adjoint: each tile's window copied from the
//! common grids (`wp_tile_take`), its adjoint, and its samples inside the volume copied there
//! (`wp_tile_put`; the tiles do not overlap). These are the host calls' steps with the same
//! arithmetic in the same order; the shift tables are those the host calls upload per tile,
//! made once at the volume's creation with the stage's data and coefficient arrays, so a
//! call allocates nothing, copies nothing to or from the host and never waits.

use super::calls::ensure;
use super::launches::grid_stride;
use super::tables::shift_factors;
use super::{BoxStage, Pass, Scratch, Shifts};
use crate::backend::cuda::array::{part, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{fill_zero, upload};
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{bind, driver_error};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use cudarc::driver::CudaStream;
use std::ops::Range;

/// A tiled volume's geometry, as `tiles.rs` holds it, flattened for the device.
pub struct TileGeometry<'a> {
    /// The volume's shape (1 for an unused axis).
    pub volume: [usize; 3],
    /// Per tile (tile order): its origin (samples) and grid shifts (one per box).
    pub origins: Vec<[usize; 3]>,
    pub shifts: Vec<&'a [[f64; 3]]>,
    /// Per tile and box: its window's offsets on the common grid (3 values).
    pub offsets: Vec<i64>,
    /// Per box (layout order) `GRID_FIELDS` values (`kernels/wavepacket.cu`).
    pub grid: Vec<i64>,
    /// Per row of the common grids: its first index along axis 1 and its offset.
    pub rows: Vec<i64>,
    /// Coefficients on the common grids of all boxes.
    pub n_common: usize,
}

/// A part of the common grids, whole boxes: a tile's coefficients of those boxes (`local`,
/// a range of the layout's) and their grids' (`common`, a range of the common grids').
/// One GPU keeps each part when the tiles are dealt over several.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridPart {
    pub local: Range<usize>,
    pub common: Range<usize>,
}

/// `TileGeometry` on the device, and each tile's shift tables.
pub struct TileTables<T> {
    /// Each box's first coefficient in a tile's coefficients (layout order).
    first: DeviceBuf<i64>,
    grid: DeviceBuf<i64>,
    rows: DeviceBuf<i64>,
    offsets: DeviceBuf<i64>,
    /// The shifted tiles' shift tables, one after the other.
    shift_at: DeviceBuf<i64>,
    shift: DeviceBuf<T>,
    tiles: Vec<TileEntry>,
    volume: [usize; 3],
    n_common: usize,
}

/// A stage's arrays for one tile at a time (`tile`: the layout's n reals; `local`: its
/// 2·m), its scratch and a silent reporter.
pub(super) struct TileWork<'a, T: Real> {
    tile: &'a mut DeviceBuf<T>,
    pub(super) local: &'a mut DeviceBuf<T>,
    scratch: &'a mut Scratch<T>,
    quiet: &'a mut Reporter,
}

/// One tile: its origin and where its shift tables lie (None: no box is shifted).
struct TileEntry {
    origin: [usize; 3],
    shifts: Option<(usize, Range<usize>)>,
}

/// `x` on the device (one zero for an empty `x`, so that every table is an allocation).
fn upload_table<U: cudarc::driver::DeviceRepr + Copy + Default>(
    s: &std::sync::Arc<CudaStream>,
    x: &[U],
) -> Result<DeviceBuf<U>> {
    let one = [U::default()];
    let x = if x.is_empty() { &one[..] } else { x };
    upload(s, x, "uploading the wave-packet volume's tables")
}

impl<T> TileTables<T> {
    /// How many tiles the volume has.
    pub fn n_tiles(&self) -> usize {
        self.tiles.len()
    }
}

impl<T: Real> BoxStage<T> {
    /// The device tables of a tiled volume of this stage's layout, and the stage's data and
    /// coefficient arrays (which hold one tile at a time), counted towards the stage's plan.
    pub fn tile_tables(&self, g: &TileGeometry<'_>) -> Result<TileTables<T>> {
        bind(self.stream.context())?;
        let made = self
            .held
            .scope("creating the wave-packet volume", || self.make_tables(g));
        if made.is_err() {
            // What a host call does not use goes back (it would count against a cap).
            self.lock().tile_coeffs = None;
        }
        made
    }

    fn make_tables(&self, g: &TileGeometry<'_>) -> Result<TileTables<T>> {
        let s = &self.stream;
        let (n, m) = (self.layout.n_samples(), 2 * self.layout.n_coefficients);
        {
            let mut bufs = self.lock();
            ensure(&mut bufs.data, n, s, "allocating wave-packet data")?;
            let what = "allocating wave-packet coefficients";
            ensure(&mut bufs.tile_coeffs, m, s, what)?;
        }
        let (mut at, mut factors) = (Vec::new(), Vec::new());
        let mut tiles = Vec::with_capacity(g.origins.len());
        for (origin, shifts) in g.origins.iter().zip(&g.shifts) {
            let made = shift_factors::<T>(&self.layout, &self.order, shifts);
            let shifts = made.map(|(a, f)| {
                let place = (at.len(), factors.len()..factors.len() + f.len());
                at.extend(a);
                factors.extend(f);
                place
            });
            let origin = *origin;
            tiles.push(TileEntry { origin, shifts });
        }
        let first: Vec<i64> = self.layout.boxes.iter().map(|b| b.offset as i64).collect();
        let tables = TileTables {
            first: upload_table(s, &first)?,
            grid: upload_table(s, &g.grid)?,
            rows: upload_table(s, &g.rows)?,
            offsets: upload_table(s, &g.offsets)?,
            shift_at: upload_table(s, &at)?,
            shift: upload_table(s, &factors)?,
            tiles,
            volume: g.volume,
            n_common: g.n_common,
        };
        // The host tables must outlive the copies.
        let what = "uploading the wave-packet volume's tables";
        s.synchronize().map_err(driver_error(what))?;
        Ok(tables)
    }

    /// C of the caller's volume (`input`, n reals) into the caller's common grids
    /// (`output`, 2·m reals), which start at zero, or C* of the common grids (`input`) into
    /// the volume (`output`), queued after `caller`'s work; returns without waiting. Tile by
    /// tile: into the stage's tile arrays, its pass, out of them; `after_tile` is called
    /// once each tile is queued.
    pub fn tiled_ordered(
        &self,
        pass: Pass,
        caller: &CudaStream,
        t: &TileTables<T>,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
        after_tile: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        let whole = &GridPart {
            local: 0..self.layout.n_coefficients,
            common: 0..t.n_common,
        };
        self.on_tiles(caller, |w| {
            if pass == Pass::Forward {
                let what = "clearing the wave-packet volume's coefficients";
                fill_zero(&self.stream, output, what)?;
            }
            for i in 0..t.tiles.len() {
                match pass {
                    Pass::Forward => {
                        self.forward_tile(t, i, input, w)?;
                        self.tile_grids("wp_tile_add", t, i, whole, &*w.local, output)?;
                    }
                    Pass::Adjoint => {
                        self.tile_grids("wp_tile_take", t, i, whole, input, w.local)?;
                        self.adjoint_tile(t, i, w, output)?;
                    }
                }
                after_tile()?;
            }
            Ok(())
        })
    }

    /// Tile `i` of the volume `input` cut into the stage's tile array and its forward (with
    /// the tile's grid shifts) into the stage's tile coefficients (`w.local`).
    pub(super) fn forward_tile(
        &self,
        t: &TileTables<T>,
        i: usize,
        input: &impl DeviceArray<T>,
        w: &mut TileWork<'_, T>,
    ) -> Result<()> {
        let p = &t.tiles[i];
        let shifts = self.tile_shifts(t, p);
        self.tile_samples("wp_tile_cut", t, p.origin, input, w.tile)?;
        let (tile, local) = (&*w.tile, &mut *w.local);
        self.pass_on(
            Pass::Forward,
            tile,
            local,
            shifts.as_ref(),
            w.scratch,
            w.quiet,
        )
    }

    /// The adjoint of tile `i`'s coefficients (`w.local`, with its grid shifts) into the
    /// stage's tile array, and its samples inside the volume put into `output`.
    pub(super) fn adjoint_tile(
        &self,
        t: &TileTables<T>,
        i: usize,
        w: &mut TileWork<'_, T>,
        output: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let p = &t.tiles[i];
        let shifts = self.tile_shifts(t, p);
        let (local, tile) = (&*w.local, &mut *w.tile);
        self.pass_on(
            Pass::Adjoint,
            local,
            tile,
            shifts.as_ref(),
            w.scratch,
            w.quiet,
        )?;
        self.tile_samples("wp_tile_put", t, p.origin, &*w.tile, output)
    }

    /// Runs `work` queued after `caller`'s work on the stage's tile arrays, its scratch and
    /// a silent reporter.
    pub(super) fn on_tiles(
        &self,
        caller: &CudaStream,
        work: impl FnOnce(&mut TileWork<'_, T>) -> Result<()>,
    ) -> Result<()> {
        bind(self.stream.context())?;
        let mut bufs = self.lock();
        let b = &mut *bufs;
        let (Some(tile), Some(local)) = (b.data.as_mut(), b.tile_coeffs.as_mut()) else {
            return Err(Error::Internal("a volume's tile arrays are missing".into()));
        };
        let w = &mut TileWork {
            tile,
            local,
            scratch: &mut b.scratch,
            quiet: &mut Reporter::new(None),
        };
        ordered_on(caller, &self.stream, || work(w))
    }

    /// Tile `p`'s shift tables (None for a tile without shifts, as the host calls pass).
    fn tile_shifts<'a>(&self, t: &'a TileTables<T>, p: &TileEntry) -> Option<Shifts<'a, T>> {
        let (at, factors) = p.shifts.clone()?;
        Some(Shifts {
            at: part(&t.shift_at, at, self.order.len()),
            factors: part(&t.shift, factors.start, factors.len()),
        })
    }
}

/// The scalars `wp_tile_cut` and `wp_tile_put` take after their arrays, for the tile at
/// `origin` of a volume of `v` samples in tiles of `n`: where the tile starts in the volume,
/// the volume's axis 2 and 3 strides, the tile's extent inside the volume, its axis 1 and 2
/// lengths and its sample count.
fn tile_scalars(l: &mut Launch<'_>, v: [usize; 3], n: [usize; 3], origin: [usize; 3]) {
    let at = (origin[2] * v[1] + origin[1]) * v[0] + origin[0];
    l.scalar(at as i64)
        .scalar(v[0] as i64)
        .scalar((v[0] * v[1]) as i64);
    for a in 0..3 {
        l.scalar(n[a].min(v[a] - origin[a]) as i64);
    }
    l.scalar(n[0] as i64).scalar(n[1] as i64);
    l.scalar((n[0] * n[1] * n[2]) as i64);
}

impl<T: Real> BoxStage<T> {
    /// Copies between the tile at `origin` and the layout's n reals of a tile:
    /// `wp_tile_cut` from the volume `src` into the tile `dst` (0 past the volume's end), or
    /// its transpose `wp_tile_put` from the tile `src` into the volume `dst` (the tile's
    /// samples inside the volume).
    fn tile_samples(
        &self,
        kernel: &str,
        t: &TileTables<T>,
        origin: [usize; 3],
        src: &impl DeviceArray<T>,
        dst: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let n = self.layout.n_samples();
        let mut l = self.launch(kernel, grid_stride(n))?;
        l.input(src).output(dst);
        tile_scalars(&mut l, t.volume, self.layout.shape, origin);
        // SAFETY: wp_tile_cut(const REAL* volume, REAL* tile, long long at, long long v1,
        // long long v12, long long w1, long long w2, long long w3, long long n1, long long
        // n2, long long n) and wp_tile_put(const REAL* tile, REAL* volume, … the same): the
        // callers pass the volume and the tile in the kernel's order. Sample i < n (the
        // layout's, which the tile holds) touches the volume only inside it (w_a = min(n_a,
        // v_a − origin_a), so index < v1·v2·v3, which the caller's volume holds: checked by
        // the callers) and the tile at i; wp_tile_cut writes the tile, wp_tile_put the volume.
        unsafe { l.run() }
    }

    /// Copies between tile `i`'s window of a part of the common grids and the part's
    /// coefficients of the tile (2·m reals in all): `wp_tile_add` adds the tile's `src` into
    /// the part's grids `dst` (`part.common`'s coefficients, on this device or a peer's),
    /// its transpose `wp_tile_take` copies the window of the part's grids `src` into the
    /// tile's `dst`.
    pub(super) fn tile_grids(
        &self,
        kernel: &str,
        t: &TileTables<T>,
        i: usize,
        part: &GridPart,
        src: &impl DeviceArray<T>,
        dst: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let mut l = self.launch(kernel, grid_stride(part.local.len()))?;
        l.input(src).output(dst);
        self.grid_arguments(&mut l, t, i);
        l.scalar(part.local.start as i64)
            .scalar(part.local.end as i64)
            .scalar(part.common.start as i64);
        // SAFETY: wp_tile_add(const cpx* local, cpx* common, const long long* first, const
        // long long* grid, const long long* rows, const long long* offsets, int n_boxes, long
        // long e_lo, long long e_hi, long long common_lo) and wp_tile_take(const cpx* common,
        // cpx* local, … the same): the callers pass the tile's and the part's arrays in the
        // kernel's order. Coefficient e in `part.local` (the tile's array holds 2m reals, m ≥
        // its end) finds its box among n_boxes (first, grid: one entry each), its row of the
        // common grid (rows, built with the grids from every tile's window, `offsets` this
        // tile's) and touches one coefficient there, inside `part.common` (whole boxes: the
        // part's boxes' grids), at its index less common_lo in the part's array (which holds
        // the part: checked by the callers).
        unsafe { l.run() }
    }

    /// The common grids' tables and tile `i`'s window offsets, then the box count.
    fn grid_arguments(&self, l: &mut Launch<'_>, t: &TileTables<T>, i: usize) {
        let boxes = self.layout.boxes.len();
        let offsets = part(&t.offsets, 3 * boxes * i, 3 * boxes);
        l.input(&t.first)
            .input(&t.grid)
            .input(&t.rows)
            .input(&offsets);
        l.scalar(boxes as i32);
    }
}
