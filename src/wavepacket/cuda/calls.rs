//! The box stage's calls: host-to-host C, C* and C*·P(C f) (uploads, the transform on the
//! device, downloads), and device-resident C and C* queued on the stage's stream.

use super::box_order::BoxRuns;
use super::tables::shift_factors;
use super::{whole_shifts, BoxStage, Buffers, Pass, Scratch, Shifts};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{part, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{alloc, upload};
use crate::backend::cuda::fft::Direction;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::{
    download_pieces, download_staged, gather_runs, scatter_runs, upload_pieces, upload_staged,
};
use crate::backend::cuda::tracked::{read_on, write_on};
use crate::backend::cuda::{bind, driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::cuda::Way;
use crate::wavepacket::USFFT_SHARE;
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// A host-to-host call's device arrays: the data (n reals) and the scratch, whose work
/// array holds the coefficients (work order) on their way to and from the host.
struct HostCall<'a, T> {
    data: &'a mut DeviceBuf<T>,
    scratch: &'a mut Scratch<T>,
}

/// Host arrays to and from the stage's stream, through page-locked pieces filled and
/// emptied by the context's CPU pool.
pub(super) struct Stager<'a> {
    pub(super) gpu: &'a CudaBackend,
    pub(super) cpu: &'a CpuBackend,
    pub(super) stream: &'a CudaStream,
}

impl Stager<'_> {
    /// Copies the coefficients `src` (box order) into the work array, on the device when
    /// this returns.
    fn up_boxes<T: Real>(&self, runs: &BoxRuns, work: &mut DeviceBuf<T>, src: &[T]) -> Result<()> {
        let fill = |at, piece: &mut [T]| {
            gather_runs(self.cpu, src, piece, &runs.runs(at, piece.len()));
            Ok(())
        };
        upload_pieces(
            &self.gpu.ctx,
            &self.gpu.staging,
            self.stream,
            work,
            src.len(),
            fill,
        )
    }

    /// Copies the work array into the coefficients `dst` (box order) after the queued work.
    fn down_boxes<T: Real>(
        &self,
        runs: &BoxRuns,
        work: &DeviceBuf<T>,
        dst: &mut [T],
    ) -> Result<()> {
        let (n, gpu) = (dst.len(), self.gpu);
        let drain = |at, piece: &[T]| {
            let by_coefficient = runs.runs_by_coefficient(at, piece.len());
            scatter_runs(self.cpu, piece, dst, &by_coefficient, 1);
            Ok(())
        };
        download_pieces(&gpu.ctx, &gpu.staging, self.stream, work, n, drain)
    }

    /// Copies `src` into `dst`; returns once it is on the device.
    pub(super) fn up<U: Copy>(&self, dst: &mut impl DeviceArrayMut<U>, src: &[U]) -> Result<()> {
        let gpu = self.gpu;
        upload_staged(&gpu.ctx, &gpu.staging, self.cpu, self.stream, dst, src)
    }

    /// Copies `src` into `dst` after the work queued on the stream.
    pub(super) fn down<U: Copy>(&self, src: &impl DeviceArray<U>, dst: &mut [U]) -> Result<()> {
        let gpu = self.gpu;
        download_staged(&gpu.ctx, &gpu.staging, self.cpu, self.stream, src, dst)
    }
}

/// `slot`, made with `len` elements if absent.
pub(super) fn ensure<'a, T: Real>(
    slot: &'a mut Option<DeviceBuf<T>>,
    len: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<&'a mut DeviceBuf<T>> {
    if slot.is_none() {
        *slot = Some(alloc(stream, len, what)?);
    }
    Ok(slot.as_mut().unwrap())
}

impl<T: Real> BoxStage<T> {
    /// Host-to-host C (`input` the data, n reals → `output` the coefficients, 2·m reals) or
    /// C* (the coefficients → the data): uploads `input`, for C* refuses non-finite
    /// coefficients (checked on the device), runs, downloads into `output` (written only at
    /// the end); reports "wave-packet spectrum" and "wave-packet boxes".
    pub fn transform(
        &self,
        pass: Pass,
        input: &[T],
        output: &mut [T],
        shifts: &[[f64; 3]],
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.host_call(|io, HostCall { data, scratch }| match pass {
            Pass::Forward => {
                io.up(data, input)?;
                self.shifted(shifts, scratch, |shifts, scratch| {
                    self.data_to_boxes(&*data, shifts, scratch, reporter)?;
                    self.phase_work(&mut scratch.work, false)?;
                    self.report(reporter, "wave-packet boxes", 1.0 - USFFT_SHARE)
                })?;
                io.down_boxes(&self.box_runs, &scratch.work, output)
            }
            Pass::Adjoint => {
                io.up_boxes(&self.box_runs, &mut scratch.work, input)?;
                let uploaded = part(&scratch.work, 0, 2 * self.layout.n_coefficients);
                if let Some(i) = self.find_non_finite(&uploaded, &mut scratch.first_bad)? {
                    return Err(Error::NonFinite(format!(
                        "coefficient {} is not finite; nothing was written",
                        self.box_runs.coefficient_of(i / 2)
                    )));
                }
                self.shifted(shifts, scratch, |shifts, scratch| {
                    self.phase_work(&mut scratch.work, true)?;
                    self.boxes_to_data(data, shifts, scratch, reporter)
                })?;
                io.down(data, output)
            }
        })
    }

