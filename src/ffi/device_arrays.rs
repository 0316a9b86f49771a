//! Caller arrays in device memory: the one place where a `CUdeviceptr` from C and an element
//! count become a typed device array. The checks the driver can answer without reading the
//! memory are made (NULL, alignment, device or managed memory of the context's device, an
//! allocation long enough); the C contract answers for the rest, as for host arrays.

use crate::backend::cuda::array::CallerArray;
use crate::backend::cuda::caller::caller_array;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;

/// `len` elements of `T` at device address `addr`, the array the call names `name`.
pub(crate) fn device_array<'a, T>(
    gpu: &CudaBackend,
    addr: u64,
    len: usize,
    name: &str,
) -> Result<CallerArray<'a, T>> {
    // SAFETY: the C contract of every `_device_` call: `addr` is memory the application
    // allocated on the context's device, holding `len` elements, kept until the call's
    // work on the stream is done, and writable where the call writes.
    unsafe { caller_array(&gpu.ctx, addr, len, name) }
}

/// Two device arrays of `T` that a call uses together, each `(address, len, name)`: checked
/// as by `device_array`, in that order, and refused when they overlap.
pub(crate) fn apart<'a, T>(
    gpu: &CudaBackend,
    (a, a_len, a_name): (u64, usize, &str),
    (b, b_len, b_name): (u64, usize, &str),
) -> Result<(CallerArray<'a, T>, CallerArray<'a, T>)> {
    let first = device_array::<T>(gpu, a, a_len, a_name)?;
    let second = device_array::<T>(gpu, b, b_len, b_name)?;
    if overlap::<T>(a, a_len, b, b_len) {
        return Err(crate::invalid!("`{a_name}` and `{b_name}` overlap"));
    }
    Ok((first, second))
}

/// A device call's `input` and `output` of `len` elements each.
pub(crate) enum InOut<'a, T> {
    /// The same address: the call works in place.
    InPlace(CallerArray<'a, T>),
    /// Two arrays that do not overlap: `(input, output)`.
    Apart(CallerArray<'a, T>, CallerArray<'a, T>),
}

/// The `input` and `output` of a device call that may work in place: the same address is one
/// array, any other overlap is refused (the result would depend on the order of work).
pub(crate) fn in_out<'a, T>(
    gpu: &CudaBackend,
    [input, output]: [u64; 2],
    len: usize,
) -> Result<InOut<'a, T>> {
    if input == output {
        return Ok(InOut::InPlace(device_array(gpu, input, len, "input")?));
    }
    if overlap::<T>(input, len, output, len) {
        return Err(crate::invalid!(
            "`input` and `output` overlap without being the same array; pass the same address for in place"
        ));
    }
    let i = device_array(gpu, input, len, "input")?;
    Ok(InOut::Apart(i, device_array(gpu, output, len, "output")?))
}

/// Whether two device arrays of `a_len` and `b_len` elements of `T` share bytes.
pub(crate) fn overlap<T>(a: u64, a_len: usize, b: u64, b_len: usize) -> bool {
    let size = std::mem::size_of::<T>() as u64;
    // Saturating: an address near the top of the range (refused by the driver check that
    // follows) must not overflow here first.
    let end = |at: u64, len: usize| at.saturating_add((len as u64).saturating_mul(size));
    let (a_end, b_end) = (end(a, a_len), end(b, b_len));
    a_len > 0 && b_len > 0 && a < b_end && b < a_end
}

#[cfg(test)]
mod tests {
    use super::overlap;

    #[test]
    fn overlap_of_byte_ranges() {
        assert!(overlap::<f32>(0x1000, 4, 0x100c, 4), "last element shared");
        assert!(!overlap::<f32>(0x1000, 4, 0x1010, 4), "adjacent");
        assert!(!overlap::<f32>(0x1000, 0, 0x1000, 4), "an empty array");
        // At the top of the address range the ends saturate instead of overflowing.
        assert!(overlap::<f64>(u64::MAX - 3, 64, u64::MAX - 1, 2));
        assert!(!overlap::<f64>(u64::MAX - 3, 64, 0x1000, 64));
    }
}
