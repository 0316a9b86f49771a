//! The USFFT on the CPU: rayon over bins of sorted points, rustfft on the fine grid.
//!
//! Type 1 spreads bin by bin into a private padded tile (the bin's cells plus the kernel's
//! reach), then adds the tile into the fine grid. Tiles divide the grid exactly and are at
//! least w − 1 cells wide, so a tile's padded cells touch only its neighbours: tiles are
//! processed in colour phases (parity per dimension, a third colour for the last of an odd
//! count) in which no two padded tiles overlap, and the adds need no atomics. A bin with
//! many points (clustered points) is cut into pieces spread in parallel into their own
//! tiles, summed in piece order and added once (bit for bit the same whatever the threads).
//! Type 2 gathers: each sorted point reads its w^d cells (parallel over fixed-size chunks of
//! sorted points, whatever the bins); results go to the caller's order.

use super::grid::{dividing_tile, Tiling};
use super::points::{origin_shift, sort_points, SortedPoints, SyncPtr};
use super::spec::{TransformType, UsfftSpec};
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Error, Result};
use crate::progress::Reporter;
use crate::sample::{Real, Sample};
use num_complex::Complex;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection};
use std::ops::Range;
use std::sync::Arc;

/// Largest tile edge per dimension count (cells): about 32 KiB of f32 cells in 3D.
const TILE_MAX: [usize; 3] = [4096, 64, 16];

/// The CPU's tiling of a plan's fine grid.
pub fn tiling(spec: &UsfftSpec) -> Tiling {
    let w = spec.kernel.width;
    let mut tile = [1usize; 3];
    for (d, t) in tile.iter_mut().enumerate().take(spec.dim) {
        *t = dividing_tile(
            spec.fine[d],
            w.saturating_sub(1).max(1),
            TILE_MAX[spec.dim - 1],
        );
    }
    Tiling::new(spec.fine, tile)
}

/// A CPU plan's sorted points and its FFT of each dimension, planned once here: rustfft's
/// planning of a long line costs about as much as transforming it. The sorted points may be
/// shared with another plan over the same points (`share_points`).
pub struct HostPoints<T: Real> {
    pub sorted: Arc<SortedPoints<T>>,
    ffts: [Arc<dyn Fft<T>>; 3],
}

pub fn set_points<C: Sample, T: Real>(
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    coords: [&[C]; 3],
    m: usize,
) -> Result<HostPoints<T>> {
    let sorted =
        cpu.install(|| sort_points(coords, spec.dim, m, spec.kernel.width, tiling(spec)))?;
    Ok(with_ffts(spec, Arc::new(sorted)))
}

/// The points of `other` for a plan of `spec`, which sorts as `other`'s plan does (the same
/// dimension, fine grid and kernel width: `tiling` depends on nothing else), without
/// sorting them again.
pub fn share_points<T: Real>(spec: &UsfftSpec, other: &HostPoints<T>) -> HostPoints<T> {
    with_ffts(spec, other.sorted.clone())
}

/// `sorted` with the fine grid's FFTs of `spec`'s sign.
fn with_ffts<T: Real>(spec: &UsfftSpec, sorted: Arc<SortedPoints<T>>) -> HostPoints<T> {
    let dir = if spec.sign < 0 {
        FftDirection::Forward
    } else {
        FftDirection::Inverse
    };
    let mut planner = T::fft_planner();
    let ffts = std::array::from_fn(|d| planner.plan(spec.fine[d], dir));
    HostPoints { sorted, ffts }
}