    /// C*·P(C f): `f` up, C, P and C* on the device, `out` down; the coefficients between
    /// them never leave it. P is nothing (C*C f, the inverse's iterations) or, with
    /// `keep_below` (one threshold per box, by box index), the zeroing of every coefficient
    /// above its box's threshold (`wp_keep_below`: a POCS step).
    pub fn synthesis(&self, f: &[T], out: &mut [T], keep_below: Option<&[f64]>) -> Result<()> {
        self.host_call(|io, HostCall { data: d, scratch }| {
            io.up(d, f)?;
            let mut quiet = Reporter::new(None);
            // The coefficients stay in the work array, phased as C gives them.
            self.data_to_boxes(&*d, None, scratch, &mut quiet)?;
            self.phase_work(&mut scratch.work, false)?;
            // Kept alive until the stream has used it (the download below waits for it).
            let _thresholds = match keep_below {
                Some(t) => Some(self.keep_below(&mut scratch.work, t)?),
                None => None,
            };
            self.phase_work(&mut scratch.work, true)?;
            self.boxes_to_data(d, None, scratch, &mut quiet)?;
            io.down(d, out)
        })
    }

    /// Runs a host-to-host call's `body` with the call's device arrays and the staging of
    /// host arrays, the context bound and the stage's buffers held.
    fn host_call(
        &self,
        body: impl FnOnce(&Stager<'_>, HostCall<'_, T>) -> Result<()>,
    ) -> Result<()> {
        let io = self.stager()?;
        let mut bufs = self.lock();
        self.held.scope("a wave-packet call", || {
            body(&io, self.host_arrays(&mut bufs)?)
        })
    }

    /// Device-resident C, queued on `stream()` without waiting: `data` holds n reals,
    /// `coeffs` 2·m (interleaved complex). Non-finite data is not checked.
    pub fn forward_device(&self, data: &CudaSlice<T>, coeffs: &mut CudaSlice<T>) -> Result<()> {
        self.device_call((data.len(), coeffs.len()), |s, scratch, quiet| {
            let (data, mut coeffs) = (read_on(data, s), write_on(coeffs, s));
            self.run_on(Pass::Forward, &data, &mut coeffs, &[], scratch, quiet)
        })
    }

    /// Device-resident C*, queued on `stream()` without waiting (the sizes as `forward_device`).
    pub fn adjoint_device(&self, coeffs: &CudaSlice<T>, data: &mut CudaSlice<T>) -> Result<()> {
        self.device_call((data.len(), coeffs.len()), |s, scratch, quiet| {
            let (coeffs, mut data) = (read_on(coeffs, s), write_on(data, s));
            self.run_on(Pass::Adjoint, &coeffs, &mut data, &[], scratch, quiet)
        })
    }

