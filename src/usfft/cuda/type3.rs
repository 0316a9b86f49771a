//! Type 3 on the GPU, from the type 1 and 2 stages: the strengths are pre-phased in place
//! (usfft_phase), spread onto the type-3 grid by the spreading stage (a `DevicePoints` of
//! kind Type3: no FFT of its own), the grid is the modes of the inner type 2 (a
//! `DevicePoints` of kind Type2 on the same stream), whose values take the post-factor
//! (usfft_phase again). Points and frequencies are placed and sorted on the host from f64.

use super::plan::{ensure, DevicePoints};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::DeviceArrayMut;
use crate::backend::cuda::buffers::{as_reals, as_reals_mut, fill_zero, upload};
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::{download_staged, upload_staged};
use crate::backend::cuda::{bind, driver_error, CudaBackend};
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::spec::UsfftSpec;
use crate::usfft::type3::cpu::refs;
use crate::usfft::type3::{Setup, Type3Points};
use num_complex::Complex;
use std::sync::Mutex;

/// A type-3 plan's device state: its two stages (one stream), the phase factors (2·M and
/// 2·N reals) and the work buffers of a host execute.
pub struct DeviceType3<T: Real> {
    spread: DevicePoints<T>,
    inner: DevicePoints<T>,
    pre: DeviceBuf<T>,
    post: DeviceBuf<T>,
    m: usize,
    n: usize,
    work: Mutex<Work<T>>,
}

/// A host execute's device copies, one execute at a time: the strengths (2·n_vectors·M
/// reals) and the values (2·n_vectors·N), made on first use.
struct Work<T> {
    c: Option<DeviceBuf<T>>,
    f: Option<DeviceBuf<T>>,
}

/// Sizes the grid from the spans, sorts the points and frequencies on the host and uploads
/// them with the phase factors. Refusals come before any device allocation.
pub fn set_points3<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    p: &Type3Points<'_, T>,
) -> Result<DeviceType3<T>> {
    let setup: Setup<T> = cpu.install(|| Setup::new(spec, p))?;
    let g = &setup.geometry;
    let (xs, ts) = cpu.install(|| {
        Ok::<_, crate::error::Error>((g.grid_points(p.x, p.m)?, g.grid_frequencies(p.s, p.n)?))
    })?;
    bind(&gpu.ctx)?;
    let stream = gpu.stream()?;
    let mut spread = DevicePoints::new_on(gpu, &setup.grid, stream.clone())?;
    let mut inner = DevicePoints::new_on(gpu, &setup.inner, stream.clone())?;
    spread.set_sorted_from_host(gpu, cpu, refs(&xs), p.m)?;
    inner.set_sorted_from_host(gpu, cpu, refs(&ts), p.n)?;
    let what = "uploading the type-3 phase factors";
    let pre = upload(&stream, as_reals(&setup.pre), what)?;
    let post = upload(&stream, as_reals(&setup.post), what)?;
    Ok(DeviceType3 {
        spread,
        inner,
        pre,
        post,
        m: p.m,
        n: p.n,
        work: Mutex::new(Work { c: None, f: None }),
    })
}

impl<T: Real> DeviceType3<T> {
    pub fn n(&self) -> usize {
        self.n
    }

    /// Host-to-host execute: uploads `c` (n_vectors × M), runs the stages, downloads `f`
    /// (n_vectors × N), waits. With a progress callback the device work is waited for and
    /// reported before the download, so that a stop there writes nothing.
    pub fn execute(
        &self,
        gpu: &CudaBackend,
        cpu: &CpuBackend,
        c: &[Complex<T>],
        f: &mut [Complex<T>],
        reporter: &mut Reporter,
    ) -> Result<()> {
        bind(&gpu.ctx)?;
        let s = &self.spread.stream;
        let nv = self.spread.spec.n_vectors;
        let (nc, nf) = (2 * nv * self.m, 2 * nv * self.n);
        let mut work = self.work.lock().unwrap();
        let Work { c: cd, f: fd } = &mut *work;
        let (cd, fd) = (ensure(cd, nc, s)?, ensure(fd, nf, s)?);
        upload_staged(&gpu.ctx, &gpu.staging, cpu, s, cd, &as_reals(c)[..nc])?;
        self.enqueue(cd, fd)?;
        if reporter.is_active() {
            reporter.stage("usfft", 1.0, 1);
            s.synchronize().map_err(driver_error("running the USFFT"))?;
            reporter.advance(1)?;
        }
        let out = &mut as_reals_mut(f)[..nf];
        download_staged(&gpu.ctx, &gpu.staging, cpu, s, fd, out)
    }

    /// Queues the stages: `c` (2·n_vectors·M reals, pre-phased in place) to `f`
    /// (2·n_vectors·N reals).
    fn enqueue(&self, c: &mut DeviceBuf<T>, f: &mut DeviceBuf<T>) -> Result<()> {
        let s = &self.spread.stream;
        let mut spread_work = self.spread.work.lock().unwrap();
        let grid = &mut spread_work.grid.cells;
        fill_zero(s, grid, "clearing the type-3 grid")?;
        if self.m > 0 {
            self.phase(c, &self.pre, self.m)?;
            self.spread.spread(c, grid)?;
        }
        let mut inner_work = self.inner.work.lock().unwrap();
        self.inner.enqueue(f, grid, &mut inner_work.grid, None)?;
        if self.n > 0 {
            self.phase(f, &self.post, self.n)?;
        }
        Ok(())
    }

    /// a[v·n + j] *= factor[j] over the batch, in place.
    fn phase(&self, a: &mut impl DeviceArrayMut<T>, factor: &DeviceBuf<T>, n: usize) -> Result<()> {
        let nv = self.spread.spec.n_vectors;
        let s = &self.spread.stream;
        let mut l = Launch::new(&self.spread.module, s, "usfft_phase", for_elems(nv * n))?;
        l.output(a).input(factor).scalar(n as i64).scalar(nv as i32);
        // SAFETY: usfft_phase(REAL* a, const REAL* factor, long long n, int nvec): thread
        // idx < n·nvec (the others return) reads and writes a[2·idx..+2] (a holds
        // 2·nvec·n reals: the execute's buffers are sized so) and reads factor[2·(idx mod
        // n)..+2] (factor holds 2·n reals: uploaded at set-points for these n).
        unsafe { l.run() }
    }
}