/// Reports "usfft spread" (chunks of a colour phase's bins) or "usfft interpolate" (chunks
/// of points) and "usfft fft" (per vector) to `reporter`; a stop leaves `f` (type 1) or `c`
/// (type 2) as it was.
pub fn execute<T: Real>(
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    host: &HostPoints<T>,
    c: &mut [Complex<T>],
    f: &mut [Complex<T>],
    reporter: &mut Reporter,
) -> Result<()> {
    if spec.kind == TransformType::Type3 {
        return Err(Error::Internal(
            "a type-3 plan executes through usfft::type3".into(),
        ));
    }
    let pts = &host.sorted;
    let threads = cpu.threads();
    cpu.install(|| {
        let nft = spec.fine_count();
        let nv = spec.n_vectors;
        let mut grid = try_vec(nv * nft, Complex::default(), "the USFFT fine grid")?;
        let taps = Taps::new(spec);
        let gridding = Gridding {
            spec,
            taps: &taps,
            pts,
        };
        match spec.kind {
            TransformType::Type1 => {
                gridding.spread(c, &mut grid, reporter, threads)?;
                fft_grids(&mut grid, spec, &host.ffts, reporter)?;
                copy_modes_out(spec, &grid, f);
            }
            TransformType::Type3 => unreachable!("refused above"),
            TransformType::Type2 => {
                copy_modes_in(spec, f, &mut grid);
                fft_grids(&mut grid, spec, &host.ffts, reporter)?;
                let m = pts.m();
                reporter.stage("usfft interpolate", 0.6, m);
                if reporter.is_active() {
                    let mut scratch =
                        try_vec(nv * m, Complex::default(), "the USFFT point values")?;
                    reporter.for_chunks(m, 1024 * threads, |points| {
                        gridding.interpolate(&grid, &mut scratch, points);
                        Ok(())
                    })?;
                    c[..nv * m].copy_from_slice(&scratch);
                } else {
                    gridding.interpolate(&grid, c, 0..m);
                }
            }
        }
        Ok(())
    })
}

/// Type 3's spreading: every vector of `c` (n_vectors × M, already pre-phased) onto `grid`
/// (n_vectors zeroed grids of `spec.fine`), reported as the stage "usfft spread".
pub fn spread_onto<T: Real>(
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    host: &HostPoints<T>,
    c: &[Complex<T>],
    grid: &mut [Complex<T>],
    reporter: &mut Reporter,
) -> Result<()> {
    let threads = cpu.threads();
    cpu.install(|| {
        let taps = Taps::new(spec);
        let gridding = Gridding {
            spec,
            taps: &taps,
            pts: &host.sorted,
        };
        gridding.spread(c, grid, reporter, threads)
    })
}

/// The FFT of each of the n_vectors fine grids, reported as the stage "usfft fft".
fn fft_grids<T: Real>(
    grid: &mut [Complex<T>],
    spec: &UsfftSpec,
    ffts: &[Arc<dyn Fft<T>>; 3],
    reporter: &mut Reporter,
) -> Result<()> {
    reporter.stage("usfft fft", 0.4, spec.n_vectors);
    for g in grid.chunks_mut(spec.fine_count()) {
        fft_nd(g, spec, ffts);
        reporter.advance(1)?;
    }
    Ok(())
}

/// What spreading and interpolation read: the plan, its kernel's taps and the sorted
/// points.
struct Gridding<'a, T> {
    spec: &'a UsfftSpec,
    taps: &'a Taps<T>,
    pts: &'a SortedPoints<T>,
}

/// The kernel's tap polynomials in T (`SpreadKernel::tap_polynomials`), fitted to 1 % of
/// the tolerance: w values per point and dimension by Horner's rule, no exp/sqrt per tap.
struct Taps<T> {
    coef: Vec<T>,
}

impl<T: Real> Taps<T> {
    fn new(spec: &UsfftSpec) -> Taps<T> {
        let p = spec.kernel.tap_polynomials(0.01 * spec.tolerance);
        Taps {
            coef: p.coef.iter().map(|&c| T::from_f64(c).unwrap()).collect(),
        }
    }

    /// Weights φ((d + k)/(W/2)) of one coordinate with offset d, k = 0..W (W the width).
    #[inline(always)]
    fn weights<const W: usize>(&self, d: T) -> [T; W] {
        let t = d + d + T::from_usize(W - 1).unwrap();
        let (top, rest) = self.coef.split_at(W);
        let mut out: [T; W] = top.try_into().unwrap();
        for row in rest.chunks_exact(W) {
            for (o, &c) in out.iter_mut().zip(row) {
                *o = *o * t + c;
            }
        }
        out
    }

