//! Device buffers the library owns: allocations, uploads, zero fills and downloads with the
//! library's error messages, each on the stream that will use the buffer.

use super::array::{DeviceArray, DeviceArrayMut};
use super::driver_error;
use super::memory::{alloc_buf, DeviceBuf};
use crate::error::{Error, Result};
use cudarc::driver::{result, CudaStream, DeviceRepr, ValidAsZeroBits};
use num_complex::Complex;
use std::sync::Arc;

/// A device copy of `host`; an empty one gets a buffer of one element that nothing reads.
pub fn upload<U: DeviceRepr>(
    stream: &Arc<CudaStream>,
    host: &[U],
    what: &'static str,
) -> Result<DeviceBuf<U>> {
    let mut buf = alloc(stream, host.len(), what)?;
    if !host.is_empty() {
        stream
            .memcpy_htod(host, &mut *buf)
            .map_err(driver_error(what))?;
    }
    Ok(buf)
}

/// Copies `host` into the first `host.len()` elements of `dst` on `stream`; `host` may go
/// when this returns (the driver has taken it).
pub fn write<U: DeviceRepr>(
    stream: &CudaStream,
    host: &[U],
    dst: &mut impl DeviceArrayMut<U>,
    what: &'static str,
) -> Result<()> {
    let (n, len) = (host.len(), dst.len());
    if !spans(n, len, || {
        format!("a copy of {n} elements into a device array of {len}")
    })? {
        return Ok(());
    }
    super::bind(stream.context())?;
    // SAFETY: `dst` spans host's elements (checked above); pageable host memory is staged
    // by the driver before the call returns, as `upload` relies on too.
    unsafe { result::memcpy_htod_async(dst.addr(), host, stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// An uninitialised device buffer of `len` (at least 1) elements, from the context's
/// allocator (`memory.rs`).
pub fn alloc<U: DeviceRepr>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &'static str,
) -> Result<DeviceBuf<U>> {
    alloc_buf(stream, len.max(1), what)
}

/// A zero-filled device buffer of `len` (at least 1) elements.
pub fn zeros<U: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &'static str,
) -> Result<DeviceBuf<U>> {
    let mut buf = alloc(stream, len, what)?;
    fill_zero(stream, &mut buf, what)?;
    Ok(buf)
}

/// Zeroes `a` on `stream` (asynchronously).
pub fn fill_zero<T>(
    stream: &CudaStream,
    a: &mut impl DeviceArrayMut<T>,
    what: &'static str,
) -> Result<()> {
    super::bind(stream.context())?;
    // SAFETY: the array spans `bytes()` of device memory the holder may write.
    unsafe { result::memset_d8_async(a.addr(), 0, a.bytes(), stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// Sets every byte of `a` to `byte` on `stream` (asynchronously): 0xff makes an all-ones
/// flag that a kernel lowers with `atomicMin`.
pub fn fill_bytes<T>(
    stream: &CudaStream,
    a: &mut impl DeviceArrayMut<T>,
    byte: u8,
    what: &'static str,
) -> Result<()> {
    super::bind(stream.context())?;
    // SAFETY: the array spans `bytes()` of device memory the holder may write.
    unsafe { result::memset_d8_async(a.addr(), byte, a.bytes(), stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// Copies `src` into the first `src.len()` elements of `dst`, device to device, on `stream`.
pub fn copy<T>(
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    dst: &mut impl DeviceArrayMut<T>,
    what: &'static str,
) -> Result<()> {
    let (n, len) = (src.len(), dst.len());
    spans(n, len, || {
        format!("a device copy of {n} elements into {len}")
    })?;
    super::bind(stream.context())?;
    // SAFETY: both arrays span the copied bytes (checked above).
    unsafe { result::memcpy_dtod_async(dst.addr(), src.addr(), src.bytes(), stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// The elements of `src` copied into `dst` (ordinary host memory) once the stream's queued
/// work is done; returns after the copy.
pub fn download<T: DeviceRepr>(
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    dst: &mut [T],
    what: &'static str,
) -> Result<()> {
    let (n, len) = (dst.len(), src.len());
    if !spans(n, len, || format!("a download of {n} elements from {len}"))? {
        return Ok(());
    }
    super::bind(stream.context())?;
    // SAFETY: `src` spans dst's bytes (checked above); the copy is waited for below.
    unsafe { result::memcpy_dtoh_async(dst, src.addr(), stream.cu_stream()) }
        .map_err(driver_error(what))?;
    stream.synchronize().map_err(driver_error(what))
}

/// Whether a copy of `n` elements has anything to do, once the device array's `len`
/// elements are found to span it (a shorter one is an internal error, worded by `message`).
fn spans(n: usize, len: usize, message: impl FnOnce() -> String) -> Result<bool> {
    if len < n {
        return Err(Error::Internal(message()));
    }
    Ok(n > 0)
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
