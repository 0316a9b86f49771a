//! Type 3 on the CPU: pre-phase, the CPU spreader onto the type-3 grid, the CPU type 2 of
//! that grid at the rescaled frequencies, post-factor.

use super::{Setup, Type3Points};
use crate::backend::cpu::CpuBackend;
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::cpu::{self, HostPoints};
use crate::usfft::spec::UsfftSpec;
use num_complex::Complex;
use rayon::prelude::*;

/// A CPU type-3 plan's points: the setup, the sorted points on the grid and the sorted
/// frequencies of the inner type 2.
pub struct HostType3<T: Real> {
    pub setup: Setup<T>,
    spread: HostPoints<T>,
    inner: HostPoints<T>,
}

impl<T: Real> HostType3<T> {
    pub fn m(&self) -> usize {
        self.setup.m
    }

    pub fn n(&self) -> usize {
        self.setup.n
    }
}

/// Sizes the grid from the spans, sorts the rescaled points and frequencies (placed from f64
/// whatever T is) and computes the phase factors.
pub fn set_points<T: Real>(
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    p: &Type3Points<'_, T>,
) -> Result<HostType3<T>> {
    cpu.install(|| {
        let setup = Setup::new(spec, p)?;
        let g = &setup.geometry;
        let xs = g.grid_points(p.x, p.m)?;
        let ts = g.grid_frequencies(p.s, p.n)?;
        let spread = cpu::set_points(cpu, &setup.grid, refs(&xs), p.m)?;
        let inner = cpu::set_points(cpu, &setup.inner, refs(&ts), p.n)?;
        Ok(HostType3 {
            setup,
            spread,
            inner,
        })
    })
}

/// The three coordinate arrays as slices.
pub(crate) fn refs(v: &[Vec<f64>; 3]) -> [&[f64]; 3] {
    [&v[0], &v[1], &v[2]]
}

/// f (n_vectors × N) from c (n_vectors × M). Reports the spread, then the inner type 2's
/// FFT and interpolation; a stop leaves `f` as it was.
pub fn execute<T: Real>(
    cpu: &CpuBackend,
    host: &HostType3<T>,
    c: &[Complex<T>],
    f: &mut [Complex<T>],
    reporter: &mut Reporter,
) -> Result<()> {
    let s = &host.setup;
    let nv = s.grid.n_vectors;
    let (m, n) = (s.m, s.n);
    let mut grid = try_vec(
        nv * s.grid.fine_count(),
        Complex::default(),
        "the type-3 grid",
    )?;
    {
        let mut phased = try_vec(nv * m, Complex::default(), "the type-3 strengths")?;
        cpu.install(|| {
            phased
                .par_chunks_mut(m.max(1))
                .zip(c[..nv * m].par_chunks(m.max(1)))
                .for_each(|(out, cv)| {
                    for ((o, &cj), &pj) in out.iter_mut().zip(cv).zip(&s.pre) {
                        *o = cj * pj;
                    }
                })
        });
        cpu::spread_onto(cpu, &s.grid, &host.spread, &phased, &mut grid, reporter)?;
    }
    let mut values = try_vec(nv * n, Complex::default(), "the type-3 values")?;
    cpu::execute(cpu, &s.inner, &host.inner, &mut values, &mut grid, reporter)?;
    cpu.install(|| {
        f[..nv * n]
            .par_chunks_mut(n.max(1))
            .zip(values.par_chunks(n.max(1)))
            .for_each(|(out, vv)| {
                for ((o, &v), &q) in out.iter_mut().zip(vv).zip(&s.post) {
                    *o = v * q;
                }
            })
    });
    Ok(())
}