    /// The weights of dimension `d` of sorted point `p`, or a single 1 for an unused dimension.
    #[inline(always)]
    fn weights_of<const W: usize>(&self, pts: &SortedPoints<T>, d: usize, p: usize) -> [T; W] {
        if d < pts.dim {
            self.weights(pts.offset[d][p])
        } else {
            std::array::from_fn(|k| if k == 0 { T::one() } else { T::zero() })
        }
    }
}

/// Runs `$body` with `$W` a constant equal to the kernel width `$w`: the loops over a
/// point's taps are then of known length, unrolled and vectorised (with a run-time width
/// they are too short for the vectoriser's main loop and ran scalar). ES widths are 2..=16,
/// Gaussian ones even up to 32 (`SpreadKernel::for_tolerance`).
macro_rules! with_width {
    ($w:expr, $W:ident => $body:expr) => {
        with_width!(@ $w, $W, $body, 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 18 20 22 24 26 28 30 32)
    };
    (@ $w:expr, $W:ident, $body:expr, $($n:literal)*) => {
        match $w {
            $($n => {
                const $W: usize = $n;
                $body
            })*
            w => unreachable!("kernel width {w} is not one a plan chooses"),
        }
    };
}

/// Whether this CPU runs the AVX2 + FMA copies of the spreading and interpolation loops
/// (the crate's baseline is x86-64 with SSE2).
fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `i` modulo `n` for i in [−n, 2n): the cells a point or a padded tile reaches lie within
/// one period of the grid (fine grids are at least 2w cells), so one compare replaces a
/// division.
#[inline(always)]
fn wrap(i: i64, n: usize) -> usize {
    let n = n as i64;
    debug_assert!((-n..2 * n).contains(&i));
    (if i < 0 {
        i + n
    } else if i >= n {
        i - n
    } else {
        i
    }) as usize
}

impl<T: Real> Gridding<'_, T> {
    /// Type 1 spreading of every vector of `c` onto `grid` (zeroed, n_vectors fine grids).
    fn spread(
        &self,
        c: &[Complex<T>],
        grid: &mut [Complex<T>],
        reporter: &mut Reporter,
        threads: usize,
    ) -> Result<()> {
        let (spec, taps, pts) = (self.spec, self.taps, self.pts);
        let t = &pts.tiling;
        let w = spec.kernel.width;
        let dim = spec.dim;
        let shift = origin_shift(w);
        let pad: [usize; 3] = std::array::from_fn(|d| if d < dim { t.tile[d] + w - 1 } else { 1 });
        let tile_len = pad[0] * pad[1] * pad[2];
        let nft = spec.fine_count();
        let cx = Spreading {
            taps,
            pts,
            c,
            out: SyncPtr(grid.as_mut_ptr()),
            t,
            dim,
            shift,
            pad,
            tile_len,
            nft,
            nv: spec.n_vectors,
            m: pts.m(),
        };
        let avx2 = has_avx2_fma();
        // Bins holding more than 1/64 of the points (and at least MIN_PIECE) are cut into
        // pieces, so that clustered points still keep every thread busy. The cut depends on the
        // points only, and a cut bin's piece tiles are summed in piece order before one add: the
        // grid is bit for bit the same whatever the thread count or the scheduling.
        let phases = spread_phases(pts, (pts.m() / 64).max(MIN_PIECE));
        reporter.stage("usfft spread", 0.6, phases.iter().map(Vec::len).sum());
        let whole = |(b, points): &Piece| {
            points.start == pts.bin_start[*b] as usize
                && points.end == pts.bin_start[*b + 1] as usize
        };
        // A phase's tiles are disjoint: whole bins add their tiles in any order and chunking.
        for pieces in &phases {
            let (single, cut): (Vec<Piece>, Vec<Piece>) = pieces.iter().cloned().partition(whole);
            reporter.for_chunks(single.len(), threads, |chunk| {
                with_width!(w, W => single[chunk].par_iter().for_each_init(
                || (Vec::new(), Vec::new()),
                |(buf, strengths), piece| {
                    cx.fill::<W>(avx2, piece, buf, strengths);
                    cx.add(piece.0, buf);
                }));
                Ok(())
            })?;
            if cut.is_empty() {
                continue;
            }
            with_width!(w, W => cx.add_cut::<W>(avx2, &cut));
            reporter.advance(cut.len())?;
        }
        Ok(())
    }
}

