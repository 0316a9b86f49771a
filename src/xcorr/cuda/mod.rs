//! Ambient-noise correlation on the GPU (kernels in `kernels/xcorr.cu`).
//!
//! Preprocessing: station-days go up in chunks (staged through two page-locked buffers
//! so that the host copy of one chunk overlaps the kernels of the previous one); per
//! chunk, day kernels (detrend/taper, zero-phase Butterworth), window kernels, one
//! batched cuFFT R2C, and whitening written straight into the frequency-major spectra
//! `[bin][station][window]`, which stay on the device (`DeviceSpectra`).
//!
//! Linear stacks: per tile of stations (I × J), one cuBLAS complex GEMM batched over the
//! band bins, C_f = X_f[:, I]^H · X_f[:, J] (summed over days with β = 1), then per chunk
//! of pairs a gather into rows, NoisePy's spectral-mean removal, one batched cuFFT C2R
//! and the lag trim. Nonlinear stacks: per chunk of (pair, window) rows, products,
//! C2R and trim on the GPU; the stack itself (PWS, robust) on the host's cores.

pub mod spectra;

use super::options::{FreqNorm, StackMethod, TimeNorm};
use super::pairs::Block;
use super::plan::XcorrPlan;
use super::preprocess as pre;
use super::spectra::{Spectra, SpectraData};
use crate::backend::cuda::fft::{self, FftKind, FftPlan};
use crate::backend::cuda::launch::launch;
use crate::backend::cuda::{driver_error, kernels, wait_for_library_setup, CudaBackend};
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::progress::Reporter;
use cudarc::cufft::{result as fft_result, sys as fft_sys};
use cudarc::driver::{
    result, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use rayon::prelude::*;
use spectra::DeviceSpectra;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Pair (or pair-window) rows per C2R batch: bounds the gather, FFT and trim buffers.
const ROW_CHUNK: usize = 32768;
/// Largest device working set a call aims for (further capped by free memory).
const BUDGET: usize = 6 << 30;

/// A cap on the bytes one call plans for, 0 for none (see `set_memory_budget`).
static BUDGET_CAP: AtomicUsize = AtomicUsize::new(0);

/// Caps the device memory one call plans its chunks and tiles for (None: a quarter of the
/// free memory, at most 6 GiB). Small caps make small inputs take the several-chunk and
/// several-tile paths, for tests.
pub fn set_memory_budget(bytes: Option<usize>) {
    BUDGET_CAP.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The module and a stream for one call.
struct Kit<'a> {
    gpu: &'a CudaBackend,
    module: Arc<CudaModule>,
    stream: Arc<CudaStream>,
}

fn cfg(grid: (u32, u32), block: (u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0, grid.1, 1),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: 0,
    }
}

fn grid_dim(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n.max(1))
        .ok()
        .filter(|&g| g < i32::MAX as u32)
        .ok_or_else(|| {
            Error::Unsupported(format!("{what} exceeds what one kernel launch can index"))
        })
}

impl<'a> Kit<'a> {
    fn new(gpu: &'a CudaBackend) -> Result<Kit<'a>> {
        let module = gpu.modules.get(&gpu.ctx, &gpu.arch, &kernels::XCORR, "")?;
        Ok(Kit {
            gpu,
            module,
            stream: gpu.stream()?,
        })
    }

    fn alloc<T: cudarc::driver::DeviceRepr>(
        &self,
        len: usize,
        what: &'static str,
    ) -> Result<CudaSlice<T>> {
        // SAFETY: every element is written by a kernel or a copy before it is read.
        unsafe { self.stream.alloc::<T>(len.max(1)) }.map_err(driver_error(what))
    }

    fn upload<T: cudarc::driver::DeviceRepr>(
        &self,
        v: &[T],
        what: &'static str,
    ) -> Result<CudaSlice<T>> {
        self.stream.clone_htod(v).map_err(driver_error(what))
    }

    fn ptr<T>(&self, s: &CudaSlice<T>) -> u64 {
        s.device_ptr(&self.stream).0
    }

    /// Bytes a call may use: a quarter of the free device memory, at most BUDGET (and at
    /// most the cap of `set_memory_budget`).
    fn budget(&self) -> usize {
        let free = self
            .gpu
            .ctx
            .mem_get_info()
            .map(|(f, _)| f)
            .unwrap_or(1 << 30);
        match BUDGET_CAP.load(Ordering::Relaxed) {
            0 => (free / 4).min(BUDGET),
            cap => (free / 4).min(BUDGET).min(cap),
        }
    }

    /// A batched 1D cuFFT plan of `n` points (basic layout: rows of n reals and
    /// n/2 + 1 complex values).
    fn fft_plan(&self, n: usize, kind: FftKind, batch: usize) -> Result<FftPlan> {
        let complex = n / 2 + 1;
        let dist = if kind == FftKind::CUFFT_R2C {
            (n, complex)
        } else {
            (complex, n)
        };
        FftPlan::many(&[n], dist, kind, batch, &self.stream, "batched FFTs")
    }

    /// Copies `len` elements from the device to a host vector (synchronising).
    fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        src: u64,
        len: usize,
        what: &'static str,
    ) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len];
        // SAFETY: src holds len elements of T written on this stream; the copy completes
        // before `host` is used (synchronize below).
        unsafe { result::memcpy_dtoh_async(&mut host, src, self.stream.cu_stream()) }
            .map_err(driver_error(what))?;
        self.stream.synchronize().map_err(driver_error(what))?;
        Ok(host)
    }
}

