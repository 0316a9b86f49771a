//! The USFFT on the GPU: kernels/usfft.cu (NVRTC, one module per dimension, kernel width,
//! kernel shape and precision) and cuFFT on the fine grid.
//!
//! Set-points folds and bin-sorts the points on the host (the CPU backend's parallel counting
//! sort, with the GPU's bin shape) and uploads the sorted (i0, d) per dimension, the
//! permutation and the bin offsets. Type 1 spreads with one block per bin into a padded tile
//! in shared memory (shared atomics only in the hot loop; one global atomic per non-zero tile
//! cell at the end); a tile too large for shared memory falls back to global atomics in
//! sorted order. Type 2 interpolates with one thread per sorted point. Both loop over the
//! batch's vectors inside the kernel; cuFFT runs the batch as one plan.

use super::grid::Tiling;
use super::kernel::{KernelShape, SpreadKernel};
use super::points::{sort_points, SortedPoints};
use super::spec::{Real, TransformType, UsfftSpec, MIN_TOL_F32, MIN_TOL_F64};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::kernels;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::cufft::{result as cufft_result, sys as cufft_sys};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    result, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchConfig, PushKernelArg,
};
use num_complex::Complex;
use std::sync::{Arc, Mutex};

const THREADS: u32 = 256;
/// Shared memory a spreading tile may use before a larger one is considered (bytes): two
/// blocks per multiprocessor on sm_80/sm_90.
const TILE_BUDGET: usize = 100 * 1024;

/// The NVRTC prelude for one dimension, kernel and precision.
pub fn prelude<T: Sample>(dim: usize, width: usize, shape: KernelShape) -> String {
    format!(
        "#define REAL {}\n#define DIM {dim}\n#define NSPREAD {width}\n#define KERNEL_ES {}\n",
        T::C_TYPE,
        (shape == KernelShape::ExpSemicircle) as i32
    )
}

/// Every prelude the library can produce, labelled ("3d es w8 f32"): each dimension, kernel
/// shape and precision with every width its tolerances reach (f32 down to 1e-6, f64 to 1e-14).
pub fn usfft_kernel_preludes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dim in 1..=3 {
        for (shape, name) in [
            (KernelShape::ExpSemicircle, "es"),
            (KernelShape::Gaussian, "gauss"),
        ] {
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F32) {
                out.push((
                    format!("{dim}d {name} w{w} f32"),
                    prelude::<f32>(dim, w, shape),
                ));
            }
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F64) {
                out.push((
                    format!("{dim}d {name} w{w} f64"),
                    prelude::<f64>(dim, w, shape),
                ));
            }
        }
    }
    out
}

/// Candidate bin shapes per dimension count, in order of preference.
fn tile_candidates(dim: usize) -> Vec<[usize; 3]> {
    match dim {
        1 => [8192, 4096, 2048, 1024, 512, 256, 128, 64, 32]
            .iter()
            .map(|&t| [t, 1, 1])
            .collect(),
        2 => vec![
            [64, 64, 1],
            [64, 32, 1],
            [32, 32, 1],
            [32, 16, 1],
            [16, 16, 1],
            [16, 8, 1],
            [8, 8, 1],
        ],
        _ => vec![
            [16, 16, 16],
            [16, 16, 8],
            [16, 8, 8],
            [8, 8, 8],
            [8, 8, 4],
            [8, 4, 4],
            [4, 4, 4],
        ],
    }
}

/// How type 1 spreads: shared-memory tiles of a given shape, or global atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadMethod {
    SharedTiles { shared_bytes: usize },
    GlobalAtomics,
}