/// The pieces of the bins that hold points, per phase: bins of one phase are of one colour
/// (parity of the bin index along each axis, a third colour for the last bin of an odd
/// count), so that their padded tiles do not overlap. A bin of more than `piece` points is
/// cut into pieces of `piece`.
fn spread_phases<T>(pts: &SortedPoints<T>, piece: usize) -> Vec<Vec<Piece>> {
    let t = &pts.tiling;
    let colours: [usize; 3] = std::array::from_fn(|d| match t.bins[d] {
        1 => 1,
        b if b % 2 == 0 => 2,
        _ => 3,
    });
    let colour_of = |d: usize, b: usize| {
        if colours[d] == 3 && b == t.bins[d] - 1 {
            2
        } else {
            b % 2
        }
    };
    (0..colours.iter().product::<usize>())
        .map(|phase| {
            let want = [
                phase % colours[0],
                (phase / colours[0]) % colours[1],
                phase / (colours[0] * colours[1]),
            ];
            (0..t.n_bins())
                .filter(|&b| pts.bin_start[b] < pts.bin_start[b + 1])
                .filter(|&b| {
                    let idx = [
                        b % t.bins[0],
                        (b / t.bins[0]) % t.bins[1],
                        b / (t.bins[0] * t.bins[1]),
                    ];
                    (0..3).all(|d| colour_of(d, idx[d]) == want[d])
                })
                .flat_map(|b| {
                    let (start, end) = (pts.bin_start[b] as usize, pts.bin_start[b + 1] as usize);
                    (start..end)
                        .step_by(piece)
                        .map(move |lo| (b, lo..(lo + piece).min(end)))
                })
                .collect()
        })
        .collect()
}

/// What spreading one bin's points reads and writes.
struct Spreading<'a, T> {
    taps: &'a Taps<T>,
    pts: &'a SortedPoints<T>,
    c: &'a [Complex<T>],
    out: SyncPtr<Complex<T>>,
    t: &'a super::grid::Tiling,
    dim: usize,
    shift: i64,
    pad: [usize; 3],
    tile_len: usize,
    nft: usize,
    nv: usize,
    m: usize,
}

