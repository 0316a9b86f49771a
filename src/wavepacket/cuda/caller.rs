//! The box stage's calls on device arrays the caller owns, ordered on the caller's stream:
//! the stage's work is queued on its own stream after what the caller's stream holds, and
//! the caller's stream then waits for it (`ordered_on`). The same on-device functions as
//! the host-to-host calls, so the results are the same bit for bit.
//!
//! C and C* on the same arrays as the call before are replayed from a CUDA graph of the
//! whole call (`RepeatedReplay`): a pipeline that passes its buffers call after
//! call pays one graph launch instead of a launch per kernel and per USFFT stage.

use super::calls::ensure;
use super::launches::ThresholdAt;
use super::{BoxStage, Pass};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::bind;
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::replay::RepeatedReplay;
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;
use cudarc::driver::CudaStream;

/// The captured C and C* on the caller's arrays (input, output addresses), and the arrays
/// of each pass's previous call.
#[derive(Default)]
pub(super) struct CallReplays {
    forward: RepeatedReplay<[u64; 2]>,
    adjoint: RepeatedReplay<[u64; 2]>,
}

impl CallReplays {
    fn of(&mut self, pass: Pass) -> &mut RepeatedReplay<[u64; 2]> {
        match pass {
            Pass::Forward => &mut self.forward,
            Pass::Adjoint => &mut self.adjoint,
        }
    }
}

impl<T: Real> BoxStage<T> {
    /// C (`input` the data, n reals → `output` the coefficients, 2·m reals, interleaved
    /// complex) or C* (`input` the coefficients → `output` the data), queued after
    /// `caller`'s work; returns without waiting. Non-finite input is not looked for.
    pub fn ordered(
        &self,
        pass: Pass,
        caller: &CudaStream,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let (data, coeffs) = match pass {
            Pass::Forward => (input.len(), output.len()),
            Pass::Adjoint => (output.len(), input.len()),
        };
        self.device_call((data, coeffs), |s, scratch, quiet| {
            let mut calls = std::mem::take(&mut scratch.calls);
            let key = [input.addr(), output.addr()];
            let done = ordered_on(caller, s, || {
                calls.of(pass).run(s, key, || {
                    self.pass_on(pass, input, output, None, scratch, quiet)
                })
            });
            scratch.calls = calls;
            done
        })
    }

    /// C* of the caller's `coeffs` (after `caller`'s work) into the host array `out` (n
    /// reals): the start of an inverse, whose iterations run on the host. Waits for it.
    pub fn adjoint_to_host(
        &self,
        caller: &CudaStream,
        coeffs: &impl DeviceArray<T>,
        out: &mut [T],
    ) -> Result<()> {
        let n = self.layout.n_samples();
        self.check_device(out.len(), coeffs.len())?;
        let io = self.stager()?;
        let s = &self.stream;
        let mut bufs = self.lock();
        let bufs = &mut *bufs;
        let data = ensure(&mut bufs.data, n, s, "allocating wave-packet data")?;
        let quiet = &mut Reporter::new(None);
        ordered_on(caller, s, || {
            let scratch = &mut bufs.scratch;
            self.run_on(Pass::Adjoint, coeffs, data, &[], scratch, quiet)
        })?;
        io.down(data, &mut out[..n])
    }

    /// Copies the caller's `src` into the host array `out` after `caller`'s work; returns
    /// once it is there (the device calls whose iterations run on the host start so).
    pub fn download_ordered<U: Copy>(
        &self,
        caller: &CudaStream,
        src: &impl DeviceArray<U>,
        out: &mut [U],
    ) -> Result<()> {
        let io = self.stager()?;
        let _queue = self.lock();
        ordered_on(caller, &self.stream, || io.down(src, out))
    }

    /// Copies the host array `x` into the caller's `data` after `caller`'s work, the
    /// caller's stream then waiting for the copy; returns once `x` is on the device.
    pub fn upload_ordered<U: Copy>(
        &self,
        caller: &CudaStream,
        x: &[U],
        data: &mut impl DeviceArrayMut<U>,
    ) -> Result<()> {
        let io = self.stager()?;
        let _queue = self.lock();
        ordered_on(caller, &self.stream, || io.up(data, x))
    }

    /// Thresholds the caller's `coeffs` (2·m reals) in place at `level` (hard, or soft with
    /// `soft`), queued after `caller`'s work; returns without waiting.
    pub fn threshold_ordered(
        &self,
        caller: &CudaStream,
        coeffs: &mut impl DeviceArrayMut<T>,
        level: ThresholdAt,
        soft: bool,
    ) -> Result<()> {
        self.check_device(self.layout.n_samples(), coeffs.len())?;
        bind(self.stream.context())?;
        let _queue = self.lock();
        ordered_on(caller, &self.stream, || self.shrink(coeffs, level, soft))
    }
}
