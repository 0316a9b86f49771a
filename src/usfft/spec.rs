//! What a USFFT plan is: its transform type, mode order, options and the validated
//! specification both backends work from (sample types: `crate::sample::Real`).

use super::grid;
use super::kernel::{KernelShape, SpreadKernel};
use crate::error::{Error, Result};
use crate::sample::Real;

/// The smallest tolerances a plan accepts, per precision.
pub(crate) const MIN_TOL_F32: f64 = 1e-6;
pub(crate) const MIN_TOL_F64: f64 = 1e-14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformType {
    /// Irregular points → regular modes ("u2e", the adjoint of type 2).
    Type1,
    /// Regular modes → irregular points ("e2u").
    Type2,
    /// Irregular points → irregular frequencies: f_k = Σ_j c_j e^{i·sign·s_k·x_j}. No mode
    /// counts: the grid is sized from the points' and frequencies' spans at set-points.
    Type3,
}

/// How the modes of one dimension are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeOrder {
    /// −N/2, …, (N−1)/2.
    Centred,
    /// 0, 1, …, (N−1)/2, −N/2, …, −1 (as an FFT stores them).
    Fft,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UsfftOptions {
    pub kernel: KernelShape,
    /// Fine-grid size over mode count; 2.0 is the only one supported.
    pub upsampling: f64,
    pub mode_order: ModeOrder,
}

impl Default for UsfftOptions {
    fn default() -> Self {
        UsfftOptions {
            kernel: KernelShape::Prolate,
            upsampling: 2.0,
            mode_order: ModeOrder::Centred,
        }
    }
}

/// Everything fixed when a plan is made.
#[derive(Clone, Debug)]
pub struct UsfftSpec {
    pub kind: TransformType,
    pub dim: usize,
    /// Mode counts N1, N2, N3 (1 for unused dimensions; all 1 for type 3, which has none).
    pub modes: [usize; 3],
    /// +1 or −1: the sign of the exponent.
    pub sign: i32,
    pub tolerance: f64,
    pub n_vectors: usize,
    pub options: UsfftOptions,
    pub kernel: SpreadKernel,
    /// Fine-grid sizes (1 for unused dimensions; for type 3 the grid its points were spread
    /// onto, all 1 until they are set).
    pub fine: [usize; 3],
    /// Per dimension and mode index m (in the plan's mode order): the frequency k.
    pub freq: [Vec<i64>; 3],
    /// Per dimension and mode index: 1/ψ̂(k), the deconvolution factor.
    pub deconv: [Vec<f64>; 3],
}

impl UsfftSpec {
    /// The checked specification of a plan in precision `T` (whose rounding bounds the
    /// tolerance), with the kernel for its tolerance (type 3: for half of it).
    pub fn new<T: Real>(
        kind: TransformType,
        dim: usize,
        modes: [usize; 3],
        sign: i32,
        tolerance: f64,
        n_vectors: usize,
        options: UsfftOptions,
    ) -> Result<UsfftSpec> {
        // Type 3 has no modes: its grid comes from the points (`type3_grid`).
        let modes = if kind == TransformType::Type3 {
            [1; 3]
        } else {
            modes
        };
        let modes3 = check_shape(dim, modes, sign, n_vectors)?;
        check_tolerance(tolerance, T::epsilon().to_f64().unwrap())?;
        if options.upsampling != 2.0 {
            return Err(Error::Unsupported(format!(
                "upsampling factor {} is not supported; only 2.0 is",
                options.upsampling
            )));
        }
        let spec = |kernel| UsfftSpec {
            kind,
            dim,
            modes: modes3,
            sign,
            tolerance,
            n_vectors,
            options,
            kernel,
            fine: [1; 3],
            freq: [vec![0], vec![0], vec![0]],
            deconv: [vec![1.0], vec![1.0], vec![1.0]],
        };
        if kind == TransformType::Type3 {
            // No fine grid until the points are set. Its spreading and its inner type 2
            // (`type3_inner`, with this kernel) each add a kernel's error: each gets half.
            return Ok(spec(SpreadKernel::for_tolerance(
                options.kernel,
                0.5 * tolerance,
            )));
        }
        spec(SpreadKernel::for_tolerance(options.kernel, tolerance)).tabulated()
    }

    /// This spec with the fine grid, frequencies and deconvolution factors of its modes and
    /// kernel; refused where a mode count or the fine grid is too large.
    fn tabulated(self) -> Result<UsfftSpec> {
        for (d, &n) in self.modes.iter().enumerate().take(self.dim) {
            if n > (1 << 30) {
                return Err(Error::Unsupported(format!(
                    "n_modes[{d}] = {n} is larger than 2^30"
                )));
            }
        }
        let (fine, _, _) = tables(self.dim, self.modes, self.options, self.kernel, false);
        check_fine_grid(&fine[..self.dim], self.n_vectors)?;
        let (fine, freq, deconv) = tables(self.dim, self.modes, self.options, self.kernel, true);
        Ok(UsfftSpec {
            fine,
            freq,
            deconv,
            ..self
        })
    }

    /// The same plan with another spreading kernel (fine grid and deconvolution redone): the
    /// kernel-tuning scan measures candidate kernels through it.
    #[cfg(test)]
    pub(crate) fn with_kernel(&self, kernel: SpreadKernel) -> UsfftSpec {
        UsfftSpec {
            kernel,
            ..self.clone()
        }
        .tabulated()
        .unwrap()
    }

    /// A type-3 plan's spreading grid: this spec with the fine grid `fine` (sized from the
    /// points at set-points; unused dimensions 1) and no modes. Only spreading reads it.
    pub fn type3_grid(&self, fine: [usize; 3]) -> Result<UsfftSpec> {
        check_fine_grid(&fine[..self.dim], self.n_vectors)?;
        Ok(UsfftSpec {
            fine,
            ..self.clone()
        })
    }

