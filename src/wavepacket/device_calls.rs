//! The plan's calls on data and coefficients already in device memory (interleaved complex
//! coefficients as 2·m reals), ordered on the context's caller stream
//! (`sg_context_set_stream`): the box stage queues them on its own stream between the
//! caller's work before and after (`cuda/caller.rs`).

use super::coeffs::ThresholdMode;
use super::cuda::ThresholdAt;
use super::inverse::{solve, CorrectionFilter, InverseReport, Stop};
use super::Pass;
use super::{check_array_sizes, WavepacketPlan};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::checks::Rows;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;

impl<T: Real> WavepacketPlan<T> {
    /// C (`input` the data, n reals → `output` the coefficients, 2·m reals) or C* (`input`
    /// the coefficients → `output` the data) on device arrays, queued on the caller's
    /// stream; returns without waiting. Non-finite input is looked for only with device
    /// checks on.
    pub fn transform_on_device(
        &self,
        pass: Pass,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let call = match pass {
            Pass::Forward => "a device wave-packet forward transform",
            Pass::Adjoint => "a device wave-packet adjoint",
        };
        let gpu = self.ctx.gpu_for(call)?;
        let caller = gpu.caller_stream();
        match pass {
            Pass::Forward => {
                self.check_device_arrays(input.len(), output.len())?;
                let rows = Rows::contiguous(self.layout.n_samples());
                gpu.check_finite(&caller, input, rows, || format!("{call}'s data"))?;
            }
            Pass::Adjoint => {
                self.check_device_arrays(output.len(), input.len())?;
                self.check_coefficients(gpu, input, call)?;
            }
        }
        self.device()?.ordered(pass, &caller, input, output)
    }

    /// `inverse` of device coefficients into device data. The coefficients stay on the
    /// device; C* of them comes to the host, where the correction filter and the conjugate
    /// gradients run as in `inverse` (each C*C on the device, as there), and the result goes
    /// into `data`, ordered on the caller's stream. Waits: the iterations' stopping test
    /// reads the residual on the host. No progress reports; non-finite coefficients are not
    /// looked for (an inverse that is not finite is refused, `data` unwritten).
    pub fn inverse_on_device(
        &self,
        filter: &CorrectionFilter<T>,
        coeffs: &impl DeviceArray<T>,
        data: &mut impl DeviceArrayMut<T>,
        stop: Stop,
    ) -> Result<InverseReport> {
        let gpu = self.ctx.gpu_for("a device wave-packet inverse")?;
        check_tolerance(stop.tolerance)?;
        self.check_device_arrays(data.len(), coeffs.len())?;
        self.check_coefficients(gpu, coeffs, "a device wave-packet inverse")?;
        let stage = self.device()?;
        let caller = gpu.caller_stream();
        let n = self.layout.n_samples();
        let mut b = crate::error::try_vec(n, T::zero(), "wave-packet data")?;
        stage.adjoint_to_host(&caller, coeffs, &mut b)?;
        let start = filter.apply(&b);
        let mut x = crate::error::try_vec(n, T::zero(), "wave-packet data")?;
        let normal = |v: &[T]| self.normal(v);
        let quiet = &mut Reporter::new(None);
        let report = solve(&b, start, normal, stop, quiet, &mut x)?;
        stage.upload_ordered(&caller, &x, data)?;
        Ok(report)
    }

    /// Thresholds device coefficients (2·m reals) in place at `value` (finite, ≥ 0), hard
    /// or soft, queued on the caller's stream; returns without waiting. Non-finite
    /// coefficients are not looked for.
    pub fn threshold_on_device(
        &self,
        coeffs: &mut impl DeviceArrayMut<T>,
        mode: ThresholdMode,
        value: f64,
    ) -> Result<()> {
        let gpu = self.ctx.gpu_for("a device wave-packet threshold")?;
        if !(value.is_finite() && value >= 0.0) {
            return Err(crate::invalid!(
                "threshold {value} is not a finite value ≥ 0"
            ));
        }
        self.check_device_arrays(self.layout.n_samples(), coeffs.len())?;
        self.check_coefficients(gpu, coeffs, "a device wave-packet threshold")?;
        let soft = mode == ThresholdMode::Soft;
        self.device()?.threshold_ordered(
            &gpu.caller_stream(),
            coeffs,
            ThresholdAt::Value(value),
            soft,
        )
    }

    /// With device checks on, a scan of the 2·m coefficient reals on the caller's stream.
    pub(super) fn check_coefficients(
        &self,
        gpu: &CudaBackend,
        coeffs: &impl DeviceArray<T>,
        call: &str,
    ) -> Result<()> {
        let reals = Rows::contiguous(2 * self.layout.n_coefficients);
        gpu.check_finite(&gpu.caller_stream(), coeffs, reals, || {
            format!("{call}'s coefficients")
        })
    }

    /// `InvalidArgument` unless a device call's arrays hold n data reals and 2·m
    /// coefficient reals.
    pub(super) fn check_device_arrays(&self, data: usize, coeff_reals: usize) -> Result<()> {
        let l = &self.layout;
        if coeff_reals % 2 != 0 {
            return Err(crate::invalid!(
                "coefficient array has {coeff_reals} reals; interleaved complex values need an even count"
            ));
        }
        let shape = &l.shape[..l.dim];
        let whose = ["the layout's shape", "the layout"];
        let want = [l.n_samples(), l.n_coefficients];
        check_array_sizes([data, coeff_reals / 2], want, shape, whose)
    }
}

/// `InvalidArgument` unless an inverse's tolerance lies in (0, 1).
pub(crate) fn check_tolerance(tolerance: f64) -> Result<()> {
    if tolerance > 0.0 && tolerance < 1.0 {
        return Ok(());
    }
    Err(crate::invalid!(
        "tolerance is {tolerance}; expected a value in (0, 1)"
    ))
}