/// The GPU's bin shape and spreading method for a plan with `m` points. Per point, a bin
/// costs w^d shared atomics plus its share of the tile's flush (one global atomic per padded
/// cell, weighted ×8): the cheapest bin whose padded tile leaves room for two blocks per
/// multiprocessor (≤ `TILE_BUDGET`) wins, else the cheapest that fits shared memory at all,
/// else global atomics with small bins (the sort still gives locality).
pub fn choose_tiling(
    spec: &UsfftSpec,
    m: usize,
    real_bytes: usize,
    max_shared: usize,
) -> (Tiling, SpreadMethod) {
    let w = spec.kernel.width;
    let dim = spec.dim;
    let padded = |t: &[usize; 3]| -> usize { (0..dim).map(|d| t[d] + w - 1).product() };
    let bytes = |t: &[usize; 3]| padded(t) * 2 * real_bytes;
    let density = m.max(1) as f64 / spec.fine_count() as f64;
    let cost = |t: &[usize; 3]| -> f64 {
        let cells: usize = t.iter().product();
        let points = (cells as f64 * density).max(1.0);
        (w as f64).powi(dim as i32) + 8.0 * padded(t) as f64 / points
    };
    // Bins larger than the grid only waste shared memory.
    let clamp = |t: [usize; 3]| -> [usize; 3] {
        std::array::from_fn(|d| if d < dim { t[d].min(spec.fine[d]) } else { 1 })
    };
    let cands: Vec<[usize; 3]> = tile_candidates(dim).into_iter().map(clamp).collect();
    let pick = |limit: usize| {
        cands
            .iter()
            .filter(|t| bytes(t) <= limit)
            .min_by(|a, b| cost(a).partial_cmp(&cost(b)).unwrap())
            .copied()
    };
    match pick(TILE_BUDGET.min(max_shared)).or_else(|| pick(max_shared)) {
        Some(t) => (
            Tiling::new(spec.fine, t),
            SpreadMethod::SharedTiles {
                shared_bytes: bytes(&t),
            },
        ),
        None => (
            Tiling::new(spec.fine, *cands.last().unwrap()),
            SpreadMethod::GlobalAtomics,
        ),
    }
}

/// A plan's points on the device, its fine grid, its cuFFT plan and its stream.
pub struct DevicePoints<T: Real> {
    /// First, so that it is destroyed before the buffers and the stream.
    fft: CufftPlan,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    pub m: usize,
    pub tiling: Tiling,
    pub method: SpreadMethod,
    perm: CudaSlice<i32>,
    bin_start: CudaSlice<u32>,
    first: Vec<CudaSlice<i32>>,
    offset: Vec<CudaSlice<T>>,
    fine_index: Vec<CudaSlice<i32>>,
    deconv: Vec<CudaSlice<T>>,
    /// Fine grids (n_vectors of them) and host-to-host staging buffers, one execute at a time.
    work: Mutex<Work<T>>,
    spec: UsfftSpec,
}

struct Work<T> {
    grid: CudaSlice<T>,
    c: Option<CudaSlice<T>>,
    f: Option<CudaSlice<T>>,
}

/// A cuFFT plan over the batch of fine grids, bound to the plan's stream.
struct CufftPlan(cufft_sys::cufftHandle, Arc<CudaStream>);

// SAFETY: a cuFFT handle may be used from any thread; executes are serialised by `work`.
unsafe impl Send for CufftPlan {}
unsafe impl Sync for CufftPlan {}

impl Drop for CufftPlan {
    fn drop(&mut self) {
        // The plan may be dropped on another thread than the one that made it.
        let _ = self.1.context().bind_to_thread();
        // SAFETY: created by cufftPlanMany, destroyed once.
        let _ = unsafe { cufft_result::destroy(self.0) };
    }
}

fn cufft_error(doing: &'static str) -> impl Fn(cufft_result::CufftError) -> Error {
    move |e| match e.0 {
        cufft_sys::cufftResult::CUFFT_ALLOC_FAILED => {
            Error::DeviceOutOfMemory(format!("cuFFT ran out of device memory while {doing}"))
        }
        _ => Error::CudaDriver(format!("cuFFT error while {doing}: {e:?}")),
    }
}

type DevPtr = u64;

fn dptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> DevPtr {
    let (p, _record) = s.device_ptr(stream);
    p
}