    /// The type-2 transform inside a type-3 plan: from the spreading grid of `fine` cells
    /// (its modes, in FFT order) to the rescaled frequencies, with this plan's kernel, sign,
    /// tolerance and batch (all checked when this plan was made).
    pub fn type3_inner(&self, fine: [usize; 3]) -> Result<UsfftSpec> {
        UsfftSpec {
            kind: TransformType::Type2,
            modes: fine,
            options: UsfftOptions {
                mode_order: ModeOrder::Fft,
                ..self.options
            },
            ..self.clone()
        }
        .tabulated()
    }

    /// N1·N2·N3: elements of one mode vector.
    pub fn mode_count(&self) -> usize {
        self.modes.iter().product()
    }

    /// Cells of one fine grid.
    pub fn fine_count(&self) -> usize {
        self.fine.iter().product()
    }

    /// Fine-grid index (k mod nf) of each mode index of dimension d.
    pub fn fine_index(&self, d: usize) -> Vec<usize> {
        let nf = self.fine[d] as i64;
        self.freq[d]
            .iter()
            .map(|&k| k.rem_euclid(nf) as usize)
            .collect()
    }
}

/// The mode counts N1, N2, N3 (1 for unused dimensions) of a plan of `dim` dimensions,
/// after its dimension, sign and vector count.
fn check_shape(dim: usize, modes: [usize; 3], sign: i32, n_vectors: usize) -> Result<[usize; 3]> {
    if !(1..=3).contains(&dim) {
        return Err(crate::invalid!("dim is {dim}; expected 1, 2 or 3"));
    }
    if sign != 1 && sign != -1 {
        return Err(crate::invalid!("sign is {sign}; expected +1 or -1"));
    }
    if n_vectors == 0 {
        return Err(crate::invalid!(
            "n_vectors is 0; expected at least one vector per execute"
        ));
    }
    let mut modes3 = [1usize; 3];
    for d in 0..dim {
        if modes[d] == 0 {
            return Err(crate::invalid!(
                "n_modes[{d}] is 0; expected at least one mode"
            ));
        }
        modes3[d] = modes[d];
    }
    Ok(modes3)
}

/// A tolerance in (0, 1) that a precision of machine epsilon `epsilon` can reach.
pub(crate) fn check_tolerance(tolerance: f64, epsilon: f64) -> Result<()> {
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(crate::invalid!(
            "tolerance is {tolerance}; expected a value in (0, 1), e.g. 1e-6"
        ));
    }
    // Rounding in the FFT and in the sums leaves a relative error of a few N·ε_mach (N the
    // modes of the largest dimension); no kernel width helps below that.
    let floor = if epsilon > 1e-10 {
        MIN_TOL_F32
    } else {
        MIN_TOL_F64
    };
    if tolerance < floor {
        return Err(crate::invalid!(
            "tolerance {tolerance:e} is below what this precision can reach ({floor:e}): rounding \
             leaves a relative error of order N·ε_mach (ε_mach = {epsilon:e}); \
             ask for a tolerance ≥ {floor:e}{}",
            if epsilon > 1e-10 {
                " or use a double-precision plan"
            } else {
                ""
            }
        ));
    }
    Ok(())
}

/// The fine grid of every vector, complex f64 on the CPU: refused before the per-mode
/// tables are built if the host cannot hold it or the address space cannot span it.
fn check_fine_grid(fine: &[usize], n_vectors: usize) -> Result<()> {
    let mut grid_shape = fine.to_vec();
    grid_shape.push(n_vectors);
    crate::alloc::host_bytes(
        &grid_shape,
        16,
        "the USFFT fine grid (cells per dimension × vectors)",
    )?;
    let total = fine
        .iter()
        .try_fold(n_vectors, |a, &b| a.checked_mul(b))
        .and_then(|t| t.checked_mul(2 * 8))
        .filter(|&t| t <= isize::MAX as usize);
    if total.is_none() {
        return Err(crate::invalid!(
            "a fine grid of {fine:?} cells × {n_vectors} vectors overflows the address space"
        ));
    }
    Ok(())
}

/// Fine-grid sizes of a plan and, when `per_mode`, each dimension's mode frequencies and
/// deconvolution factors 1/ψ̂(k) (unused dimensions: one mode, k = 0, factor 1).
#[allow(clippy::type_complexity)]
fn tables(
    dim: usize,
    modes: [usize; 3],
    options: UsfftOptions,
    kernel: SpreadKernel,
    per_mode: bool,
) -> ([usize; 3], [Vec<i64>; 3], [Vec<f64>; 3]) {
    let mut fine = [1usize; 3];
    let mut freq: [Vec<i64>; 3] = [vec![0], vec![0], vec![0]];
    let mut deconv: [Vec<f64>; 3] = [vec![1.0], vec![1.0], vec![1.0]];
    for d in 0..dim {
        let n = modes[d];
        fine[d] = grid::fine_size(n, options.upsampling, kernel.width);
        if per_mode {
            freq[d] = (0..n)
                .map(|m| frequency(m, n, options.mode_order))
                .collect();
            deconv[d] = kernel
                .fourier(fine[d], freq[d].iter().copied())
                .into_iter()
                .map(|p| 1.0 / p)
                .collect();
        }
    }
    (fine, freq, deconv)
}

/// The frequency of mode index m of n in `order`.
pub fn frequency(m: usize, n: usize, order: ModeOrder) -> i64 {
    let (m, n) = (m as i64, n as i64);
    match order {
        ModeOrder::Centred => m - n / 2,
        ModeOrder::Fft => {
            if m < n - n / 2 {
                m
            } else {
                m - n
            }
        }
    }
}