impl<T: Real> Spreading<'_, T> {
    /// Spreads the sorted points of `piece` (a range of bin b's) into the bin's padded tile
    /// `buf` (AVX2 and FMA code where `avx2`).
    fn fill<const W: usize>(
        &self,
        avx2: bool,
        piece: &Piece,
        buf: &mut Vec<Complex<T>>,
        strengths: &mut Vec<Complex<T>>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller checked that the CPU has AVX2 and FMA.
            return unsafe { self.tile_avx2::<W>(piece, buf, strengths) };
        }
        let _ = avx2;
        self.tile::<W>(piece, buf, strengths)
    }

    /// `tile` compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn tile_avx2<const W: usize>(
        &self,
        piece: &Piece,
        buf: &mut Vec<Complex<T>>,
        strengths: &mut Vec<Complex<T>>,
    ) {
        self.tile::<W>(piece, buf, strengths)
    }

    /// Spreads the sorted points of `piece` (a range of bin b's) into the bin's padded
    /// tile `buf`.
    #[inline(always)]
    fn tile<const W: usize>(
        &self,
        (b, points): &Piece,
        buf: &mut Vec<Complex<T>>,
        strengths: &mut Vec<Complex<T>>,
    ) {
        let origin = self.origin(*b);
        buf.clear();
        buf.resize(self.nv * self.tile_len, Complex::default());
        let (w2, w3) = (
            if self.dim >= 2 { W } else { 1 },
            if self.dim >= 3 { W } else { 1 },
        );
        let (start, end) = (points.start, points.end);
        // The bin's strengths gathered first, in one loop of independent loads: read in the
        // spreading loop, each (in the caller's order, so scattered) stalled it on memory.
        strengths.clear();
        for v in 0..self.nv {
            let cv = &self.c[v * self.m..(v + 1) * self.m];
            strengths.extend(self.pts.perm[start..end].iter().map(|&j| cv[j as usize]));
        }
        for p in start..end {
            let kx = self.taps.weights::<W>(self.pts.offset[0][p]);
            let ky = self.taps.weights_of::<W>(self.pts, 1, p);
            let kz = self.taps.weights_of::<W>(self.pts, 2, p);
            let l: [usize; 3] = std::array::from_fn(|d| {
                if d < self.dim {
                    (self.pts.first[d][p] as i64 - origin[d]) as usize
                } else {
                    0
                }
            });
            for v in 0..self.nv {
                let cv = strengths[v * (end - start) + p - start];
                // The strength times the first dimension's weights, once: each row
                // below is then W complex values scaled by one real (vectorises).
                let scaled: [Complex<T>; W] = std::array::from_fn(|k| cv * kx[k]);
                let tv = &mut buf[v * self.tile_len..(v + 1) * self.tile_len];
                for (k3, &z) in kz.iter().enumerate().take(w3) {
                    for (k2, &y) in ky.iter().enumerate().take(w2) {
                        let a = z * y;
                        let row = ((l[2] + k3) * self.pad[1] + l[1] + k2) * self.pad[0] + l[0];
                        let cells = reals_mut(&mut tv[row..row + W]);
                        for (cell, &sc) in cells.iter_mut().zip(reals(&scaled)) {
                            *cell = *cell + sc * a;
                        }
                    }
                }
            }
        }
    }

    /// The grid cell of bin b's padded tile corner.
    fn origin(&self, b: usize) -> [i64; 3] {
        let idx = [
            b % self.t.bins[0],
            (b / self.t.bins[0]) % self.t.bins[1],
            b / (self.t.bins[0] * self.t.bins[1]),
        ];
        std::array::from_fn(|d| {
            if d < self.dim {
                (idx[d] * self.t.tile[d]) as i64 - self.shift
            } else {
                0
            }
        })
    }

    /// Spreads the pieces of the cut bins of one phase (`cut`, each bin's pieces together and
    /// in order): every piece's tile, then per bin their sum in piece order, added once.
    fn add_cut<const W: usize>(&self, avx2: bool, cut: &[Piece]) {
        let tiles: Vec<Vec<Complex<T>>> = cut
            .par_iter()
            .map_init(Vec::new, |strengths, piece| {
                let mut buf = Vec::new();
                self.fill::<W>(avx2, piece, &mut buf, strengths);
                buf
            })
            .collect();
        let mut starts: Vec<usize> = (0..cut.len())
            .filter(|&i| i == 0 || cut[i].0 != cut[i - 1].0)
            .collect();
        starts.push(cut.len());
        starts.par_windows(2).for_each(|r| {
            let mut sum = tiles[r[0]].clone();
            for tile in &tiles[r[0] + 1..r[1]] {
                for (a, &v) in reals_mut(&mut sum).iter_mut().zip(reals(tile)) {
                    *a = *a + v;
                }
            }
            self.add(cut[r[0]].0, &sum);
        });
    }

    /// Adds bin b's padded tile into the grid: the tiles of a phase's bins do not overlap.
    fn add(&self, b: usize, buf: &[Complex<T>]) {
        let origin = self.origin(b);
        // Add the padded tile into the grid: this phase's tiles do not overlap. Along
        // dimension 1 a padded row is at most three runs of consecutive grid cells (before,
        // within and after the period), each added as one slice.
        let wrapped: [Vec<usize>; 3] = std::array::from_fn(|d| {
            (0..self.pad[d])
                .map(|j| wrap(origin[d] + j as i64, self.t.nf[d]))
                .collect()
        });
        let runs = runs_of(&wrapped[0]);
        for v in 0..self.nv {
            let tv = &buf[v * self.tile_len..(v + 1) * self.tile_len];
            for j3 in 0..self.pad[2] {
                for j2 in 0..self.pad[1] {
                    let g = (wrapped[2][j3] * self.t.nf[1] + wrapped[1][j2]) * self.t.nf[0]
                        + v * self.nft;
                    let row = &tv[(j3 * self.pad[1] + j2) * self.pad[0]..][..self.pad[0]];
                    for &(from, to, len) in &runs {
                        // SAFETY: g + to.. + len lies in vector v's grid; the tiles of
                        // distinct bins of a phase are disjoint and each bin is added by one
                        // task, so no other task touches these cells now.
                        let cells =
                            unsafe { std::slice::from_raw_parts_mut(self.out.0.add(g + to), len) };
                        let vals = reals(&row[from..from + len]);
                        for (cell, &val) in reals_mut(cells).iter_mut().zip(vals) {
                            *cell = *cell + val;
                        }
                    }
                }
            }
        }
    }
}