// ---------------------------------------------------------------------------------------------
// Preprocessing.

pub fn preprocess(
    gpu: &CudaBackend,
    plan: &XcorrPlan,
    days: &[f32],
    batch: TraceBatch,
    valid: Option<&[u8]>,
    n_windows: usize,
    reporter: &mut Reporter,
) -> Result<(Vec<u8>, SpectraData)> {
    let (g, o) = (plan.geometry(), plan.options());
    let kit = Kit::new(gpu)?;
    let (n, n_sta, nw) = (batch.n_samples, batch.n_traces, n_windows);
    let nbins = g.nfft / 2 + 1;
    let plane = n_sta * nw;
    let rma = o.time_norm == TimeNorm::RunningMean;
    let per_station = n * 4
        + if valid.is_some() { n } else { 0 }
        + nw * (g.nfft * 4 + nbins * 8 + if rma { g.npts * 4 } else { 0 } + 1)
        + 8;
    // Grid limits: stations of a chunk on grid.y (≤ 65535), its rows/32 on grid.y too.
    let chunk =
        (kit.budget() / per_station).clamp(1, n_sta.min(65535).min((65535 * 32 / nw).max(1)));

    let out_len = g.band_len * plane;
    let out = kit.alloc::<f32>(2 * out_len, "allocating the window spectra")?;
    let kept = kit.alloc::<u8>(plane, "allocating the window flags")?;
    let d_day = kit.alloc::<f32>(chunk * n, "allocating station-days")?;
    let d_valid = match valid {
        Some(_) => Some(kit.alloc::<u8>(chunk * n, "allocating the validity mask")?),
        None => None,
    };
    let d_std = kit.alloc::<f64>(chunk, "allocating day statistics")?;
    let d_win = kit.alloc::<f32>(chunk * nw * g.nfft, "allocating windows")?;
    let d_scratch = if rma {
        Some(kit.alloc::<f32>(chunk * nw * g.npts, "allocating windows")?)
    } else {
        None
    };
    let d_spec = kit.alloc::<f32>(2 * chunk * nw * nbins, "allocating window spectra")?;
    let sos: Vec<f64> = plan
        .sections()
        .iter()
        .flat_map(|s| [s.b[0], s.b[1], s.b[2], s.a[0], s.a[1]])
        .collect();
    let d_sos = kit.upload(
        &if sos.is_empty() {
            vec![0.0]
        } else {
            sos.clone()
        },
        "uploading the filter",
    )?;
    let mut taper = vec![1.0f32; g.band_len];
    if o.freq_norm != FreqNorm::None {
        // cos² factors on the stored band (which starts at ix00)
        let mut full = vec![1.0f64; g.ix11 - g.ix00];
        pre::cos2_tapers(&mut full, g, |v, f| *v *= f);
        for (k, t) in taper.iter_mut().enumerate() {
            *t = full[k] as f32;
        }
    }
    let d_taper = kit.upload(&taper, "uploading the whitening taper")?;

    let (w1, w2) = pre::day_taper_lengths(n, o.sampling_rate);
    let (p_day, p_std, p_win, p_spec) = (
        kit.ptr(&d_day),
        kit.ptr(&d_std),
        kit.ptr(&d_win),
        kit.ptr(&d_spec),
    );
    let p_valid = d_valid.as_ref().map_or(0, |v| kit.ptr(v));
    let p_scratch = d_scratch.as_ref().map_or(0, |v| kit.ptr(v));
    let (p_out, p_kept, p_sos, p_taper) = (
        kit.ptr(&out),
        kit.ptr(&kept),
        kit.ptr(&d_sos),
        kit.ptr(&d_taper),
    );
    let time_norm = match o.time_norm {
        TimeNorm::None => 0i32,
        TimeNorm::OneBit => 1,
        TimeNorm::RunningMean => 2,
    };
    let freq_norm = match o.freq_norm {
        FreqNorm::None => 0i32,
        FreqNorm::RunningMean => 1,
        FreqNorm::PhaseOnly => 2,
    };

    let mut stagers = Vec::new();
    for _ in 0..2 {
        let bytes = 4 * (chunk * n + valid.map_or(0, |_| (chunk * n).div_ceil(4)));
        stagers.push((
            gpu.staging.take(&gpu.ctx, bytes)?,
            None::<cudarc::driver::CudaEvent>,
        ));
    }
    let mut fft_full: Option<FftPlan> = None;
    reporter.stage("xcorr preprocess", 1.0, n_sta);
    let result = (|| -> Result<()> {
        for (c_index, s0) in (0..n_sta).step_by(chunk).enumerate() {
            let c = chunk.min(n_sta - s0);
            let (pinned, ready) = &mut stagers[c_index % 2];
            if let Some(ev) = ready.take() {
                ev.synchronize()
                    .map_err(driver_error("waiting for a staging buffer"))?;
            }
            let stage = pinned.slice_mut::<f32>(c * n + valid.map_or(0, |_| (c * n).div_ceil(4)));
            let (vals, mask_words) = stage.split_at_mut(c * n);
            vals.par_chunks_mut(n).enumerate().for_each(|(k, dst)| {
                let at = (s0 + k) * batch.trace_stride;
                dst.copy_from_slice(&days[at..at + n]);
            });
            // SAFETY: the pinned buffer stays alive and untouched until the event below.
            unsafe { result::memcpy_htod_async(p_day, &*vals, kit.stream.cu_stream()) }
                .map_err(driver_error("copying station-days to the device"))?;
            if let Some(v) = valid {
                // SAFETY: reinterpreting the f32 words as bytes (plain data).
                let bytes = unsafe {
                    std::slice::from_raw_parts_mut(mask_words.as_mut_ptr().cast::<u8>(), c * n)
                };
                bytes.par_chunks_mut(n).enumerate().for_each(|(k, dst)| {
                    let at = (s0 + k) * batch.trace_stride;
                    dst.copy_from_slice(&v[at..at + n]);
                });
                // SAFETY: as above.
                unsafe { result::memcpy_htod_async(p_valid, &*bytes, kit.stream.cu_stream()) }
                    .map_err(driver_error("copying the validity mask to the device"))?;
            }
            *ready = Some(
                kit.stream
                    .record_event(None)
                    .map_err(driver_error("recording a staging event"))?,
            );
            let (n64, w1, w2) = (n as i64, w1 as i64, w2 as i64);
            let detrend = o.detrend_taper as i32;
            launch!(
                kit.module,
                kit.stream,
                "xc_day_prepare",
                cfg((grid_dim(c, "stations")?, 1), (256, 1)),
                &p_day,
                &p_valid,
                &n64,
                &detrend,
                &w1,
                &w2
            );
            let (ci, ns) = (c as i32, plan.sections().len() as i32);
            launch!(
                kit.module,
                kit.stream,
                "xc_day_filter",
                cfg((c.div_ceil(64) as u32, 1), (64, 1)),
                &p_day,
                &p_std,
                &ci,
                &n64,
                &ns,
                &p_sos
            );
            let p_kept_c = p_kept + (s0 * nw) as u64;
            let (nwi, npts, nfft, step) = (nw as i32, g.npts as i32, g.nfft as i32, g.step as i32);
            let (mos, tl, sn) = (o.max_over_std, g.taper_len as i32, o.smooth_n as i32);
            launch!(
                kit.module,
                kit.stream,
                "xc_windows",
                cfg((grid_dim(nw, "windows")?, c as u32), (256, 1)),
                &p_day,
                &p_valid,
                &p_std,
                &p_win,
                &p_scratch,
                &p_kept_c,
                &n64,
                &nwi,
                &npts,
                &nfft,
                &step,
                &mos,
                &tl,
                &time_norm,
                &sn
            );
            let rows = c * nw;
            let fft = if c == chunk {
                if fft_full.is_none() {
                    fft_full = Some(kit.fft_plan(g.nfft, FftKind::CUFFT_R2C, rows)?);
                }
                fft_full.as_ref().unwrap()
            } else {
                &kit.fft_plan(g.nfft, FftKind::CUFFT_R2C, rows)?
            };
            // SAFETY: p_win holds rows·nfft reals and p_spec rows·(nfft/2+1) complex values.
            unsafe {
                fft_result::exec_r2c(
                    fft.handle(),
                    p_win as *mut f32,
                    p_spec as *mut fft_sys::cufftComplex,
                )
            }
            .map_err(fft::error("transforming windows"))?;
            let (plane64, row0, rows_i) = (plane as i64, (s0 * nw) as i64, rows as i32);
            let (bs, bl, ix00, ix11, ssn) = (
                g.band_start as i32,
                g.band_len as i32,
                g.ix00 as i32,
                g.ix11 as i32,
                o.smoothspect_n as i32,
            );
            launch!(
                kit.module,
                kit.stream,
                "xc_whiten",
                cfg(
                    (
                        grid_dim(g.band_len.div_ceil(32), "bins")?,
                        grid_dim(rows.div_ceil(32), "windows")?
                    ),
                    (32, 8)
                ),
                &p_spec,
                &p_kept_c,
                &p_taper,
                &p_out,
                &plane64,
                &row0,
                &rows_i,
                &nfft,
                &bs,
                &bl,
                &ix00,
                &ix11,
                &freq_norm,
                &ssn
            );
            if c < chunk {
                // the one-off plan is dropped at the end of this iteration: finish first
                kit.stream
                    .synchronize()
                    .map_err(driver_error("preprocessing"))?;
            }
            // The host runs at most two chunks ahead of the device (the staging events).
            reporter.advance(c)?;
        }
        Ok(())
    })();
    let synced = kit
        .stream
        .synchronize()
        .map_err(driver_error("preprocessing"));
    for (pinned, _) in stagers {
        if synced.is_ok() {
            gpu.staging.put(pinned);
        }
    }
    result?;
    synced?;
    let kept_host = kit.download::<u8>(p_kept, plane, "copying the window flags")?;
    Ok((
        kept_host,
        SpectraData::Device(DeviceSpectra {
            buf: out,
            len: out_len,
        }),
    ))
}

