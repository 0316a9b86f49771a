//! USFFT: non-uniform FFTs between a regular grid of Fourier modes and irregular points,
//! in the FINUFFT conventions, 1D/2D/3D, f32/f64, on the CPU and the GPU.
//!
//! - Type 1 ("u2e", irregular → regular): f_k = Σ_j c_j e^{i·sign·k·x_j} for every mode k.
//! - Type 2 ("e2u", regular → irregular): c_j = Σ_k f_k e^{i·sign·k·x_j} for every point j.
//!
//! k·x is k1·x_j + k2·y_j + k3·z_j. Coordinates are radians, periodic with period 2π
//! (points are expected in [−π, π) but any finite value works); the seed's x ∈ [−½, ½) with
//! e^{−2πixn} is x·2π with sign −1. Modes k_d run over −N_d/2 … (N_d−1)/2 (integer
//! division), stored centred (k = −N/2 first, the default) or in FFT order (0, 1, …, then the
//! negative ones); dimension 1 is the fastest. Nothing is normalised.
//!
//! The algorithm: spread each point with a compact kernel onto a fine grid σ = 2 times
//! larger, FFT the fine grid, divide by the kernel's Fourier transform (type 1); type 2
//! runs the same steps in reverse order. Points are folded and sorted by fine-grid bin once,
//! in `set_points`, and reused by every execute and every vector of a batch.

pub mod grid;
pub mod kernel;
pub mod points;

use crate::backend::{cpu, cuda};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::sample::Sample;
pub use kernel::{KernelShape, SpreadKernel};
use num_complex::Complex;
use std::sync::Arc;

/// The sample types of a USFFT plan: f32 and f64 (what rustfft and the kernels need of them).
pub trait Real: Sample + rustfft::FftNum + Default + cudarc::driver::ValidAsZeroBits {}
impl Real for f32 {}
impl Real for f64 {}

/// The smallest tolerances a plan accepts, per precision.
pub(crate) const MIN_TOL_F32: f64 = 1e-6;
pub(crate) const MIN_TOL_F64: f64 = 1e-14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformType {
    /// Irregular points → regular modes ("u2e", the adjoint of type 2).
    Type1,
    /// Regular modes → irregular points ("e2u").
    Type2,
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
            kernel: KernelShape::ExpSemicircle,
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
    /// Mode counts N1, N2, N3 (1 for unused dimensions).
    pub modes: [usize; 3],
    /// +1 or −1: the sign of the exponent.
    pub sign: i32,
    pub tolerance: f64,
    pub n_vectors: usize,
    pub options: UsfftOptions,
    pub kernel: SpreadKernel,
    /// Fine-grid sizes (1 for unused dimensions).
    pub fine: [usize; 3],
    /// Per dimension and mode index m (in the plan's mode order): the frequency k.
    pub freq: [Vec<i64>; 3],
    /// Per dimension and mode index: 1/ψ̂(k), the deconvolution factor.
    pub deconv: [Vec<f64>; 3],
}

impl UsfftSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: TransformType,
        dim: usize,
        modes: [usize; 3],
        sign: i32,
        tolerance: f64,
        n_vectors: usize,
        options: UsfftOptions,
        epsilon: f64,
    ) -> Result<UsfftSpec> {
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
                if epsilon > 1e-10 { " or use a double-precision plan" } else { "" }
            ));
        }
        if options.upsampling != 2.0 {
            return Err(Error::Unsupported(format!(
                "upsampling factor {} is not supported; only 2.0 is",
                options.upsampling
            )));
        }
        let kernel = SpreadKernel::for_tolerance(options.kernel, tolerance);
        let mut fine = [1usize; 3];
        let mut freq: [Vec<i64>; 3] = [vec![0], vec![0], vec![0]];
        let mut deconv: [Vec<f64>; 3] = [vec![1.0], vec![1.0], vec![1.0]];
        for d in 0..dim {
            let n = modes3[d];
            if n > (1 << 30) {
                return Err(Error::Unsupported(format!(
                    "n_modes[{d}] = {n} is larger than 2^30"
                )));
            }
            fine[d] = grid::fine_size(n, options.upsampling, kernel.width);
            freq[d] = (0..n)
                .map(|m| frequency(m, n, options.mode_order))
                .collect();
            deconv[d] = kernel
                .fourier(fine[d], freq[d].iter().copied())
                .into_iter()
                .map(|p| 1.0 / p)
                .collect();
        }
        let total = fine
            .iter()
            .try_fold(n_vectors, |a, &b| a.checked_mul(b))
            .and_then(|t| t.checked_mul(2 * 8))
            .filter(|&t| t <= isize::MAX as usize);
        if total.is_none() {
            return Err(crate::invalid!(
                "a fine grid of {:?} cells × {n_vectors} vectors overflows the address space",
                &fine[..dim]
            ));
        }
        Ok(UsfftSpec {
            kind,
            dim,
            modes: modes3,
            sign,
            tolerance,
            n_vectors,
            options,
            kernel,
            fine,
            freq,
            deconv,
        })
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

/// Where a plan's sorted points live.
enum PointsState<T: Real> {
    None,
    Host(Box<points::SortedPoints<T>>),
    Device(Box<cuda::usfft::DevicePoints<T>>),
}

/// A non-uniform FFT of one type, size and precision on one context. `set_points` (which
/// needs `&mut`) then any number of `execute` calls, from any number of threads.
pub struct UsfftPlan<T: Real> {
    ctx: Arc<Context>,
    spec: UsfftSpec,
    points: PointsState<T>,
    m: usize,
}