/// The fewest points a piece of a bin holds: its tile's add then costs little beside it.
const MIN_PIECE: usize = 1024;

/// A bin and some of its sorted points.
type Piece = (usize, Range<usize>);

/// The interleaved (re, im) reals of complex values: the loops over a point's taps then
/// run on whole vector registers (as complex values, LLVM kept one per register).
#[inline(always)]
fn reals<T>(c: &[Complex<T>]) -> &[T] {
    // SAFETY: Complex<T> is repr(C), two T's.
    unsafe { std::slice::from_raw_parts(c.as_ptr().cast(), 2 * c.len()) }
}

#[inline(always)]
fn reals_mut<T>(c: &mut [Complex<T>]) -> &mut [T] {
    // SAFETY: as in `reals`.
    unsafe { std::slice::from_raw_parts_mut(c.as_mut_ptr().cast(), 2 * c.len()) }
}

/// The runs of consecutive values in `idx`: (position in idx, first value, length).
fn runs_of(idx: &[usize]) -> Vec<(usize, usize, usize)> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (j, &i) in idx.iter().enumerate() {
        match runs.last_mut() {
            Some((_, to, len)) if *to + *len == i => *len += 1,
            _ => runs.push((j, i, 1)),
        }
    }
    runs
}

/// Sorted points interpolated per parallel task: enough to amortise a task, few enough
/// that clustered points still spread over every thread.
const INTERP_CHUNK: usize = 512;

impl<T: Real> Gridding<'_, T> {
    /// Type 2 interpolation: c[v·M + j] = Σ grid cells × kernel weights, for each sorted
    /// point j in `points`.
    fn interpolate(&self, grid: &[Complex<T>], c: &mut [Complex<T>], points: Range<usize>) {
        let (spec, taps, pts) = (self.spec, self.taps, self.pts);
        let cx = Interpolation {
            taps,
            pts,
            grid,
            out: SyncPtr(c.as_mut_ptr()),
            dim: spec.dim,
            nf: spec.fine,
            nft: spec.fine_count(),
            nv: spec.n_vectors,
            m: pts.m(),
        };
        let avx2 = has_avx2_fma();
        let chunks = points.len().div_ceil(INTERP_CHUNK);
        with_width!(spec.kernel.width, W => (0..chunks).into_par_iter().for_each(|i| {
            let lo = points.start + i * INTERP_CHUNK;
            let chunk = lo..(lo + INTERP_CHUNK).min(points.end);
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: the CPU has AVX2 and FMA.
                return unsafe { cx.points_avx2::<W>(chunk) };
            }
            cx.points::<W>(chunk)
        }));
    }
}

/// What interpolating one point reads.
struct Interpolation<'a, T> {
    taps: &'a Taps<T>,
    pts: &'a SortedPoints<T>,
    grid: &'a [Complex<T>],
    out: SyncPtr<Complex<T>>,
    dim: usize,
    nf: [usize; 3],
    nft: usize,
    nv: usize,
    m: usize,
}