// ---------------------------------------------------------------------------------------------
// Correlation.

fn device(d: &Spectra) -> Result<&DeviceSpectra> {
    match &d.data {
        SpectraData::Device(s) => Ok(s),
        SpectraData::Host(_) => Err(Error::Internal("host spectra on a CUDA context".into())),
    }
}

/// cuBLAS handle bound to a stream, destroyed on drop.
struct Blas(cudarc::cublas::sys::cublasHandle_t);

impl Blas {
    fn new(gpu: &CudaBackend, stream: &CudaStream) -> Result<Blas> {
        // SAFETY: probing only dlopens.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(Error::CudaUnavailable(
                "cuBLAS (libcublas) was not found by the dynamic loader; the GPU correlation needs it: add its folder to LD_LIBRARY_PATH or use a CPU context".into(),
            ));
        }
        gpu.ctx
            .bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        let h = cudarc::cublas::result::create_handle()
            .map_err(|e| Error::CudaDriver(format!("cuBLAS could not start: {e:?}")))?;
        let blas = Blas(h);
        wait_for_library_setup(&gpu.ctx)?;
        // SAFETY: a live handle and stream of this context.
        unsafe { cudarc::cublas::result::set_stream(h, stream.cu_stream() as _) }
            .map_err(|e| Error::CudaDriver(format!("cuBLAS set_stream: {e:?}")))?;
        Ok(blas)
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created by create_handle, destroyed once.
        let _ = unsafe { cudarc::cublas::result::destroy_handle(self.0) };
    }
}

