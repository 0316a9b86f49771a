//! Ambient-noise correlation on the CPU: stations in parallel for preprocessing; for
//! linear stacks, a blocked complex product (`product`: tiles of station pairs in
//! parallel), then one inverse FFT per pair; nonlinear stacks (`windows`) correlate each
//! window of a pair and stack, pairs in parallel.

mod product;
mod windows;

use super::calls::{CorrelateCall, PreprocessCall};
use super::options::StackMethod;
use super::plan::XcorrPlan;
use super::preprocess::{self as pre};
use super::spectra::SpectraData;
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;
use rustfft::FftPlanner;

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

fn host(d: &SpectraData) -> &[Complex32] {
    match d {
        SpectraData::Host(v) => v,
        SpectraData::Device(_) => unreachable!("CPU contexts make host spectra"),
    }
}

/// Rows a unit of work makes: stacks (pair index in the block, lags) and substacks
/// (g·n_pairs + pair index, lags).
#[derive(Default)]
struct Rows {
    total: Vec<(usize, Vec<f32>)>,
    sub: Vec<(usize, Vec<f32>)>,
}

pub fn correlate(cpu: &CpuBackend, call: CorrelateCall, reporter: &mut Reporter) -> Result<()> {
    let o = call.plan.options();
    let linear = o.stack_method == StackMethod::Linear;
    // Units of work: tiles of pairs for the linear stack, runs of 64 pairs otherwise.
    let (tiles, pairs) = match linear {
        true => (product::tiles(call.block), Vec::new()),
        false => (Vec::new(), call.block.pairs()),
    };
    let runs: Vec<&[(usize, usize)]> = pairs.chunks(64).collect();
    let units = if linear { tiles.len() } else { runs.len() };
    let mut rows: Vec<Rows> = Vec::with_capacity(units);
    reporter.stage("xcorr correlate", 1.0, units);
    let c = &call;
    reporter.for_chunks(units, cpu.threads(), |range| {
        rows.extend(cpu.install(|| {
            match linear {
                true => tiles[range.clone()]
                    .par_iter()
                    .map(|pairs| product::linear_tile(c, pairs))
                    .collect::<Vec<_>>(),
                false => runs[range.clone()]
                    .par_iter()
                    .map(|run| windows::stacked_run(c, run))
                    .collect::<Vec<_>>(),
            }
        }));
        Ok(())
    })?;
    let (mut out, mut sub) = (call.out, call.sub);
    for r in rows {
        r.total.into_iter().for_each(|(p, row)| out.put(p, &row));
        r.sub.into_iter().for_each(|(p, row)| sub.put(p, &row));
    }
    Ok(())
}
