//! F-X / F-XY prediction filtering on the CPU, in f64: per slab of spatial windows (so that
//! a large volume needs bounded memory) and per time window, rayon over traces for the FFTs
//! (rustfft), over frequencies for the window filters, over traces again for the inverse
//! FFTs and the overlap-add. Progress is reported (and a stop honoured) between these
//! steps and between chunks of frequencies; the output is written slab by slab, so only a
//! volume of several slabs can be stopped after part of it was written.

use super::filter::{filter_window, Scratch};
use super::geometry::{AxisWindow, Setup, Slab};
use super::options::OutOfBand;
use super::volume::Volume;
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Error, Result};
use crate::progress::Reporter;
use crate::sample::Sample;
use num_complex::Complex64 as C64;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const ZERO: C64 = C64::new(0.0, 0.0);

/// Working memory per slab, bytes.
const SLAB_BYTES: usize = 512 << 20;
/// 0: `SLAB_BYTES`.
static SLAB_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the working memory of a slab (None: the default), so that tests can run many slabs
/// on small volumes. Process-wide.
pub fn set_slab_bytes(bytes: Option<usize>) {
    SLAB_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

pub fn execute<T: Sample>(
    cpu: &CpuBackend,
    s: &Setup,
    input: &[T],
    output: &mut [T],
    layout: Volume,
    reporter: &mut Reporter,
) -> Result<()> {
    let (n, nf, nx) = (s.n_samples, s.n_freq(), s.nx);
    // Accumulator, spectra and filtered slices per y-line.
    let per_line = nx * (8 * n + 16 * nf + 16 * s.band.len());
    let budget = match SLAB_LIMIT.load(Ordering::Relaxed) {
        0 => SLAB_BYTES,
        b => b,
    };
    let mut written_until = 0;
    let slabs = s.slabs(budget / per_line);
    // Per slab and time window: the forward FFTs, each frequency's filters, the inverse FFTs.
    let steps = slabs.len() * s.time.count() * (s.band.len() + 2);
    reporter.stage("fx windows", 1.0, steps);
    for slab in slabs {
        let acc = filter_slab(cpu, s, &slab, input, layout, reporter).map_err(|e| match e {
            Error::Cancelled(m) if written_until > 0 => Error::Cancelled(format!(
                "{m}; the output traces of crossline lines 0 to {} hold partly filtered \
                 data (a volume filtered in slabs), the others are untouched",
                written_until - 1
            )),
            e => e,
        })?;
        let (already, first) = (written_until, slab.write.start - slab.read.start);
        let traces = layout.lines_mut(output, slab.write.clone());
        cpu.install(|| {
            traces.into_par_iter().for_each(|(r, dst)| {
                let src = &acc[(first * nx + r) * n..][..n];
                let added = slab.write.start + r / nx < already;
                for (d, &v) in dst.iter_mut().zip(src) {
                    let v = T::from_f64(v).unwrap();
                    *d = if added { *d + v } else { v };
                }
            });
        });
        written_until = written_until.max(slab.write.end);
    }
    Ok(())
}

/// The slab's contribution to the traces of its read lines (trace ix + nx·(iy − read.start)).
fn filter_slab<T: Sample>(
    cpu: &CpuBackend,
    s: &Setup,
    slab: &Slab,
    input: &[T],
    layout: Volume,
    reporter: &mut Reporter,
) -> Result<Vec<f64>> {
    let (n, nfft, nf, nx) = (s.n_samples, s.nfft, s.n_freq(), s.nx);
    let ntr = nx * slab.read.len();
    let nb = s.band.len();
    let ys: Vec<AxisWindow> = s.y.windows[slab.windows.clone()]
        .iter()
        .map(|w| w.shifted(slab.read.start))
        .collect();
    let mut acc = try_vec(ntr * n, 0.0f64, "the output accumulator")?;
    let mut spec = try_vec(ntr * nf, ZERO, "trace spectra")?;
    let mut band_out = try_vec(nb * ntr, ZERO, "filtered frequency slices")?;
    let mut planner = <f64 as crate::sample::Real>::fft_planner();
    let mut cx = SlabPass {
        s,
        forward: planner.forward(nfft),
        inverse: planner.inverse(nfft),
        in_band: vec![usize::MAX; nf],
        share: s.share(slab),
        ntr,
        // Only the lines the slab writes are transformed back.
        written: (slab.write.start - slab.read.start) * nx..(slab.write.end - slab.read.start) * nx,
    };
    for (b, &f) in s.band.iter().enumerate() {
        cx.in_band[f] = b;
    }
    let trace_at = |t: usize| layout.offset(t % nx, slab.read.start + t / nx);
    for k in 0..s.time.count() {
        let (start, len) = (s.time.starts[k], s.time.lens[k]);
        cpu.install(|| {
            spec.par_chunks_mut(nf).enumerate().for_each_init(
                || vec![ZERO; nfft],
                |buf, (t, out)| {
                    let o = trace_at(t) + start;
                    for (b, x) in buf.iter_mut().zip(&input[o..o + len]) {
                        *b = C64::new(x.to_f64().unwrap(), 0.0);
                    }
                    buf[len..].fill(ZERO);
                    cx.forward.process(buf);
                    out.copy_from_slice(&buf[..nf]);
                },
            )
        });
        reporter.advance(1)?;
        let spec = &spec;
        reporter.for_chunks(nb, cpu.threads(), |bands| {
            cpu.install(|| cx.filter_bands(&ys, spec, bands, &mut band_out));
            Ok(())
        })?;
        cpu.install(|| cx.add_back(k, spec, &band_out, &mut acc));
        reporter.advance(1)?;
    }
    Ok(acc)
}

/// What one slab's time windows share: the FFTs, where each frequency lies in the band,
/// the out-of-band share of each line, and the traces transformed back.
struct SlabPass<'a> {
    s: &'a Setup,
    forward: std::sync::Arc<dyn rustfft::Fft<f64>>,
    inverse: std::sync::Arc<dyn rustfft::Fft<f64>>,
    /// Per frequency bin, its index in the band (usize::MAX: outside).
    in_band: Vec<usize>,
    share: Vec<f64>,
    ntr: usize,
    written: std::ops::Range<usize>,
}

