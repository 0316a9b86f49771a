//! Linear stacks: per tile of stations (I × J), one cuBLAS complex GEMM batched over the
//! band bins, C_f = X_f[:, I]^H · X_f[:, J] (summed over days with β = 1), then per chunk
//! of the tile's pairs a gather into rows and the rows' way to correlations.

use super::days::DaySpectra;
use super::kit::{blocks, grid_dim, Kit};
use super::rows::{RowBuffers, ROW_CHUNK};
use crate::backend::cuda::array::{
    complex, complex_mut, part, part_mut, DeviceArray, DeviceArrayMut,
};
use crate::backend::cuda::blas::{Blas, Op, Strided, StridedGemm};
use crate::backend::cuda::buffers::{alloc, upload};
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::geometry::Geometry;
use crate::xcorr::pairs::Block;
use crate::xcorr::plan::XcorrPlan;
use crate::xcorr::spectra::Spectra;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaSlice;
use num_complex::Complex32;

/// What cuBLAS is needed for, where it is missing.
const NEEDS_CUBLAS: &str = "the GPU correlation";

/// Stations [ia, ia + m) against [jb, jb + nn).
struct Tile {
    ia: usize,
    jb: usize,
    m: usize,
    nn: usize,
}

/// C_f (+)= X_f[:, I]^H · X_f[:, J] for every band bin f: one batched complex GEMM
/// (cuBLAS, FP32), C column-major m × nn per bin.
fn gemm(
    blas: &Blas,
    day: &DaySpectra,
    t: &Tile,
    band_len: usize,
    accumulate: bool,
    c: &mut impl DeviceArrayMut<Complex32>,
) -> Result<()> {
    let (x, nw) = (&day.x, day.nw);
    // A and B are the tile's station columns of the day's spectra, a bin's plane apart.
    let columns = Strided {
        ld: nw,
        stride: day.plane,
    };
    let g = StridedGemm {
        op_a: Op::C,
        op_b: Op::N,
        m: t.m,
        n: t.nn,
        k: nw,
        a: columns,
        b: columns,
        c: Strided {
            ld: t.m,
            stride: t.m * t.nn,
        },
        batch: band_len,
        alpha: Complex32::new(1.0, 0.0),
        beta: Complex32::new(if accumulate { 1.0 } else { 0.0 }, 0.0),
    };
    let a = part(x, t.ia * nw, x.len() - t.ia * nw);
    let b = part(x, t.jb * nw, x.len() - t.jb * nw);
    blas.gemm_strided_batched(&g, &a, &b, c, "the correlation GEMM")
}

/// Gathers each pair's cross-spectrum from a tile's GEMM output `c` into a row of
/// nfft/2 + 1 bins of `spec`, scaled by `scale` (bins outside the band 0).
fn pair_spectra(
    kit: &Kit,
    g: &Geometry,
    c: &CudaSlice<f32>,
    t: &Tile,
    pairs: &[(i32, i32, usize)],
    scale: &[f32],
    spec: &mut CudaSlice<f32>,
) -> Result<()> {
    let nbins = g.nfft / 2 + 1;
    let slot_a: Vec<i32> = pairs.iter().map(|s| s.0).collect();
    let slot_b: Vec<i32> = pairs.iter().map(|s| s.1).collect();
    let what = "uploading pairs";
    let (slot_a, slot_b, slot_scale) = (
        upload(&kit.stream, &slot_a, what)?,
        upload(&kit.stream, &slot_b, what)?,
        upload(&kit.stream, scale, what)?,
    );
    let c = complex(c);
    let c = part(&c, 0, g.band_len * t.m * t.nn);
    let mut spec = complex_mut(spec);
    let mut spec = part_mut(&mut spec, 0, pairs.len() * nbins);
    let grid = (
        nbins.div_ceil(32) as u32,
        grid_dim(pairs.len().div_ceil(32), "pairs")?,
    );
    let cfg = blocks(grid, (32, 8));
    let mut l = Launch::new(&kit.module, &kit.stream, "xc_pair_spectra", cfg)?;
    l.input(&c)
        .scalar((t.m * t.nn) as i64)
        .scalar(t.m as i32)
        .input(&slot_a)
        .input(&slot_b)
        .input(&slot_scale)
        .scalar(pairs.len() as i32)
        .output(&mut spec)
        .scalar(nbins as i32)
        .scalar(g.band_start as i32)
        .scalar(g.band_len as i32);
    // SAFETY: xc_pair_spectra(const c32* C, long long c_stride, int ldc, const int* slot_a,
    // const int* slot_b, const float* slot_scale, int n_slots, c32* spec, int nbins,
    // int band_start, int band_len): slots below n_slots (the three tables' length) read
    // C[f·c_stride + a + b·ldc] for bins f < band_len of the tile's pairs (a < m, b < nn;
    // c_stride = m·nn, ldc = m), inside C's band_len·m·nn part, and write
    // spec[slot·nbins + k] for k < nbins, inside its n_slots·nbins part.
    unsafe { l.run() }
}

