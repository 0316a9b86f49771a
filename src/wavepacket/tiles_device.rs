//! A tiled volume's C, C* and inverse on device arrays (the volume n reals, the common
//! grids' coefficients 2·m reals, interleaved complex). The tiles are cut from the volume
//! and their coefficients added into the common grids on the host, in tile order (which is
//! what makes the sum independent of the number of contexts), and each tile's transform
//! runs on its context's device, as in the host calls. So the device calls run the host
//! calls' steps: the input comes down once after the caller's stream's work and the result
//! goes back once, ordered on that stream, on the first context's device. They wait, and
//! their results are those of the host calls.

use super::cuda::BoxStage;
use super::inverse::{invert, InverseReport, Stop};
use super::tiles::TiledPlan;
use super::{check_data_finite, check_finite};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{as_reals, as_reals_mut};
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use cudarc::driver::CudaStream;
use num_complex::Complex;
use std::sync::Arc;

impl<T: Real> TiledPlan<T> {
    /// C of the device volume `data` into the device coefficients `coeffs`, as `forward`
    /// (non-finite data refused), without progress reports. Waits.
    pub fn forward_on_device(
        &self,
        data: &impl DeviceArray<T>,
        coeffs: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let call = "a device wave-packet volume forward transform";
        let (stage, caller) = self.device_io(call, data.len(), coeffs.len())?;
        let mut f = try_vec(data.len(), T::zero(), "tiled volume")?;
        stage.download_ordered(&caller, data, &mut f)?;
        check_data_finite(&f, &self.context().cpu)?;
        let c = self.forward_with(&f, &mut || Ok(()))?;
        stage.upload_ordered(&caller, as_reals(&c), coeffs)
    }

    /// C* of the device coefficients `coeffs` into the device volume `data`, as `adjoint`
    /// (non-finite coefficients refused), without progress reports. Waits.
    pub fn adjoint_on_device(
        &self,
        coeffs: &impl DeviceArray<T>,
        data: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let call = "a device wave-packet volume adjoint";
        let (stage, caller) = self.device_io(call, data.len(), coeffs.len())?;
        let c = self.download_coefficients(stage, &caller, coeffs)?;
        check_finite(&c, &self.context().cpu)?;
        let f = self.adjoint_with(&c, &mut || Ok(()))?;
        stage.upload_ordered(&caller, &f, data)
    }

    /// The inverse of the device coefficients `coeffs` into the device volume `data`, as
    /// `inverse`, without progress reports. Waits.
    pub fn inverse_on_device(
        &self,
        coeffs: &impl DeviceArray<T>,
        data: &mut impl DeviceArrayMut<T>,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<InverseReport> {
        let call = "a device wave-packet volume inverse";
        let (stage, caller) = self.device_io(call, data.len(), coeffs.len())?;
        super::check_tolerance(tolerance)?;
        let c = self.download_coefficients(stage, &caller, coeffs)?;
        let mut f = try_vec(data.len(), T::zero(), "tiled volume")?;
        let stop = Stop::new(tolerance, max_iterations);
        let report = invert(self, &c, &mut f, stop, &mut Reporter::new(None))?;
        stage.upload_ordered(&caller, &f, data)?;
        Ok(report)
    }

    /// The first context's box stage and caller stream for the device call `call`
    /// (`Unsupported` on a CPU context), the arrays' sizes (data and coefficient reals)
    /// checked.
    fn device_io(
        &self,
        call: &str,
        data: usize,
        coeff_reals: usize,
    ) -> Result<(&BoxStage<T>, Arc<CudaStream>)> {
        let first = &self.plans[0];
        let gpu = first.ctx.gpu_for(call)?;
        if coeff_reals % 2 != 0 {
            return Err(crate::invalid!(
                "coefficient array has {coeff_reals} reals; interleaved complex values need an even count"
            ));
        }
        self.check_sizes(data, coeff_reals / 2)?;
        Ok((first.device()?, gpu.caller_stream()))
    }

    /// The device coefficients, copied to the host after the caller's stream's work.
    fn download_coefficients(
        &self,
        stage: &BoxStage<T>,
        caller: &CudaStream,
        coeffs: &impl DeviceArray<T>,
    ) -> Result<Vec<Complex<T>>> {
        let zero = Complex::new(T::zero(), T::zero());
        let mut c = try_vec(self.n_coefficients(), zero, "tiled coefficients")?;
        stage.download_ordered(caller, coeffs, as_reals_mut(&mut c))?;
        Ok(c)
    }
}
