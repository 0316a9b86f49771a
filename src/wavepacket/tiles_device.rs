//! A tiled volume's C, C* and inverse on device arrays (the volume n reals, the common
//! grids' coefficients 2·m reals, interleaved complex).
//!
//! On one context, C and C* run on the device, queued on the caller's stream without
//! waiting (`cuda/tiled.rs`: each tile cut, transformed and added into the common grids in
//! tile order, the host calls' steps and arithmetic). Over several contexts the input comes
//! down once after the caller's stream's work, the host call runs (its common grids on the
//! devices where they fit, `cuda/tiled_host.rs`), and the result goes back once, ordered
//! on that stream, on the first context's device; the calls wait. The inverse always runs
//! the host call's conjugate gradients between one read and one write (each iteration's
//! stopping test reads the residual on the host), and waits. Results are those of the host
//! calls.

use super::cuda::{tiled_host, BoxStage, Pass, TileGpu, TiledCall};
use super::inverse::{invert, InverseReport, Stop};
use super::tiles::TiledPlan;
use super::{check_data_finite, check_finite};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{as_reals, as_reals_mut};
use crate::backend::cuda::checks::Rows;
use crate::backend::cuda::CudaBackend;
use crate::error::{try_vec, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use cudarc::driver::CudaStream;
use num_complex::Complex;
use std::sync::Arc;

impl<T: Real> TiledPlan<T> {
    /// C of the device volume (`input`) into the device coefficients (`output`), as
    /// `forward`, or C* of the coefficients into the volume, as `adjoint`; without progress
    /// reports. On one context queued on the caller's stream without waiting (non-finite
    /// input looked for only with device checks on); over several it waits and refuses
    /// non-finite input.
    pub fn transform_on_device(
        &self,
        pass: Pass,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let (call, what, data, coeffs) = match pass {
            Pass::Forward => (
                "a device wave-packet volume forward transform",
                "data",
                input.len(),
                output.len(),
            ),
            Pass::Adjoint => (
                "a device wave-packet volume adjoint",
                "coefficients",
                output.len(),
                input.len(),
            ),
        };
        let (gpu, stage, caller) = self.device_io(call, data, coeffs)?;
        if let ([tables], [_]) = (&self.queued[..], &self.plans[..]) {
            let rows = Rows::contiguous(input.len());
            gpu.check_finite(&caller, input, rows, || format!("{call}'s {what}"))?;
            return stage.tiled_ordered(pass, &caller, tables, input, output, &mut || Ok(()));
        }
        let noop = &mut || Ok(());
        match pass {
            Pass::Forward => {
                let mut f = try_vec(data, T::zero(), "tiled volume")?;
                stage.download_ordered(&caller, input, &mut f)?;
                check_data_finite(&f, &self.context().cpu)?;
                let mut c = try_vec(coeffs, T::zero(), "tiled coefficients")?;
                if !self.through_device(&[pass], &f, &mut c, noop)? {
                    c.copy_from_slice(as_reals(&self.forward_with(&f, noop)?));
                }
                stage.upload_ordered(&caller, &c, output)
            }
            Pass::Adjoint => {
                let c = self.download_coefficients(stage, &caller, input)?;
                check_finite(&c, &self.context().cpu)?;
                let mut f = try_vec(data, T::zero(), "tiled volume")?;
                if !self.through_device(&[pass], as_reals(&c), &mut f, noop)? {
                    f = self.adjoint_with(&c, noop)?;
                }
                stage.upload_ordered(&caller, &f, output)
            }
        }
    }

    /// The inverse of the device coefficients `coeffs` into the device volume `data`, as
    /// `inverse`, without progress reports. Waits.
    pub fn inverse_on_device(
        &self,
        coeffs: &impl DeviceArray<T>,
        data: &mut impl DeviceArrayMut<T>,
        stop: Stop,
    ) -> Result<InverseReport> {
        let call = "a device wave-packet volume inverse";
        let (_, stage, caller) = self.device_io(call, data.len(), coeffs.len())?;
        super::check_tolerance(stop.tolerance)?;
        let c = self.download_coefficients(stage, &caller, coeffs)?;
        let mut f = try_vec(data.len(), T::zero(), "tiled volume")?;
        let report = invert(self, &c, &mut f, stop, &mut Reporter::new(None))?;
        stage.upload_ordered(&caller, &f, data)?;
        Ok(report)
    }

    /// The host call of `passes` (C, C*, or C then C*) from `input` into `output` with the
    /// common grids on the devices, where the plan's contexts are CUDA contexts that hold
    /// the tiles' tables (and reach each other's memory) and the volume and the grids fit
    /// beside them (`cuda/tiled_host.rs`); `Ok(false)` otherwise, nothing written.
    /// `after_tile` runs after each tile of a single pass.
    pub(super) fn through_device(
        &self,
        passes: &[Pass],
        input: &[T],
        output: &mut [T],
        after_tile: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool> {
        if self.queued.len() != self.plans.len() {
            return Ok(false);
        }
        let mut gpus = Vec::with_capacity(self.plans.len());
        for ((plan, tables), part) in self.plans.iter().zip(&self.queued).zip(self.grid_parts()) {
            let Some(stage) = plan.device_stage() else {
                return Ok(false);
            };
            gpus.push(TileGpu {
                stage,
                tables,
                part,
            });
        }
        let call = TiledCall {
            passes,
            samples: self.volume().iter().product(),
            grid_reals: 2 * self.n_coefficients(),
        };
        tiled_host(&gpus, call, input, output, after_tile)
    }

    /// The first context's GPU, box stage and caller stream for the device call `call`
    /// (`Unsupported` on a CPU context), the arrays' sizes (data and coefficient reals)
    /// checked.
    fn device_io(
        &self,
        call: &str,
        data: usize,
        coeff_reals: usize,
    ) -> Result<(&CudaBackend, &BoxStage<T>, Arc<CudaStream>)> {
        let first = &self.plans[0];
        let gpu = first.ctx.gpu_for(call)?;
        if coeff_reals % 2 != 0 {
            return Err(crate::invalid!(
                "coefficient array has {coeff_reals} reals; interleaved complex values need an even count"
            ));
        }
        self.check_sizes(data, coeff_reals / 2)?;
        Ok((gpu, first.device()?, gpu.caller_stream()))
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
