//! Type 3 on the GPU, from the type 1 and 2 stages: the strengths are pre-phased in place
//! (usfft_phase), spread onto the type-3 grid by the spreading stage (a `DevicePoints` of
//! kind Type3: no FFT of its own), the grid is the modes of the inner type 2 (a
//! `DevicePoints` of kind Type2 on the same stream), whose values take the post-factor
//! (usfft_phase again). Points and frequencies are uploaded as given and placed on the
//! device in f64 (the geometry's frames), then sorted there as types 1 and 2 sort theirs.

use super::plan::{ensure, DevicePoints};
use super::points::{as_coords, upload_coords};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::DeviceArrayMut;
use crate::backend::cuda::buffers::{alloc, as_reals, as_reals_mut, fill_zero, upload};
use crate::backend::cuda::launch::{for_elems, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::{download_staged, upload_staged};
use crate::backend::cuda::{bind, driver_error, CudaBackend};
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::kernel::SpreadKernel;
use crate::usfft::spec::UsfftSpec;
use crate::usfft::type3::{Geometry, Setup, Type3Points};
use cudarc::driver::{CudaModule, CudaStream};
use num_complex::Complex;
use std::sync::Arc;
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

/// Sizes the grid from the spans on the host, then uploads the points and frequencies as
/// given; on the device they are placed in the grid's frames and sorted, and the phase
/// factors computed from them, all in f64. Refusals come before any device allocation.
pub fn set_points3<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    p: &Type3Points<'_, T>,
) -> Result<DeviceType3<T>> {
    let setup: Setup<T> = cpu.install(|| Setup::sized(spec, p))?;
    let g = &setup.geometry;
    bind(&gpu.ctx)?;
    let stream = gpu.stream()?;
    let mut spread = DevicePoints::new_on(gpu, &setup.grid, stream.clone())?;
    let mut inner = DevicePoints::new_on(gpu, &setup.inner, stream.clone())?;
    let x = upload_coords(gpu, cpu, &stream, p.x, spec.dim, p.m)?;
    let s = upload_coords(gpu, cpu, &stream, p.s, spec.dim, p.n)?;
    spread.sort(gpu, as_coords(&x), p.m, &g.point_frame())?;
    inner.sort(gpu, as_coords(&s), p.n, &g.frequency_frame())?;
    let factors = Factors {
        module: &spread.module,
        stream: &stream,
        geometry: g,
        sign: spec.sign,
    };
    let pre = factors.pre(&x, p.m)?;
    let post = factors.post(&s, p.n, &spec.kernel)?;
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

/// The phase factors from the device coordinates (usfft_type3_pre and _post).
struct Factors<'a> {
    module: &'a Arc<CudaModule>,
    stream: &'a Arc<CudaStream>,
    geometry: &'a Geometry,
    sign: i32,
}

impl Factors<'_> {
    /// e^{i·sign·D·(x_j − C)} per point: 2·m reals.
    fn pre<T: Real>(&self, x: &[DeviceBuf<T>], m: usize) -> Result<DeviceBuf<T>> {
        let mut pre = alloc(self.stream, 2 * m.max(1), "allocating the type-3 pre-phase")?;
        if m == 0 {
            return Ok(pre);
        }
        let mut l = Launch::new(self.module, self.stream, "usfft_type3_pre", for_elems(m))?;
        push_coords(&mut l, x).scalar(m as i64).scalar(self.sign);
        let g = self.geometry;
        for d in 0..3 {
            l.scalar(g.centre_x[d]).scalar(g.centre_s[d]);
        }
        l.output(&mut pre);
        // SAFETY: usfft_type3_pre(const REAL* x, y, z, long long m, int sign, double cx1,
        // cs1, cx2, cs2, cx3, cs3, REAL* pre): thread j < m reads coordinate j of the used
        // dimensions (uploaded, m each; the others are NULL and not read) and writes
        // pre[2j..2j+2] (2m).
        unsafe { l.run() }?;
        Ok(pre)
    }

    /// e^{i·sign·s_k·C} / Π_d ψ̂((s_k − D)_d·h_d) per frequency: 2·n reals.
    fn post<T: Real>(
        &self,
        s: &[DeviceBuf<T>],
        n: usize,
        kernel: &SpreadKernel,
    ) -> Result<DeviceBuf<T>> {
        let mut post = alloc(
            self.stream,
            2 * n.max(1),
            "allocating the type-3 post-factor",
        )?;
        if n == 0 {
            return Ok(post);
        }
        let g = self.geometry;
        let series = kernel.transform().series(g.kappa_max);
        let coef = upload(self.stream, series.coef(), "uploading ψ̂'s series")?;
        let mut l = Launch::new(self.module, self.stream, "usfft_type3_post", for_elems(n))?;
        push_coords(&mut l, s).scalar(n as i64).scalar(self.sign);
        for d in 0..3 {
            l.scalar(g.centre_x[d])
                .scalar(g.centre_s[d])
                .scalar(g.cell[d]);
        }
        l.input(&coef)
            .scalar(series.coef().len() as i32)
            .scalar(series.inv_kappa_max());
        l.output(&mut post);
        // SAFETY: usfft_type3_post(const REAL* s, t, u, long long n, int sign, double cx1,
        // cs1, h1 … cx3, cs3, h3, const double* coef, int terms, double inv_kappa_max, REAL*
        // post): thread k < n reads frequency k of the used dimensions (uploaded, n each;
        // the others NULL, not read), coef[0..terms) (uploaded whole) and writes
        // post[2k..2k+2] (2n).
        unsafe { l.run() }?;
        Ok(post)
    }
}

/// Pushes `const REAL* x, y, z`: the uploaded arrays, NULL for unused dimensions.
fn push_coords<'l, 's, T: Real>(l: &'l mut Launch<'s>, c: &[DeviceBuf<T>]) -> &'l mut Launch<'s> {
    for d in 0..3 {
        l.optional(c.get(d));
    }
    l
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
            self.spread.spread(&self.spread.set, c, grid)?;
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
