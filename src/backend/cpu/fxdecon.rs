//! F-X / F-XY prediction filtering on the CPU, in f64: per time window, rayon over traces
//! for the FFTs (rustfft), over frequencies for the window filters, over traces again for
//! the inverse FFTs and the overlap-add.

use super::CpuBackend;
use crate::error::{try_vec, Result};
use crate::fxdecon::filter::{filter_window, Scratch};
use crate::fxdecon::geometry::Setup;
use crate::fxdecon::options::OutOfBand;
use crate::fxdecon::Volume;
use crate::sample::Sample;
use num_complex::Complex64 as C64;
use rayon::prelude::*;
use rustfft::FftPlanner;

const ZERO: C64 = C64::new(0.0, 0.0);

pub fn execute<T: Sample>(
    cpu: &CpuBackend,
    s: &Setup,
    input: &[T],
    output: &mut [T],
    layout: Volume,
) -> Result<()> {
    let (n, nfft, nf, ntr) = (s.n_samples, s.nfft, s.n_freq(), s.n_traces());
    let nb = s.band.len();
    let mut acc = try_vec(ntr * n, 0.0f64, "the output accumulator")?;
    let mut spec = try_vec(ntr * nf, ZERO, "trace spectra")?;
    let mut band_out = try_vec(nb * ntr, ZERO, "filtered frequency slices")?;
    let mut planner = FftPlanner::<f64>::new();
    let forward = planner.plan_fft_forward(nfft);
    let inverse = planner.plan_fft_inverse(nfft);
    let mut in_band = vec![usize::MAX; nf];
    for (b, &f) in s.band.iter().enumerate() {
        in_band[f] = b;
    }
    let trace_at = |t: usize| layout.offset(t % s.nx, t / s.nx);

    cpu.install(|| {
        for k in 0..s.time.count() {
            let (start, len) = (s.time.starts[k], s.time.lens[k]);
            spec.par_chunks_mut(nf).enumerate().for_each_init(
                || vec![ZERO; nfft],
                |buf, (t, out)| {
                    let o = trace_at(t) + start;
                    for (b, x) in buf.iter_mut().zip(&input[o..o + len]) {
                        *b = C64::new(x.to_f64().unwrap(), 0.0);
                    }
                    buf[len..].fill(ZERO);
                    forward.process(buf);
                    out.copy_from_slice(&buf[..nf]);
                },
            );
            let spec = &spec;
            band_out.par_chunks_mut(ntr).enumerate().for_each_init(
                || (Scratch::default(), vec![ZERO; ntr]),
                |(scratch, slice), (b, out)| {
                    let f = s.band[b];
                    for (t, v) in slice.iter_mut().enumerate() {
                        *v = spec[t * nf + f];
                    }
                    out.fill(ZERO);
                    for wy in &s.y.windows {
                        for wx in &s.x.windows {
                            filter_window(s, wx, wy, slice, out, scratch);
                        }
                    }
                },
            );
            let band_out = &band_out;
            let weights = &s.time.weights[k];
            acc.par_chunks_mut(n).enumerate().for_each_init(
                || vec![ZERO; nfft],
                |buf, (t, a)| {
                    for f in 0..nf {
                        buf[f] = match in_band[f] {
                            usize::MAX => match s.out_of_band {
                                OutOfBand::Pass => spec[t * nf + f],
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
                    inverse.process(buf);
                    let scale = 1.0 / nfft as f64;
                    for i in 0..len {
                        a[start + i] += weights[i] * buf[i].re * scale;
                    }
                },
            );
        }
        let acc = &acc;
        // Traces are disjoint in `output`; write them through a shared pointer.
        let out = SharedOut(output.as_mut_ptr());
        (0..ntr).into_par_iter().for_each(|t| {
            let o = trace_at(t);
            let out = &out;
            for i in 0..n {
                // SAFETY: `Volume::new` checked that traces do not overlap and `execute`
                // that `output` spans them all; each trace is written by one task.
                unsafe { *out.0.add(o + i) = T::from_f64(acc[t * n + i]).unwrap() };
            }
        });
    });
    Ok(())
}

struct SharedOut<T>(*mut T);
// SAFETY: used only to write disjoint traces from several threads.
unsafe impl<T> Sync for SharedOut<T> {}
