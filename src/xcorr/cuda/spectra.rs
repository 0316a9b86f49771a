//! Spectra kept on the device between the stages.

use crate::backend::cuda::driver_error;
use crate::context::Context;
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use num_complex::Complex32;

/// One day's spectra on the device: `2·len` floats (interleaved complex).
pub struct DeviceSpectra {
    pub(super) buf: CudaSlice<f32>,
    pub(super) len: usize,
}

impl DeviceSpectra {
    pub fn to_host(&self, ctx: &Context) -> Result<Vec<Complex32>> {
        let gpu = ctx
            .cuda
            .as_ref()
            .ok_or_else(|| Error::Internal("device spectra on a CPU context".into()))?;
        let stream = gpu.stream()?;
        let mut host =
            crate::error::try_vec(self.len, Complex32::default(), "a copy of the spectra")?;
        // SAFETY: Complex32 is two f32 (repr(C)); the view covers exactly the vector.
        let floats = unsafe {
            std::slice::from_raw_parts_mut(host.as_mut_ptr().cast::<f32>(), 2 * self.len)
        };
        stream
            .memcpy_dtoh(&self.buf, floats)
            .map_err(driver_error("copying spectra to the host"))?;
        stream
            .synchronize()
            .map_err(driver_error("copying spectra to the host"))?;
        Ok(host)
    }

    pub(super) fn ptr(&self, stream: &CudaStream) -> u64 {
        self.buf.device_ptr(stream).0
    }
}
