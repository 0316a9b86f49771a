//! Ambient-noise correlation on the CPU: stations in parallel for preprocessing; for
//! linear stacks, a blocked complex product (tiles of station pairs in parallel, each
//! summing conj(S_i)·S_j over windows per frequency), then one inverse FFT per pair;
//! nonlinear stacks correlate each window of a pair and stack, pairs in parallel.

use super::calls::{CorrelateCall, Correlations, PreprocessCall};
use super::options::StackMethod;
use super::pairs::Block;
use super::plan::XcorrPlan;
use super::preprocess::{self as pre};
use super::spectra::{Spectra, SpectraData};
use super::stack::{stack_windows, Inverse};
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;
use rustfft::FftPlanner;

/// Stations per side of a tile of the complex product: 2·32 rows of windows stay in
/// cache while 32·32 (or 32·33/2) pairs are summed.
const TILE: usize = 32;

/// One station-day → its kept-window flags and band spectra, window-major `[w][bin]`.
fn station_spectra(
    plan: &XcorrPlan,
    day: &[f32],
    valid: Option<&[u8]>,
    n_windows: usize,
) -> (Vec<u8>, Vec<Complex32>) {
    let (o, g) = (plan.options(), plan.geometry());
    let mut x: Vec<f64> = day.iter().map(|&v| v as f64).collect();
    pre::prepare_day(&mut x, valid, o, plan.sections());
    let day_std = pre::std_dev(&x);
    let fft = FftPlanner::<f64>::new().plan_fft_forward(g.nfft);
    let mut buf = vec![Complex64::default(); g.nfft];
    let mut seg = vec![0.0f64; g.npts];
    let mut scratch = Vec::new();
    let mut kept = vec![0u8; n_windows];
    let mut spectra = vec![Complex32::default(); n_windows * g.band_len];
    for (w, out) in spectra.chunks_exact_mut(g.band_len).enumerate() {
        let start = w * g.step;
        seg.copy_from_slice(&x[start..start + g.npts]);
        let gap = valid.is_some_and(|v| v[start..start + g.npts].contains(&0));
        let max_abs = seg.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let keep = pre::window_kept(max_abs, day_std, o.max_over_std, gap);
        kept[w] = keep as u8;
        if !keep {
            continue; // a zero column
        }
        pre::prepare_window(&mut seg, g, o, &mut scratch);
        buf.fill(Complex64::default());
        for (b, &v) in buf.iter_mut().zip(&seg) {
            b.re = v;
        }
        fft.process(&mut buf);
        pre::whiten(&buf, g, o, 1.0, out);
    }
    (kept, spectra)
}

pub fn preprocess(
    cpu: &CpuBackend,
    call: PreprocessCall,
    reporter: &mut Reporter,
) -> Result<(Vec<u8>, SpectraData)> {
    let (plan, days, batch) = (call.plan, call.days, call.batch);
    let (valid, n_windows) = (call.valid, call.n_windows);
    let g = plan.geometry();
    let (n_sta, n) = (batch.n_traces, batch.n_samples);
    let total = g.band_len * n_sta * n_windows;
    let mut out = try_vec(total, Complex32::default(), "the window spectra")?;
    let mut per_station = Vec::with_capacity(n_sta);
    reporter.stage("xcorr preprocess", 1.0, n_sta);
    reporter.for_chunks(n_sta, cpu.threads(), |stations| {
        per_station.extend(cpu.install(|| {
            stations
                .into_par_iter()
                .map(|s| {
                    let at = s * batch.trace_stride;
                    station_spectra(
                        plan,
                        &days[at..at + n],
                        valid.map(|v| &v[at..at + n]),
                        n_windows,
                    )
                })
                .collect::<Vec<_>>()
        }));
        Ok(())
    })?;
    // [station][window][bin] → [bin][station][window]
    cpu.install(|| {
        out.par_chunks_mut(n_sta * n_windows)
            .enumerate()
            .for_each(|(f, plane)| {
                for (s, (_, spec)) in per_station.iter().enumerate() {
                    for w in 0..n_windows {
                        plane[s * n_windows + w] = spec[w * g.band_len + f];
                    }
                }
            })
    });
    let kept = per_station.into_iter().flat_map(|(k, _)| k).collect();
    Ok((kept, SpectraData::Host(out)))
}

