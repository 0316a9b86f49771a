//! POCS interpolation and the sparse approximation on device arrays. Both iterate with
//! steps that run on the host between transforms (POCS: the first estimate's linear gap
//! filling, each iteration's correction filter, whose FFTs are rustfft's, and the update of
//! the missing traces; the sparse approximation: choosing the support and the refit's
//! scalars), and each transform of theirs already runs on the device. POCS's iteration
//! count is fixed by its options, but its filter on the device would be cuFFT's, which
//! rounds differently, so the device calls run the host algorithms themselves: the data come down once after the caller's
//! stream's work, the result goes back once, ordered on that stream. The calls wait, and
//! their results are those of the host calls on the same GPU.

use super::coeffs::PocsOptions;
use super::inverse::CorrectionFilter;
use super::sparse::{SparseOptions, SparseReport};
use super::WavepacketPlan;
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::as_reals;
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use crate::sample::Real;

impl<T: Real> WavepacketPlan<T> {
    /// `pocs_interpolate` on device `data` (n reals, in place): read after the caller's
    /// stream's work, interpolated as on the host (no progress reports), written back
    /// ordered on the caller's stream. Waits. On failure `data` is not written.
    pub fn pocs_on_device(
        &self,
        filter: &CorrectionFilter<T>,
        data: &mut impl DeviceArrayMut<T>,
        live: &[bool],
        opts: &PocsOptions,
    ) -> Result<()> {
        let gpu = self
            .ctx
            .gpu_for("a device wave-packet POCS interpolation")?;
        let n = self.layout.n_samples();
        self.check_device_arrays(data.len(), 2 * self.layout.n_coefficients)?;
        let stage = self.device()?;
        let caller = gpu.caller_stream();
        let mut x = try_vec(n, T::zero(), "wave-packet data")?;
        stage.download_ordered(&caller, data, &mut x)?;
        let quiet = &mut Reporter::new(None);
        self.pocs_reported(filter, &mut x, live, opts, quiet)?;
        stage.upload_ordered(&caller, &x, data)
    }

    /// `sparse_approximation` of device `data` (n reals) into device `coeffs` (2·m reals):
    /// the data read after the caller's stream's work, the approximation made as on the
    /// host (no progress reports), the coefficients written ordered on the caller's stream.
    /// Waits. On failure `coeffs` is not written.
    pub fn sparse_approximation_on_device(
        &self,
        data: &impl DeviceArray<T>,
        coeffs: &mut impl DeviceArrayMut<T>,
        s: usize,
        opts: &SparseOptions,
    ) -> Result<SparseReport> {
        let gpu = self
            .ctx
            .gpu_for("a device wave-packet sparse approximation")?;
        self.check_device_arrays(data.len(), coeffs.len())?;
        let stage = self.device()?;
        let caller = gpu.caller_stream();
        let mut f = try_vec(self.layout.n_samples(), T::zero(), "wave-packet data")?;
        stage.download_ordered(&caller, data, &mut f)?;
        let quiet = &mut Reporter::new(None);
        let (c, report) = self.sparse_reported(&f, s, opts, quiet)?;
        stage.upload_ordered(&caller, as_reals(&c), coeffs)?;
        Ok(report)
    }
}
