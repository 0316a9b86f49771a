//! Copies between host memory and device arrays, queued on a stream and not waited for,
//! so that they overlap kernels and host work: the host side is a page-locked staging
//! buffer that the caller leaves alone until the stream has passed the copy. Typed and
//! length-checked; `unsafe` because only the caller knows when the host may touch the
//! buffer again.

use super::array::{DeviceArray, DeviceArrayMut};
use super::{bind, driver_error};
use crate::error::{Error, Result};
use cudarc::driver::{result, CudaStream};

/// Queues a copy of `src` into the first `src.len()` elements of `dst` on `stream`.
///
/// # Safety
/// The host neither writes nor frees `src` until `stream` has passed the copy (the stream,
/// or an event recorded on it after the copy, has been synchronised).
pub unsafe fn upload_async<T: Copy>(
    stream: &CudaStream,
    src: &[T],
    dst: &mut impl DeviceArrayMut<T>,
    what: &'static str,
) -> Result<()> {
    if !ready(stream, src.len(), dst.len(), what)? {
        return Ok(());
    }
    // SAFETY: `dst` is writable device memory spanning src's bytes (checked above); the
    // caller keeps `src` alive and unwritten until the copy has run.
    unsafe { result::memcpy_htod_async(dst.addr(), src, stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// Queues a copy of the first `dst.len()` elements of `src` into `dst` on `stream`.
///
/// # Safety
/// The host neither reads, writes nor frees `dst` until `stream` has passed the copy (the
/// stream, or an event recorded on it after the copy, has been synchronised).
pub unsafe fn download_async<T: Copy>(
    stream: &CudaStream,
    src: &impl DeviceArray<T>,
    dst: &mut [T],
    what: &'static str,
) -> Result<()> {
    if !ready(stream, dst.len(), src.len(), what)? {
        return Ok(());
    }
    // SAFETY: `src` spans dst's bytes (checked above); the caller leaves `dst` alone until
    // the copy has run.
    unsafe { result::memcpy_dtoh_async(dst, src.addr(), stream.cu_stream()) }
        .map_err(driver_error(what))
}

/// Whether there is anything to copy (`moved` elements through a device array of
/// `device`, which must hold them), with the stream's context bound.
fn ready(stream: &CudaStream, moved: usize, device: usize, what: &str) -> Result<bool> {
    if moved > device {
        return Err(Error::Internal(format!(
            "{what}: {moved} elements through a device array of {device}"
        )));
    }
    if moved > 0 {
        bind(stream.context())?;
    }
    Ok(moved > 0)
}
