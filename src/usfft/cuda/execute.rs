//! One transform on the plan's stream. Type 1: spread, FFT the fine grids, deconvolve into
//! the modes. Type 2: deconvolve the modes into the fine grids, FFT, interpolate. cuFFT runs
//! the batch's vectors as one plan; the kernels loop over them.

use super::plan::{ensure, DevicePoints, FineGrid, Work};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{complex_mut, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{as_reals, as_reals_mut, fill_zero};
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::checks::Rows;
use crate::backend::cuda::fft::Direction;
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::replay::run_or_replay;
use crate::backend::cuda::staging::{download_staged, upload_staged};
use crate::backend::cuda::tracked::write_on;
use crate::backend::cuda::{bind, driver_error, CudaBackend};
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::spec::TransformType;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use num_complex::Complex;

/// Events recorded on the plan's stream between an execute's parts (for benchmarks).
struct Marks<'a> {
    events: Option<&'a [CudaEvent; 4]>,
    stream: &'a CudaStream,
}

impl Marks<'_> {
    fn at(&self, i: usize) -> Result<()> {
        match self.events {
            Some(e) => e[i]
                .record(self.stream)
                .map_err(driver_error("recording an event")),
            None => Ok(()),
        }
    }
}

/// A type-3 plan's spreading stage is driven by `usfft::cuda::type3`, never executed alone.
fn type3_elsewhere() -> crate::error::Error {
    crate::error::Error::Internal("a type-3 plan executes through its own stages".into())
}

impl<T: Real> DevicePoints<T> {
    /// Host-to-host execute: uploads the input, runs, downloads the output, waits. The
    /// caller's arrays move through page-locked pieces filled and emptied by the context's
    /// CPU pool (`staging::upload_staged`), at the link's rate rather than one core's copy
    /// rate. With a progress callback the device work is waited for and reported before the
    /// download, so that a stop there writes nothing (the one cancellation point: one whole
    /// transform).
    pub fn execute(
        &self,
        gpu: &CudaBackend,
        cpu: &CpuBackend,
        c: &mut [Complex<T>],
        f: &mut [Complex<T>],
        reporter: &mut Reporter,
    ) -> Result<()> {
        bind(&gpu.ctx)?;
        let s = &self.stream;
        let (nc, nm) = self.reals();
        let mut work = self.work.lock().unwrap();
        let Work { grid, c: cd, f: fd } = &mut *work;
        let (cd, fd) = (ensure(cd, nc, s)?, ensure(fd, nm, s)?);
        let stage = |dst: &mut DeviceBuf<T>, src: &[T]| {
            upload_staged(&gpu.ctx, &gpu.staging, cpu, s, dst, src)
        };
        match self.spec.kind {
            TransformType::Type1 => stage(cd, &as_reals(c)[..nc])?,
            TransformType::Type2 => stage(fd, &as_reals(f)[..nm])?,
            TransformType::Type3 => return Err(type3_elsewhere()),
        }
        self.enqueue(cd, fd, grid, None)?;
        if reporter.is_active() {
            reporter.stage("usfft", 1.0, 1);
            s.synchronize().map_err(driver_error("running the USFFT"))?;
            reporter.advance(1)?;
        }
        let (output, output_dev) = match self.spec.kind {
            TransformType::Type1 | TransformType::Type3 => (&mut as_reals_mut(f)[..nm], fd),
            TransformType::Type2 => (&mut as_reals_mut(c)[..nc], cd),
        };
        download_staged(&gpu.ctx, &gpu.staging, cpu, s, output_dev, output)
    }

    /// Device-resident execute, queued on the plan's stream (`stream()`) without waiting:
    /// `c` holds 2·n_vectors·M reals (interleaved complex strengths, vector v at 2·v·M), `f`
    /// 2·n_vectors·N1N2N3 reals. Type 1 reads c and writes f; type 2 reads f and writes c.
    ///
    /// `events`, if given, are recorded at the start, after spreading (type 1) or the copy
    /// into the fine grid (type 2), after the FFT, and at the end (for benchmarks).
    pub fn execute_device(
        &self,
        gpu: &CudaBackend,
        c: &mut CudaSlice<T>,
        f: &mut CudaSlice<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        self.check_reals(c.len(), f.len(), "buffers")?;
        bind(&gpu.ctx)?;
        let s = &self.stream;
        let (mut c, mut f) = (write_on(c, s), write_on(f, s));
        let mut work = self.work.lock().unwrap();
        self.enqueue(&mut c, &mut f, &mut work.grid, events)
    }

