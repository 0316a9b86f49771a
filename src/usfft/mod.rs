//! USFFT: non-uniform FFTs between a regular grid of Fourier modes and irregular points,
//! in the FINUFFT conventions, 1D/2D/3D, f32/f64, on the CPU and the GPU.
//!
//! - Type 1 ("u2e", irregular → regular): f_k = Σ_j c_j e^{i·sign·k·x_j} for every mode k.
//! - Type 2 ("e2u", regular → irregular): c_j = Σ_k f_k e^{i·sign·k·x_j} for every point j.
//! - Type 3 (irregular → irregular): f_k = Σ_j c_j e^{i·sign·s_k·x_j} for M points x_j and N
//!   frequencies s_k, both any finite reals (`set_points3`; see `type3`).
//!
//! k·x is k1·x_j + k2·y_j + k3·z_j. Coordinates are radians, periodic with period 2π
//! (points are expected in [−π, π) but any finite value works); the seed's x ∈ [−½, ½) with
//! e^{−2πixn} is x·2π with sign −1. Modes k_d run over −N_d/2 … (N_d−1)/2 (integer
//! division), stored centred (k = −N/2 first, the default) or in FFT order (0, 1, …, then the
//! negative ones); dimension 1 is the fastest. Nothing is normalised.
//!
//! The algorithm: spread each point with a compact kernel onto a fine grid σ = 2 times
//! larger, FFT the fine grid, divide by the kernel's Fourier transform (type 1); type 2
//! runs the same steps in reverse order. Points are folded and sorted by fine-grid bin once,
//! in `set_points`, and reused by every execute and every vector of a batch.

pub mod cpu;
pub mod cuda;
pub mod grid;
pub mod kernel;
#[cfg(test)]
mod kernel_scan;
pub mod lattice;
pub mod points;
pub mod prolate;
pub mod spec;
pub mod type3;

use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::memory::Tally;
use crate::backend::cuda::tracked::read_on;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
pub use kernel::{KernelShape, SpreadKernel};
use num_complex::Complex;
pub use spec::{frequency, ModeOrder, TransformType, UsfftOptions, UsfftSpec};
use std::sync::Arc;

/// Where a plan's sorted points live.
enum PointsState<T: Real> {
    None,
    Host(Box<cpu::HostPoints<T>>),
    Device(Box<cuda::DevicePoints<T>>),
    /// A type-3 plan's points and frequencies.
    Type3Host(Box<type3::cpu::HostType3<T>>),
    Type3Device(Box<cuda::DeviceType3<T>>),
}

/// A non-uniform FFT of one type, size and precision on one context. `set_points` (which
/// needs `&mut`) then any number of `execute` calls, from any number of threads.
pub struct UsfftPlan<T: Real> {
    ctx: Arc<Context>,
    spec: UsfftSpec,
    points: PointsState<T>,
    /// The device state made at creation, until the first points are set.
    prepared: Option<Box<cuda::DevicePoints<T>>>,
    m: usize,
    /// Device bytes the plan holds.
    held: Arc<Tally>,
}

impl<T: Real> UsfftPlan<T> {
    /// A plan on `ctx` for `spec` (`UsfftSpec::new::<T>`); its tolerance is checked again
    /// against this precision, in case the spec was made for another.
    pub fn new(ctx: Arc<Context>, spec: UsfftSpec) -> Result<UsfftPlan<T>> {
        spec::check_tolerance(spec.tolerance, T::epsilon().to_f64().unwrap())?;
        let kind = spec.kind;
        let held = Arc::<Tally>::default();
        // A type-3 plan's device state depends on its points: made at set_points3.
        let prepared = match ctx.cuda() {
            Some(_) if kind == TransformType::Type3 => None,
            Some(gpu) => {
                Some(held.scope("creating the USFFT plan", || cuda::prepare::<T>(gpu, &spec))?)
            }
            None => None,
        };
        Ok(UsfftPlan {
            ctx,
            spec,
            points: PointsState::None,
            prepared,
            m: 0,
            held,
        })
    }

