//! Linear stacks on the CPU: a blocked complex product (tiles of station pairs, each
//! summing conj(A_i)·B_j over windows per frequency; A = B but for deconvolution), per
//! group of windows when substacks are asked for, then one inverse FFT per pair and stack.

use super::{host, Rows};
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::geometry::Geometry;
use crate::xcorr::pairs::Block;
use crate::xcorr::spectra::Spectra;
use crate::xcorr::stack::Inverse;
use num_complex::Complex32;
use std::ops::Range;

/// Stations per side of a tile of the complex product: 2·32 rows of windows stay in
/// cache while 32·32 (or 32·33/2) pairs are summed.
const TILE: usize = 32;

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

/// One frequency's window spectra (windows `range`) of a tile's stations, split into real
/// and imaginary rows: `split[2·k·len..]` real, then imaginary, for local station k.
fn split_rows(
    xf: &[Complex32],
    stations: &[usize],
    nw: usize,
    range: &Range<usize>,
    split: &mut Vec<f32>,
) {
    let len = range.len();
    split.resize(2 * stations.len() * len, 0.0);
    for (k, &s) in stations.iter().enumerate() {
        let (re, im) = split[2 * k * len..2 * (k + 1) * len].split_at_mut(len);
        let src = &xf[s * nw + range.start..s * nw + range.end];
        for ((r, i), c) in re.iter_mut().zip(im.iter_mut()).zip(src) {
            *r = c.re;
            *i = c.im;
        }
    }
}

/// Local station k's real and imaginary parts in split rows of `len` windows.
fn row(rows: &[f32], k: usize, len: usize) -> (&[f32], &[f32]) {
    rows[2 * k * len..2 * (k + 1) * len].split_at(len)
}

/// The tiles of a block: pairs grouped by TILE×TILE station squares.
pub(super) fn tiles(block: &Block) -> Vec<Vec<(usize, usize)>> {
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

/// A tile's stations (sorted) and its pairs as local station numbers.
struct TileStations {
    stations: Vec<usize>,
    local: Vec<(usize, usize)>,
}

impl TileStations {
    fn new(pairs: &[(usize, usize)]) -> TileStations {
        let mut stations: Vec<usize> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        stations.sort_unstable();
        stations.dedup();
        let at = |s: &usize| stations.binary_search(s).unwrap();
        let local = pairs.iter().map(|(i, j)| (at(i), at(j))).collect();
        TileStations { stations, local }
    }

    /// acc[f·n_pairs + p] += Σ over windows `range` of day `d` of conj(A_i)·B_j at band bin
    /// f (A: the source side, B: the stored spectra).
    fn accumulate(&self, d: &Spectra, range: Range<usize>, g: &Geometry, acc: &mut [Complex32]) {
        let (x, nw, len) = (host(&d.data), d.n_windows, range.len());
        let src = d.source.as_ref().map(host);
        let plane = d.n_stations * nw;
        let (mut split, mut split_src) = (Vec::new(), Vec::new());
        let n_pairs = self.local.len();
        for f in 0..g.band_len {
            split_rows(
                &x[f * plane..][..plane],
                &self.stations,
                nw,
                &range,
                &mut split,
            );
            if let Some(s) = src {
                split_rows(
                    &s[f * plane..][..plane],
                    &self.stations,
                    nw,
                    &range,
                    &mut split_src,
                );
            }
            let a_rows = if src.is_some() { &split_src } else { &split };
            // acc is frequency-major, so that this loop writes contiguously
            let acc_f = &mut acc[f * n_pairs..][..n_pairs];
            for (c, &(a, b)) in acc_f.iter_mut().zip(&self.local) {
                let ((ar, ai), (br, bi)) = (row(a_rows, a, len), row(&split, b, len));
                *c += conj_dot(ar, ai, br, bi);
            }
        }
    }
}

/// The correlations of a tile's pairs from frequency-major sums `acc` over `counts[k]`
/// windows (k: a pair's index in the block): (k, lags).
fn invert(
    call: &CorrelateCall,
    pairs: &[(usize, usize)],
    acc: &[Complex32],
    count: impl Fn(usize) -> u32,
    zero_dc: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, Vec<f32>)> {
    let g = call.plan.geometry();
    let mut inv = Inverse::new(g.nfft);
    let mut spectrum = vec![Complex32::default(); g.band_len];
    pairs
        .iter()
        .enumerate()
        .map(|(p, &(i, j))| {
            let k = call.block.index(i, j).unwrap();
            for (f, v) in spectrum.iter_mut().enumerate() {
                *v = acc[f * pairs.len() + p];
            }
            let mut row = vec![0.0f32; g.n_lags()];
            inv.correlation(&spectrum, count(k), zero_dc(i, j), g, &mut row);
            (k, row)
        })
        .collect()
}

/// The linear stacks of one tile of pairs (and per group, with substacks): per frequency,
/// the sum over windows (and days) of conj(A_i)·B_j, then one inverse FFT per pair.
pub(super) fn linear_tile(call: &CorrelateCall, pairs: &[(usize, usize)]) -> Rows {
    let g = call.plan.geometry();
    let t = TileStations::new(pairs);
    let mut acc = vec![Complex32::default(); pairs.len() * g.band_len];
    let mut rows = Rows::default();
    match call.groups {
        None => {
            for d in call.days {
                t.accumulate(d, 0..d.n_windows, g, &mut acc);
            }
        }
        Some(groups) => {
            let n_pairs = call.block.n_pairs();
            let method = crate::xcorr::method::Method::of(call.plan.options());
            let mut part = acc.clone();
            // Each group's windows, then the unlabelled ones; the sum of all of them is the
            // stack of every window.
            for grp in 0..=groups.n_groups {
                part.fill(Complex32::default());
                for &(d, w0, w1) in groups.runs(grp) {
                    t.accumulate(call.days[d], w0..w1, g, &mut part);
                }
                if grp < groups.n_groups {
                    let count = |k: usize| call.group_counts[grp * n_pairs + k];
                    let sub = invert(call, pairs, &part, count, |i, j| method.zero_dc(i, j));
                    rows.sub
                        .extend(sub.into_iter().map(|(k, r)| (grp * n_pairs + k, r)));
                }
                acc.iter_mut().zip(&part).for_each(|(a, p)| *a += p);
            }
        }
    }
    rows.total = invert(call, pairs, &acc, |k| call.counts[k], |_, _| false);
    rows
}