    /// `execute_device` on arrays the caller allocated, ordered on the context's caller
    /// stream (the plan's stream waits for it, and it for the plan's): nothing waits on the
    /// host.
    pub fn execute_arrays(
        &self,
        gpu: &CudaBackend,
        c: &mut impl DeviceArrayMut<T>,
        f: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let (nc, nm) = self.check_reals(c.len(), f.len(), "arrays")?;
        bind(&gpu.ctx)?;
        let caller = gpu.caller_stream();
        match self.spec.kind {
            TransformType::Type1 => gpu.check_finite(&caller, c, Rows::contiguous(nc), || {
                "a device USFFT's strengths".into()
            })?,
            TransformType::Type2 => gpu.check_finite(&caller, f, Rows::contiguous(nm), || {
                "a device USFFT's modes".into()
            })?,
            TransformType::Type3 => return Err(type3_elsewhere()),
        }
        let mut work = self.work.lock().unwrap();
        let grid = &mut work.grid;
        let mut calls = std::mem::take(&mut grid.calls);
        let key = [c.addr(), f.addr(), grid.cells.addr()];
        let done = ordered_on(&caller, &self.stream, || {
            calls.run(&self.stream, key, || self.enqueue(c, f, grid, None))
        });
        grid.calls = calls;
        done
    }

    /// Reals of the strengths and of the modes, over the batch.
    fn reals(&self) -> (usize, usize) {
        let nv = self.spec.n_vectors;
        (2 * nv * self.m, 2 * nv * self.spec.mode_count())
    }

    /// The reals of the strengths and of the modes, after checking that device `arrays` of
    /// `c_len` and `f_len` reals hold them.
    fn check_reals(&self, c_len: usize, f_len: usize, arrays: &str) -> Result<(usize, usize)> {
        let (nc, nm) = self.reals();
        if c_len < nc || f_len < nm {
            return Err(crate::invalid!(
                "device {arrays} hold {c_len} and {f_len} reals; the plan needs {nc} (strengths) and {nm} (modes)"
            ));
        }
        Ok((nc, nm))
    }

    /// Queues one execute: `c` (2·n_vectors·M reals) and `f` (2·n_vectors·N1N2N3 reals);
    /// `grid` the fine grids.
    pub(super) fn enqueue(
        &self,
        c: &mut impl DeviceArrayMut<T>,
        f: &mut impl DeviceArrayMut<T>,
        grid: &mut FineGrid<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        let mark = Marks {
            events,
            stream: &self.stream,
        };
        mark.at(0)?;
        fill_zero(
            &self.stream,
            &mut grid.cells,
            "clearing the USFFT fine grid",
        )?;
        match self.spec.kind {
            TransformType::Type1 => {
                if self.m > 0 {
                    self.spread(c, &mut grid.cells)?;
                }
                mark.at(1)?;
                self.fft(grid)?;
                mark.at(2)?;
                self.deconvolve(f, &mut grid.cells, true)?;
            }
            TransformType::Type3 => return Err(type3_elsewhere()),
            TransformType::Type2 => {
                self.deconvolve(f, &mut grid.cells, false)?;
                mark.at(1)?;
                self.fft(grid)?;
                mark.at(2)?;
                if self.m > 0 {
                    self.interp(&grid.cells, c)?;
                }
            }
        }
        mark.at(3)
    }

    /// Between the modes `f` and the fine grids: modes = grid / ψ̂ (`to_modes`, type 1) or
    /// grid = modes / ψ̂ at the modes' cells (type 2, the grid zeroed before).
    fn deconvolve(
        &self,
        f: &mut impl DeviceArrayMut<T>,
        grid: &mut DeviceBuf<T>,
        to_modes: bool,
    ) -> Result<()> {
        let spec = &self.spec;
        let total = spec.mode_count() * spec.n_vectors;
        let cfg = for_elems(total);
        let mut l = Launch::new(&self.module, &self.stream, "usfft_deconvolve", cfg)?;
        l.output(f).output(grid);
        for a in &self.tables.fine_index {
            l.input(a);
        }
        for a in &self.tables.deconv {
            l.input(a);
        }
        let [n1, n2, n3] = spec.modes.map(|n| n as i32);
        let [nf1, nf2, nf3] = spec.fine.map(|n| n as i32);
        l.scalar(n1).scalar(n2).scalar(n3);
        l.scalar(nf1).scalar(nf2).scalar(nf3);
        l.scalar(spec.n_vectors as i32).scalar(to_modes as i32);
        // SAFETY: usfft_deconvolve(REAL* modes, REAL* grid, const int* fi1..fi3, const REAL*
        // q1..q3, int n1..n3, int nf1..nf3, int nvec, int to_modes): thread idx < N·nvec
        // (the others return) reads or writes modes[2·idx..+2] (f holds 2·nvec·N reals:
        // checked by the callers) and the grid cell of its mode (fine_index < nf per
        // dimension; grid holds 2·nvec·nf1·nf2·nf3), the tables at its mode indices (< n_d).
        unsafe { l.run() }
    }

    /// The batch of fine-grid FFTs in place; cuFFT's forward direction is e^{−i…}, so the
    /// plan's sign picks the direction.
    fn fft(&self, grid: &mut FineGrid<T>) -> Result<()> {
        let direction = match self.spec.sign {
            -1 => Direction::Forward,
            _ => Direction::Inverse,
        };
        let FineGrid {
            cells, fft_replay, ..
        } = grid;
        let key = cells.addr();
        let plan = self.fft.as_ref().ok_or_else(type3_elsewhere)?;
        run_or_replay(fft_replay, &self.stream, key, || {
            plan.exec_c2c_in_place::<T>(&mut complex_mut(cells), direction)
        })
    }
}
