//! Type 3: f_k = Σ_j c_j e^{i·sign·s_k·x_j} for M points x_j and N frequencies s_k, both
//! arbitrary real (s·x summed over the dimensions).
//!
//! Per dimension, with C and X the centre and half-width of the points, D and S those of the
//! frequencies, x' = x − C and s' = s − D:
//!
//!   s·x = s·C + s'·x' + D·x',  so  f_k = e^{i·sign·s_k·C} Σ_j (c_j e^{i·sign·D·x'_j}) e^{i·sign·s'_k·x'_j}.
//!
//! The pre-phased strengths are spread with the plan's kernel ψ onto a grid of cell h
//! (b_l = Σ_j c'_j ψ(l − x'_j/h), l the cell): the transform of that sum at s' is
//! ψ̂(s'h)·Σ_j c'_j e^{i·sign·s'·x'_j}, and sampling it on the cells gives, up to the
//! kernel's aliasing error, Σ_l b_l e^{i·sign·l·(s'h)}: a type 2 of the grid (its modes,
//! in FFT order) at the points s'h. Dividing by ψ̂(s'h) and applying the post-phase
//! e^{i·sign·s·C} gives f_k. The cell is h = π/(σS) (σ = 2), so that |s'h| ≤ π/2 as the
//! highest mode of types 1 and 2 (the kernel table's calibration); the grid holds the
//! points' span 2X/h = 4XS/π cells plus the kernel's width on either side, unwrapped.

pub mod cpu;

use super::kernel::SpreadKernel;
use super::points::Frame;
use super::spec::UsfftSpec;
use crate::error::{Error, Result};
use crate::fft_len::next_fast_len;
use crate::sample::{Real, Sample};
use num_complex::Complex;
use rayon::prelude::*;
use std::f64::consts::{PI, TAU};

/// The most cells a type-3 grid may have along one dimension (as n_modes of types 1 and 2).
const MAX_CELLS: f64 = (1u64 << 30) as f64;

/// Where a type-3 plan's points and frequencies lie, and the grid that follows.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub dim: usize,
    /// Per dimension: the points' centre C and the frequencies' centre D.
    pub centre_x: [f64; 3],
    pub centre_s: [f64; 3],
    /// Per dimension: the grid's cell in the points' units (h = π/(σS)).
    pub cell: [f64; 3],
    /// Grid cells per dimension (1 for unused dimensions).
    pub fine: [usize; 3],
    /// The largest |s − D|·h of any frequency (π/σ): the band of ψ̂ the post-factor reads.
    pub kappa_max: f64,
}

/// The points and frequencies of a type-3 set-points call (the first `dim` of each used).
pub struct Type3Points<'a, T> {
    pub m: usize,
    pub x: [&'a [T]; 3],
    pub n: usize,
    pub s: [&'a [T]; 3],
}

/// (min, max) of `v`, after checking every value is finite (`what` names the array and its
/// elements in the error); (0, 0) when empty. One pass; a second finds the first bad value.
fn range_of<T: Sample>(v: &[T], what: (&str, &str)) -> Result<(f64, f64)> {
    let (lo, hi, finite) = v
        .par_iter()
        .fold(
            || (f64::INFINITY, f64::NEG_INFINITY, true),
            |(lo, hi, ok), a| {
                let a = a.to_f64().unwrap();
                (lo.min(a), hi.max(a), ok && a.is_finite())
            },
        )
        .reduce(
            || (f64::INFINITY, f64::NEG_INFINITY, true),
            |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 && b.2),
        );
    if !finite {
        let j = v.par_iter().position_first(|a| !a.is_finite()).unwrap_or(0);
        return Err(Error::NonFinite(format!(
            "{} of {} {j} is not finite; no points were set",
            what.0, what.1
        )));
    }
    Ok(if v.is_empty() { (0.0, 0.0) } else { (lo, hi) })
}

const AXES: [&str; 3] = ["x", "y", "z"];
const FREQS: [&str; 3] = ["s", "t", "u"];