fn upload<U: cudarc::driver::DeviceRepr>(
    stream: &Arc<CudaStream>,
    host: &[U],
    what: &'static str,
) -> Result<CudaSlice<U>> {
    if host.is_empty() {
        // SAFETY: never read (no point or mode indexes it).
        return unsafe { stream.alloc::<U>(1) }.map_err(driver_error(what));
    }
    stream.clone_htod(host).map_err(driver_error(what))
}

/// Folds, sorts and uploads `m` points; builds the fine grid and the cuFFT plan.
pub fn set_points<T: Real>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    spec: &UsfftSpec,
    coords: [&[T]; 3],
    m: usize,
) -> Result<DevicePoints<T>> {
    let size = std::mem::size_of::<T>();
    let (tiling, method) = choose_tiling(spec, m, size, gpu.max_shared_bytes);
    let sorted: SortedPoints<T> =
        cpu.install(|| sort_points(coords, spec.dim, m, spec.kernel.width, tiling))?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let stream = gpu.stream()?;
    let module = gpu.modules.get(
        &gpu.ctx,
        &gpu.arch,
        &kernels::USFFT,
        &prelude::<T>(spec.dim, spec.kernel.width, spec.kernel.shape),
    )?;
    let what = "uploading USFFT points";
    // The permutation holds indices < 2^31 (checked by sort_points).
    let perm: Vec<i32> = sorted.perm.iter().map(|&p| p as i32).collect();
    let perm = upload(&stream, &perm, what)?;
    let bin_start = upload(&stream, &sorted.bin_start, what)?;
    let mut first = Vec::new();
    let mut offset = Vec::new();
    let mut fine_index = Vec::new();
    let mut deconv = Vec::new();
    for d in 0..3 {
        if d < spec.dim {
            first.push(upload(&stream, &sorted.first[d], what)?);
            offset.push(upload(&stream, &sorted.offset[d], what)?);
        } else {
            // Unused dimensions: never read by the kernels (DIM excludes them).
            first.push(upload(&stream, &[0i32], what)?);
            offset.push(upload(&stream, &[T::zero()], what)?);
        }
        let fi: Vec<i32> = spec.fine_index(d).into_iter().map(|i| i as i32).collect();
        fine_index.push(upload(&stream, &fi, "uploading USFFT mode tables")?);
        let q: Vec<T> = spec.deconv[d]
            .iter()
            .map(|&x| T::from_f64(x).unwrap())
            .collect();
        deconv.push(upload(&stream, &q, "uploading USFFT mode tables")?);
    }
    let nft = spec.fine_count();
    // SAFETY: zeroed before every use.
    let grid = unsafe { stream.alloc::<T>(2 * nft * spec.n_vectors) }
        .map_err(driver_error("allocating the USFFT fine grid"))?;
    let fft = cufft_plan::<T>(spec, &stream)?;
    stream
        .synchronize()
        .map_err(driver_error("uploading USFFT points"))?;
    Ok(DevicePoints {
        stream,
        module,
        m,
        tiling,
        method,
        perm,
        bin_start,
        first,
        offset,
        fine_index,
        deconv,
        work: Mutex::new(Work {
            grid,
            c: None,
            f: None,
        }),
        fft,
        spec: spec.clone(),
    })
}

fn cufft_plan<T: Real>(spec: &UsfftSpec, stream: &Arc<CudaStream>) -> Result<CufftPlan> {
    let dims: Vec<i32> = (0..spec.dim).rev().map(|d| spec.fine[d] as i32).collect();
    let nft = spec.fine_count();
    if nft > i32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "a fine grid of {nft} cells is beyond cuFFT's 32-bit plan sizes"
        )));
    }
    let kind = if std::mem::size_of::<T>() == 4 {
        cufft_sys::cufftType::CUFFT_C2C
    } else {
        cufft_sys::cufftType::CUFFT_Z2Z
    };
    let mut n = dims.clone();
    // SAFETY: plain plan creation; the handle is owned by CufftPlan.
    let handle = unsafe {
        cufft_result::plan_many(
            dims.len() as i32,
            n.as_mut_ptr(),
            std::ptr::null_mut(),
            1,
            nft as i32,
            std::ptr::null_mut(),
            1,
            nft as i32,
            kind,
            spec.n_vectors as i32,
        )
    }
    .map_err(cufft_error("planning the fine-grid FFT"))?;
    let plan = CufftPlan(handle, stream.clone());
    // SAFETY: the stream outlives the plan (both owned by DevicePoints).
    unsafe { cufft_result::set_stream(handle, stream.cu_stream() as _) }
        .map_err(cufft_error("binding the FFT to a stream"))?;
    Ok(plan)
}