/// Rows (pairs or pair-windows) on their way from spectra to trimmed correlations.
struct RowBuffers {
    spec: CudaSlice<f32>,
    real: CudaSlice<f32>,
    trimmed: CudaSlice<f32>,
    fft_full: Option<FftPlan>,
}

impl RowBuffers {
    fn new(kit: &Kit, nfft: usize, n_lags: usize) -> Result<RowBuffers> {
        Ok(RowBuffers {
            spec: kit.alloc::<f32>(
                2 * ROW_CHUNK * (nfft / 2 + 1),
                "allocating correlation spectra",
            )?,
            real: kit.alloc::<f32>(ROW_CHUNK * nfft, "allocating correlations")?,
            trimmed: kit.alloc::<f32>(ROW_CHUNK * n_lags, "allocating correlations")?,
            fft_full: None,
        })
    }

    /// Mean removal (zero_dc per row, or none), C2R and trim of `rows` rows already in
    /// `spec`; returns the trimmed rows on the host.
    fn finish(
        &mut self,
        kit: &Kit,
        plan: &XcorrPlan,
        rows: usize,
        zero_dc: u64,
    ) -> Result<Vec<f32>> {
        let g = plan.geometry();
        let nbins = g.nfft / 2 + 1;
        let (p_spec, p_real, p_trim) = (
            kit.ptr(&self.spec),
            kit.ptr(&self.real),
            kit.ptr(&self.trimmed),
        );
        let (rows_i, nbins_i, nfft2) = (rows as i32, nbins as i32, g.nfft2 as i32);
        launch!(
            kit.module,
            kit.stream,
            "xc_pair_center",
            cfg((rows.div_ceil(8) as u32, 1), (256, 1)),
            &p_spec,
            &rows_i,
            &nbins_i,
            &nfft2,
            &zero_dc
        );
        let one_off;
        let fft = if rows == ROW_CHUNK {
            if self.fft_full.is_none() {
                self.fft_full = Some(kit.fft_plan(g.nfft, FftKind::CUFFT_C2R, ROW_CHUNK)?);
            }
            self.fft_full.as_ref().unwrap()
        } else {
            one_off = kit.fft_plan(g.nfft, FftKind::CUFFT_C2R, rows)?;
            &one_off
        };
        // SAFETY: p_spec holds rows·(nfft/2+1) complex values, p_real rows·nfft reals.
        unsafe {
            fft_result::exec_c2r(
                fft.handle(),
                p_spec as *mut fft_sys::cufftComplex,
                p_real as *mut f32,
            )
        }
        .map_err(fft::error("inverse transforming correlations"))?;
        let (nfft, maxlag) = (g.nfft as i32, g.maxlag as i32);
        launch!(
            kit.module,
            kit.stream,
            "xc_trim",
            cfg(
                (grid_dim(rows, "pairs")?, g.n_lags().div_ceil(256) as u32),
                (256, 1)
            ),
            &p_real,
            &nfft,
            &maxlag,
            &p_trim
        );
        kit.download::<f32>(
            p_trim,
            rows * g.n_lags(),
            "copying correlations to the host",
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub fn correlate(
    gpu: &CudaBackend,
    plan: &XcorrPlan,
    days: &[&Spectra],
    block: &Block,
    counts: &[u32],
    out: &mut [f32],
    pair_stride: usize,
    reporter: &mut Reporter,
) -> Result<()> {
    let kit = Kit::new(gpu)?;
    let g = *plan.geometry();
    let mut rows = RowBuffers::new(&kit, g.nfft, g.n_lags())?;
    let write = |out: &mut [f32], index: &[usize], trimmed: &[f32]| {
        let m = g.n_lags();
        for (p, row) in index.iter().zip(trimmed.chunks_exact(m)) {
            out[p * pair_stride..][..m].copy_from_slice(row);
        }
    };
    reporter.stage("xcorr correlate", 1.0, block.n_pairs());
    match plan.options().stack_method {
        StackMethod::Linear => linear(
            &kit,
            plan,
            days,
            block,
            counts,
            &mut rows,
            reporter,
            &mut |idx, t| write(out, idx, t),
        ),
        method => nonlinear(
            &kit,
            plan,
            days,
            block,
            counts,
            method,
            &mut rows,
            reporter,
            out,
            pair_stride,
        ),
    }
}

/// Stations [ia, ia + m) against [jb, jb + nn).
struct Tile {
    ia: usize,
    jb: usize,
    m: usize,
    nn: usize,
}

/// C_f (+)= X_f[:, I]^H · X_f[:, J] for every band bin f: one batched complex GEMM
/// (cuBLAS, FP32), C column-major m × nn per bin.
fn gemm(
    blas: &Blas,
    x: u64,
    day: &Spectra,
    t: &Tile,
    band_len: usize,
    accumulate: bool,
    c: u64,
) -> Result<()> {
    use cudarc::cublas::sys::{
        cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType, float2,
    };
    let nw = day.n_windows;
    let plane = (day.n_stations * nw) as i64;
    let alpha = float2 { x: 1.0, y: 0.0 };
    let beta = float2 {
        x: if accumulate { 1.0 } else { 0.0 },
        y: 0.0,
    };
    let a_ptr = x + (t.ia * nw * 8) as u64;
    let b_ptr = x + (t.jb * nw * 8) as u64;
    // SAFETY: A and B are columns of the day's [bin][station][window] spectra (lda = ldb =
    // nw, batch stride = one bin's plane); C holds band_len tiles of m × nn.
    unsafe {
        cudarc::cublas::result::gemm_strided_batched_ex(
            blas.0,
            cublasOperation_t::CUBLAS_OP_C,
            cublasOperation_t::CUBLAS_OP_N,
            t.m as i32,
            t.nn as i32,
            nw as i32,
            (&alpha as *const float2).cast(),
            a_ptr as *const std::ffi::c_void,
            cudaDataType::CUDA_C_32F,
            nw as i32,
            plane,
            b_ptr as *const std::ffi::c_void,
            cudaDataType::CUDA_C_32F,
            nw as i32,
            plane,
            (&beta as *const float2).cast(),
            c as *mut std::ffi::c_void,
            cudaDataType::CUDA_C_32F,
            t.m as i32,
            (t.m * t.nn) as i64,
            band_len as i32,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
            cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
        )
    }
    .map_err(|e| match e.0 {
        cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => {
            Error::DeviceOutOfMemory("out of device memory in the correlation GEMM".into())
        }
        _ => Error::CudaDriver(format!("cuBLAS complex GEMM failed: {e:?}")),
    })
}

/// Seconds per call of the correlation GEMM of all stations of `day` (one tile, the full
/// n × n product per band bin), timed with CUDA events over `reps` calls: for the
/// benchmark's fraction of the GPU's complex-GEMM peak.
pub fn gemm_seconds(plan: &XcorrPlan, day: &Spectra, reps: usize) -> Result<f64> {
    let gpu = plan
        .context()
        .cuda
        .as_ref()
        .ok_or_else(|| Error::Unsupported("the GEMM timing needs a CUDA context".into()))?;
    let kit = Kit::new(gpu)?;
    let blas = Blas::new(gpu, &kit.stream)?;
    let n = day.n_stations;
    let band_len = plan.geometry().band_len;
    let c = kit.alloc::<f32>(2 * band_len * n * n, "allocating cross-spectra")?;
    let (x, pc) = (device(day)?.ptr(&kit.stream), kit.ptr(&c));
    let tile = Tile {
        ia: 0,
        jb: 0,
        m: n,
        nn: n,
    };
    gemm(&blas, x, day, &tile, band_len, false, pc)?;
    let event = || {
        kit.stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording an event"))
    };
    let start = event()?;
    for _ in 0..reps.max(1) {
        gemm(&blas, x, day, &tile, band_len, false, pc)?;
    }
    let end = event()?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(driver_error("timing the GEMM"))?;
    Ok(ms as f64 / 1e3 / reps.max(1) as f64)
}

#[allow(clippy::too_many_arguments)]
fn linear(
    kit: &Kit,
    plan: &XcorrPlan,
    days: &[&Spectra],
    block: &Block,
    counts: &[u32],
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
    write: &mut dyn FnMut(&[usize], &[f32]),
) -> Result<()> {
    let g = *plan.geometry();
    let blas = Blas::new(kit.gpu, &kit.stream)?;
    // Tile side: the GEMM output of a tile (band_len·t² complex) within the budget.
    let side = ((kit.budget() / (8 * g.band_len)) as f64).sqrt() as usize;
    let side = side.clamp(32, 65536);
    let (ti_max, tj_max) = (side.min(block.ni), side.min(block.nj));
    let c_buf = kit.alloc::<f32>(2 * g.band_len * ti_max * tj_max, "allocating cross-spectra")?;
    let p_c = kit.ptr(&c_buf);
    let day_ptrs: Vec<u64> = days
        .iter()
        .map(|d| device(d).map(|s| s.ptr(&kit.stream)))
        .collect::<Result<_>>()?;
    let nbins = g.nfft / 2 + 1;
    for ti in (0..block.ni).step_by(ti_max) {
        let tj0 = if block.is_diagonal() { ti } else { 0 };
        for tj in (tj0..block.nj).step_by(tj_max) {
            let (ia, jb) = (block.i0 + ti, block.j0 + tj);
            let m = ti_max.min(block.ni - ti);
            let nn = tj_max.min(block.nj - tj);
            // The tile's pairs, column-major (consecutive a for one b read C contiguously).
            let mut slots = Vec::new();
            for b in 0..nn {
                for a in 0..m {
                    if let Some(p) = block.index(ia + a, jb + b) {
                        slots.push((a as i32, b as i32, p));
                    }
                }
            }
            if slots.is_empty() {
                continue;
            }
            for (d, day) in days.iter().enumerate() {
                let tile = Tile { ia, jb, m, nn };
                gemm(&blas, day_ptrs[d], day, &tile, g.band_len, d > 0, p_c)?;
            }
            for chunk in slots.chunks(ROW_CHUNK) {
                let sa: Vec<i32> = chunk.iter().map(|s| s.0).collect();
                let sb: Vec<i32> = chunk.iter().map(|s| s.1).collect();
                let scale: Vec<f32> = chunk
                    .iter()
                    .map(|s| match counts[s.2] {
                        0 => 0.0,
                        c => (1.0 / (c as f64 * g.nfft as f64)) as f32,
                    })
                    .collect();
                let index: Vec<usize> = chunk.iter().map(|s| s.2).collect();
                let (d_a, d_b, d_s) = (
                    kit.upload(&sa, "uploading pairs")?,
                    kit.upload(&sb, "uploading pairs")?,
                    kit.upload(&scale, "uploading pairs")?,
                );
                let (pa, pb, ps, p_spec) = (
                    kit.ptr(&d_a),
                    kit.ptr(&d_b),
                    kit.ptr(&d_s),
                    kit.ptr(&rows.spec),
                );
                let (c_stride, ldc, n_slots) = ((m * nn) as i64, m as i32, chunk.len() as i32);
                let (nbins_i, bs, bl) = (nbins as i32, g.band_start as i32, g.band_len as i32);
                launch!(
                    kit.module,
                    kit.stream,
                    "xc_pair_spectra",
                    cfg(
                        (
                            nbins.div_ceil(32) as u32,
                            grid_dim(chunk.len().div_ceil(32), "pairs")?
                        ),
                        (32, 8)
                    ),
                    &p_c,
                    &c_stride,
                    &ldc,
                    &pa,
                    &pb,
                    &ps,
                    &n_slots,
                    &p_spec,
                    &nbins_i,
                    &bs,
                    &bl
                );
                let trimmed = rows.finish(kit, plan, chunk.len(), 0)?;
                write(&index, &trimmed);
                reporter.advance(index.len())?;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn nonlinear(
    kit: &Kit,
    plan: &XcorrPlan,
    days: &[&Spectra],
    block: &Block,
    counts: &[u32],
    method: StackMethod,
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
    out: &mut [f32],
    pair_stride: usize,
) -> Result<()> {
    let g = *plan.geometry();
    let m = g.n_lags();
    let o = plan.options();
    let day_ptr: Vec<u64> = days
        .iter()
        .map(|d| device(d).map(|s| s.ptr(&kit.stream)))
        .collect::<Result<_>>()?;
    let day_plane: Vec<i64> = days
        .iter()
        .map(|d| (d.n_stations * d.n_windows) as i64)
        .collect();
    let day_nw: Vec<i32> = days.iter().map(|d| d.n_windows as i32).collect();
    let (d_ptr, d_plane, d_nw) = (
        kit.upload(&day_ptr, "uploading day pointers")?,
        kit.upload(&day_plane, "uploading day sizes")?,
        kit.upload(&day_nw, "uploading day sizes")?,
    );
    let pairs = block.pairs();
    // Rows (pair, day, window kept in both) are made pair by pair into chunks of at most
    // ROW_CHUNK; a pair is stacked once all its rows (counts[p]) are back on the host.
    let mut chunk: Vec<[i32; 4]> = Vec::with_capacity(ROW_CHUNK); // day, i, j, w
    let mut pending: Vec<f32> = Vec::new(); // trimmed rows of pairs next_pair..
    let mut next_pair = 0usize;
    let mut run = |chunk: &mut Vec<[i32; 4]>,
                   pending: &mut Vec<f32>,
                   next_pair: &mut usize,
                   out: &mut [f32]|
     -> Result<()> {
        if !chunk.is_empty() {
            let col = |k: usize| chunk.iter().map(|r| r[k]).collect::<Vec<i32>>();
            let zero_dc: Vec<u8> = chunk.iter().map(|r| (r[1] != r[2]) as u8).collect();
            let (rd, ri, rj, rw, rz) = (
                kit.upload(&col(0), "uploading rows")?,
                kit.upload(&col(1), "uploading rows")?,
                kit.upload(&col(2), "uploading rows")?,
                kit.upload(&col(3), "uploading rows")?,
                kit.upload(&zero_dc, "uploading rows")?,
            );
            let (p_rd, p_ri, p_rj, p_rw, p_rz) = (
                kit.ptr(&rd),
                kit.ptr(&ri),
                kit.ptr(&rj),
                kit.ptr(&rw),
                kit.ptr(&rz),
            );
            let (p_dp, p_dpl, p_dnw, p_spec) = (
                kit.ptr(&d_ptr),
                kit.ptr(&d_plane),
                kit.ptr(&d_nw),
                kit.ptr(&rows.spec),
            );
            let nbins = (g.nfft / 2 + 1) as i32;
            let (bs, bl, scale) = (
                g.band_start as i32,
                g.band_len as i32,
                1.0f32 / g.nfft as f32,
            );
            launch!(
                kit.module,
                kit.stream,
                "xc_window_products",
                cfg((grid_dim(chunk.len(), "rows")?, 1), (128, 1)),
                &p_dp,
                &p_dpl,
                &p_dnw,
                &p_rd,
                &p_ri,
                &p_rj,
                &p_rw,
                &p_spec,
                &nbins,
                &bs,
                &bl,
                &scale
            );
            let trimmed = rows.finish(kit, plan, chunk.len(), p_rz)?;
            pending.extend_from_slice(&trimmed);
            chunk.clear();
        }
        // Stack every pair whose rows are all here (pairs without rows give zeros).
        let mut last = *next_pair;
        let mut have = pending.len() / m;
        let mut ends = Vec::new();
        let mut used = 0usize;
        while last < pairs.len() && (counts[last] as usize) <= have {
            used += counts[last] as usize;
            have -= counts[last] as usize;
            ends.push(used);
            last += 1;
        }
        let stacked: Vec<Vec<f32>> = plan.context().cpu.install(|| {
            (0..ends.len())
                .into_par_iter()
                .map(|q| {
                    let a = if q == 0 { 0 } else { ends[q - 1] };
                    let rows = &pending[a * m..ends[q] * m];
                    super::stack::stack_windows(rows, m, method, o)
                })
                .collect()
        });
        for (p, s) in (*next_pair..last).zip(stacked) {
            out[p * pair_stride..][..m].copy_from_slice(&s);
        }
        pending.drain(..used * m);
        let stacked = last - *next_pair;
        *next_pair = last;
        reporter.advance(stacked)
    };
    for &(i, j) in &pairs {
        for (d, day) in days.iter().enumerate() {
            let nw = day.n_windows;
            for w in 0..nw {
                if day.kept[i * nw + w] != 0 && day.kept[j * nw + w] != 0 {
                    chunk.push([d as i32, i as i32, j as i32, w as i32]);
                    if chunk.len() == ROW_CHUNK {
                        run(&mut chunk, &mut pending, &mut next_pair, out)?;
                    }
                }
            }
        }
    }
    run(&mut chunk, &mut pending, &mut next_pair, out)?;
    if next_pair != pairs.len() {
        return Err(Error::Internal(format!(
            "nonlinear stack: {} of {} pairs stacked",
            next_pair,
            pairs.len()
        )));
    }
    Ok(())
}
