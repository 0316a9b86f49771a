//! The two sample types the library computes in, f32 and f64: `Sample` for every
//! capability, `Real` for the FFT-based ones (USFFT, wave packets).

/// `f32` or `f64`.
pub trait Sample:
    num_traits::Float
    + num_traits::FromPrimitive
    + Send
    + Sync
    + std::fmt::Debug
    + cudarc::driver::DeviceRepr
    + Finite
    + 'static
{
    /// The CUDA C type name, baked into kernels.
    const C_TYPE: &'static str;

    /// The slice as `f32`s when `Self` is `f32` (for paths that exist in single precision
    /// only).
    fn as_f32(x: &[Self]) -> Option<&[f32]>;

    /// `as_f32`, mutable.
    fn as_f32_mut(x: &mut [Self]) -> Option<&mut [f32]>;
}

impl Sample for f32 {
    const C_TYPE: &'static str = "float";

    fn as_f32(x: &[f32]) -> Option<&[f32]> {
        Some(x)
    }

    fn as_f32_mut(x: &mut [f32]) -> Option<&mut [f32]> {
        Some(x)
    }
}

impl Sample for f64 {
    const C_TYPE: &'static str = "double";

    fn as_f32(_: &[f64]) -> Option<&[f32]> {
        None
    }

    fn as_f32_mut(_: &mut [f64]) -> Option<&mut [f32]> {
        None
    }
}

/// `Sample` with what rustfft and zero-initialised device buffers need of it: the sample
/// types of the USFFT and of the wave packets (the same two types).
pub trait Real:
    Sample + rustfft::FftNum + Default + cudarc::driver::ValidAsZeroBits + ZeroBits
{
    /// A planner of FFTs of this type, compiled in this crate. Generic code that planned
    /// with rustfft's generic planner would compile the planner and all its algorithms again
    /// in every crate that calls it with a concrete type (each test binary, an application
    /// of the Rust API); through this one it calls the planner compiled here.
    fn fft_planner() -> Box<dyn FftPlans<Self>>;
}

impl Real for f32 {
    #[inline(never)]
    fn fft_planner() -> Box<dyn FftPlans<f32>> {
        Box::new(rustfft::FftPlanner::<f32>::new())
    }
}

impl Real for f64 {
    #[inline(never)]
    fn fft_planner() -> Box<dyn FftPlans<f64>> {
        Box::new(rustfft::FftPlanner::<f64>::new())
    }
}

/// Plans FFTs of one length and direction, reusing what it planned before (`Real::fft_planner`).
pub trait FftPlans<T>: Send {
    fn plan(
        &mut self,
        len: usize,
        direction: rustfft::FftDirection,
    ) -> std::sync::Arc<dyn rustfft::Fft<T>>;

    fn forward(&mut self, len: usize) -> std::sync::Arc<dyn rustfft::Fft<T>> {
        self.plan(len, rustfft::FftDirection::Forward)
    }

    fn inverse(&mut self, len: usize) -> std::sync::Arc<dyn rustfft::Fft<T>> {
        self.plan(len, rustfft::FftDirection::Inverse)
    }
}

impl<T: rustfft::FftNum> FftPlans<T> for rustfft::FftPlanner<T> {
    fn plan(
        &mut self,
        len: usize,
        direction: rustfft::FftDirection,
    ) -> std::sync::Arc<dyn rustfft::Fft<T>> {
        self.plan_fft(len, direction)
    }
}

/// A sample, or a complex value of two: finite when every part is.
pub trait Finite: Copy + Sync {
    fn finite(self) -> bool;
}

impl Finite for f32 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Finite for f64 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl<T: Finite> Finite for num_complex::Complex<T> {
    fn finite(self) -> bool {
        self.re.finite() & self.im.finite()
    }
}

/// Types whose value of all bits zero is their zero.
///
/// # Safety
/// All bits zero must be a valid value of the type.
pub unsafe trait ZeroBits: Copy {}
// SAFETY: IEEE 754 zero is all bits zero.
unsafe impl ZeroBits for f32 {}
// SAFETY: as for f32.
unsafe impl ZeroBits for f64 {}
// SAFETY: a Complex is `repr(C)` of two reals, each zero at all bits zero.
unsafe impl<T: ZeroBits> ZeroBits for num_complex::Complex<T> {}
