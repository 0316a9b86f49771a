//! Gaussian wave packets (Nikitin, Duchkov, Andersson 2017) in 2D and 3D: a redundant frame
//! of packets, each a Gaussian window in a box of the Fourier domain (a scale and a direction)
//! sampled on its own rotated, critically sampled grid.
//!
//! - Forward C (real data → complex coefficients): one USFFT type 2 evaluates the data's
//!   spectrum F̂(ξ) = Σ_x f(x)·e^{−2πi ξ·(x − n/2)} at the lattice points of every direction
//!   (each direction's levels share one lattice and are cut out of it by index); each box then
//!   windows its rectangle and takes its orthonormal inverse FFT (`layout`, `windows`, `cpu`;
//!   on a CUDA context `cuda`: the same on the device, box FFTs batched per shape by cuFFT).
//! - Adjoint C*: the exact transpose (box FFTs, windows, USFFT type 1), real part taken.
//! - Inverse: the windows form a partition of unity, so C*C is the identity up to the lattice
//!   sampling and the USFFT error; `inverse` solves C*C f = C*c by conjugate gradients from
//!   the correction-filtered C*c (`inverse.rs`) to the requested tolerance.
//!
//! Data arrays are n1 × n2 [× n3], axis 1 fastest; coefficients are box after box, each box
//! L1 × L2 [× L3], axis 1 fastest, at `WaveBox::offset`.

mod angle;
pub mod boxfft;
mod cells;
pub mod coeffs;
pub mod coverage;
pub mod cpu;
pub mod cuda;
mod device_calls;
mod device_coeffs;
mod device_iterations;
pub mod footprint;
pub mod gaps;
pub mod inverse;
pub mod lattice_groups;
pub mod layout;
pub mod lebedev;
mod pass;
mod phases;
mod plan_points;
// Generated numbers: some are 1/√2 and the like, written out as the rule gives them.
#[rustfmt::skip]
#[allow(clippy::approx_constant)]
mod lebedev_table;
pub mod sparse;
pub mod tile_steps;
pub mod tiles;
mod tiles_device;
pub mod windows;

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::buffers::{as_reals, as_reals_mut};
use crate::backend::cuda::memory::Tally;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::usfft::UsfftPlan;
use boxfft::BoxFfts;
pub(crate) use device_calls::check_tolerance;
pub use layout::{Layout, LayoutOptions, WaveBox};
use num_complex::Complex;
pub use pass::Pass;
pub use phases::PlanPhases;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The share of a forward or adjoint call given to its USFFT in progress reports (nominal:
/// fractions need only grow).
const USFFT_SHARE: f64 = 0.5;

/// A wave-packet transform of one layout and precision on one context.
pub struct WavepacketPlan<T: Real> {
    ctx: Arc<Context>,
    layout: Arc<Layout>,
    engine: Engine<T>,
    /// ‖ψ_b‖ of every box (`sparse::packet_norms`), from the windows the plan uses.
    norms: Vec<f64>,
    /// A device plan's windows, copied to the host by the first `window` call.
    host_windows: OnceLock<Vec<Vec<T>>>,
    /// Device bytes the plan holds (its USFFT plans' included).
    held: Arc<Tally>,
    /// How long each phase of its creation took.
    phases: PlanPhases,
}

/// Where the boxes and the USFFTs run.
enum Engine<T: Real> {
    /// On the CPU threads.
    Host(Box<HostStage<T>>),
    /// On the device (a CUDA context): the box stage, which owns the USFFT plans and makes
    /// the windows where it keeps them.
    Device(Box<cuda::BoxStage<T>>),
}

/// The CPU engine: data → lattice values (sign −1) and its adjoint (sign +1), on the same
/// points, the windows of every box and the box FFTs.
struct HostStage<T: Real> {
    type2: UsfftPlan<T>,
    type1: UsfftPlan<T>,
    windows: Vec<Vec<T>>,
    ffts: BoxFfts<T>,
}

impl<T: Real> HostStage<T> {
    /// The box stage on the CPU over `layout`, with `shifts`.
    fn boxes<'a>(&'a self, layout: &'a Layout, shifts: &'a [[f64; 3]]) -> cpu::Boxes<'a, T> {
        cpu::Boxes {
            layout,
            windows: &self.windows,
            ffts: &self.ffts,
            shifts,
        }
    }
}