impl SlabPass<'_> {
    /// The filtered slices of band entries `bands` (rows of `band_out`) from the trace
    /// spectra `spec`: every spatial window of the slab filters its part of each slice.
    fn filter_bands(
        &self,
        ys: &[AxisWindow],
        spec: &[C64],
        bands: std::ops::Range<usize>,
        band_out: &mut [C64],
    ) {
        let (s, ntr, nf) = (self.s, self.ntr, self.s.n_freq());
        let first = bands.start;
        band_out[bands.start * ntr..bands.end * ntr]
            .par_chunks_mut(ntr)
            .enumerate()
            .for_each_init(
                || (Scratch::default(), vec![ZERO; ntr]),
                |(scratch, slice), (b, out)| {
                    let f = s.band[first + b];
                    for (t, v) in slice.iter_mut().enumerate() {
                        *v = spec[t * nf + f];
                    }
                    out.fill(ZERO);
                    for wy in ys {
                        for wx in &s.x.windows {
                            filter_window(s, wx, wy, slice, out, scratch);
                        }
                    }
                },
            )
    }

    /// Time window k of the written traces back to time: the filtered band and the
    /// out-of-band spectrum, inverse transformed and added into `acc` with the window's
    /// weights.
    fn add_back(&self, k: usize, spec: &[C64], band_out: &[C64], acc: &mut [f64]) {
        let s = self.s;
        let (n, nfft, nf, nx, ntr) = (s.n_samples, s.nfft, s.n_freq(), s.nx, self.ntr);
        let (start, len, weights) = (s.time.starts[k], s.time.lens[k], &s.time.weights[k]);
        let written = &self.written;
        acc[written.start * n..written.end * n]
            .par_chunks_mut(n)
            .enumerate()
            .for_each_init(
                || vec![ZERO; nfft],
                |buf, (r, a)| {
                    let t = written.start + r;
                    let pass = self.share[t / nx];
                    for f in 0..nf {
                        buf[f] = match self.in_band[f] {
                            usize::MAX => match s.out_of_band {
                                OutOfBand::Pass => spec[t * nf + f] * pass,
                                OutOfBand::Zero => ZERO,
                            },
                            b => band_out[b * ntr + t],
                        };
                    }
                    // Real output: the negative frequencies are the conjugates, and the
                    // imaginary parts of the DC and Nyquist bins are dropped.
                    buf[0].im = 0.0;
                    if nfft % 2 == 0 {
                        buf[nfft / 2].im = 0.0;
                    }
                    for f in 1..nfft - nf + 1 {
                        buf[nfft - f] = buf[f].conj();
                    }
                    self.inverse.process(buf);
                    let scale = 1.0 / nfft as f64;
                    for i in 0..len {
                        a[start + i] += weights[i] * buf[i].re * scale;
                    }
                },
            )
    }
}