impl<T: Real> DevicePoints<T> {
    /// The stream every execute of this plan runs on (for events around device-resident calls).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn function(&self, name: &str, shared_bytes: usize) -> Result<CudaFunction> {
        let f = self
            .module
            .load_function(name)
            .map_err(driver_error("finding a USFFT kernel"))?;
        if shared_bytes > 48 * 1024 {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as i32,
            )
            .map_err(driver_error("raising a USFFT kernel's shared-memory limit"))?;
        }
        Ok(f)
    }

    /// Queues one execute on the plan's stream: `c` (2·n_vectors·M reals) and `f`
    /// (2·n_vectors·N1N2N3 reals) are device addresses; `grid` the fine grids.
    fn enqueue(
        &self,
        c: DevPtr,
        f: DevPtr,
        grid: &mut CudaSlice<T>,
        events: Option<&[CudaEvent; 4]>,
    ) -> Result<()> {
        let mark = |i: usize| -> Result<()> {
            match events {
                Some(e) => e[i]
                    .record(&self.stream)
                    .map_err(driver_error("recording an event")),
                None => Ok(()),
            }
        };
        let spec = &self.spec;
        let s = &self.stream;
        let g = {
            let (p, _r) = grid.device_ptr_mut(s);
            p
        };
        mark(0)?;
        // SAFETY: the fine grids span grid.len() elements of T.
        unsafe {
            result::memset_d8_async(g, 0, grid.len() * std::mem::size_of::<T>(), s.cu_stream())
        }
        .map_err(driver_error("clearing the USFFT fine grid"))?;
        let m = self.m as i64;
        let nvec = spec.n_vectors as i32;
        let [nf1, nf2, nf3] = spec.fine.map(|n| n as i32);
        let beta = T::from_f64(spec.kernel.beta).unwrap();
        let [i1, i2, i3] = [0, 1, 2].map(|d| dptr(&self.first[d], s));
        let [d1, d2, d3] = [0, 1, 2].map(|d| dptr(&self.offset[d], s));
        let perm = dptr(&self.perm, s);
        let per_point = LaunchConfig {
            grid_dim: ((self.m as u32).div_ceil(THREADS).max(1), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let deconvolve = |to_modes: i32| -> Result<()> {
            let total = spec.mode_count() * spec.n_vectors;
            let cfg = LaunchConfig {
                grid_dim: ((total as u64).div_ceil(THREADS as u64) as u32, 1, 1),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let func = self.function("usfft_deconvolve", 0)?;
            let [fi1, fi2, fi3] = [0, 1, 2].map(|d| dptr(&self.fine_index[d], s));
            let [q1, q2, q3] = [0, 1, 2].map(|d| dptr(&self.deconv[d], s));
            let [n1, n2, n3] = spec.modes.map(|n| n as i32);
            let mut b = s.launch_builder(&func);
            b.arg(&f)
                .arg(&g)
                .arg(&fi1)
                .arg(&fi2)
                .arg(&fi3)
                .arg(&q1)
                .arg(&q2)
                .arg(&q3);
            b.arg(&n1)
                .arg(&n2)
                .arg(&n3)
                .arg(&nf1)
                .arg(&nf2)
                .arg(&nf3)
                .arg(&nvec)
                .arg(&to_modes);
            // SAFETY: the arguments match usfft_deconvolve; buffers span the plan's sizes.
            unsafe { b.launch(cfg) }.map_err(driver_error("launching a USFFT kernel"))?;
            Ok(())
        };
        match spec.kind {
            TransformType::Type1 => {
                if self.m > 0 {
                    match self.method {
                        SpreadMethod::SharedTiles { shared_bytes } => {
                            let t = self.tiling;
                            let [t1, t2, t3] = t.tile.map(|x| x as i32);
                            let [nb1, nb2] = [t.bins[0] as i32, t.bins[1] as i32];
                            let func = self.function("usfft_spread_sm", shared_bytes)?;
                            let bs = dptr(&self.bin_start, s);
                            let cfg = LaunchConfig {
                                grid_dim: (t.n_bins() as u32, 1, 1),
                                block_dim: (THREADS, 1, 1),
                                shared_mem_bytes: shared_bytes as u32,
                            };
                            let mut b = s.launch_builder(&func);
                            b.arg(&bs)
                                .arg(&perm)
                                .arg(&i1)
                                .arg(&i2)
                                .arg(&i3)
                                .arg(&d1)
                                .arg(&d2)
                                .arg(&d3);
                            b.arg(&c)
                                .arg(&g)
                                .arg(&m)
                                .arg(&nvec)
                                .arg(&nf1)
                                .arg(&nf2)
                                .arg(&nf3);
                            b.arg(&t1).arg(&t2).arg(&t3).arg(&nb1).arg(&nb2).arg(&beta);
                            // SAFETY: the arguments match usfft_spread_sm; the shared memory is
                            // the padded tile the kernel indexes.
                            unsafe { b.launch(cfg) }
                                .map_err(driver_error("launching a USFFT kernel"))?;
                        }
                        SpreadMethod::GlobalAtomics => {
                            let func = self.function("usfft_spread_gm", 0)?;
                            let mut b = s.launch_builder(&func);
                            b.arg(&perm)
                                .arg(&i1)
                                .arg(&i2)
                                .arg(&i3)
                                .arg(&d1)
                                .arg(&d2)
                                .arg(&d3);
                            b.arg(&c)
                                .arg(&g)
                                .arg(&m)
                                .arg(&nvec)
                                .arg(&nf1)
                                .arg(&nf2)
                                .arg(&nf3)
                                .arg(&beta);
                            // SAFETY: the arguments match usfft_spread_gm.
                            unsafe { b.launch(per_point) }
                                .map_err(driver_error("launching a USFFT kernel"))?;
                        }
                    }
                }
                mark(1)?;
                self.fft(g)?;
                mark(2)?;
                deconvolve(1)?;
            }
            TransformType::Type2 => {
                deconvolve(0)?;
                mark(1)?;
                self.fft(g)?;
                mark(2)?;
                if self.m > 0 {
                    let func = self.function("usfft_interp", 0)?;
                    let mut b = s.launch_builder(&func);
                    b.arg(&perm)
                        .arg(&i1)
                        .arg(&i2)
                        .arg(&i3)
                        .arg(&d1)
                        .arg(&d2)
                        .arg(&d3);
                    b.arg(&g)
                        .arg(&c)
                        .arg(&m)
                        .arg(&nvec)
                        .arg(&nf1)
                        .arg(&nf2)
                        .arg(&nf3)
                        .arg(&beta);
                    // SAFETY: the arguments match usfft_interp.
                    unsafe { b.launch(per_point) }
                        .map_err(driver_error("launching a USFFT kernel"))?;
                }
            }
        }
        mark(3)
    }

    fn fft(&self, grid: DevPtr) -> Result<()> {
        // cuFFT's forward direction is e^{−i…}: the direction code is the exponent's sign.
        let dir = self.spec.sign;
        // SAFETY: in place over the n_vectors fine grids the plan was made for.
        unsafe {
            if std::mem::size_of::<T>() == 4 {
                cufft_result::exec_c2c(self.fft.0, grid as *mut _, grid as *mut _, dir)
            } else {
                cufft_result::exec_z2z(self.fft.0, grid as *mut _, grid as *mut _, dir)
            }
        }
        .map_err(cufft_error("running the fine-grid FFT"))
    }
}

fn as_reals<T>(v: &[Complex<T>]) -> &[T] {
    // SAFETY: Complex<T> is repr(C) {re, im}.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<T>(), 2 * v.len()) }
}

fn as_reals_mut<T>(v: &mut [Complex<T>]) -> &mut [T] {
    // SAFETY: as above.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<T>(), 2 * v.len()) }
}

/// A device buffer of at least `len` elements, kept in `slot` between calls.
fn ensure<'a, T: Real>(
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
    s: &Arc<CudaStream>,
) -> Result<&'a mut CudaSlice<T>> {
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        *slot = None;
        // SAFETY: written by a copy or a kernel before it is read.
        *slot = Some(
            unsafe { s.alloc::<T>(len.max(1)) }
                .map_err(driver_error("allocating USFFT buffers"))?,
        );
    }
    Ok(slot.as_mut().unwrap())
}