impl<T: Real> WavepacketPlan<T> {
    /// Builds the layout, its windows and the USFFT plans for data of `shape` (dim = its length).
    pub fn new(ctx: Arc<Context>, shape: &[usize], opts: &LayoutOptions) -> Result<Self> {
        Self::with_cap(ctx, shape, opts, 0)
    }

    /// `new`, the plan's device memory capped at `max_device_bytes` (0: no cap) on a CUDA
    /// context: the plan holds its lattice values in the fewest groups of directions that
    /// fit the cap (`footprint::within_cap`; each group's USFFT interpolation or spreading
    /// and box gathers run apart, the same results), is refused with `DeviceOutOfMemory`
    /// before anything is allocated where even one lattice a group does not fit, and no
    /// allocation of the plan or its calls takes it past the cap. A CPU context holds no
    /// device memory: the cap does not apply.
    pub fn with_cap(
        ctx: Arc<Context>,
        shape: &[usize],
        opts: &LayoutOptions,
        max_device_bytes: usize,
    ) -> Result<Self> {
        let held = Arc::<Tally>::default();
        held.scope("creating the wave-packet plan", || {
            Self::build(ctx, shape, opts, max_device_bytes, held.clone())
        })
    }

    fn build(
        ctx: Arc<Context>,
        shape: &[usize],
        opts: &LayoutOptions,
        cap: usize,
        held: Arc<Tally>,
    ) -> Result<Self> {
        let mut laps = phases::Laps::start();
        let mut phases = PlanPhases::default();
        let layout = Arc::new(Layout::new(shape.len(), shape, opts)?);
        // What the plan keeps (windows, lattice coordinates) and each call needs (the lattice
        // values), checked before anything is computed or allocated; a device plan keeps
        // them on the device (its footprint: `footprint.rs`), the host only its tables.
        let t = std::mem::size_of::<T>();
        crate::alloc::host_bytes(&[layout.n_coefficients], t, "wave-packet windows")?;
        crate::alloc::host_bytes(&[layout.n_points, 2], t, "wave-packet lattice values")?;
        if ctx.cuda().is_none() {
            check_plan_memory(&layout, t)?;
        }
        // Under a cap, the fewest groups of directions whose lattice values fit it.
        let groups = match ctx.cuda() {
            Some(gpu) if cap > 0 => {
                let areas = footprint::device_areas::<T>(gpu)?;
                let (groups, _) = footprint::within_cap::<T>(&layout, cap, &areas, &ctx.cpu)?;
                held.set_limit(cap);
                groups
            }
            _ => lattice_groups::split(&layout, lattice_groups::fewest(&layout)),
        };
        phases.layout = laps.lap();
        let (engine, norms) = match ctx.cuda() {
            Some(_) => {
                let usfft =
                    plan_points::type2_plan(&ctx, &layout, Some(&groups), &mut laps, &mut phases)?;
                let stage = cuda::BoxStage::new(layout.clone(), usfft, groups, held.clone())?;
                phases.windows = stage.windows_time();
                phases.tables = laps.lap().saturating_sub(phases.windows);
                let norms = stage.packet_norms().to_vec();
                (Engine::Device(Box::new(stage)), norms)
            }
            None => {
                let windows: Vec<Vec<T>> = ctx.cpu.install(|| windows::box_windows(&layout));
                let norms = ctx.cpu.install(|| sparse::packet_norms(&layout, &windows));
                let ffts = BoxFfts::new(layout.boxes.iter().flat_map(|b| b.shape));
                phases.windows = laps.lap();
                let type2 = plan_points::type2_plan(&ctx, &layout, None, &mut laps, &mut phases)?;
                let type1 = plan_points::type1_plan(&ctx, &layout, &type2, &mut laps, &mut phases)?;
                let host = HostStage {
                    type2,
                    type1,
                    windows,
                    ffts,
                };
                (Engine::Host(Box::new(host)), norms)
            }
        };
        Ok(WavepacketPlan {
            ctx,
            layout,
            engine,
            norms,
            host_windows: OnceLock::new(),
            held,
            phases,
        })
    }