impl Geometry {
    /// The centres, cells and grid of `p` for a plan `spec` (its kernel's width, σ = 2).
    /// Non-finite coordinates and spans whose grid could not be held are refused here,
    /// before anything is allocated.
    pub fn new<T: Sample>(spec: &UsfftSpec, p: &Type3Points<'_, T>) -> Result<Geometry> {
        let sigma = spec.options.upsampling;
        let w = spec.kernel.width;
        let mut g = Geometry {
            dim: spec.dim,
            centre_x: [0.0; 3],
            centre_s: [0.0; 3],
            cell: [1.0; 3],
            fine: [1; 3],
            kappa_max: PI / sigma,
        };
        for d in 0..spec.dim {
            let (x0, x1) = range_of(
                &p.x[d][..p.m],
                (&format!("coordinate {}", AXES[d]), "point"),
            )?;
            let (s0, s1) = range_of(
                &p.s[d][..p.n],
                (&format!("frequency {}", FREQS[d]), "target"),
            )?;
            // Halves first: the sums of extreme values would overflow.
            g.centre_x[d] = 0.5 * x0 + 0.5 * x1;
            g.centre_s[d] = 0.5 * s0 + 0.5 * s1;
            let (x_half, s_half) = half_widths(0.5 * (x1 - x0), 0.5 * (s1 - s0));
            g.cell[d] = PI / (sigma * s_half);
            // Cells from the centre to the farthest point, then the kernel's reach and one
            // spare on each side: the spread never wraps onto itself.
            let reach = (x_half / g.cell[d]).ceil() + (w / 2) as f64 + 2.0;
            let cells = 2.0 * reach;
            if cells.is_nan() || cells > MAX_CELLS {
                return Err(Error::Unsupported(format!(
                    "type 3: the points' half-width X = {x_half:e} and the frequencies' \
                     half-width S = {s_half:e} along {} (X·S = {:e}) need a grid of about \
                     {cells:e} cells; at most 2^30 per dimension (the grid grows as 4·X·S/π): \
                     split the frequencies or the points into smaller groups",
                    AXES[d],
                    x_half * s_half
                )));
            }
            g.fine[d] = next_fast_len((cells as usize).max(2 * w));
        }
        Ok(g)
    }

    /// Where the points lie on the grid, as radians of its period: (x − C)·2π/(h·nf).
    pub fn point_frame(&self) -> Frame {
        std::array::from_fn(|d| {
            let scale = TAU / (self.cell[d] * self.fine[d] as f64);
            (self.centre_x[d], scale)
        })
    }

    /// The frequencies as the inner type 2 reads them: (s − D)·h, within [−π/σ, π/σ].
    pub fn frequency_frame(&self) -> Frame {
        std::array::from_fn(|d| (self.centre_s[d], self.cell[d]))
    }

    /// The points placed in `point_frame`, in f64.
    pub fn grid_points<T: Sample>(&self, x: [&[T]; 3], m: usize) -> Result<[Vec<f64>; 3]> {
        self.framed(self.point_frame(), x, m)
    }

    /// The frequencies placed in `frequency_frame`, in f64.
    pub fn grid_frequencies<T: Sample>(&self, s: [&[T]; 3], n: usize) -> Result<[Vec<f64>; 3]> {
        self.framed(self.frequency_frame(), s, n)
    }

    /// (v − c)·scale per dimension: the one formula the device's placement repeats.
    fn framed<T: Sample>(&self, frame: Frame, v: [&[T]; 3], m: usize) -> Result<[Vec<f64>; 3]> {
        self.per_dim(|d| {
            let (c, scale) = frame[d];
            map_vec(&v[d][..m], |a| (a.to_f64().unwrap() - c) * scale)
        })
    }

    fn per_dim(&self, f: impl Fn(usize) -> Result<Vec<f64>>) -> Result<[Vec<f64>; 3]> {
        let mut out: [Vec<f64>; 3] = Default::default();
        for (d, o) in out.iter_mut().enumerate().take(self.dim) {
            *o = f(d)?;
        }
        Ok(out)
    }

