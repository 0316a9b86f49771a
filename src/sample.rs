//! The two sample types the library computes in.

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
