//! Spectra kept on the device between the stages.

use crate::backend::cuda::array::{complex, Part};
use crate::backend::cuda::buffers::{as_reals_mut, download};
use crate::context::Context;
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;
use num_complex::Complex32;

/// One day's spectra on the device, `[bin][station][window]`: `len` complex values as
/// `2·len` interleaved floats.
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
        let what = "copying spectra to the host";
        download(&stream, &self.buf, as_reals_mut(&mut host), what)?;
        Ok(host)
    }

    /// The spectra as complex values (as the kernels and cuBLAS read them).
    pub(super) fn values(&self) -> Part<'_, Complex32> {
        complex(&self.buf)
    }
}