    /// e^{i·sign·D·(x_j − C)} per point, in T.
    pub fn pre_phase<T: Real>(&self, sign: i32, x: [&[T]; 3], m: usize) -> Result<Vec<Complex<T>>> {
        let mut out = crate::error::try_vec(m, Complex::default(), "the type-3 pre-phase")?;
        out.par_iter_mut().enumerate().for_each(|(j, o)| {
            let phase: f64 = (0..self.dim)
                .map(|d| self.centre_s[d] * (x[d][j].to_f64().unwrap() - self.centre_x[d]))
                .sum();
            *o = to_t(Complex::from_polar(1.0, sign as f64 * phase));
        });
        Ok(out)
    }

    /// e^{i·sign·s_k·C} / Π_d ψ̂((s_k − D)_d·h_d) per frequency, in T.
    pub fn post_factor<T: Real>(
        &self,
        sign: i32,
        kernel: &SpreadKernel,
        s: [&[T]; 3],
        n: usize,
    ) -> Result<Vec<Complex<T>>> {
        let psi = kernel.transform().series(self.kappa_max);
        let mut out = crate::error::try_vec(n, Complex::default(), "the type-3 post-factor")?;
        out.par_iter_mut().enumerate().for_each(|(k, o)| {
            let (mut phase, mut hat) = (0.0, 1.0);
            for (d, sd) in s.iter().enumerate().take(self.dim) {
                let sk = sd[k].to_f64().unwrap();
                phase += sk * self.centre_x[d];
                hat *= psi.at((sk - self.centre_s[d]) * self.cell[d]);
            }
            *o = to_t(Complex::from_polar(1.0 / hat, sign as f64 * phase));
        });
        Ok(out)
    }
}

/// Half-widths that size a grid: a zero span (one point, or one frequency) has no scale of
/// its own, so it takes the one that makes X·S = 1 (any cell is exact there).
fn half_widths(x: f64, s: f64) -> (f64, f64) {
    match (x > 0.0, s > 0.0) {
        (true, true) => (x, s),
        (true, false) => (x, 1.0 / x),
        (false, true) => (1.0 / s, s),
        (false, false) => (1.0, 1.0),
    }
}

fn map_vec<T: Sample>(v: &[T], f: impl Fn(T) -> f64 + Sync) -> Result<Vec<f64>> {
    let mut out = crate::error::try_vec(v.len(), 0.0, "the type-3 rescaled coordinates")?;
    out.par_iter_mut().zip(v).for_each(|(o, &a)| *o = f(a));
    Ok(out)
}

fn to_t<T: Real>(z: Complex<f64>) -> Complex<T> {
    Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap())
}

/// What both backends keep of a type-3 set-points: the grid's and the inner type 2's specs
/// and the phase factors.
pub struct Setup<T> {
    pub geometry: Geometry,
    pub m: usize,
    pub n: usize,
    /// The spreading grid (kind Type3, `fine` from the geometry).
    pub grid: UsfftSpec,
    /// The type 2 from that grid to the rescaled frequencies.
    pub inner: UsfftSpec,
    /// The phase factors per point and per frequency (empty where `sized` made the setup).
    pub pre: Vec<Complex<T>>,
    pub post: Vec<Complex<T>>,
}

impl<T: Real> Setup<T> {
    /// Everything but the sorted points: refused (NonFinite, Unsupported, OutOfMemory) before
    /// any grid is allocated.
    pub fn new(spec: &UsfftSpec, p: &Type3Points<'_, T>) -> Result<Setup<T>> {
        let mut setup = Setup::sized(spec, p)?;
        setup.pre = setup.geometry.pre_phase(spec.sign, p.x, p.m)?;
        setup.post = setup
            .geometry
            .post_factor(spec.sign, &spec.kernel, p.s, p.n)?;
        Ok(setup)
    }