impl<T: Real> Interpolation<'_, T> {
    /// `points` compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn points_avx2<const W: usize>(&self, points: Range<usize>) {
        self.points::<W>(points)
    }

    #[inline(always)]
    fn points<const W: usize>(&self, points: Range<usize>) {
        for p in points {
            self.point::<W>(p)
        }
    }

    /// The cells of sorted point p's taps along dimension d, wrapped onto the grid (cell 0
    /// for an unused dimension).
    #[inline(always)]
    fn cells<const W: usize>(&self, d: usize, p: usize) -> [usize; W] {
        if d < self.dim {
            let i0 = self.pts.first[d][p] as i64;
            std::array::from_fn(|k| wrap(i0 + k as i64, self.nf[d]))
        } else {
            [0; W]
        }
    }

    #[inline(always)]
    fn point<const W: usize>(&self, p: usize) {
        let kx = self.taps.weights::<W>(self.pts.offset[0][p]);
        let ky = self.taps.weights_of::<W>(self.pts, 1, p);
        let kz = self.taps.weights_of::<W>(self.pts, 2, p);
        let (ix, iy, iz) = (
            self.cells::<W>(0, p),
            self.cells::<W>(1, p),
            self.cells::<W>(2, p),
        );
        let (w2, w3) = (
            if self.dim >= 2 { W } else { 1 },
            if self.dim >= 3 { W } else { 1 },
        );
        let j = self.pts.perm[p] as usize;
        // Rows that do not wrap around the period are contiguous (most of them).
        let i0 = ix[0];
        let contiguous = ix[W - 1] == i0 + W - 1;
        for v in 0..self.nv {
            let g = &self.grid[v * self.nft..(v + 1) * self.nft];
            // The rows weighted by dimensions 2 and 3 summed cell by cell (independent
            // lanes, vectorises), then one dot product with dimension 1's weights.
            let mut line = [Complex::<T>::default(); W];
            for (k3, &z) in kz.iter().enumerate().take(w3) {
                for (k2, &y) in ky.iter().enumerate().take(w2) {
                    let base = (iz[k3] * self.nf[1] + iy[k2]) * self.nf[0];
                    let a = z * y;
                    if contiguous {
                        let row = reals(&g[base + i0..base + i0 + W]);
                        for (l, &cell) in reals_mut(&mut line).iter_mut().zip(row) {
                            *l = *l + cell * a;
                        }
                    } else {
                        for (l, &i) in line.iter_mut().zip(&ix) {
                            *l = *l + g[base + i] * a;
                        }
                    }
                }
            }
            let acc = line
                .iter()
                .zip(&kx)
                .fold(Complex::<T>::default(), |acc, (&l, &k)| acc + l * k);
            // SAFETY: perm is a permutation: each (v, j) is written by one point.
            unsafe { *self.out.0.add(v * self.m + j) = acc };
        }
    }
}

/// In-place unnormalised FFT of one fine grid along every used dimension by `ffts` (planned
/// with exponent sign `spec.sign`). Lines that cannot matter are skipped: only the modes' cells are nonzero
/// before a type 2 FFT (so a pass along d needs only lines whose coordinates along later
/// dimensions are mode cells), and only the modes' cells are read after a type 1 FFT (a pass
/// along d needs only lines whose coordinates along earlier dimensions are mode cells). In
/// 3D this leaves 1.75 of the 3 passes' work.
fn fft_nd<T: Real>(grid: &mut [Complex<T>], spec: &UsfftSpec, ffts: &[Arc<dyn Fft<T>>; 3]) {
    let nf = spec.fine;
    let mode_cell: [Vec<bool>; 3] = std::array::from_fn(|d| {
        let mut v = vec![false; nf[d]];
        for i in spec.fine_index(d) {
            v[i] = true;
        }
        v
    });
    let type1 = spec.kind == TransformType::Type1;
    // Whether the line along `d` through the cell with coordinates `at` must be transformed.
    let needed = |d: usize, at: [usize; 3]| -> bool {
        let constrained = |e: usize| if type1 { e < d } else { e > d };
        (0..3).all(|e| !constrained(e) || mode_cell[e][at[e]])
    };
    // Dimension 1: contiguous rows.
    let f1 = &ffts[0];
    grid.par_chunks_mut(nf[0]).enumerate().for_each_init(
        || vec![Complex::default(); f1.get_inplace_scratch_len()],
        |s, (r, row)| {
            if needed(0, [0, r % nf[1], r / nf[1]]) {
                f1.process_with_scratch(row, s);
            }
        },
    );
    // Dimensions 2 and 3: blocks of columns gathered into contiguous lines.
    const BLOCK: usize = 16;
    let base = SyncPtr(grid.as_mut_ptr());
    for d in 1..spec.dim {
        let n = nf[d];
        let stride: usize = nf[..d].iter().product();
        let outer: usize = nf[d + 1..].iter().product();
        let fft = &ffts[d];
        let blocks = stride.div_ceil(BLOCK);
        // Coordinates of column c of slab o (the coordinate along d is irrelevant).
        let coords = |o: usize, c: usize| -> [usize; 3] {
            if d == 1 {
                [c, 0, o]
            } else {
                [c % nf[0], c / nf[0], 0]
            }
        };
        (0..outer * blocks).into_par_iter().for_each_init(
            || {
                (
                    vec![Complex::<T>::default(); BLOCK * n],
                    vec![Complex::default(); fft.get_inplace_scratch_len()],
                )
            },
            |(buf, scratch), task| {
                let base = &base;
                let o = task / blocks;
                let c0 = (task % blocks) * BLOCK;
                let cb = BLOCK.min(stride - c0);
                if !(c0..c0 + cb).any(|c| needed(d, coords(o, c))) {
                    return;
                }
                let start = o * n * stride + c0;
                for i in 0..n {
                    for j in 0..cb {
                        // SAFETY: this task alone touches columns c0..c0+cb of slab o.
                        buf[j * n + i] = unsafe { *base.0.add(start + i * stride + j) };
                    }
                }
                fft.process_with_scratch(&mut buf[..cb * n], scratch);
                for i in 0..n {
                    for j in 0..cb {
                        // SAFETY: as above.
                        unsafe { *base.0.add(start + i * stride + j) = buf[j * n + i] };
                    }
                }
            },
        );
    }
}

