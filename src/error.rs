//! The crate's error type. Each variant maps to one `sg_status` code of the C ABI.

use crate::status::*;

/// What went wrong, with a message that names the argument, the value and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NullPointer(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    OutOfMemory(String),
    #[error("{0}")]
    DeviceOutOfMemory(String),
    #[error("{0}")]
    CudaUnavailable(String),
    #[error("{0}")]
    CudaDriver(String),
    #[error("{0}")]
    KernelCompile(String),
    #[error("{0}")]
    NonFinite(String),
    #[error("{0}")]
    BufferTooSmall(String),
    #[error("{0}")]
    Internal(String),
    #[error("{0}")]
    Cancelled(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The C status code for this error.
    pub fn status(&self) -> sg_status {
        match self {
            Error::InvalidArgument(_) => SG_ERR_INVALID_ARGUMENT,
            Error::NullPointer(_) => SG_ERR_NULL_POINTER,
            Error::Unsupported(_) => SG_ERR_UNSUPPORTED,
            Error::OutOfMemory(_) => SG_ERR_OUT_OF_MEMORY,
            Error::DeviceOutOfMemory(_) => SG_ERR_DEVICE_OUT_OF_MEMORY,
            Error::CudaUnavailable(_) => SG_ERR_CUDA_UNAVAILABLE,
            Error::CudaDriver(_) => SG_ERR_CUDA_DRIVER,
            Error::KernelCompile(_) => SG_ERR_KERNEL_COMPILE,
            Error::NonFinite(_) => SG_ERR_NON_FINITE,
            Error::BufferTooSmall(_) => SG_ERR_BUFFER_TOO_SMALL,
            Error::Internal(_) => SG_ERR_INTERNAL,
            Error::Cancelled(_) => SG_ERR_CANCELLED,
        }
    }
}

/// `Err(InvalidArgument)` with a formatted message.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::error::Error::InvalidArgument(format!($($arg)*)) };
}

/// Reserves `n` elements in a new vector, reporting host exhaustion as a status
/// instead of aborting the caller's process.
pub fn try_vec<T: Clone>(n: usize, fill: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| host_exhausted::<T>(n, what))?;
    v.resize(n, fill);
    Ok(v)
}

/// `try_vec` of zeros from the allocator's zeroed memory, which the system maps lazily
/// for large sizes: the pages are faulted in by whichever threads write them first,
/// instead of being zero-filled by the calling thread beforehand.
pub fn try_zeros<T: crate::sample::ZeroBits>(n: usize, what: &str) -> Result<Vec<T>> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| host_exhausted::<T>(n, what))?;
    // SAFETY: a layout of non-zero size (n > 0 elements of non-zero size).
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return Err(host_exhausted::<T>(n, what));
    }
    // SAFETY: allocated by the global allocator with the layout of a Vec<T> of capacity n;
    // all bits zero is a value of T (`ZeroBits`), so the n elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

fn host_exhausted<T>(n: usize, what: &str) -> Error {
    Error::OutOfMemory(format!(
        "could not allocate {} bytes of host memory for {what}",
        n.saturating_mul(std::mem::size_of::<T>())
    ))
}
