//! The box layout: which boxes tile the Fourier domain, and the rotated lattice each one lives on.
//!
//! Frequencies ξ are in cycles per sample (the data's spectrum is 1-periodic). Level 0 is one
//! isotropic low-pass box around ξ = 0; levels 1…K are directional, with radial centres
//! ρ_k = 0.375·2^(k−K) (dyadic, the finest at 0.375 cycles/sample) and log-Gaussian radial
//! profiles exp(−ln²(ρ/ρ_k)·α²/2), so the radial width grows with the centre frequency
//! (std ≈ ρ_k/α). Along each direction ν the angular profile is exp(−θ²/(2s²)) with θ the angle
//! to ν and s = 1/(α·β): the lateral width is the radial one over β.
//!
//! Every direction has one lattice: axes e₁ = ν and two (3D) or one (2D) lateral axes, spacing
//! 1/P_a along axis a. All the levels of that direction are rectangles of this lattice (so one
//! USFFT evaluation of the union serves them all, and each box is cut out by index). P_a is the
//! data's extent along e_a plus a margin of two packet widths of the widest packet: the data
//! is thereby zero-padded "inside" the box grids, along each rotated axis, without a padded
//! copy of the data ever being made; aliasing between a packet and its periodic images is
//! kept to the margin. Each box's rectangle covers where its window exceeds `cutoff`, and its
//! lengths are rounded up to fast FFT sizes: the box's inverse FFT gives its coefficients on a
//! grid critically sampled for its band.
//!
//! For real input only one direction of each antipodal pair is stored (2D: angles 2πj/D for
//! j < D/2; 3D: the upper half of the Lebedev rule); its coefficients are scaled by √2 so the
//! stored set carries the energy of both.

use super::lebedev;
use crate::error::Result;
use crate::fft_len::next_fast_len;
use crate::usfft::lattice::PointLattice;

/// Centre of the finest directional level, in cycles per sample.
pub const TOP_FREQUENCY: f64 = 0.375;
/// The margin added to each lattice period, in spatial standard deviations of the widest packet.
const MARGIN_STDS: f64 = 2.0;
/// The largest std of the taper outside the cell (`Radial::taper`), cycles per sample (a
/// spatial std of 16/2π ≈ 2.5 samples). One level has ρ₁/α = 0.125, and a taper that wide
/// made a 3D layout's boxes almost three times larger; at 1/16 narrow packets at the Nyquist
/// faces of a 16-sample axis keep their energy within 1.4 % (2 levels and more: ρ₁/α, within
/// 0.3 %).
const TAPER_STD_MAX: f64 = 1.0 / 16.0;
/// Angular std over the mean spacing of the directions, used when β is automatic.
const ANGULAR_STD_PER_SPACING: f64 = 0.5;

/// What a layout is made from. `Default` gives 350 directions in 3D and 32 in 2D, automatic
/// levels, α = 3, automatic β, cutoff 1e-3 and USFFT tolerance 1e-6.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutOptions {
    /// 2D: any even count ≥ 2 (uniform in angle); 3D: a Lebedev rule size; 0: the default.
    pub directions: usize,
    /// Directional levels; 0: automatic, max(1, ⌊log₂ min n⌋ − 3).
    pub levels: usize,
    /// Radial sharpness: the radial std of a level is about its centre frequency over α.
    pub alpha: f64,
    /// Radial over lateral width; 0: automatic, s = 1/(αβ) = 0.5 × the mean direction spacing.
    pub beta: f64,
    /// Windows are cut where they fall below this (relative to their peak).
    pub cutoff: f64,
    /// The USFFT tolerance (relative ℓ2).
    pub tolerance: f64,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            directions: 0,
            levels: 0,
            alpha: 3.0,
            beta: 0.0,
            cutoff: 1e-3,
            tolerance: 1e-6,
        }
    }
}