fn host(d: &Spectra) -> &[Complex32] {
    match &d.data {
        SpectraData::Host(v) => v,
        SpectraData::Device(_) => unreachable!("CPU contexts make host spectra"),
    }
}

/// Σ_w conj(a_w)·b_w from split real and imaginary parts: eight-lane partial sums, in
/// 256-bit vectors where the CPU has AVX2 (the same operations in the same order, so
/// the same result, as the portable build's 128-bit vectors).
fn conj_dot(ar: &[f32], ai: &[f32], br: &[f32], bi: &[f32]) -> Complex32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2.
        return unsafe { conj_dot_avx2(ar, ai, br, bi) };
    }
    conj_dot_lanes(ar, ai, br, bi)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn conj_dot_avx2(ar: &[f32], ai: &[f32], br: &[f32], bi: &[f32]) -> Complex32 {
    conj_dot_lanes(ar, ai, br, bi)
}

#[inline(always)]
fn conj_dot_lanes(ar: &[f32], ai: &[f32], br: &[f32], bi: &[f32]) -> Complex32 {
    const L: usize = 8;
    let (mut re, mut im) = ([0.0f32; L], [0.0f32; L]);
    let n = ar.len() / L * L;
    for c in (0..n).step_by(L) {
        let (xr, xi, yr, yi) = (&ar[c..c + L], &ai[c..c + L], &br[c..c + L], &bi[c..c + L]);
        for l in 0..L {
            re[l] += xr[l] * yr[l] + xi[l] * yi[l];
            im[l] += xr[l] * yi[l] - xi[l] * yr[l];
        }
    }
    for w in n..ar.len() {
        re[0] += ar[w] * br[w] + ai[w] * bi[w];
        im[0] += ar[w] * bi[w] - ai[w] * br[w];
    }
    Complex32::new(re.iter().sum(), im.iter().sum())
}

/// One frequency's window spectra of a tile's stations, split into real and imaginary
/// rows: `split[2·k·nw..]` real, then imaginary, for local station k.
fn split_rows(xf: &[Complex32], stations: &[usize], nw: usize, split: &mut Vec<f32>) {
    split.resize(2 * stations.len() * nw, 0.0);
    for (k, &s) in stations.iter().enumerate() {
        let (re, im) = split[2 * k * nw..2 * (k + 1) * nw].split_at_mut(nw);
        for ((r, i), c) in re.iter_mut().zip(im.iter_mut()).zip(&xf[s * nw..][..nw]) {
            *r = c.re;
            *i = c.im;
        }
    }
}

/// The tiles of a block: pairs grouped by TILE×TILE station squares.
fn tiles(block: &Block) -> Vec<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for ti in (0..block.ni).step_by(TILE) {
        let tj0 = if block.is_diagonal() { ti } else { 0 };
        for tj in (tj0..block.nj).step_by(TILE) {
            let mut pairs = Vec::new();
            for a in ti..(ti + TILE).min(block.ni) {
                for b in tj..(tj + TILE).min(block.nj) {
                    let (i, j) = (block.i0 + a, block.j0 + b);
                    if block.index(i, j).is_some() {
                        pairs.push((i, j));
                    }
                }
            }
            if !pairs.is_empty() {
                out.push(pairs);
            }
        }
    }
    out
}

/// Writes pair rows into the caller's output (rows are disjoint).
fn scatter(rows: Vec<Vec<(usize, Vec<f32>)>>, out: &mut Correlations) {
    for (p, row) in rows.into_iter().flatten() {
        out.put(p, &row);
    }
}

