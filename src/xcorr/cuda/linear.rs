//! Linear stacks: per tile of stations (I × J), one cuBLAS complex GEMM batched over the
//! band bins, C_f = A_f[:, I]^H · X_f[:, J] (A = X but for deconvolution; summed over days
//! with β = 1), then per chunk of the tile's pairs a gather into rows and the rows' way to
//! correlations. With substacks, one such sum per group of windows (a GEMM per run of
//! consecutive windows), each turned into the group's rows and added into the stack of
//! all windows.

use super::days::DaySpectra;
use super::kit::{blocks, grid_dim, Kit};
use super::pace::Pace;
use super::put::{put_rows, RowsAt};
use super::rows::{HostDest, HostRows, RowBuffers, ROW_CHUNK};
use crate::backend::cuda::array::{
    complex, complex_mut, part, part_mut, DeviceArray, DeviceArrayMut, PartMut,
};
use crate::backend::cuda::blas::{Blas, Op, Strided, StridedGemm};
use crate::backend::cuda::launch::for_elems;
use crate::backend::cuda::workspace::Work;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::geometry::Geometry;
use crate::xcorr::groups::WindowGroups;
use crate::xcorr::method::Method;
use crate::xcorr::pairs::Block;
use crate::xcorr::plan::XcorrPlan;
use crate::xcorr::spectra::Spectra;
use cudarc::driver::sys::CUevent_flags;
use num_complex::Complex32;
use std::ops::Range;

/// What cuBLAS is needed for, where it is missing.
const NEEDS_CUBLAS: &str = "the GPU correlation";

/// Stations [ia, ia + m) against [jb, jb + nn).
struct Tile {
    ia: usize,
    jb: usize,
    m: usize,
    nn: usize,
}

/// C_f (+)= A_f[:, I]^H · X_f[:, J] over the windows `w` of the day, for every band bin f:
/// one batched complex GEMM (cuBLAS, FP32), C column-major m × nn per bin.
fn gemm(
    blas: &Blas,
    day: &DaySpectra,
    t: &Tile,
    (band_len, w): (usize, Range<usize>),
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
        k: w.len(),
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
    let (ao, bo) = (t.ia * nw + w.start, t.jb * nw + w.start);
    let a = part(&day.a, ao, day.a.len() - ao);
    let b = part(x, bo, x.len() - bo);
    blas.gemm_strided_batched(&g, &a, &b, c, "the correlation GEMM")
}