/// One rotated lattice: points ξ(t) = Σ_a t_a/P_a · e_a for integer t in the box `lo … lo+len−1`.
#[derive(Clone, Debug)]
pub struct Lattice {
    /// Unit axes e_a (unused ones are the remaining unit vectors).
    pub axes: [[f64; 3]; 3],
    /// Period P_a along each axis (1 for unused axes).
    pub period: [f64; 3],
    /// The union of its boxes' rectangles.
    pub lo: [i64; 3],
    pub len: [usize; 3],
    /// Where its points start in the plan's point list.
    pub point_offset: usize,
}

impl Lattice {
    pub fn n_points(&self) -> usize {
        self.len.iter().product()
    }

    /// ξ at lattice index t.
    pub fn point(&self, t: [i64; 3]) -> [f64; 3] {
        crate::usfft::lattice::point_of(&self.axes, &self.period, t)
    }

    /// The lattice as the USFFTs take their points.
    pub fn points(&self) -> PointLattice {
        PointLattice {
            axes: self.axes,
            period: self.period,
            lo: self.lo,
            len: self.len,
        }
    }

    /// Continuous lattice coordinates of ξ.
    pub fn coords(&self, xi: &[f64; 3]) -> [f64; 3] {
        std::array::from_fn(|a| dot(&self.axes[a], xi) * self.period[a])
    }
}

/// One box: a rectangle of its direction's lattice with its own window and coefficient grid.
#[derive(Clone, Debug)]
pub struct WaveBox {
    /// 0 for the low-pass box, 1…K for the directional levels (coarse to fine).
    pub level: usize,
    /// Index into `Layout::directions` (None for the low-pass box).
    pub direction: Option<usize>,
    /// Centre frequency, cycles per sample.
    pub centre: [f64; 3],
    /// The box's FFT lengths = its coefficient grid (1 for unused axes).
    pub shape: [usize; 3],
    /// First lattice index of the rectangle.
    pub lo: [i64; 3],
    pub lattice: usize,
    /// Where its coefficients start in the coefficient array.
    pub offset: usize,
    /// √2 for a directional box (it stands for its antipodal twin too), 1 for the low-pass box.
    pub scale: f64,
}