/// Host-to-host execute: uploads the input, runs, downloads the output, waits.
pub fn execute<T: Real>(
    gpu: &CudaBackend,
    spec: &UsfftSpec,
    pts: &DevicePoints<T>,
    c: &mut [Complex<T>],
    f: &mut [Complex<T>],
) -> Result<()> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let s = pts.stream.clone();
    let nc = 2 * spec.n_vectors * pts.m;
    let nm = 2 * spec.n_vectors * spec.mode_count();
    let mut work = pts.work.lock().unwrap();
    let Work { grid, c: cd, f: fd } = &mut *work;
    let cd = dptr(ensure(cd, nc, &s)?, &s);
    let fd = dptr(ensure(fd, nm, &s)?, &s);
    let copy_err = driver_error("copying USFFT data");
    let (input, input_dev) = match spec.kind {
        TransformType::Type1 => (&as_reals(c)[..nc], cd),
        TransformType::Type2 => (&as_reals(f)[..nm], fd),
    };
    if !input.is_empty() {
        // SAFETY: the device buffer holds at least input.len() elements; the stream is
        // synchronised below before the host slice can go away.
        unsafe { result::memcpy_htod_async(input_dev, input, s.cu_stream()) }.map_err(copy_err)?;
    }
    pts.enqueue(cd, fd, grid, None)?;
    let (output, output_dev) = match spec.kind {
        TransformType::Type1 => (&mut as_reals_mut(f)[..nm], fd),
        TransformType::Type2 => (&mut as_reals_mut(c)[..nc], cd),
    };
    let copied = if output.is_empty() {
        Ok(())
    } else {
        // SAFETY: as above, device to host.
        unsafe { result::memcpy_dtoh_async(output, output_dev, s.cu_stream()) }
            .map_err(driver_error("copying USFFT results"))
    };
    let done = s.synchronize().map_err(driver_error("running the USFFT"));
    copied?;
    done
}