/// Seconds per call of the correlation GEMM of all stations of `day` (one tile, the full
/// n × n product per band bin), timed with CUDA events over `reps` calls: for the
/// benchmark's fraction of the GPU's complex-GEMM peak.
pub fn gemm_seconds(plan: &XcorrPlan, day: &Spectra, reps: usize) -> Result<f64> {
    let gpu: &CudaBackend = plan
        .context()
        .cuda
        .as_ref()
        .ok_or_else(|| Error::Unsupported("the GEMM timing needs a CUDA context".into()))?;
    let kit = Kit::new(gpu)?;
    let blas = Blas::new(&kit.stream, NEEDS_CUBLAS)?;
    let n = day.n_stations;
    let band_len = plan.geometry().band_len;
    let mut c: CudaSlice<f32> = alloc(
        &kit.stream,
        2 * band_len * n * n,
        "allocating cross-spectra",
    )?;
    let x = DaySpectra::of(day)?;
    let mut c = complex_mut(&mut c);
    let tile = Tile {
        ia: 0,
        jb: 0,
        m: n,
        nn: n,
    };
    gemm(&blas, &x, &tile, band_len, false, &mut c)?;
    let event = || {
        kit.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording an event"))
    };
    let start = event()?;
    for _ in 0..reps.max(1) {
        gemm(&blas, &x, &tile, band_len, false, &mut c)?;
    }
    let end = event()?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(driver_error("timing the GEMM"))?;
    Ok(ms as f64 / 1e3 / reps.max(1) as f64)
}

/// A tile's pairs, column-major (consecutive a for one b read C contiguously): local
/// stations (a, b) and the pair's index in the block.
fn tile_pairs(block: &Block, t: &Tile) -> Vec<(i32, i32, usize)> {
    let mut slots = Vec::new();
    for b in 0..t.nn {
        for a in 0..t.m {
            if let Some(p) = block.index(t.ia + a, t.jb + b) {
                slots.push((a as i32, b as i32, p));
            }
        }
    }
    slots
}

/// The tiles of `block`, at most `ti_max` × `tj_max` stations (the upper triangle of a
/// diagonal block).
fn tiles(block: &Block, ti_max: usize, tj_max: usize) -> Vec<Tile> {
    let mut out = Vec::new();
    for ti in (0..block.ni).step_by(ti_max) {
        let tj0 = if block.is_diagonal() { ti } else { 0 };
        for tj in (tj0..block.nj).step_by(tj_max) {
            out.push(Tile {
                ia: block.i0 + ti,
                jb: block.j0 + tj,
                m: ti_max.min(block.ni - ti),
                nn: tj_max.min(block.nj - tj),
            });
        }
    }
    out
}

pub(super) fn run(
    kit: &Kit,
    call: CorrelateCall,
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
) -> Result<()> {
    let (plan, days, block, counts) = (call.plan, call.days, call.block, call.counts);
    let mut out = call.out;
    let g = *plan.geometry();
    let blas = Blas::new(&kit.stream, NEEDS_CUBLAS)?;
    // Tile side: the GEMM output of a tile (band_len·t² complex) within the budget.
    let side = ((kit.budget() / (8 * g.band_len)) as f64).sqrt() as usize;
    let side = side.clamp(32, 65536);
    let (ti_max, tj_max) = (side.min(block.ni), side.min(block.nj));
    let mut c: CudaSlice<f32> = alloc(
        &kit.stream,
        2 * g.band_len * ti_max * tj_max,
        "allocating cross-spectra",
    )?;
    let xs: Vec<DaySpectra> = days
        .iter()
        .map(|d| DaySpectra::of(d))
        .collect::<Result<_>>()?;
    for tile in tiles(block, ti_max, tj_max) {
        let slots = tile_pairs(block, &tile);
        if slots.is_empty() {
            continue;
        }
        for (d, day) in xs.iter().enumerate() {
            gemm(
                &blas,
                day,
                &tile,
                g.band_len,
                d > 0,
                &mut complex_mut(&mut c),
            )?;
        }
        for chunk in slots.chunks(ROW_CHUNK) {
            // 1/(windows·nfft): the mean over the pair's windows and the inverse FFT's scale.
            let scale: Vec<f32> = chunk
                .iter()
                .map(|s| match counts[s.2] {
                    0 => 0.0,
                    c => (1.0 / (c as f64 * g.nfft as f64)) as f32,
                })
                .collect();
            pair_spectra(kit, &g, &c, &tile, chunk, &scale, &mut rows.spec)?;
            let trimmed = rows.finish(kit, &g, chunk.len(), None)?;
            for (s, row) in chunk.iter().zip(trimmed.chunks_exact(g.n_lags())) {
                out.put(s.2, row);
            }
            reporter.advance(chunk.len())?;
        }
    }
    Ok(())
}