impl WaveBox {
    pub fn n_coefficients(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A complete layout for data of one shape.
#[derive(Clone, Debug)]
pub struct Layout {
    pub dim: usize,
    /// n1, n2, n3 (1 for an unused axis); axis 1 fastest.
    pub shape: [usize; 3],
    pub levels: usize,
    /// The full direction count (both members of each antipodal pair).
    pub n_directions_full: usize,
    /// The stored directions (one per antipodal pair).
    pub directions: Vec<[f64; 3]>,
    pub alpha: f64,
    pub beta: f64,
    /// Angular std s = 1/(αβ), radians.
    pub angular_std: f64,
    pub cutoff: f64,
    pub tolerance: f64,
    pub lattices: Vec<Lattice>,
    pub boxes: Vec<WaveBox>,
    pub n_points: usize,
    pub n_coefficients: usize,
}

pub fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn norm(a: &[f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

impl Layout {
    pub fn new(dim: usize, shape: &[usize], opts: &LayoutOptions) -> Result<Layout> {
        let n = check_shape(dim, shape)?;
        // A transform holds the data's spectrum (complex, 8 bytes a sample at the least): a
        // shape the host cannot hold is refused before the boxes are laid out.
        crate::alloc::host_bytes(&n[..dim], 8, "the data's spectrum (complex samples)")?;
        check_options(opts)?;
        let (n_full, directions) = directions(dim, opts.directions)?;
        let spacing = if dim == 2 {
            std::f64::consts::TAU / n_full as f64
        } else {
            (4.0 * std::f64::consts::PI / n_full as f64).sqrt()
        };
        let alpha = opts.alpha;
        let beta = if opts.beta > 0.0 {
            opts.beta
        } else {
            1.0 / (alpha * ANGULAR_STD_PER_SPACING * spacing)
        };
        let s_ang = 1.0 / (alpha * beta);
        let levels = level_count(&n[..dim], opts.levels)?;
        let radial = Radial::new(levels, alpha, opts.cutoff, dim);
        let mut lattices = vec![];
        let mut boxes = vec![];
        low_pass_box(&n, dim, &radial, &mut lattices, &mut boxes);
        for (j, nu) in directions.iter().enumerate() {
            let (lattice, level_boxes) = direction_boxes(&n, dim, &radial, s_ang, j, nu);
            for mut b in level_boxes {
                b.lattice = lattices.len();
                boxes.push(b);
            }
            lattices.push(lattice);
        }
        let mut n_points = 0usize;
        for l in lattices.iter_mut() {
            l.point_offset = n_points;
            n_points = add_count(n_points, &l.len, "lattice points", &n)?;
        }
        let mut n_coefficients = 0usize;
        for b in boxes.iter_mut() {
            b.offset = n_coefficients;
            n_coefficients = add_count(n_coefficients, &b.shape, "coefficients", &n)?;
        }
        Ok(Layout {
            dim,
            shape: n,
            levels,
            n_directions_full: n_full,
            directions,
            alpha,
            beta,
            angular_std: s_ang,
            cutoff: opts.cutoff,
            tolerance: opts.tolerance,
            lattices,
            boxes,
            n_points,
            n_coefficients,
        })
    }

    /// Samples of the data: n1·n2·n3.
    pub fn n_samples(&self) -> usize {
        self.shape.iter().product()
    }

    /// Complex coefficients per real data sample.
    pub fn redundancy(&self) -> f64 {
        self.n_coefficients as f64 / self.n_samples() as f64
    }

    pub fn radial(&self) -> Radial {
        Radial::new(self.levels, self.alpha, self.cutoff, self.dim)
    }

    /// Spatial position (samples, relative to the data's centre n/2) of coefficient `y` of box
    /// `b`: Σ_a (y_a·P_a/L_a wrapped to [−P_a/2, P_a/2)) · e_a.
    pub fn position(&self, b: usize, y: [usize; 3]) -> [f64; 3] {
        let bx = &self.boxes[b];
        let l = &self.lattices[bx.lattice];
        let mut x = [0.0; 3];
        for (a, &ya) in y.iter().enumerate().take(self.dim) {
            let p = l.period[a];
            let mut s = ya as f64 * p / bx.shape[a] as f64;
            if s >= p / 2.0 {
                s -= p;
            }
            for (d, xd) in x.iter_mut().enumerate() {
                *xd += s * l.axes[a][d];
            }
        }
        x
    }
}

/// The radial profiles of the levels.
#[derive(Clone, Debug)]
pub struct Radial {
    pub levels: usize,
    pub alpha: f64,
    /// Std of the low-pass Gaussian, cycles per sample.
    pub sigma0: f64,
    /// √(2 ln(1/cutoff)): how many stds a window reaches before falling below the cutoff.
    pub reach: f64,
    /// The largest |ξ| of the cell: √dim/2. Every frequency has an image at most this far out.
    pub corner: f64,
    /// Std τ of the taper outside the cell (`taper`): level 1's radial std ρ₁/α, at most
    /// `TAPER_STD_MAX`.
    pub taper_std: f64,
}

impl Radial {
    fn new(levels: usize, alpha: f64, cutoff: f64, dim: usize) -> Radial {
        let rho1 = TOP_FREQUENCY * 2f64.powi(1 - levels as i32);
        Radial {
            levels,
            alpha,
            sigma0: rho1 / 2.0,
            reach: (2.0 * (1.0 / cutoff).ln()).sqrt(),
            corner: (dim as f64).sqrt() / 2.0,
            taper_std: (rho1 / alpha).min(TAPER_STD_MAX),
        }
    }

    /// The factor every window takes outside the cell [−½, ½]^dim: 1 inside, then
    /// exp(−d²/(2τ²)) with d the distance to the cell, τ = min(ρ₁/α, 1/16).
    ///
    /// Every frequency has an image in the cell, so nothing outside it is needed, and the
    /// finest levels used to be cut at |ξ| = √dim/2 (the cell's corner), at a sizeable value
    /// (0.17 of the peak in 2D at α = 3). A window that jumps is not sampled faithfully by
    /// its lattice (its packets have tails longer than the lattice period), and the frame was
    /// far from tight where the cuts meet: ‖Cg‖²/‖g‖² up to 1.3 for a narrow packet at the
    /// corner (½, ½). The taper makes every window fall smoothly below the cutoff within
    /// `beyond_cell` of the cell, so no box cuts a window where it is sizeable; τ is the
    /// coarsest level's radial std (the finest feature the lattices' margins are sized for),
    /// or `TAPER_STD_MAX` when that is narrower.
    pub fn taper(&self, xi: &[f64; 3]) -> f64 {
        let d2: f64 = xi.iter().map(|v| (v.abs() - 0.5).max(0.0).powi(2)).sum();
        if d2 == 0.0 {
            1.0
        } else {
            (-0.5 * d2 / (self.taper_std * self.taper_std)).exp()
        }
    }

    /// How far outside the cell the taper stays above the cutoff.
    pub fn beyond_cell(&self) -> f64 {
        self.taper_std * self.reach
    }

    pub fn centre(&self, k: usize) -> f64 {
        TOP_FREQUENCY * 2f64.powi(k as i32 - self.levels as i32)
    }

    /// The unnormalised radial profile of level k at |ξ| = rho (the taper not included).
    pub fn profile(&self, k: usize, rho: f64) -> f64 {
        if k == 0 {
            return (-rho * rho / (2.0 * self.sigma0 * self.sigma0)).exp();
        }
        if rho <= 0.0 {
            return 0.0;
        }
        let l = (rho / self.centre(k)).ln() * self.alpha;
        (-0.5 * l * l).exp()
    }

    /// [ρ_lo, ρ_hi] where level k ≥ 1 exceeds the cutoff: the log-Gaussian's reach, or as far
    /// as the taper outside the cell lets any window reach.
    fn extent(&self, k: usize) -> (f64, f64) {
        let c = self.centre(k);
        let f = (self.reach / self.alpha).exp();
        (c / f, (c * f).min(self.corner + self.beyond_cell()))
    }
}

/// n1, n2, n3 of a `dim`-dimensional shape (1 for an unused axis), each 8 … 2^20.
fn check_shape(dim: usize, shape: &[usize]) -> Result<[usize; 3]> {
    if dim != 2 && dim != 3 {
        return Err(crate::invalid!("dimension is {dim}; expected 2 or 3"));
    }
    if shape.len() != dim {
        return Err(crate::invalid!(
            "shape has {} sizes; a {dim}D layout needs {dim}",
            shape.len()
        ));
    }
    let mut n = [1usize; 3];
    for (d, &s) in shape.iter().enumerate() {
        if s < 8 {
            return Err(crate::invalid!(
                "shape[{d}] is {s}; a wave-packet layout needs at least 8 samples per axis"
            ));
        }
        if s > 1 << 20 {
            return Err(crate::invalid!(
                "shape[{d}] is {s}; at most 2^20 is supported"
            ));
        }
        n[d] = s;
    }
    Ok(n)
}

/// The options' values, each named when refused.
fn check_options(opts: &LayoutOptions) -> Result<()> {
    if !(opts.beta.is_finite() && opts.beta >= 0.0) {
        return Err(crate::invalid!(
            "beta is {}; expected a finite value ≥ 0",
            opts.beta
        ));
    }
    if !(opts.alpha.is_finite() && opts.alpha >= 0.5 && opts.alpha <= 20.0) {
        return Err(crate::invalid!(
            "alpha is {}; expected 0.5 … 20",
            opts.alpha
        ));
    }
    if !(opts.cutoff > 0.0 && opts.cutoff < 0.5) {
        return Err(crate::invalid!(
            "cutoff is {}; expected a value in (0, 0.5)",
            opts.cutoff
        ));
    }
    if !(opts.tolerance > 0.0 && opts.tolerance < 1.0) {
        return Err(crate::invalid!(
            "tolerance is {}; expected a value in (0, 1)",
            opts.tolerance
        ));
    }
    Ok(())
}

/// The directional levels: `requested`, or for 0 max(1, ⌊log₂ min n⌋ − 3); at most 12.
fn level_count(n: &[usize], requested: usize) -> Result<usize> {
    let n_min = n.iter().copied().min().unwrap();
    let levels = if requested > 0 {
        requested
    } else {
        ((n_min as f64).log2().floor() as usize)
            .saturating_sub(3)
            .max(1)
    };
    if levels > 12 {
        return Err(crate::invalid!(
            "levels is {levels}; at most 12 are supported"
        ));
    }
    Ok(levels)
}

/// The low-pass box and its lattice: axis-aligned, half-width σ₀·reach.
fn low_pass_box(
    n: &[usize; 3],
    dim: usize,
    radial: &Radial,
    lattices: &mut Vec<Lattice>,
    boxes: &mut Vec<WaveBox>,
) {
    let axes = unit_axes();
    let period = periods(n, dim, &axes, &[radial.sigma0; 3]);
    let r0 = radial.sigma0 * radial.reach;
    let mut lo = [0i64; 3];
    let mut shape = [1usize; 3];
    for a in 0..dim {
        let h = (period[a] * r0).floor() as i64;
        lo[a] = -h;
        shape[a] = next_fast_len((2 * h + 1) as usize);
    }
    boxes.push(WaveBox {
        level: 0,
        direction: None,
        centre: [0.0; 3],
        shape,
        lo,
        lattice: lattices.len(),
        offset: 0,
        scale: 1.0,
    });
    lattices.push(Lattice {
        axes,
        period,
        lo,
        len: shape,
        point_offset: 0,
    });
}

/// The lattice of direction `j` (ν = `nu`) and its boxes, levels 1…K (their `lattice` is
/// for the caller to set).
fn direction_boxes(
    n: &[usize; 3],
    dim: usize,
    radial: &Radial,
    s_ang: f64,
    j: usize,
    nu: &[f64; 3],
) -> (Lattice, Vec<WaveBox>) {
    let theta_max = (radial.reach * s_ang).min(std::f64::consts::FRAC_PI_2);
    let axes = frame(dim, nu);
    let rho1 = radial.centre(1);
    let mut sig = [rho1 * s_ang; 3];
    sig[0] = rho1 / radial.alpha;
    let period = periods(n, dim, &axes, &sig);
    let far = radial.beyond_cell();
    let mut ulo = [i64::MAX; 3];
    let mut uhi = [i64::MIN; 3];
    let mut boxes = Vec::with_capacity(radial.levels);
    for k in 1..=radial.levels {
        let (r_lo, r_hi) = radial.extent(k);
        let mut lo = [0i64; 3];
        let mut shape = [1usize; 3];
        // Along each axis e, no window reaches past ½‖e‖₁ + `beyond_cell` (the cell's
        // farthest point along e, plus the taper's reach).
        let in_cell = |e: &[f64; 3]| 0.5 * e.iter().map(|v| v.abs()).sum::<f64>() + far;
        let along = r_hi.min(in_cell(&axes[0]));
        // Across: within θ_max of ν, at most |ξ|·sin θ_max and (ξ·ν)·tan θ_max.
        let mut across = r_hi * theta_max.sin();
        if theta_max < std::f64::consts::FRAC_PI_2 {
            across = across.min(along * theta_max.tan());
        }
        let t_lo = (period[0] * r_lo * theta_max.cos()).ceil() as i64;
        let t_hi = (period[0] * along).floor() as i64;
        lo[0] = t_lo;
        shape[0] = next_fast_len((t_hi - t_lo + 1).max(1) as usize);
        for a in 1..dim {
            let h = (period[a] * across.min(in_cell(&axes[a]))).floor() as i64;
            lo[a] = -h;
            shape[a] = next_fast_len((2 * h + 1) as usize);
        }
        for a in 0..dim {
            ulo[a] = ulo[a].min(lo[a]);
            uhi[a] = uhi[a].max(lo[a] + shape[a] as i64 - 1);
        }
        let rho = radial.centre(k);
        boxes.push(WaveBox {
            level: k,
            direction: Some(j),
            centre: [rho * nu[0], rho * nu[1], rho * nu[2]],
            shape,
            lo,
            lattice: 0,
            offset: 0,
            scale: std::f64::consts::SQRT_2,
        });
    }
    let mut len = [1usize; 3];
    let mut lo = [0i64; 3];
    for a in 0..dim {
        lo[a] = ulo[a];
        len[a] = (uhi[a] - ulo[a] + 1) as usize;
    }
    let lattice = Lattice {
        axes,
        period,
        lo,
        len,
        point_offset: 0,
    };
    (lattice, boxes)
}

/// (full count, stored half) of the directions.
fn directions(dim: usize, requested: usize) -> Result<(usize, Vec<[f64; 3]>)> {
    if dim == 2 {
        let d = if requested == 0 { 32 } else { requested };
        if d < 2 || d % 2 != 0 || d > 4096 {
            return Err(crate::invalid!(
                "{d} directions; a 2D layout needs an even count from 2 to 4096 (one of each \
                 antipodal pair is stored for real input)"
            ));
        }
        let half = (0..d / 2)
            .map(|j| {
                let t = std::f64::consts::TAU * j as f64 / d as f64;
                [t.cos(), t.sin(), 0.0]
            })
            .collect();
        Ok((d, half))
    } else {
        let d = if requested == 0 { 350 } else { requested };
        let half = lebedev::upper_half(d).map_err(|e| crate::invalid!("directions: {e}"))?;
        Ok((d, half))
    }
}

/// total + len₁·len₂·len₃, or `OutOfMemory` when no size_t holds it (huge shapes).
fn add_count(total: usize, len: &[usize; 3], what: &str, shape: &[usize; 3]) -> Result<usize> {
    len.iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .and_then(|c| c.checked_add(total))
        .ok_or_else(|| {
            crate::error::Error::OutOfMemory(format!(
                "a layout of shape {shape:?} has more {what} than size_t can count"
            ))
        })
}

fn unit_axes() -> [[f64; 3]; 3] {
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
}

/// The lattice axes of direction ν. 2D: ν and ν turned by +90°. 3D: ν, e₂ = (cos φ, sin φ, 0)
/// with φ = atan2(−ν_x, ν_y) (horizontal, ⟂ ν), e₃ = ν × e₂.
fn frame(dim: usize, nu: &[f64; 3]) -> [[f64; 3]; 3] {
    if dim == 2 {
        return [[nu[0], nu[1], 0.0], [-nu[1], nu[0], 0.0], [0.0, 0.0, 1.0]];
    }
    let phi = (-nu[0]).atan2(nu[1]);
    let e2 = [phi.cos(), phi.sin(), 0.0];
    let e3 = [
        nu[1] * e2[2] - nu[2] * e2[1],
        nu[2] * e2[0] - nu[0] * e2[2],
        nu[0] * e2[1] - nu[1] * e2[0],
    ];
    [*nu, e2, e3]
}

/// P_a = the data's extent along e_a + MARGIN_STDS spatial stds of a packet whose window has
/// frequency std sigma[a] (its spatial std is 1/(2π·sigma)).
fn periods(n: &[usize; 3], dim: usize, axes: &[[f64; 3]; 3], sigma: &[f64; 3]) -> [f64; 3] {
    let mut p = [1.0; 3];
    for a in 0..dim {
        let extent: f64 = (0..dim).map(|d| (n[d] - 1) as f64 * axes[a][d].abs()).sum();
        p[a] = extent + MARGIN_STDS / (std::f64::consts::TAU * sigma[a]);
    }
    p
}

#[cfg(test)]
impl Layout {
    /// A layout of `shape` with `directions` directions in `levels` levels, the other options
    /// the defaults: the small layouts the unit tests build.
    pub(crate) fn for_tests(shape: &[usize], directions: usize, levels: usize) -> Layout {
        let opts = LayoutOptions {
            directions,
            levels,
            ..Default::default()
        };
        Layout::new(shape.len(), shape, &opts).unwrap()
    }
}