/// Device-resident execute, queued on the plan's stream (`DevicePoints::stream`) without
/// waiting: `c` holds 2·n_vectors·M reals (interleaved complex strengths, vector v at 2·v·M),
/// `f` 2·n_vectors·N1N2N3 reals. Type 1 reads c and writes f; type 2 reads f and writes c.
///
/// `events`, if given, are recorded at the start, after spreading (type 1) or the copy into
/// the fine grid (type 2), after the FFT, and at the end (for benchmarks).
pub fn execute_device<T: Real>(
    gpu: &CudaBackend,
    pts: &DevicePoints<T>,
    c: &mut CudaSlice<T>,
    f: &mut CudaSlice<T>,
    events: Option<&[CudaEvent; 4]>,
) -> Result<()> {
    let spec = &pts.spec;
    let nc = 2 * spec.n_vectors * pts.m;
    let nm = 2 * spec.n_vectors * spec.mode_count();
    if c.len() < nc || f.len() < nm {
        return Err(crate::invalid!(
            "device buffers hold {} and {} reals; the plan needs {nc} (strengths) and {nm} (modes)",
            c.len(),
            f.len()
        ));
    }
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let s = pts.stream.clone();
    let (cp, _rc) = c.device_ptr_mut(&s);
    let (fp, _rf) = f.device_ptr_mut(&s);
    let mut work = pts.work.lock().unwrap();
    pts.enqueue(cp, fp, &mut work.grid, events)
}