    /// The geometry and the two stages' specs, without the phase factors (the GPU computes
    /// its own from the coordinates it holds).
    pub fn sized(spec: &UsfftSpec, p: &Type3Points<'_, T>) -> Result<Setup<T>> {
        let geometry = Geometry::new(spec, p)?;
        let grid = spec.type3_grid(geometry.fine).map_err(type3_context)?;
        let inner = spec.type3_inner(geometry.fine).map_err(type3_context)?;
        Ok(Setup {
            geometry,
            m: p.m,
            n: p.n,
            grid,
            inner,
            pre: Vec::new(),
            post: Vec::new(),
        })
    }
}

/// Names type 3 in a refusal of its grid's size.
fn type3_context(e: Error) -> Error {
    let say = |m: String| {
        format!("type 3: the points' and frequencies' spans (the grid grows as 4·X·S/π per dimension) need more than this host holds: {m}")
    };
    match e {
        Error::OutOfMemory(m) => Error::OutOfMemory(say(m)),
        Error::Unsupported(m) => Error::Unsupported(say(m)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usfft::spec::{ModeOrder, TransformType, UsfftOptions};

    fn spec(dim: usize, tol: f64) -> UsfftSpec {
        UsfftSpec::new::<f64>(
            TransformType::Type3,
            dim,
            [0; 3],
            1,
            tol,
            1,
            UsfftOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn the_grid_holds_the_span_and_the_kernel() {
        let s = spec(1, 1e-6);
        let x: Vec<f64> = vec![-3.0, 5.0];
        let f: Vec<f64> = vec![10.0, 30.0];
        let p = Type3Points {
            m: 2,
            x: [&x, &[], &[]],
            n: 2,
            s: [&f, &[], &[]],
        };
        let g = Geometry::new(&s, &p).unwrap();
        assert_eq!((g.centre_x[0], g.centre_s[0]), (1.0, 20.0));
        // X = 4, S = 10: h = π/20, 4/h = 25.5 cells each side, plus w/2 + 2.
        let h = PI / 20.0;
        assert!((g.cell[0] - h).abs() < 1e-15);
        assert!(
            g.fine[0] >= 2 * (26 + s.kernel.width / 2 + 2),
            "{:?}",
            g.fine
        );
        let t = g.grid_frequencies([&f, &[], &[]], 2).unwrap();
        assert!((t[0][1] - 10.0 * h).abs() < 1e-15);
        assert!(t[0][1] <= PI / 2.0 + 1e-15);
    }

    #[test]
    fn the_inner_type_2_takes_the_kernel_chosen_for_half_the_tolerance() {
        for tol in [1e-3, 1e-6, 1e-9] {
            let s = spec(2, tol);
            assert_eq!(
                s.kernel,
                SpreadKernel::for_tolerance(s.options.kernel, 0.5 * tol)
            );
            let inner = s.type3_inner([30, 32, 1]).unwrap();
            assert_eq!(inner.kind, TransformType::Type2);
            assert_eq!((inner.modes, inner.fine), ([30, 32, 1], [60, 64, 1]));
            assert_eq!((inner.kernel, inner.tolerance), (s.kernel, tol));
            assert_eq!(inner.options.mode_order, ModeOrder::Fft);
            assert_eq!(inner.freq[0][29], -1);
        }
    }

    #[test]
    fn ranges_name_the_first_value_not_finite() {
        let mut v: Vec<f64> = (0..10_000).map(|j| j as f64 - 500.0).collect();
        assert_eq!(range_of(&v, ("x", "point")).unwrap(), (-500.0, 9499.0));
        assert_eq!(range_of::<f64>(&[], ("x", "point")).unwrap(), (0.0, 0.0));
        v[7000] = f64::INFINITY;
        v[6123] = f64::NAN;
        match range_of(&v, ("coordinate x", "point")) {
            Err(Error::NonFinite(m)) => assert!(m.contains("point 6123 "), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn absurd_spans_are_refused_before_allocating() {
        let s = spec(1, 1e-6);
        let x = vec![-1e8, 1e8];
        let p = Type3Points {
            m: 2,
            x: [&x, &[], &[]],
            n: 2,
            s: [&x, &[], &[]],
        };
        match Geometry::new(&s, &p) {
            Err(Error::Unsupported(m)) => assert!(m.contains("X·S"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
