//! The coefficient operations on device coefficients (2·m reals, interleaved complex) that
//! rank or scale them by box: keep the s largest, the white-noise threshold k·σ·‖ψ_b‖ and
//! the noise estimate, ordered on the context's caller stream (`cuda/select.rs`,
//! `cuda/launches.rs`).

use super::coeffs::{noise_sample_bits, noise_sigma, ThresholdMode};
use super::cuda::ThresholdAt;
use super::WavepacketPlan;
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::error::Result;
use crate::sample::Real;

impl<T: Real> WavepacketPlan<T> {
    /// Keeps the `s` coefficients of largest magnitude of device `coeffs` in place and
    /// zeroes the others (as `coeffs::keep_largest`, ties kept in array order), queued on
    /// the caller's stream; returns without waiting. Non-finite coefficients are looked for
    /// only with device checks on.
    pub fn keep_largest_on_device(
        &self,
        coeffs: &mut impl DeviceArrayMut<T>,
        s: usize,
    ) -> Result<()> {
        let call = "a device wave-packet keep-largest";
        let gpu = self.ctx.gpu_for(call)?;
        self.check_device_arrays(self.layout.n_samples(), coeffs.len())?;
        self.check_coefficients(gpu, coeffs, call)?;
        self.device()?
            .keep_largest_ordered(&gpu.caller_stream(), coeffs, s)
    }

    /// Thresholds device `coeffs` in place box by box at `k`·`sigma`·‖ψ_b‖ (as
    /// `coeffs::threshold_noise`; both finite and ≥ 0), hard or soft, queued on the
    /// caller's stream; returns without waiting.
    pub fn threshold_noise_on_device(
        &self,
        coeffs: &mut impl DeviceArrayMut<T>,
        mode: ThresholdMode,
        k: f64,
        sigma: f64,
    ) -> Result<()> {
        let call = "a device wave-packet noise threshold";
        let gpu = self.ctx.gpu_for(call)?;
        if !(k.is_finite() && k >= 0.0 && sigma.is_finite() && sigma >= 0.0) {
            return Err(crate::invalid!(
                "k = {k}, sigma = {sigma}; expected finite values ≥ 0"
            ));
        }
        self.check_device_arrays(self.layout.n_samples(), coeffs.len())?;
        self.check_coefficients(gpu, coeffs, call)?;
        let soft = mode == ThresholdMode::Soft;
        // k·σ·‖ψ_b‖ rounded as the host rounds it: (k·σ)·‖ψ_b‖.
        self.device()?.threshold_ordered(
            &gpu.caller_stream(),
            coeffs,
            ThresholdAt::BoxNorms(k * sigma),
            soft,
        )
    }

    /// σ of white noise from device `coeffs` (as `coeffs::estimate_noise`): the median is
    /// selected on the device after the caller's stream's work, and the call waits for its
    /// one value. The plan's first estimate also uploads which coefficients are samples.
    pub fn estimate_noise_on_device(&self, coeffs: &impl DeviceArray<T>) -> Result<f64> {
        let call = "a device wave-packet noise estimate";
        let gpu = self.ctx.gpu_for(call)?;
        self.check_device_arrays(self.layout.n_samples(), coeffs.len())?;
        self.check_coefficients(gpu, coeffs, call)?;
        let samples = || noise_sample_bits(&self.layout, &self.packet_norms());
        let median = self
            .device()?
            .noise_median_ordered(&gpu.caller_stream(), coeffs, samples)?;
        Ok(median.map_or(0.0, noise_sigma))
    }
}
