//! Kernel arguments as raw device addresses.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

/// Kernel arguments are raw device addresses (`CUdeviceptr`), so that chunks and sub-arrays
/// need no views; every buffer is used on the stream it was allocated on.
pub(super) type DevPtr = u64;

pub(super) fn dptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> DevPtr {
    let (p, _record) = s.device_ptr(stream);
    p
}