/// Per dimension: fine index and deconvolution factor of each mode index.
fn mode_tables<T: Real>(spec: &UsfftSpec) -> [(Vec<usize>, Vec<T>); 3] {
    std::array::from_fn(|d| {
        (
            spec.fine_index(d),
            spec.deconv[d]
                .iter()
                .map(|&x| T::from_f64(x).unwrap())
                .collect(),
        )
    })
}

/// Type 1: modes out of the fine grid, divided by the kernel's transform.
fn copy_modes_out<T: Real>(spec: &UsfftSpec, grid: &[Complex<T>], f: &mut [Complex<T>]) {
    let t = mode_tables::<T>(spec);
    let [n1, n2, n3] = spec.modes;
    let nf = spec.fine;
    let nft = spec.fine_count();
    let per_vector = n1 * n2 * n3;
    f[..spec.n_vectors * per_vector]
        .par_chunks_mut(n1)
        .enumerate()
        .for_each(|(r, row)| {
            let v = r / (n2 * n3);
            let (m2, m3) = (r % n2, (r / n2) % n3);
            let g = &grid[v * nft + (t[2].0[m3] * nf[1] + t[1].0[m2]) * nf[0]..];
            let s = t[2].1[m3] * t[1].1[m2];
            for (m1, out) in row.iter_mut().enumerate() {
                *out = g[t[0].0[m1]] * (s * t[0].1[m1]);
            }
        });
}

/// Type 2: modes, divided by the kernel's transform, into the zeroed fine grid.
fn copy_modes_in<T: Real>(spec: &UsfftSpec, f: &[Complex<T>], grid: &mut [Complex<T>]) {
    let t = mode_tables::<T>(spec);
    let [n1, n2, n3] = spec.modes;
    let nf = spec.fine;
    let nft = spec.fine_count();
    // One task per vector and fine plane of dimension 3: rows of distinct m3 never share cells.
    grid.par_chunks_mut(nf[0] * nf[1])
        .enumerate()
        .for_each(|(plane, g)| {
            let v = plane / nf[2];
            let i3 = plane % nf[2];
            let Some(m3) = (0..n3).find(|&m3| t[2].0[m3] == i3) else {
                return;
            };
            for m2 in 0..n2 {
                let row = &f[v * n1 * n2 * n3 + (m3 * n2 + m2) * n1..][..n1];
                let s = t[2].1[m3] * t[1].1[m2];
                let g = &mut g[t[1].0[m2] * nf[0]..];
                for (m1, &val) in row.iter().enumerate() {
                    g[t[0].0[m1]] = val * (s * t[0].1[m1]);
                }
            }
        });
    let _ = nft;
}
