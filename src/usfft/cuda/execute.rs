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

/// What an execute computes on a plan's points: the plan's own transform, or its adjoint
/// (type 1 ↔ type 2 with the opposite sign, on the same sorted points, fine grid and FFT
/// plan: a type-2 plan and its adjoint need one plan's memory, not two).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Way {
    Transform = 0,
    Adjoint = 1,
}

impl Way {
    /// The type this way runs on a plan of `kind` (types 1 and 2).
    fn kind(self, kind: TransformType) -> TransformType {
        match (self, kind) {
            (Way::Adjoint, TransformType::Type1) => TransformType::Type2,
            (Way::Adjoint, TransformType::Type2) => TransformType::Type1,
            (_, kind) => kind,
        }
    }
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
    /// `way`: the plan's transform, or its adjoint (type 1 reading c and writing f for a
    /// type-2 plan). `events`, if given, are recorded at the start, after spreading (type 1)
    /// or the copy into the fine grid (type 2), after the FFT, and at the end (for
    /// benchmarks).
    pub fn execute_device(
        &self,
        gpu: &CudaBackend,
        way: Way,
        c: &mut CudaSlice<T>,
        f: &mut CudaSlice<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        self.check_reals(c.len(), f.len(), "buffers")?;
        bind(&gpu.ctx)?;
        let s = &self.stream;
        let (mut c, mut f) = (write_on(c, s), write_on(f, s));
        let mut work = self.work.lock().unwrap();
        self.enqueue_way(way, &mut c, &mut f, &mut work.grid, events)
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

    /// Device-resident execute over the points set in groups (`set_lattice_groups`), one
    /// group at a time on the plan's fine grid, queued on the plan's stream: `c` holds one
    /// group's values (2·n_vectors·m reals of the largest group), `f` the modes. The type-2
    /// transform makes the grid from `f` once, then for each group interpolates its values
    /// into `c` and calls `body(g, c)`; the type-1 transform (a type-2 plan's adjoint) calls
    /// `body(g, c)` for each group to fill `c`, spreads it, then makes `f` from the grid.
    /// `body` queues its work on the plan's stream (`stream()`).
    pub fn execute_in_groups<C: DeviceArrayMut<T>>(
        &self,
        gpu: &CudaBackend,
        way: Way,
        c: &mut C,
        f: &mut impl DeviceArrayMut<T>,
        body: &mut dyn FnMut(usize, &mut C) -> Result<()>,
    ) -> Result<()> {
        let nv = self.spec.n_vectors;
        let most = self.groups.iter().map(|g| g.m).max().unwrap_or(0);
        let (nc, nm) = (2 * nv * most, 2 * nv * self.spec.mode_count());
        if c.len() < nc || f.len() < nm {
            return Err(crate::invalid!(
                "device arrays hold {} and {} reals; the plan's groups need {nc} (values) and {nm} (modes)",
                c.len(),
                f.len()
            ));
        }
        bind(&gpu.ctx)?;
        let mut work = self.work.lock().unwrap();
        let grid = &mut work.grid;
        let clearing = "clearing the USFFT fine grid";
        fill_zero(&self.stream, &mut grid.cells, clearing)?;
        match way.kind(self.spec.kind) {
            TransformType::Type2 => {
                self.deconvolve(f, &mut grid.cells, false)?;
                self.fft(grid, way)?;
                for (g, set) in self.groups.iter().enumerate() {
                    if set.m > 0 {
                        self.interp(set, &grid.cells, c)?;
                    }
                    body(g, c)?;
                }
                Ok(())
            }
            TransformType::Type1 => {
                for (g, set) in self.groups.iter().enumerate() {
                    body(g, c)?;
                    if set.m > 0 {
                        self.spread(set, c, &mut grid.cells)?;
                    }
                }
                self.fft(grid, way)?;
                self.deconvolve(f, &mut grid.cells, true)
            }
            TransformType::Type3 => Err(type3_elsewhere()),
        }
    }

    /// The points' count in each group (`set_lattice_groups`; empty where none were set so).
    pub fn group_counts(&self) -> Vec<usize> {
        self.groups.iter().map(|g| g.m).collect()
    }

    /// Reals of the strengths and of the modes, over the batch.
    fn reals(&self) -> (usize, usize) {
        let nv = self.spec.n_vectors;
        (2 * nv * self.set.m, 2 * nv * self.spec.mode_count())
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
        self.enqueue_way(Way::Transform, c, f, grid, events)
    }

    /// `enqueue` of the plan's transform or of its adjoint (`Way`).
    fn enqueue_way(
        &self,
        way: Way,
        c: &mut impl DeviceArrayMut<T>,
        f: &mut impl DeviceArrayMut<T>,
        grid: &mut FineGrid<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        if !self.groups.is_empty() {
            return Err(crate::invalid!(
                "the plan's points are set in groups: execute them with execute_in_groups"
            ));
        }
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
        match way.kind(self.spec.kind) {
            TransformType::Type1 => {
                if self.set.m > 0 {
                    self.spread(&self.set, c, &mut grid.cells)?;
                }
                mark.at(1)?;
                self.fft(grid, way)?;
                mark.at(2)?;
                self.deconvolve(f, &mut grid.cells, true)?;
            }
            TransformType::Type3 => return Err(type3_elsewhere()),
            TransformType::Type2 => {
                self.deconvolve(f, &mut grid.cells, false)?;
                mark.at(1)?;
                self.fft(grid, way)?;
                mark.at(2)?;
                if self.set.m > 0 {
                    self.interp(&self.set, &grid.cells, c)?;
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
    /// sign picks the direction (the plan's, or the opposite one for its adjoint). Each
    /// direction has its own captured graph.
    fn fft(&self, grid: &mut FineGrid<T>, way: Way) -> Result<()> {
        let sign = match way {
            Way::Transform => self.spec.sign,
            Way::Adjoint => -self.spec.sign,
        };
        let direction = match sign {
            -1 => Direction::Forward,
            _ => Direction::Inverse,
        };
        let FineGrid {
            cells, fft_replay, ..
        } = grid;
        let key = cells.addr();
        let plan = self.fft.as_ref().ok_or_else(type3_elsewhere)?;
        run_or_replay(&mut fft_replay[way as usize], &self.stream, key, || {
            plan.exec_c2c_in_place::<T>(&mut complex_mut(cells), direction)
        })
    }
}