impl<T: Real> UsfftPlan<T> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: Arc<Context>,
        kind: TransformType,
        dim: usize,
        modes: [usize; 3],
        sign: i32,
        tolerance: f64,
        n_vectors: usize,
        options: UsfftOptions,
    ) -> Result<UsfftPlan<T>> {
        let eps = T::epsilon().to_f64().unwrap();
        let spec = UsfftSpec::new(kind, dim, modes, sign, tolerance, n_vectors, options, eps)?;
        Ok(UsfftPlan {
            ctx,
            spec,
            points: PointsState::None,
            m: 0,
        })
    }

    pub fn spec(&self) -> &UsfftSpec {
        &self.spec
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Points set by the last `set_points` (0 before).
    pub fn n_points(&self) -> usize {
        self.m
    }

    /// Sets `m` points: x (and y for 2D, z for 3D), each at least `m` long. Non-finite
    /// coordinates are refused and leave the previous points in place.
    pub fn set_points(
        &mut self,
        m: usize,
        x: &[T],
        y: Option<&[T]>,
        z: Option<&[T]>,
    ) -> Result<()> {
        let dim = self.spec.dim;
        let given = [Some(x), y, z];
        let mut coords: [&[T]; 3] = [&[], &[], &[]];
        for d in 0..3 {
            match (d < dim, given[d]) {
                (true, Some(c)) if c.len() >= m => coords[d] = c,
                (true, Some(c)) => {
                    return Err(crate::invalid!(
                        "coordinate array {} has {} elements; {m} points need {m}",
                        ["x", "y", "z"][d],
                        c.len()
                    ))
                }
                (true, None) => {
                    return Err(Error::NullPointer(format!(
                        "coordinate array {} is missing (NULL) but the plan is {dim}D",
                        ["x", "y", "z"][d]
                    )))
                }
                (false, _) => {}
            }
        }
        let new = match &self.ctx.cuda {
            Some(gpu) => PointsState::Device(Box::new(cuda::usfft::set_points(
                gpu,
                &self.ctx.cpu,
                &self.spec,
                coords,
                m,
            )?)),
            None => PointsState::Host(Box::new(cpu::usfft::set_points(
                &self.ctx.cpu,
                &self.spec,
                coords,
                m,
            )?)),
        };
        self.points = new;
        self.m = m;
        Ok(())
    }

    /// Checks that the arrays hold n_vectors × M strengths and n_vectors × N1N2N3 modes.
    fn check(&self, c: usize, f: usize) -> Result<()> {
        if matches!(self.points, PointsState::None) {
            return Err(crate::invalid!(
                "no points set: call set_points before execute"
            ));
        }
        let nv = self.spec.n_vectors;
        if c < nv * self.m {
            return Err(crate::invalid!(
                "strength array has {c} complex values; {nv} vectors × {} points need {}",
                self.m,
                nv * self.m
            ));
        }
        let nm = self.spec.mode_count();
        if f < nv * nm {
            return Err(crate::invalid!(
                "mode array has {f} complex values; {nv} vectors × {nm} modes need {}",
                nv * nm
            ));
        }
        Ok(())
    }

    /// Type 1: reads `c` (n_vectors × M strengths, vector v at v·M) and writes `f`
    /// (n_vectors × N1N2N3 modes, vector v at v·N1N2N3). Type 2: reads `f`, writes `c`.
    /// Non-finite strengths or modes are not checked: they propagate into the output.
    pub fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.check(c.len(), f.len())?;
        match &self.points {
            PointsState::None => unreachable!("checked above"),
            PointsState::Host(p) => cpu::usfft::execute(&self.ctx.cpu, &self.spec, p, c, f),
            PointsState::Device(p) => {
                let gpu = self
                    .ctx
                    .cuda
                    .as_ref()
                    .expect("device points on a CUDA context");
                cuda::usfft::execute(gpu, &self.spec, p, c, f)
            }
        }
    }

    /// Device-resident execute on a CUDA context, queued on the plan's stream
    /// (`device_points().stream()`) without waiting. `c` holds 2·n_vectors·M reals
    /// (interleaved complex strengths, vector v from 2·v·M), `f` 2·n_vectors·N1N2N3 reals;
    /// type 1 reads c and writes f, type 2 reads f and writes c.
    pub fn execute_device(
        &self,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
    ) -> Result<()> {
        self.execute_device_timed(c, f, None)
    }

    /// `execute_device`, recording `events` (if given) at the start, after spreading (type 1)
    /// or the copy into the fine grid (type 2), after the FFT, and at the end.
    pub fn execute_device_timed(
        &self,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
        events: Option<&[cudarc::driver::CudaEvent; 4]>,
    ) -> Result<()> {
        match (&self.points, &self.ctx.cuda) {
            (PointsState::Device(p), Some(gpu)) => {
                cuda::usfft::execute_device(gpu, p, c, f, events)
            }
            (PointsState::None, _) => Err(crate::invalid!(
                "no points set: call set_points before execute"
            )),
            _ => Err(Error::Unsupported(
                "device-resident execute needs a plan on a CUDA context".into(),
            )),
        }
    }

    /// The device state of a CUDA plan with points set (for device-resident execution).
    pub fn device_points(&self) -> Option<&cuda::usfft::DevicePoints<T>> {
        match &self.points {
            PointsState::Device(p) => Some(p),
            _ => None,
        }
    }
}