    pub fn spec(&self) -> &UsfftSpec {
        &self.spec
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Device bytes the plan holds (0 on a CPU context): the state made at creation, the
    /// point buffers sized by the largest `set_points`, the staging buffers of host
    /// executes.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    /// Points set by the last `set_points` (0 before).
    pub fn n_points(&self) -> usize {
        self.m
    }

    /// Complex values of one output vector of type 3 (its frequencies N, 0 before
    /// `set_points3`), or of one mode vector (N1·N2·N3) of types 1 and 2.
    pub fn n_modes_or_targets(&self) -> usize {
        match &self.points {
            PointsState::Type3Host(p) => p.n(),
            PointsState::Type3Device(p) => p.n(),
            _ if self.spec.kind == TransformType::Type3 => 0,
            _ => self.spec.mode_count(),
        }
    }

    /// Type 3: sets `m` points (x, and y for 2D, z for 3D, each at least `m` long) and `n`
    /// frequencies (s, and t, u likewise, at least `n` long), any finite reals, replacing
    /// earlier ones. The grid is sized from their spans here; spans whose grid could not be
    /// held, non-finite values and missing arrays are refused and leave the previous points.
    pub fn set_points3(
        &mut self,
        m: usize,
        x: [Option<&[T]>; 3],
        n: usize,
        s: [Option<&[T]>; 3],
    ) -> Result<()> {
        if self.spec.kind != TransformType::Type3 {
            return Err(crate::invalid!(
                "set_points3 is for type-3 plans; a {:?} plan takes set_points",
                self.spec.kind
            ));
        }
        let dim = self.spec.dim;
        let p = type3::Type3Points {
            m,
            x: coords_of(dim, m, x, ["x", "y", "z"], "point")?,
            n,
            s: coords_of(dim, n, s, ["s", "t", "u"], "frequency")?,
        };
        check_count(m)?;
        check_count(n)?;
        let ctx = self.ctx.clone();
        let points = match ctx.cuda() {
            Some(gpu) => {
                let held = self.held.clone();
                let made = held.scope("setting the USFFT points", || {
                    cuda::set_points3(gpu, &ctx.cpu, &self.spec, &p)
                })?;
                PointsState::Type3Device(Box::new(made))
            }
            None => {
                PointsState::Type3Host(Box::new(type3::cpu::set_points(&ctx.cpu, &self.spec, &p)?))
            }
        };
        self.points = points;
        self.m = m;
        Ok(())
    }

    /// Sets `m` points: x (and y for 2D, z for 3D), each at least `m` long. Non-finite
    /// coordinates are refused and leave the previous points in place.
    pub fn set_points(
        &mut self,
        m: usize,
        x: &[T],
        y: Option<&[T]>,
        z: Option<&[T]>,
    ) -> Result<()> {
        self.not_type3()?;
        let coords = coords_of(self.spec.dim, m, [Some(x), y, z], ["x", "y", "z"], "point")?;
        let ctx = self.ctx.clone();
        match ctx.cuda() {
            Some(gpu) => self.set_device_points(|slot, spec| {
                cuda::set_points(gpu, &ctx.cpu, slot, spec, coords, m)
            }),
            None => {
                self.points = PointsState::Host(Box::new(cpu::set_points(
                    &self.ctx.cpu,
                    &self.spec,
                    coords,
                    m,
                )?));
                self.m = m;
                Ok(())
            }
        }
    }

    /// Sets `m` points whose coordinates already live on the device (a plan on a CUDA
    /// context): folded and bin-sorted by kernels, with no host copy. x (and y for 2D, z for
    /// 3D) hold at least `m` coordinates each, queued on any stream of the plan's context
    /// (the plan's stream waits for them). Non-finite coordinates are refused and leave the
    /// previous points in place.
    pub fn set_points_device(
        &mut self,
        m: usize,
        x: &cudarc::driver::CudaSlice<T>,
        y: Option<&cudarc::driver::CudaSlice<T>>,
        z: Option<&cudarc::driver::CudaSlice<T>>,
    ) -> Result<()> {
        self.not_type3()?;
        let ctx = self.gpu()?;
        let given = [Some(x), y, z];
        // Read on their own streams; kept (with cudarc's records of the use) until the sort
        // is queued.
        let mut used = Vec::new();
        for d in 0..self.spec.dim {
            let c = given[d].ok_or_else(|| {
                Error::NullPointer(format!(
                    "coordinate array {} is missing but the plan is {}D",
                    ["x", "y", "z"][d],
                    self.spec.dim
                ))
            })?;
            if c.len() < m {
                return Err(crate::invalid!(
                    "device coordinate array {} has {} elements; {m} points need {m}",
                    ["x", "y", "z"][d],
                    c.len()
                ));
            }
            used.push(read_on(c, c.stream()));
        }
        let mut coords: cuda::DeviceCoords<T> = [None; 3];
        for (d, c) in used.iter().enumerate() {
            coords[d] = Some(c);
        }
        let after: Vec<_> = given.iter().flatten().map(|c| c.stream().clone()).collect();
        let gpu = ctx.cuda().expect("checked by gpu()");
        self.set_device_points(|slot, spec| {
            cuda::set_points_device(gpu, slot, spec, coords, m, &after)
        })
    }

    /// `set_points_device` from arrays the caller allocated on the context's device (the C
    /// ABI's; None for unused dimensions), ordered after the work on the context's caller
    /// stream.
    pub fn set_points_device_arrays(
        &mut self,
        m: usize,
        coords: [Option<&dyn DeviceArray<T>>; 3],
    ) -> Result<()> {
        self.not_type3()?;
        let ctx = self.gpu()?;
        let gpu = ctx.cuda().expect("checked by gpu()");
        let after = [gpu.caller_stream()];
        self.set_device_points(|slot, spec| {
            cuda::set_points_device(gpu, slot, spec, coords, m, &after)
        })
    }

    /// Sets the points of `lattices` (types 1 and 2; `lattice`): on a CUDA context the plan
    /// keeps only the lattices' table and the sort's permutation (4 bytes a point), the
    /// kernels computing each point where they use it; on the CPU their coordinates are made
    /// on the context's pool and set as `set_points` sets them. Both see the same
    /// coordinates, bit for bit.
    pub fn set_points_on_lattices(&mut self, lattices: &[lattice::PointLattice]) -> Result<()> {
        self.not_type3()?;
        let ctx = self.ctx.clone();
        match ctx.cuda() {
            Some(gpu) => self.set_device_points(|slot, spec| {
                cuda::set_lattice_points(gpu, slot, spec, lattices)
            }),
            None => {
                let dim = self.spec.dim;
                let m = lattice::count_points(lattices)?;
                let c = ctx
                    .cpu
                    .install(|| lattice::coordinates::<T>(lattices, dim))?;
                let opt = |d: usize| (d < dim).then(|| c[d].as_slice());
                self.set_points(m, &c[0], opt(1), opt(2))
            }
        }
    }

    /// Sets the points of each group of lattices (types 1 and 2, a CUDA context) as its own
    /// sorted set, into the same bins (`cuda::set_lattice_groups`): executed one group at a
    /// time by `execute_in_groups`, whose caller holds one group's values at a time.
    /// `n_points` counts them all; `execute` and the other executes see no points.
    pub fn set_points_on_lattice_groups(
        &mut self,
        groups: &[Vec<lattice::PointLattice>],
    ) -> Result<()> {
        self.not_type3()?;
        let ctx = self.gpu()?;
        let gpu = ctx.cuda().expect("checked by gpu()");
        let mut total = 0usize;
        for g in groups {
            total = total.saturating_add(lattice::count_points(g)?);
        }
        self.set_device_points(|slot, spec| cuda::set_lattice_groups(gpu, slot, spec, groups))?;
        self.m = total;
        Ok(())
    }

    /// The plan's transform (`Way::Transform`) or its adjoint over points set in groups
    /// (`set_points_on_lattice_groups`), on device arrays, queued on the plan's stream
    /// without waiting: see `cuda::DevicePoints::execute_in_groups`.
    pub fn execute_in_groups<C: DeviceArrayMut<T>>(
        &self,
        way: cuda::Way,
        c: &mut C,
        f: &mut impl DeviceArrayMut<T>,
        mut body: impl FnMut(usize, &mut C) -> Result<()>,
    ) -> Result<()> {
        match (&self.points, self.ctx.cuda()) {
            (PointsState::Device(p), Some(gpu)) if !p.group_counts().is_empty() => {
                p.execute_in_groups(gpu, way, c, f, &mut body)
            }
            _ => Err(crate::invalid!(
                "no points set in groups: call set_points_on_lattice_groups first"
            )),
        }
    }

    /// Sets the points `other` holds (types 1 and 2, a plan on the same context) without
    /// sorting them again: shared, on the CPU and on the device. Ok(false), with nothing
    /// changed, where the two plans do not sort points alike (another dimension, fine grid
    /// or kernel width) or `other` has no points of these kinds: then call `set_points`.
    pub(crate) fn set_points_of(&mut self, other: &UsfftPlan<T>) -> Result<bool> {
        self.not_type3()?;
        if !cuda::same_sort(&self.spec, &other.spec) || !Arc::ptr_eq(&self.ctx, &other.ctx) {
            return Ok(false);
        }
        let ctx = self.ctx.clone();
        match (&other.points, ctx.cuda()) {
            (PointsState::Host(p), None) => {
                self.points = PointsState::Host(Box::new(cpu::share_points(&self.spec, p)));
                self.m = other.m;
                Ok(true)
            }
            (PointsState::Device(p), Some(gpu)) => {
                let from: &cuda::DevicePoints<T> = p;
                self.set_device_points(|slot, spec| cuda::share_points(gpu, slot, spec, from))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Types 1 and 2 only: a type-3 plan needs its frequencies too.
    fn not_type3(&self) -> Result<()> {
        if self.spec.kind == TransformType::Type3 {
            return Err(crate::invalid!(
                "a type-3 plan needs its target frequencies: call set_points3 (points and \
                 frequencies, from host arrays)"
            ));
        }
        Ok(())
    }

    /// The plan's context, if it has a GPU.
    fn gpu(&self) -> Result<Arc<Context>> {
        match self.ctx.cuda() {
            Some(_) => Ok(self.ctx.clone()),
            None => Err(Error::Unsupported(
                "device coordinates need a plan on a CUDA context".into(),
            )),
        }
    }

    /// Runs a device set-points on the plan's device state (made on first use); on error the
    /// previous points stay.
    fn set_device_points(
        &mut self,
        set: impl FnOnce(&mut Option<Box<cuda::DevicePoints<T>>>, &UsfftSpec) -> Result<()>,
    ) -> Result<()> {
        let (mut slot, had) = match std::mem::replace(&mut self.points, PointsState::None) {
            PointsState::Device(p) => (Some(p), true),
            other => {
                self.points = other;
                (self.prepared.take(), false)
            }
        };
        let held = self.held.clone();
        let r = held.scope("setting the USFFT points", || set(&mut slot, &self.spec));
        match (had || r.is_ok(), slot) {
            (true, Some(p)) => {
                self.m = p.m();
                self.points = PointsState::Device(p);
            }
            (false, p) => self.prepared = p,
            (true, None) => {}
        }
        r
    }

    /// Checks that the arrays hold n_vectors × M strengths and n_vectors × N1N2N3 modes.
    fn check(&self, c: usize, f: usize) -> Result<()> {
        if matches!(self.points, PointsState::None) {
            return Err(crate::invalid!(
                "no points set: call set_points before execute"
            ));
        }
        let nv = self.spec.n_vectors;
        if c < nv * self.m {
            return Err(crate::invalid!(
                "strength array has {c} complex values; {nv} vectors × {} points need {}",
                self.m,
                nv * self.m
            ));
        }
        let nm = self.n_modes_or_targets();
        if f < nv * nm {
            let what = match self.spec.kind {
                TransformType::Type3 => "target frequencies",
                _ => "modes",
            };
            return Err(crate::invalid!(
                "{} array has {f} complex values; {nv} vectors × {nm} {what} need {}",
                if what == "modes" { "mode" } else { "output" },
                nv * nm
            ));
        }
        Ok(())
    }

    /// Type 1: reads `c` (n_vectors × M strengths, vector v at v·M) and writes `f`
    /// (n_vectors × N1N2N3 modes, vector v at v·N1N2N3). Type 2: reads `f`, writes `c`.
    /// Type 3: reads `c` and writes `f` (n_vectors × N values at the frequencies).
    /// Non-finite strengths or modes are not checked: they propagate into the output.
    pub fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        let mut reporter = self.ctx.reporter();
        self.execute_reporting(c, f, &mut reporter)?;
        reporter.finish();
        Ok(())
    }

    /// `execute` as one step of a caller's own call (the wave packets): no reports of its
    /// own to the context's callback, whose fractions belong to the caller.
    pub(crate) fn execute_silent(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.execute_reporting(c, f, &mut Reporter::new(None))
    }

    fn execute_reporting(
        &self,
        c: &mut [Complex<T>],
        f: &mut [Complex<T>],
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.check(c.len(), f.len())?;
        match &self.points {
            PointsState::None => unreachable!("checked above"),
            PointsState::Host(p) => cpu::execute(&self.ctx.cpu, &self.spec, p, c, f, reporter),
            PointsState::Type3Host(p) => type3::cpu::execute(&self.ctx.cpu, p, c, f, reporter),
            PointsState::Type3Device(p) => {
                let gpu = self.ctx.cuda().expect("device points on a CUDA context");
                self.held.scope("executing the USFFT plan", || {
                    p.execute(gpu, &self.ctx.cpu, c, f, reporter)
                })
            }
            PointsState::Device(p) => {
                let gpu = self.ctx.cuda().expect("device points on a CUDA context");
                // Its staging buffers are made on the first execute and kept.
                self.held.scope("executing the USFFT plan", || {
                    p.execute(gpu, &self.ctx.cpu, c, f, reporter)
                })
            }
        }
    }

    /// Device-resident execute on a CUDA context, queued on the plan's stream
    /// (`device_points().stream()`) without waiting. `c` holds 2·n_vectors·M reals
    /// (interleaved complex strengths, vector v from 2·v·M), `f` 2·n_vectors·N1N2N3 reals;
    /// type 1 reads c and writes f, type 2 reads f and writes c.
    pub fn execute_device(
        &self,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
    ) -> Result<()> {
        self.execute_device_timed(c, f, None)
    }

    /// `execute_device`, recording `events` (if given) at the start, after spreading (type 1)
    /// or the copy into the fine grid (type 2), after the FFT, and at the end.
    pub fn execute_device_timed(
        &self,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
        events: Option<&[cudarc::driver::CudaEvent; 4]>,
    ) -> Result<()> {
        self.execute_device_way(cuda::Way::Transform, c, f, events)
    }

    /// The adjoint of `execute_device` (type 1 ↔ type 2 with the opposite sign: a type-2
    /// plan's adjoint reads `c` and writes `f`), on the plan's points, fine grid and FFT
    /// plan, queued on its stream without waiting. An operator and its adjoint on one
    /// plan hold one plan's device memory.
    pub fn execute_adjoint_device(
        &self,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
    ) -> Result<()> {
        self.execute_device_way(cuda::Way::Adjoint, c, f, None)
    }

    fn execute_device_way(
        &self,
        way: cuda::Way,
        c: &mut cudarc::driver::CudaSlice<T>,
        f: &mut cudarc::driver::CudaSlice<T>,
        events: Option<&[cudarc::driver::CudaEvent; 4]>,
    ) -> Result<()> {
        match (&self.points, self.ctx.cuda()) {
            (PointsState::Device(p), Some(gpu)) => p.execute_device(gpu, way, c, f, events),
            (PointsState::None, _) => Err(crate::invalid!(
                "no points set: call set_points before execute"
            )),
            (PointsState::Type3Device(_), _) => Err(type3_device_execute()),
            _ => Err(Error::Unsupported(
                "device-resident execute needs a plan on a CUDA context".into(),
            )),
        }
    }

    /// Execute on arrays the caller allocated on the context's device (`c` 2·n_vectors·M
    /// reals, `f` 2·n_vectors·N1N2N3, interleaved complex), queued after the work on the
    /// context's caller stream, which then waits for it; returns without waiting.
    pub fn execute_device_arrays(
        &self,
        c: &mut impl DeviceArrayMut<T>,
        f: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let gpu = self.ctx.gpu_for("a device USFFT execute")?;
        match &self.points {
            PointsState::Device(p) => p.execute_arrays(gpu, c, f),
            PointsState::Type3Device(_) => Err(type3_device_execute()),
            _ => Err(crate::invalid!(
                "no points set: call set_points before execute"
            )),
        }
    }

    /// The device state of a CUDA plan with points set (for device-resident execution).
    pub fn device_points(&self) -> Option<&cuda::DevicePoints<T>> {
        match &self.points {
            PointsState::Device(p) => Some(p),
            _ => None,
        }
    }
}

/// Type 3 executes from host arrays only.
fn type3_device_execute() -> Error {
    Error::Unsupported(
        "a type-3 plan executes from host arrays (execute); device-array execute is for \
         types 1 and 2"
            .into(),
    )
}

fn check_count(m: usize) -> Result<()> {
    if m > points::MAX_POINTS {
        return Err(Error::Unsupported(format!(
            "{m} points; at most {} per plan",
            points::MAX_POINTS
        )));
    }
    Ok(())
}

/// The first `dim` of `given` (the others empty), each checked to hold `m` values: `names`
/// the arrays, `what` their elements.
fn coords_of<'a, T>(
    dim: usize,
    m: usize,
    given: [Option<&'a [T]>; 3],
    names: [&str; 3],
    what: &str,
) -> Result<[&'a [T]; 3]> {
    let mut coords: [&[T]; 3] = [&[], &[], &[]];
    for d in 0..dim {
        match given[d] {
            Some(c) if c.len() >= m => coords[d] = c,
            Some(c) => {
                return Err(crate::invalid!(
                    "coordinate array {} has {} elements; {m} {what}s need {m}",
                    names[d],
                    c.len()
                ))
            }
            None => {
                return Err(Error::NullPointer(format!(
                    "coordinate array {} is missing (NULL) but the plan is {dim}D",
                    names[d]
                )))
            }
        }
    }
    Ok(coords)
}
