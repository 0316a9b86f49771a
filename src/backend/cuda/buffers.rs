//! Device buffers as kernel arguments: raw addresses, uploads and allocations with the
//! library's error messages, complex arrays seen as interleaved reals.

use super::driver_error;
use crate::error::Result;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};
use num_complex::Complex;
use std::sync::Arc;

/// Kernel arguments are raw device addresses (`CUdeviceptr`), so that chunks and sub-arrays
/// need no views; every buffer is used on the stream it was allocated on.
pub type DevPtr = u64;

pub fn dptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> DevPtr {
    let (p, _record) = s.device_ptr(stream);
    p
}

/// A device copy of `host`; an empty one gets a buffer of one element that nothing reads.
pub fn upload<U: DeviceRepr>(
    stream: &Arc<CudaStream>,
    host: &[U],
    what: &'static str,
) -> Result<CudaSlice<U>> {
    if host.is_empty() {
        return alloc(stream, 1, what);
    }
    stream.clone_htod(host).map_err(driver_error(what))
}

/// An uninitialised device buffer of `len` (at least 1) elements.
pub fn alloc<U: DeviceRepr>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &'static str,
) -> Result<CudaSlice<U>> {
    // SAFETY: every user writes before it reads.
    unsafe { stream.alloc::<U>(len.max(1)) }.map_err(driver_error(what))
}

/// Complex values as their interleaved (re, im) reals.
pub fn as_reals<T>(v: &[Complex<T>]) -> &[T] {
    // SAFETY: Complex<T> is repr(C) {re, im}.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<T>(), 2 * v.len()) }
}

/// `as_reals` for writing.
pub fn as_reals_mut<T>(v: &mut [Complex<T>]) -> &mut [T] {
    // SAFETY: as above.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<T>(), 2 * v.len()) }
}