    /// The device memory a plan of `shape` and `opts` capped at `max_device_bytes` (0: no
    /// cap) would hold on `ctx` (cuFFT's work areas asked of cuFFT on a CUDA context,
    /// estimated on a CPU one), or the refusal `with_cap` would give, its parts named.
    /// Nothing is allocated.
    pub fn footprint(
        ctx: &Context,
        shape: &[usize],
        opts: &LayoutOptions,
        max_device_bytes: usize,
    ) -> Result<footprint::Footprint> {
        let layout = Layout::new(shape.len(), shape, opts)?;
        let cap = max_device_bytes;
        let (_, found) = match ctx.cuda() {
            Some(gpu) => {
                let areas = footprint::device_areas::<T>(gpu)?;
                footprint::within_cap::<T>(&layout, cap, &areas, &ctx.cpu)
            }
            None => {
                let areas = &footprint::host_areas::<T>;
                footprint::within_cap::<T>(&layout, cap, areas, &ctx.cpu)
            }
        }?;
        Ok(found)
    }

    /// How long each phase of the plan's creation took (wall clock).
    pub fn creation_phases(&self) -> PlanPhases {
        self.phases
    }

    /// Device bytes the plan holds (0 on a CPU context): its tables, work arrays and USFFT
    /// plans made at creation, and the arrays of host-to-host calls and grid shifts, made
    /// on their first use and kept.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    /// What each part of a device plan held when it was made (bytes; empty on a CPU
    /// context): see `cuda::BoxStage::device_parts`.
    pub fn device_parts(&self) -> Vec<(&'static str, usize)> {
        match &self.engine {
            Engine::Device(stage) => stage.device_parts().to_vec(),
            Engine::Host(_) => Vec::new(),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The stored window of box `b` at its points (box order, axis 1 fastest). A device plan
    /// copies its windows to the host at the first call.
    pub fn window(&self, b: usize) -> Result<&[T]> {
        let all = match &self.engine {
            Engine::Host(host) => &host.windows,
            Engine::Device(stage) => match self.host_windows.get() {
                Some(w) => w,
                None => {
                    let w = stage.download_windows()?;
                    self.host_windows.get_or_init(|| w)
                }
            },
        };
        let n = all.len();
        all.get(b)
            .map(Vec::as_slice)
            .ok_or_else(|| crate::invalid!("box {b} of a layout of {n} boxes"))
    }

    fn check_sizes(&self, data: usize, coeffs: usize) -> Result<()> {
        let l = &self.layout;
        let shape = &l.shape[..l.dim];
        let whose = ["the layout's shape", "the layout"];
        check_array_sizes(
            [data, coeffs],
            [l.n_samples(), l.n_coefficients],
            shape,
            whose,
        )
    }

    /// C: real data (n1·n2[·n3], axis 1 fastest) → coefficients. Non-finite data is refused.
    /// Reports progress to the context's callback; a stop leaves `coeffs` as it was.
    pub fn forward(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()> {
        self.check_sizes(data.len(), coeffs.len())?;
        check_data_finite(data, &self.ctx.cpu)?;
        let mut reporter = self.ctx.reporter();
        if reporter.is_active() {
            // A stop between box chunks must not leave the caller half an answer.
            let zero = Complex::new(T::zero(), T::zero());
            let mut c = crate::error::try_vec(coeffs.len(), zero, "wave-packet coefficients")?;
            self.forward_reported(data, &mut c, &[], &mut reporter)?;
            coeffs.copy_from_slice(&c);
        } else {
            self.forward_reported(data, coeffs, &[], &mut reporter)?;
        }
        reporter.finish();
        Ok(())
    }

    pub(crate) fn forward_unchecked(&self, data: &[T], coeffs: &mut [Complex<T>]) -> Result<()> {
        self.forward_shifted(data, coeffs, &[])
    }

    /// C with each box's grid shifted by `shifts[box]` steps (`tiles`), unreported.
    pub(crate) fn forward_shifted(
        &self,
        data: &[T],
        coeffs: &mut [Complex<T>],
        shifts: &[[f64; 3]],
    ) -> Result<()> {
        self.forward_reported(data, coeffs, shifts, &mut Reporter::new(None))
    }

    /// C in two stages, "wave-packet spectrum" (the USFFT) and "wave-packet boxes" (run in
    /// chunks of boxes, with a report after each).
    fn forward_reported(
        &self,
        data: &[T],
        coeffs: &mut [Complex<T>],
        shifts: &[[f64; 3]],
        reporter: &mut Reporter,
    ) -> Result<()> {
        let host = match &self.engine {
            Engine::Device(stage) => {
                let coeffs = as_reals_mut(coeffs);
                return stage.transform(Pass::Forward, data, coeffs, shifts, reporter);
            }
            Engine::Host(host) => host,
        };
        let mut modes: Vec<Complex<T>> = data.iter().map(|&v| Complex::new(v, T::zero())).collect();
        let mut values = crate::error::try_vec(
            self.layout.n_points,
            Complex::new(T::zero(), T::zero()),
            "wave-packet lattice values",
        )?;
        reporter.stage("wave-packet spectrum", USFFT_SHARE, 1);
        host.type2.execute_silent(&mut values, &mut modes)?;
        reporter.advance(1)?;
        let boxes = host.boxes(&self.layout, shifts);
        self.in_box_chunks(reporter, self.layout.boxes.len(), |range| {
            boxes.forward(&values, range, coeffs)
        })
    }

    /// Runs `run` over `n` boxes or lattices on the CPU threads, as the stage "wave-packet
    /// boxes", in chunks with a report after each.
    fn in_box_chunks(
        &self,
        reporter: &mut Reporter,
        n: usize,
        mut run: impl FnMut(Range<usize>) + Send,
    ) -> Result<()> {
        reporter.stage("wave-packet boxes", 1.0 - USFFT_SHARE, n);
        reporter.for_chunks(n, 1, |range| {
            self.ctx.cpu.install(|| run(range));
            Ok(())
        })
    }

    /// C*: coefficients → real data (the real part of the complex adjoint). Reports progress
    /// to the context's callback; a stop leaves `data` as it was.
    pub fn adjoint(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()> {
        self.check_sizes(data.len(), coeffs.len())?;
        // The GPU checks them after their upload (at its memory's rate, not the host's).
        if matches!(self.engine, Engine::Host(_)) {
            check_finite(coeffs, &self.ctx.cpu)?;
        }
        let mut reporter = self.ctx.reporter();
        self.adjoint_reported(coeffs, data, &[], &mut reporter)?;
        reporter.finish();
        Ok(())
    }

    pub(crate) fn adjoint_unchecked(&self, coeffs: &[Complex<T>], data: &mut [T]) -> Result<()> {
        self.adjoint_shifted(coeffs, data, &[])
    }

    /// The adjoint of `forward_shifted`, unreported.
    pub(crate) fn adjoint_shifted(
        &self,
        coeffs: &[Complex<T>],
        data: &mut [T],
        shifts: &[[f64; 3]],
    ) -> Result<()> {
        self.adjoint_reported(coeffs, data, shifts, &mut Reporter::new(None))
    }

    /// C* in two stages, "wave-packet boxes" (in chunks of lattices) and "wave-packet
    /// spectrum" (the USFFT); `data` is written only at the end.
    fn adjoint_reported(
        &self,
        coeffs: &[Complex<T>],
        data: &mut [T],
        shifts: &[[f64; 3]],
        reporter: &mut Reporter,
    ) -> Result<()> {
        let host = match &self.engine {
            Engine::Device(stage) => {
                let coeffs = as_reals(coeffs);
                return stage.transform(Pass::Adjoint, coeffs, data, shifts, reporter);
            }
            Engine::Host(host) => host,
        };
        let zero = Complex::new(T::zero(), T::zero());
        let mut values =
            crate::error::try_vec(self.layout.n_points, zero, "wave-packet lattice values")?;
        let boxes = host.boxes(&self.layout, shifts);
        self.in_box_chunks(reporter, self.layout.lattices.len(), |range| {
            boxes.adjoint(coeffs, range, &mut values)
        })?;
        let mut modes = crate::error::try_vec(self.layout.n_samples(), zero, "wave-packet data")?;
        reporter.stage("wave-packet spectrum", USFFT_SHARE, 1);
        host.type1.execute_silent(&mut values, &mut modes)?;
        reporter.advance(1)?;
        for (d, m) in data.iter_mut().zip(&modes) {
            *d = m.re;
        }
        Ok(())
    }
}

impl<T: Real> WavepacketPlan<T> {
    /// The device box stage of a plan on a CUDA context (its stream orders device-resident
    /// calls), else None.
    pub fn device_stage(&self) -> Option<&cuda::BoxStage<T>> {
        match &self.engine {
            Engine::Device(stage) => Some(stage),
            Engine::Host(_) => None,
        }
    }

    /// Device-resident C on a CUDA context, queued on `device_stage().stream()` without
    /// waiting: `data` n reals, `coeffs` 2·m reals (interleaved complex). Data not checked.
    pub fn forward_device(
        &self,
        data: &cudarc::driver::CudaSlice<T>,
        coeffs: &mut cudarc::driver::CudaSlice<T>,
    ) -> Result<()> {
        self.device()?.forward_device(data, coeffs)
    }

    /// Device-resident C* (as `forward_device`).
    pub fn adjoint_device(
        &self,
        coeffs: &cudarc::driver::CudaSlice<T>,
        data: &mut cudarc::driver::CudaSlice<T>,
    ) -> Result<()> {
        self.device()?.adjoint_device(coeffs, data)
    }

    /// C*·P(C f) on a CUDA context without the coefficients' round trip through the host
    /// (None on the CPU); P as `cuda::BoxStage::synthesis`.
    pub(crate) fn synthesis_on_device(
        &self,
        f: &[T],
        keep_below: Option<&[f64]>,
    ) -> Result<Option<Vec<T>>> {
        let Ok(stage) = self.device() else {
            return Ok(None);
        };
        let mut out = crate::error::try_vec(f.len(), T::zero(), "wave-packet data")?;
        stage.synthesis(f, &mut out, keep_below)?;
        Ok(Some(out))
    }

    fn device(&self) -> Result<&cuda::BoxStage<T>> {
        match self.device_stage() {
            Some(stage) => Ok(stage),
            None => Err(Error::Unsupported(
                "device-resident calls need a plan on a CUDA context".into(),
            )),
        }
    }
}

/// `InvalidArgument` unless the data and coefficient arrays hold `want` = [samples of
/// `shape`, coefficients]; `whose` names the shape's owner and the coefficients' layout.
pub(crate) fn check_array_sizes(
    [data, coeffs]: [usize; 2],
    [n, m]: [usize; 2],
    shape: &[usize],
    [shape_of, layout]: [&str; 2],
) -> Result<()> {
    if data != n {
        return Err(crate::invalid!(
            "data array has {data} samples; {shape_of} {shape:?} needs {n}"
        ));
    }
    if coeffs != m {
        return Err(crate::invalid!(
            "coefficient array has {coeffs} values; {layout} has {m}"
        ));
    }
    Ok(())
}

/// What a plan of `t`-byte reals holds at once, all together: its windows (one real per
/// coefficient) and, per lattice point, the coordinates, the sorted points of both USFFT
/// plans (a u32 order, and per dimension an i32 cell and a real offset) and a call's
/// complex lattice values. `OutOfMemory` naming the shape when the host cannot hold them.
fn check_plan_memory(layout: &Layout, t: usize) -> Result<()> {
    let dim = layout.dim;
    let per_point = dim * t + 2 * t + 2 * (4 + dim * (4 + t));
    let bytes = layout
        .n_points
        .checked_mul(per_point)
        .and_then(|b| b.checked_add(layout.n_coefficients.checked_mul(t)?));
    let host = crate::alloc::host_memory();
    match bytes {
        Some(b) if b <= host => Ok(()),
        _ => Err(Error::OutOfMemory(format!(
            "a wave-packet layout of shape {:?}: {} coefficients and {} lattice points; its \
             windows, coordinates, sorted points and lattice values need {} bytes together; \
             the host has {host} bytes",
            &layout.shape[..dim],
            layout.n_coefficients,
            layout.n_points,
            bytes.map_or("more than size_t counts".to_string(), |b| b.to_string())
        ))),
    }
}

/// `NonFinite` naming the first data sample that is NaN or infinite (large arrays scanned
/// on `cpu`'s threads).
pub(crate) fn check_data_finite<T: Real>(data: &[T], cpu: &CpuBackend) -> Result<()> {
    match crate::layout::find_non_finite_in(data, cpu) {
        Some(i) => Err(Error::NonFinite(format!(
            "data sample {i} is not finite; nothing was written"
        ))),
        None => Ok(()),
    }
}

/// `NonFinite` naming the first coefficient that is NaN or infinite (as `check_data_finite`).
pub(crate) fn check_finite<T: Real>(coeffs: &[Complex<T>], cpu: &CpuBackend) -> Result<()> {
    match crate::layout::find_non_finite_in(coeffs, cpu) {
        Some(i) => Err(Error::NonFinite(format!(
            "coefficient {i} is not finite; nothing was written"
        ))),
        None => Ok(()),
    }
}
