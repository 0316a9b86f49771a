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
    + 'static
{
    /// The CUDA C type name, baked into kernels.
    const C_TYPE: &'static str;
}

impl Sample for f32 {
    const C_TYPE: &'static str = "float";
}

impl Sample for f64 {
    const C_TYPE: &'static str = "double";
}

/// `Sample` with what rustfft and zero-initialised device buffers need of it: the sample
/// types of the USFFT and of the wave packets (the same two types).
pub trait Real: Sample + rustfft::FftNum + Default + cudarc::driver::ValidAsZeroBits {}

impl Real for f32 {}

impl Real for f64 {}