/// Gathers each pair's cross-spectrum from a tile's GEMM output `c` into a row of
/// nfft/2 + 1 bins of `spec`, scaled by `scale` (bins outside the band 0).
fn pair_spectra(
    kit: &Kit,
    g: &Geometry,
    c: &Work<'_, f32>,
    t: &Tile,
    pairs: &[(i32, i32, usize)],
    scale: &[f32],
    spec: &mut Work<'_, f32>,
) -> Result<()> {
    let nbins = g.nfft / 2 + 1;
    let slot_a: Vec<i32> = pairs.iter().map(|s| s.0).collect();
    let slot_b: Vec<i32> = pairs.iter().map(|s| s.1).collect();
    let what = "uploading pairs";
    let (slot_a, slot_b, slot_scale) = (
        kit.upload(&slot_a, what)?,
        kit.upload(&slot_b, what)?,
        kit.upload(scale, what)?,
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
    let mut l = kit.launch("xc_pair_spectra", cfg)?;
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
        .cuda()
        .ok_or_else(|| Error::Unsupported("the GEMM timing needs a CUDA context".into()))?;
    let kit = Kit::new(gpu)?;
    let blas = kit.blas(NEEDS_CUBLAS)?;
    let n = day.n_stations;
    let band_len = plan.geometry().band_len;
    let mut c = kit.take::<f32>(2 * band_len * n * n, "allocating cross-spectra")?;
    let x = DaySpectra::of(day)?;
    let mut c = complex_mut(&mut c);
    let tile = Tile {
        ia: 0,
        jb: 0,
        m: n,
        nn: n,
    };
    let all = (band_len, 0..day.n_windows);
    gemm(&blas, &x, &tile, all.clone(), false, &mut c)?;
    let event = || {
        kit.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording an event"))
    };
    let start = event()?;
    for _ in 0..reps.max(1) {
        gemm(&blas, &x, &tile, all.clone(), false, &mut c)?;
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

/// A tile's cross-spectra on their way to rows: the stack of all windows in `c`; with
/// substacks, each group's in `cg` first.
struct TileSums<'k> {
    c: Work<'k, f32>,
    cg: Option<Work<'k, f32>>,
}

pub(super) fn run(
    kit: &Kit,
    call: CorrelateCall,
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
) -> Result<()> {
    let (plan, block) = (call.plan, call.block);
    let g = *plan.geometry();
    let blas = kit.blas(NEEDS_CUBLAS)?;
    let sums = if call.groups.is_some() { 2 } else { 1 };
    // Tile side: the GEMM outputs of a tile (band_len·t² complex each) within the budget.
    let side = ((kit.budget() / (8 * g.band_len * sums)) as f64).sqrt() as usize;
    let side = side.clamp(32, 65536);
    let (ti_max, tj_max) = (side.min(block.ni), side.min(block.nj));
    let len = 2 * g.band_len * ti_max * tj_max;
    let what = "allocating cross-spectra";
    let mut s = TileSums {
        c: kit.take(len, what)?,
        cg: match call.groups {
            Some(_) => Some(kit.take(len, what)?),
            None => None,
        },
    };
    let xs: Vec<DaySpectra> = call
        .days
        .iter()
        .map(|d| DaySpectra::of(d))
        .collect::<Result<_>>()?;
    let mut call = call;
    let mut pace = Pace::new(&kit.stream, reporter);
    for tile in tiles(block, ti_max, tj_max) {
        let slots = tile_pairs(block, &tile);
        if slots.is_empty() {
            continue;
        }
        let tc = TileCall {
            kit,
            blas: &blas,
            g: &g,
            xs: &xs,
            tile: &tile,
            slots: &slots,
        };
        match call.groups {
            None => {
                for (d, day) in xs.iter().enumerate() {
                    let w = (g.band_len, 0..day.nw);
                    gemm(&blas, day, &tile, w, d > 0, &mut complex_mut(&mut s.c))?;
                }
            }
            Some(groups) => tc.groups(&mut call, groups, &mut s, rows)?,
        }
        let counts = call.counts;
        let dest = match call.device.as_mut() {
            None => {
                let dest = HostDest {
                    out: &mut call.out,
                    row: &|k| k,
                    cpu: &plan.context().cpu,
                    done: &mut |n| reporter.advance(n),
                };
                tc.emit(&s.c, rows, |k| counts[k], None, Dest::Host(dest))?;
                continue;
            }
            Some(d) => Dest::Device {
                out: &mut d.stacks,
                stride: d.stride,
                row: &|k| k,
                pace: pace.as_mut().map(|p| (p, &mut *reporter)),
            },
        };
        tc.emit(&s.c, rows, |k| counts[k], None, dest)?;
    }
    match pace.as_mut() {
        Some(p) => p.finish(reporter),
        None => Ok(()),
    }
}

/// What the stages of one tile read.
struct TileCall<'a, 'k> {
    kit: &'a Kit<'k>,
    blas: &'a Blas,
    g: &'a Geometry,
    xs: &'a [DaySpectra<'a>],
    tile: &'a Tile,
    slots: &'a [(i32, i32, usize)],
}

impl TileCall<'_, '_> {
    /// Each group's sums into `s.cg`, its rows out, and the sum of all groups into `s.c`.
    fn groups(
        &self,
        call: &mut CorrelateCall,
        groups: &WindowGroups,
        s: &mut TileSums,
        rows: &mut RowBuffers,
    ) -> Result<()> {
        let (g, n_pairs) = (self.g, call.block.n_pairs());
        let method = Method::of(call.plan.options());
        let cg =
            s.cg.as_mut()
                .ok_or_else(|| Error::Internal("no group sums".into()))?;
        let mut first = true;
        for grp in 0..=groups.n_groups {
            let runs = groups.runs(grp);
            for (r, &(d, w0, w1)) in runs.iter().enumerate() {
                let w = (g.band_len, w0..w1);
                gemm(
                    self.blas,
                    &self.xs[d],
                    self.tile,
                    w,
                    r > 0,
                    &mut complex_mut(cg),
                )?;
            }
            if runs.is_empty() {
                // A labelled group's substacks are zeros (count 0): already so on the host.
                // The unlabelled windows (grp = n_groups) have no substack row.
                if grp == groups.n_groups {
                    continue;
                }
                if let Some((out, stride)) = device_sub(call)? {
                    let dst: Vec<i64> = self
                        .slots
                        .iter()
                        .map(|s| (grp * n_pairs + s.2) as i64)
                        .collect();
                    let n_lags = g.n_lags();
                    put_rows(self.kit, None, RowsAt::new(&dst, n_lags, stride), out)?;
                }
                continue;
            }
            if grp < groups.n_groups {
                let counts = call.group_counts;
                let (ia, jb) = (self.tile.ia, self.tile.jb);
                let zero_dc = |a: i32, b: i32| method.zero_dc(ia + a as usize, jb + b as usize);
                let count = |k| counts[grp * n_pairs + k];
                let row = |k| grp * n_pairs + k;
                let dest = match call.device.as_mut() {
                    None => {
                        self.emit(
                            cg,
                            rows,
                            count,
                            Some(&zero_dc),
                            Dest::Host(HostDest {
                                out: &mut call.sub,
                                row: &row,
                                cpu: &call.plan.context().cpu,
                                done: &mut |_| Ok(()),
                            }),
                        )?;
                        None
                    }
                    Some(d) => Some(d),
                };
                if let Some(d) = dest {
                    let out = d.substacks.as_mut().ok_or_else(no_substacks)?;
                    let stride = d.stride;
                    let dest = Dest::Device {
                        out,
                        stride,
                        row: &row,
                        pace: None,
                    };
                    self.emit(cg, rows, count, Some(&zero_dc), dest)?;
                }
            }
            add(
                self.kit,
                &mut s.c,
                cg,
                2 * g.band_len * self.tile.m * self.tile.nn,
                first,
            )?;
            first = false;
        }
        Ok(())
    }

    /// The tile's pairs from cross-spectra `c` over `count(k)` windows (k: the pair's index
    /// in the block), in chunks of rows, each sent to `dest`.
    fn emit(
        &self,
        c: &Work<'_, f32>,
        rows: &mut RowBuffers,
        count: impl Fn(usize) -> u32,
        zero_dc: Option<&dyn Fn(i32, i32) -> bool>,
        mut dest: Dest,
    ) -> Result<()> {
        let g = self.g;
        let mut host = match dest {
            Dest::Host(_) => Some(HostRows::new(self.kit.gpu, self.slots.len(), g.n_lags())?),
            Dest::Device { .. } => None,
        };
        for (k, chunk) in self.slots.chunks(ROW_CHUNK).enumerate() {
            // 1/(windows·nfft): the mean over the pair's windows and the inverse FFT's scale.
            let scale: Vec<f32> = chunk
                .iter()
                .map(|s| match count(s.2) {
                    0 => 0.0,
                    c => (1.0 / (c as f64 * g.nfft as f64)) as f32,
                })
                .collect();
            pair_spectra(self.kit, g, c, self.tile, chunk, &scale, &mut rows.spec)?;
            let flags = match zero_dc {
                Some(z) => {
                    let f: Vec<u8> = chunk.iter().map(|s| z(s.0, s.1) as u8).collect();
                    Some(self.kit.upload(&f, "uploading rows")?)
                }
                None => None,
            };
            match &mut dest {
                Dest::Host(put) => {
                    let host = host.as_mut().expect("made for host rows");
                    let rows_now = (chunk.len(), flags.as_ref());
                    rows.finish_to_host(self.kit, g, rows_now, host.buffer(k))?;
                    host.queued(k, chunk, put)?;
                }
                Dest::Device {
                    out,
                    stride,
                    row,
                    pace,
                } => {
                    let dst: Vec<i64> = chunk.iter().map(|s| row(s.2) as i64).collect();
                    let (n_lags, stride) = (g.n_lags(), *stride);
                    let at = RowsAt::new(&dst, n_lags, stride);
                    rows.finish_into(self.kit, g, flags.as_ref(), at, out)?;
                    if let Some((pace, reporter)) = pace {
                        pace.queued(chunk.len(), reporter)?;
                    }
                }
            }
        }
        if let (Some(mut host), Dest::Host(mut put)) = (host, dest) {
            host.flush(&mut put)?;
            host.release();
        }
        Ok(())
    }
}

/// Where a tile's rows go: into a host call's arrays, or into device memory at row `row(k)`
/// (k: the pair's index in the block), each chunk paced with `pace` if given.
enum Dest<'d, 'o> {
    Host(HostDest<'d, 'o>),
    Device {
        out: &'d mut PartMut<'o, f32>,
        stride: usize,
        row: &'d dyn Fn(usize) -> usize,
        pace: Option<(&'d mut Pace, &'d mut Reporter)>,
    },
}

/// A device call's substacks output and its row stride, if the call is a device call.
fn device_sub<'c, 'a>(
    call: &'c mut CorrelateCall<'a>,
) -> Result<Option<(&'c mut PartMut<'a, f32>, usize)>> {
    match call.device.as_mut() {
        None => Ok(None),
        Some(d) => {
            let stride = d.stride;
            let out = d.substacks.as_mut().ok_or_else(no_substacks)?;
            Ok(Some((out, stride)))
        }
    }
}

fn no_substacks() -> Error {
    Error::Internal("substacks without an output".into())
}

/// c = g (first) or c += g, over `n` floats.
fn add(kit: &Kit, c: &mut Work<'_, f32>, g: &Work<'_, f32>, n: usize, first: bool) -> Result<()> {
    let (src, mut dst) = (part(g, 0, n), part_mut(c, 0, n));
    let mut l = kit.launch("xc_add", for_elems(n))?;
    l.output(&mut dst)
        .input(&src)
        .scalar(n as i64)
        .scalar(first as i32);
    // SAFETY: xc_add(float* c, const float* g, i64 n, int first): threads i < n (the others
    // return) touch c[i] and g[i], inside both n-float parts.
    unsafe { l.run() }
}