    /// The staging of host arrays on the stage's stream, the stage's context bound.
    pub(super) fn stager(&self) -> Result<Stager<'_>> {
        let (gpu, cpu) = self.backends();
        bind(&gpu.ctx)?;
        Ok(Stager {
            gpu,
            cpu,
            stream: &self.stream,
        })
    }

    /// Runs a call on device arrays of `sizes` (data and coefficient reals, checked):
    /// `body` gets the stage's stream, its scratch (held) and a reporter that reports
    /// nothing, with the stage's context bound.
    pub(super) fn device_call(
        &self,
        (data, coeffs): (usize, usize),
        body: impl FnOnce(&Arc<CudaStream>, &mut Scratch<T>, &mut Reporter) -> Result<()>,
    ) -> Result<()> {
        self.check_device(data, coeffs)?;
        bind(self.stream.context())?;
        let mut bufs = self.lock();
        self.held.scope("a wave-packet device call", || {
            body(&self.stream, &mut bufs.scratch, &mut Reporter::new(None))
        })
    }

    pub(super) fn check_device(&self, data: usize, coeffs: usize) -> Result<()> {
        let (n, m) = (self.layout.n_samples(), 2 * self.layout.n_coefficients);
        if data < n || coeffs < m {
            return Err(crate::invalid!(
                "device buffers hold {data} and {coeffs} reals; the layout needs {n} (data) and {m} (coefficients)"
            ));
        }
        Ok(())
    }

    /// The device arrays of a host-to-host call (made on first use) and its scratch.
    fn host_arrays<'a>(&self, bufs: &'a mut Buffers<T>) -> Result<HostCall<'a, T>> {
        let n = self.layout.n_samples();
        let data = ensure(
            &mut bufs.data,
            n,
            &self.stream,
            "allocating wave-packet data",
        )?;
        Ok(HostCall {
            data,
            scratch: &mut bufs.scratch,
        })
    }

    /// C (`data` n reals → `coeffs` 2·m reals) or C* (`coeffs` → `data`, the real part),
    /// `input` → `output` on the device with each box's grid shifted by `shifts[box]`
    /// steps (uploaded here; none for an empty `shifts`), queued on the stream.
    pub(super) fn run_on(
        &self,
        pass: Pass,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
        shifts: &[[f64; 3]],
        scratch: &mut Scratch<T>,
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.shifted(shifts, scratch, |shifts, scratch| {
            self.pass_on(pass, input, output, shifts, scratch, reporter)
        })
    }

    /// Runs `body` with one call's grid shifts on the device (`shifts`: one per box, or
    /// none: then None), kept in the scratch after it (its queued kernels read them).
    fn shifted<R>(
        &self,
        shifts: &[[f64; 3]],
        scratch: &mut Scratch<T>,
        body: impl FnOnce(Option<&Shifts<'_, T>>, &mut Scratch<T>) -> Result<R>,
    ) -> Result<R> {
        let uploaded = self.upload_shifts(shifts)?;
        let tables = uploaded.as_ref().map(whole_shifts);
        let done = body(tables.as_ref(), scratch);
        if uploaded.is_some() {
            scratch.shifts = uploaded;
        }
        done
    }

    /// `run_on` with the shift tables already on the device (`tiled`; None: unshifted):
    /// nothing uploaded. C: the data's lattice values, gathered into the boxes (window,
    /// grid shift), the boxes' FFTs phased into the coefficients; C* the transpose, step by
    /// step in reverse.
    pub(super) fn pass_on(
        &self,
        pass: Pass,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<T>,
        shifts: Option<&Shifts<'_, T>>,
        scratch: &mut Scratch<T>,
        reporter: &mut Reporter,
    ) -> Result<()> {
        match pass {
            Pass::Forward => {
                self.data_to_boxes(input, shifts, scratch, reporter)?;
                self.phase("wp_to_coefficients", &scratch.work, output)?;
                self.report(reporter, "wave-packet boxes", 1.0 - USFFT_SHARE)
            }
            Pass::Adjoint => {
                self.phase("wp_from_coefficients", input, &mut scratch.work)?;
                self.boxes_to_data(output, shifts, scratch, reporter)
            }
        }
    }

    /// C up to the box phases: the data's spectrum at the lattice points (type-2 USFFT),
    /// gathered into the boxes (window, grid shift) and their FFTs, in the work array.
    fn data_to_boxes(
        &self,
        input: &impl DeviceArray<T>,
        shifts: Option<&Shifts<'_, T>>,
        scratch: &mut Scratch<T>,
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.modes("wp_complex_from_real", input, &mut scratch.modes)?;
        self.lattice_values(Way::Transform, scratch, shifts)?;
        self.report(reporter, "wave-packet spectrum", USFFT_SHARE)?;
        // The coefficients' exponent is +2πi (the inverse direction).
        self.box_ffts(scratch, Direction::Inverse)
    }

    /// C* from the box phases on: the work array's FFTs, scattered onto the lattice values,
    /// to the data (the USFFT's adjoint, real part) in `output`.
    fn boxes_to_data(
        &self,
        output: &mut impl DeviceArrayMut<T>,
        shifts: Option<&Shifts<'_, T>>,
        scratch: &mut Scratch<T>,
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.box_ffts(scratch, Direction::Forward)?;
        self.lattice_values(Way::Adjoint, scratch, shifts)?;
        self.report(reporter, "wave-packet boxes", 1.0 - USFFT_SHARE)?;
        self.modes("wp_real_part", &scratch.modes, output)?;
        self.report(reporter, "wave-packet spectrum", USFFT_SHARE)
    }

    /// Between the modes and the work array through the lattice values, one group of
    /// directions at a time: the type-2 USFFT, each group's values gathered into its boxes
    /// (`Way::Transform`), or its adjoint (type 1, sign +1, on the same plan and stream),
    /// each group's values scattered from its boxes, then spread (`Way::Adjoint`).
    fn lattice_values(
        &self,
        way: Way,
        scratch: &mut Scratch<T>,
        shifts: Option<&Shifts<'_, T>>,
    ) -> Result<()> {
        let Scratch {
            work,
            values,
            modes,
            ..
        } = scratch;
        self.usfft
            .execute_in_groups(way, values, modes, |g, values| {
                let group = &self.directions[g];
                match way {
                    Way::Transform => self.gather(group, values, work, shifts),
                    Way::Adjoint => self.scatter(group, work, values, shifts),
                }
            })
    }

    /// One call's grid shifts (`shifts`: one per box, or none) on the device (where, the
    /// factors); None for a call without shifts (its kernels get NULL tables).
    fn upload_shifts(&self, shifts: &[[f64; 3]]) -> Result<Option<(DeviceBuf<i64>, DeviceBuf<T>)>> {
        let Some((at, factors)) = shift_factors::<T>(&self.layout, &self.order, shifts) else {
            return Ok(None);
        };
        let s = &self.stream;
        let what = "uploading wave-packet grid shifts";
        let tables = (upload(s, &at, what)?, upload(s, &factors, what)?);
        // The host tables must outlive the copies.
        s.synchronize().map_err(driver_error(what))?;
        Ok(Some(tables))
    }
}