pub fn correlate(cpu: &CpuBackend, call: CorrelateCall, reporter: &mut Reporter) -> Result<()> {
    let (plan, days, block, counts) = (call.plan, call.days, call.block, call.counts);
    let mut out = call.out;
    let o = plan.options();
    // Units of work: tiles of pairs for the linear stack, runs of 64 pairs otherwise.
    let (tiles, pairs) = match o.stack_method {
        StackMethod::Linear => (tiles(block), Vec::new()),
        _ => (Vec::new(), block.pairs()),
    };
    let runs: Vec<&[(usize, usize)]> = pairs.chunks(64).collect();
    let units = match o.stack_method {
        StackMethod::Linear => tiles.len(),
        _ => runs.len(),
    };
    let mut rows = Vec::with_capacity(units);
    reporter.stage("xcorr correlate", 1.0, units);
    reporter.for_chunks(units, cpu.threads(), |range| {
        rows.extend(cpu.install(|| {
            match o.stack_method {
                StackMethod::Linear => tiles[range.clone()]
                    .par_iter()
                    .map(|pairs| linear_tile(plan, days, block, counts, pairs))
                    .collect::<Vec<_>>(),
                _ => runs[range.clone()]
                    .par_iter()
                    .map(|run| stacked_run(plan, days, block, run))
                    .collect::<Vec<_>>(),
            }
        }));
        Ok(())
    })?;
    scatter(rows, &mut out);
    Ok(())
}

/// The linear stacks of one tile of pairs: per frequency, the sum over windows (and days)
/// of conj(S_i)·S_j, then one inverse FFT per pair; (pair index in the block, lags).
fn linear_tile(
    plan: &XcorrPlan,
    days: &[&Spectra],
    block: &Block,
    counts: &[u32],
    pairs: &[(usize, usize)],
) -> Vec<(usize, Vec<f32>)> {
    let g = plan.geometry();
    let mut acc = vec![Complex32::default(); pairs.len() * g.band_len];
    let mut stations: Vec<usize> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
    stations.sort_unstable();
    stations.dedup();
    let local: Vec<(usize, usize)> = pairs
        .iter()
        .map(|(i, j)| {
            let at = |s: &usize| stations.binary_search(s).unwrap();
            (at(i), at(j))
        })
        .collect();
    let mut split = Vec::new();
    for d in days {
        let (x, nw) = (host(d), d.n_windows);
        let plane = d.n_stations * nw;
        for f in 0..g.band_len {
            split_rows(&x[f * plane..][..plane], &stations, nw, &mut split);
            let row = |k: usize| {
                let r = &split[2 * k * nw..2 * (k + 1) * nw];
                r.split_at(nw)
            };
            // acc is frequency-major, so that this loop writes contiguously
            let acc_f = &mut acc[f * local.len()..][..local.len()];
            for (c, &(a, b)) in acc_f.iter_mut().zip(&local) {
                let ((ar, ai), (br, bi)) = (row(a), row(b));
                *c += conj_dot(ar, ai, br, bi);
            }
        }
    }
    let mut inv = Inverse::new(g.nfft);
    let mut spectrum = vec![Complex32::default(); g.band_len];
    pairs
        .iter()
        .enumerate()
        .map(|(p, &(i, j))| {
            let k = block.index(i, j).unwrap();
            for (f, v) in spectrum.iter_mut().enumerate() {
                *v = acc[f * pairs.len() + p];
            }
            let mut row = vec![0.0f32; g.n_lags()];
            inv.correlation(&spectrum, counts[k], false, g, &mut row);
            (k, row)
        })
        .collect()
}

/// The nonlinear stacks of a run of pairs: each kept window correlated on its own, then
/// stacked; (pair index in the block, lags).
fn stacked_run(
    plan: &XcorrPlan,
    days: &[&Spectra],
    block: &Block,
    run: &[(usize, usize)],
) -> Vec<(usize, Vec<f32>)> {
    let (g, o) = (plan.geometry(), plan.options());
    let mut inv = Inverse::new(g.nfft);
    let mut band = vec![Complex32::default(); g.band_len];
    run.iter()
        .map(|&(i, j)| {
            let k = block.index(i, j).unwrap();
            let mut windows = Vec::new();
            for d in days {
                let (x, nw) = (host(d), d.n_windows);
                let plane = d.n_stations * nw;
                for w in 0..nw {
                    if d.kept[i * nw + w] == 0 || d.kept[j * nw + w] == 0 {
                        continue;
                    }
                    for (f, b) in band.iter_mut().enumerate() {
                        let xf = &x[f * plane..];
                        *b = xf[i * nw + w].conj() * xf[j * nw + w];
                    }
                    let at = windows.len();
                    windows.resize(at + g.n_lags(), 0.0);
                    inv.correlation(&band, 1, i != j, g, &mut windows[at..]);
                }
            }
            (k, stack_windows(&windows, g.n_lags(), o.stack_method, o))
        })
        .collect()
}
