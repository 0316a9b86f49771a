//! F-X / F-XY prediction filtering on the GPU, f32 (kernels/fxdecon.cu).
//!
//! Per slab of traces: cut time windows (`fx_extract`), one batched cuFFT R2C over every
//! trace × window, `fx_init_out`, one `fx_window_solve` launch for every (frequency, time
//! window, spatial window), one batched C2R, `fx_overlap_add`. Volumes are cut into slabs
//! of spatial windows along y (the crossline index, the slowest axis), each with the
//! traces its windows gather (their halo); a trace covered by windows of two slabs gets
//! both contributions, added on the host. Slabs are staged through page-locked buffers on
//! two streams, so that one slab's copies and kernels overlap the other's host work. The
//! plan keeps the streams, buffers and cuFFT plans for its next call (`Cache`).
//!
//! Progress is reported once a slab's device work is done, before it reaches the output,
//! so a stop there leaves that slab and the later ones untouched; a stop after the first
//! slab of a volume of several leaves the slabs already written filtered (as on the CPU).

use super::geometry::{AxisWindow, Setup, Slab};
use super::options::OutOfBand;
use super::volume::Volume;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::buffers::dptr;
use crate::backend::cuda::fft::{self, FftKind, FftPlan};
use crate::backend::cuda::kernels;
use crate::backend::cuda::launch::launch;
use crate::backend::cuda::staging::PinnedBuffer;
use crate::backend::cuda::{driver_error, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use cudarc::cufft::result as cufft_result;
use cudarc::driver::{result, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Threads per block of `fx_window_solve` (`FX_THREADS`).
const SOLVE_THREADS: u32 = 256;
/// Input bytes per slab: small enough that several slabs pipeline, large enough to keep
/// the device busy.
const SLAB_BYTES: usize = 64 << 20;
/// Relative pivot threshold of the Cholesky (f64 on f32 data).
const TOL_REL: f64 = 1e-10;

/// 0: slabs of `SLAB_BYTES`.
static SLAB_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the input bytes of a slab (None: the default), so that tests can run many slabs on
/// small volumes. Process-wide.
pub fn set_slab_bytes(bytes: Option<usize>) {
    SLAB_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The prelude of kernels/fxdecon.cu (one module for every shape).
pub fn prelude() -> String {
    format!("#define FX_THREADS {SOLVE_THREADS}\n")
}

fn to_i32(v: usize, what: &str) -> Result<i32> {
    i32::try_from(v)
        .map_err(|_| Error::Unsupported(format!("{what} ({v}) exceeds what the kernels index")))
}

/// The shared memory `fx_window_solve` uses (a mirror of its layout): double2 lags, partial
/// sums, matrix and right-hand side, then the float2 local traces.
fn solve_shared_bytes(x_max: usize, y_max: usize, s: &Setup) -> usize {
    let (lx, ly) = s.stencil.lag_extent();
    let nl = (2 * lx + 1) * (2 * ly + 1);
    let nh = nl - (nl - 1) / 2;
    let k = s.stencil.offsets.len();
    16 * (nl + nh.max(SOLVE_THREADS as usize) + k * k + k) + 8 * x_max * y_max
}

/// Whether `fx_window_solve` can run this setup: its operator and windows fit in a block's
/// shared memory (up to about 110 coefficients with 20 × 20 windows on an H100).
pub fn fits(gpu: &CudaBackend, s: &Setup) -> bool {
    solve_shared_bytes(s.x.local_len(), s.y.local_len(), s) <= gpu.max_shared_bytes
}

/// An axis's windows as kernel tables: gather, params (6 per window), weights.
struct AxisTables {
    gather: Vec<i32>,
    params: Vec<i32>,
    weight: Vec<f32>,
}

impl AxisTables {
    fn new(windows: &[AxisWindow], shift: usize, max: usize) -> Result<AxisTables> {
        let mut t = AxisTables {
            gather: Vec::with_capacity(windows.len() * max),
            params: Vec::with_capacity(windows.len() * 6),
            weight: Vec::with_capacity(windows.len() * max),
        };
        for w in windows {
            let g = w.gather.len();
            for j in 0..max {
                t.gather
                    .push(to_i32(w.gather[j.min(g - 1)] - shift, "a trace index")?);
            }
            for v in [
                g,
                w.est.start,
                w.est.len(),
                w.out.start,
                w.out.len(),
                w.out_first - shift,
            ] {
                t.params.push(to_i32(v, "a window size")?);
            }
            for j in 0..max {
                t.weight
                    .push(w.weights.get(j).copied().unwrap_or(0.0) as f32);
            }
        }
        Ok(t)
    }
}

/// Device bytes per trace of a slab: input, windows, two spectra, output.
fn bytes_per_trace(s: &Setup) -> usize {
    let ntw = s.time.count();
    4 * s.n_samples * 2 + 4 * ntw * s.nfft + 16 * ntw * s.n_freq()
}

fn plan_slabs(s: &Setup, budget: usize) -> Vec<Slab> {
    let per_y = s.nx * bytes_per_trace(s);
    let in_per_y = s.nx * s.n_samples * 4;
    let slab_bytes = match SLAB_LIMIT.load(Ordering::Relaxed) {
        0 => SLAB_BYTES,
        b => b,
    };
    s.slabs((slab_bytes / in_per_y).min(budget / per_y))
}

/// One stream's buffers and FFT plans.
struct Slot {
    stream: Arc<CudaStream>,
    pinned_in: Option<PinnedBuffer>,
    pinned_out: Option<PinnedBuffer>,
    traces: CudaSlice<f32>,
    windows: CudaSlice<f32>,
    spec_in: CudaSlice<f32>,
    spec_out: CudaSlice<f32>,
    out: CudaSlice<f32>,
    /// Forward and inverse plans by batch size (the last slab may be smaller).
    ffts: Vec<(usize, FftPlan, FftPlan)>,
    /// Index of the slab in flight.
    pending: Option<usize>,
}

struct Slots<'g> {
    gpu: &'g CudaBackend,
    slots: Vec<Slot>,
}

impl Drop for Slots<'_> {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            let idle = slot.stream.synchronize().is_ok();
            for b in [slot.pinned_in.take(), slot.pinned_out.take()]
                .into_iter()
                .flatten()
            {
                if idle {
                    self.gpu.staging.put(b);
                }
            }
        }
    }
}

/// The streams, device buffers, FFT plans and staging buffers of a finished call, and its
/// slabs, kept by the plan for its next call (allocating device memory and planning FFTs
/// cost more than a small volume's filtering).
#[derive(Default)]
pub struct Cache(Mutex<Vec<Resources>>);

struct Resources {
    slabs: Vec<Slab>,
    slots: Vec<Slot>,
}

/// Calls that run at once on one plan keep at most this many sets.
const CACHE_KEEP: usize = 2;

impl Cache {
    fn take(&self) -> Option<Resources> {
        self.0.lock().unwrap().pop()
    }

    fn put(&self, r: Resources) {
        let mut v = self.0.lock().unwrap();
        if v.len() < CACHE_KEEP {
            v.push(r);
        }
    }
}

/// Two streams (one for a single slab) with buffers for the largest slab.
fn new_slots(gpu: &CudaBackend, s: &Setup, slabs: &[Slab]) -> Result<Vec<Slot>> {
    let (n, nfft, nf, ntw, nx) = (s.n_samples, s.nfft, s.n_freq(), s.time.count(), s.nx);
    let read = slabs.iter().map(|sl| sl.read.len()).max().unwrap() * nx;
    let write = slabs.iter().map(|sl| sl.write.len()).max().unwrap() * nx;
    let mut slots = Vec::new();
    for _ in 0..slabs.len().min(2) {
        let stream = gpu.stream()?;
        let alloc = |len: usize| {
            // SAFETY: written by copies or kernels before being read.
            unsafe { stream.alloc::<f32>(len.max(1)) }.map_err(driver_error(
                "allocating device memory for a slab of traces",
            ))
        };
        slots.push(Slot {
            traces: alloc(read * n)?,
            windows: alloc(read * ntw * nfft)?,
            spec_in: alloc(read * ntw * nf * 2)?,
            spec_out: alloc(read * ntw * nf * 2)?,
            out: alloc(write * n)?,
            pinned_in: Some(gpu.staging.take(&gpu.ctx, read * n * 4)?),
            pinned_out: Some(gpu.staging.take(&gpu.ctx, write * n * 4)?),
            ffts: Vec::new(),
            pending: None,
            stream,
        });
    }
    Ok(slots)
}

struct Kit {
    module: Arc<CudaModule>,
}

fn grid_1d(total: usize) -> LaunchConfig {
    let blocks = total.div_ceil(256).clamp(1, 65535 * 16) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

struct SharedOut(*mut f32);
// SAFETY: used only to write disjoint traces from several threads.
unsafe impl Sync for SharedOut {}

#[allow(clippy::too_many_arguments)]
pub fn execute(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    s: &Setup,
    cache: &Cache,
    input: &[f32],
    output: &mut [f32],
    layout: Volume,
    reporter: &mut Reporter,
) -> Result<()> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let (n, nfft, nf, ntw, nx) = (s.n_samples, s.nfft, s.n_freq(), s.time.count(), s.nx);
    let x_max = s.x.local_len();
    let y_max = s.y.local_len();
    let shared = solve_shared_bytes(x_max, y_max, s);
    if shared > gpu.max_shared_bytes {
        return Err(Error::Unsupported(format!(
            "the operator ({} coefficients) and windows need {shared} bytes of shared memory per block; the GPU has {}",
            s.stencil.offsets.len(),
            gpu.max_shared_bytes
        )));
    }
    if s.band.is_empty() {
        // Nothing to filter: the input, or zeros when the band alone is kept.
        output_fill(cpu, input, output, layout, s.out_of_band == OutOfBand::Pass);
        return Ok(());
    }
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::FXDECON, &prelude())?;
    let kit = Kit { module };

    // Tables shared by all slabs, uploaded on their own stream and synchronised.
    let first_stream = gpu.stream()?;
    let up_i = |v: &[i32]| {
        first_stream
            .clone_htod(v)
            .map_err(driver_error("copying tables to the device"))
    };
    let up_f = |v: &[f32]| {
        first_stream
            .clone_htod(v)
            .map_err(driver_error("copying tables to the device"))
    };
    let tw_max = s.time.max_len();
    let tw_start: Vec<i32> = s.time.starts.iter().map(|&v| v as i32).collect();
    let tw_len: Vec<i32> = s.time.lens.iter().map(|&v| v as i32).collect();
    let mut tw_weight = vec![0f32; ntw * tw_max];
    for (k, w) in s.time.weights.iter().enumerate() {
        for (i, &v) in w.iter().enumerate() {
            tw_weight[k * tw_max + i] = v as f32;
        }
    }
    let band: Vec<i32> = s.band.iter().map(|&f| f as i32).collect();
    let mut in_band = vec![0i32; nf];
    for &f in &s.band {
        in_band[f] = 1;
    }
    let offsets: Vec<i32> = s
        .stencil
        .offsets
        .iter()
        .flat_map(|&(x, y)| [x, y])
        .collect();
    let xt = AxisTables::new(&s.x.windows, 0, x_max)?;
    let d_tw_start = up_i(&tw_start)?;
    let d_tw_len = up_i(&tw_len)?;
    let d_tw_weight = up_f(&tw_weight)?;
    let d_band = up_i(&band)?;
    let d_in_band = up_i(&in_band)?;
    let d_offsets = up_i(&offsets)?;
    let d_xg = up_i(&xt.gather)?;
    let d_xp = up_i(&xt.params)?;
    let d_xw = up_f(&xt.weight)?;
    first_stream
        .synchronize()
        .map_err(driver_error("copying tables to the device"))?;
    let fs = &first_stream;
    let (p_tw_start, p_tw_len, p_tw_weight) = (
        dptr(&d_tw_start, fs),
        dptr(&d_tw_len, fs),
        dptr(&d_tw_weight, fs),
    );
    let (p_band, p_in_band, p_offsets) = (
        dptr(&d_band, fs),
        dptr(&d_in_band, fs),
        dptr(&d_offsets, fs),
    );
    let (p_xg, p_xp, p_xw) = (dptr(&d_xg, fs), dptr(&d_xp, fs), dptr(&d_xw, fs));

    // Declared after the tables: on an early return the slots' streams are synchronised
    // (Slots::drop) before the tables are freed.
    let (slabs, slot_vec) = match cache.take() {
        Some(r) => (r.slabs, r.slots),
        None => {
            let (free, _) = gpu
                .ctx
                .mem_get_info()
                .map_err(driver_error("reading free device memory"))?;
            let slabs = plan_slabs(s, (free / 4).max(1));
            let slots = new_slots(gpu, s, &slabs)?;
            (slabs, slots)
        }
    };
    let n_slots = slot_vec.len();
    let mut slots = Slots {
        gpu,
        slots: slot_vec,
    };

    let out_ptr = SharedOut(output.as_mut_ptr());
    let mut written_until = 0usize;
    reporter.stage("fx slabs", 1.0, slabs.len());
    let mut finish = |slot: &mut Slot, written_until: &mut usize| -> Result<()> {
        if let Some(c) = slot.pending.take() {
            slot.stream
                .synchronize()
                .map_err(driver_error("running F-X prediction filtering"))?;
            reporter.advance(1).map_err(|e| match e {
                Error::Cancelled(m) if *written_until > 0 => Error::Cancelled(format!(
                    "{m}; the output traces of crossline lines 0 to {} hold partly filtered \
                     data (a volume filtered in slabs), the others are untouched",
                    *written_until - 1
                )),
                e => e,
            })?;
            let w = &slabs[c].write;
            let staged = slot
                .pinned_out
                .as_mut()
                .unwrap()
                .slice_mut::<f32>(w.len() * nx * n);
            let staged = &*staged;
            let already = *written_until;
            let out_ptr = &out_ptr;
            cpu.install(|| {
                (0..w.len() * nx).into_par_iter().for_each(|r| {
                    let (ix, iy) = (r % nx, w.start + r / nx);
                    let o = layout.offset(ix, iy);
                    let src = &staged[r * n..(r + 1) * n];
                    // SAFETY: traces are disjoint (Volume::new) and inside `output` (checked
                    // by the plan); each trace is written by one task.
                    let dst = unsafe { std::slice::from_raw_parts_mut(out_ptr.0.add(o), n) };
                    if iy < already {
                        // Also covered by the previous slab's windows: add.
                        dst.iter_mut().zip(src).for_each(|(d, &v)| *d += v);
                    } else {
                        dst.copy_from_slice(src);
                    }
                });
            });
            *written_until = (*written_until).max(w.end);
        }
        Ok(())
    };

    for (c, slab) in slabs.iter().enumerate() {
        let slot = &mut slots.slots[c % n_slots];
        finish(slot, &mut written_until)?;
        let nread = slab.read.len() * nx;
        let nwrite = slab.write.len() * nx;
        {
            let staged = slot.pinned_in.as_mut().unwrap().slice_mut::<f32>(nread * n);
            let first_y = slab.read.start;
            cpu.install(|| {
                staged.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
                    let o = layout.offset(r % nx, first_y + r / nx);
                    row.copy_from_slice(&input[o..o + n]);
                })
            });
        }
        let stream = slot.stream.clone();
        let cu = stream.cu_stream();
        let traces = dptr(&slot.traces, &stream);
        let windows = dptr(&slot.windows, &stream);
        let spec_in = dptr(&slot.spec_in, &stream);
        let spec_out = dptr(&slot.spec_out, &stream);
        let out = dptr(&slot.out, &stream);
        {
            let staged = slot.pinned_in.as_mut().unwrap().slice_mut::<f32>(nread * n);
            // SAFETY: page-locked source; device buffer of at least nread × n floats; the
            // host leaves the buffer alone until the stream is synchronised.
            unsafe { result::memcpy_htod_async(traces, &*staged, cu) }
                .map_err(driver_error("copying traces to the device"))?;
        }
        let yt = AxisTables::new(&s.y.windows[slab.windows.clone()], slab.read.start, y_max)?;
        let d_yg = stream
            .clone_htod(&yt.gather)
            .map_err(driver_error("copying tables to the device"))?;
        let d_yp = stream
            .clone_htod(&yt.params)
            .map_err(driver_error("copying tables to the device"))?;
        let d_yw = stream
            .clone_htod(&yt.weight)
            .map_err(driver_error("copying tables to the device"))?;
        let (p_yg, p_yp, p_yw) = (
            dptr(&d_yg, &stream),
            dptr(&d_yp, &stream),
            dptr(&d_yw, &stream),
        );
        // Out-of-band pass-through: each slab adds its windows' share of a trace.
        let share: Vec<f32> = s.share(slab).iter().map(|&v| v as f32).collect();
        let d_share = stream
            .clone_htod(&share)
            .map_err(driver_error("copying tables to the device"))?;
        let p_share = dptr(&d_share, &stream);

        let batch = nread * ntw;
        if !slot.ffts.iter().any(|f| f.0 == batch) {
            let r2c = FftPlan::many(
                &[nfft],
                (nfft, nf),
                FftKind::CUFFT_R2C,
                batch,
                &stream,
                "the forward FFTs",
            )?;
            let c2r = FftPlan::many(
                &[nfft],
                (nf, nfft),
                FftKind::CUFFT_C2R,
                batch,
                &stream,
                "the inverse FFTs",
            )?;
            slot.ffts.push((batch, r2c, c2r));
        }
        let (_, r2c, c2r) = slot.ffts.iter().find(|f| f.0 == batch).unwrap();

        let total = (nread * ntw * nfft) as i64;
        let (n_i, ntw_i, nfft_i, nf_i, nx_i) =
            (n as i32, ntw as i32, nfft as i32, nf as i32, nx as i32);
        launch!(
            kit.module,
            stream,
            "fx_extract",
            grid_1d(total as usize),
            &traces,
            &windows,
            &total,
            &n_i,
            &ntw_i,
            &nfft_i,
            &p_tw_start,
            &p_tw_len
        );
        // SAFETY: plans made for this batch on this stream; buffers sized for it.
        unsafe { cufft_result::exec_r2c(r2c.handle(), windows as *mut _, spec_in as *mut _) }
            .map_err(fft::error("running the forward FFTs"))?;
        let total_spec = (nread * ntw * nf) as i64;
        let zero_oob = (s.out_of_band == OutOfBand::Zero) as i32;
        launch!(
            kit.module,
            stream,
            "fx_init_out",
            grid_1d(total_spec as usize),
            &spec_in,
            &spec_out,
            &total_spec,
            &nf_i,
            &ntw_i,
            &nx_i,
            &p_in_band,
            &zero_oob,
            &p_share
        );
        let nband = s.band.len();
        let nwx = s.x.windows.len();
        let nwy = slab.windows.len();
        if nband > 0 {
            let grid_x = to_i32(nband * ntw, "frequencies × time windows")? as u32;
            if nwx * nwy > 65535 {
                return Err(Error::Unsupported(
                    "more than 65535 spatial windows in one slab".into(),
                ));
            }
            let (lx, ly) = s.stencil.lag_extent();
            let cfg = LaunchConfig {
                grid_dim: (grid_x, (nwx * nwy) as u32, 1),
                block_dim: (SOLVE_THREADS, 1, 1),
                shared_mem_bytes: shared as u32,
            };
            let (nband_i, xmax_i, nwx_i, ymax_i) =
                (nband as i32, x_max as i32, nwx as i32, y_max as i32);
            let (k_i, fb_i, lx_i, ly_i) = (
                s.stencil.offsets.len() as i32,
                s.stencil.forward_backward as i32,
                lx as i32,
                ly as i32,
            );
            let damping = s.damping;
            launch!(
                kit.module,
                stream,
                "fx_window_solve",
                cfg,
                &spec_in,
                &spec_out,
                &nf_i,
                &ntw_i,
                &nband_i,
                &p_band,
                &nx_i,
                &p_xg,
                &p_xp,
                &p_xw,
                &xmax_i,
                &nwx_i,
                &p_yg,
                &p_yp,
                &p_yw,
                &ymax_i,
                &p_offsets,
                &k_i,
                &fb_i,
                &lx_i,
                &ly_i,
                &damping,
                &TOL_REL
            );
        }
        // SAFETY: as above; C2R may overwrite its input, which is not needed afterwards.
        unsafe { cufft_result::exec_c2r(c2r.handle(), spec_out as *mut _, windows as *mut _) }
            .map_err(fft::error("running the inverse FFTs"))?;
        let total_out = (nwrite * n) as i64;
        let first = ((slab.write.start - slab.read.start) * nx) as i64;
        let scale = 1.0f32 / nfft as f32;
        let tw_max_i = tw_max as i32;
        launch!(
            kit.module,
            stream,
            "fx_overlap_add",
            grid_1d(total_out as usize),
            &windows,
            &out,
            &total_out,
            &n_i,
            &first,
            &ntw_i,
            &nfft_i,
            &p_tw_start,
            &p_tw_len,
            &p_tw_weight,
            &tw_max_i,
            &scale
        );
        {
            let staged = slot
                .pinned_out
                .as_mut()
                .unwrap()
                .slice_mut::<f32>(nwrite * n);
            // SAFETY: as above, device to host.
            unsafe { result::memcpy_dtoh_async(staged, out, cu) }
                .map_err(driver_error("copying traces from the device"))?;
        }
        // The per-slab tables are freed in stream order, after the kernels that read them.
        drop((d_yg, d_yp, d_yw, d_share));
        slot.pending = Some(c);
    }
    // Finish in slab order, so that a trace shared by two slabs is assigned, then added.
    let mut order: Vec<usize> = (0..n_slots).collect();
    order.sort_by_key(|&i| slots.slots[i].pending.unwrap_or(usize::MAX));
    for i in order {
        finish(&mut slots.slots[i], &mut written_until)?;
    }
    cache.put(Resources {
        slabs,
        slots: std::mem::take(&mut slots.slots),
    });
    Ok(())
}

fn output_fill(cpu: &CpuBackend, input: &[f32], output: &mut [f32], layout: Volume, copy: bool) {
    let out_ptr = SharedOut(output.as_mut_ptr());
    let out_ptr = &out_ptr;
    cpu.install(|| {
        (0..layout.nx * layout.ny).into_par_iter().for_each(|t| {
            let o = layout.offset(t % layout.nx, t / layout.nx);
            // SAFETY: disjoint traces inside `output`, one task each.
            let dst = unsafe { std::slice::from_raw_parts_mut(out_ptr.0.add(o), layout.n_samples) };
            if copy {
                dst.copy_from_slice(&input[o..o + layout.n_samples]);
            } else {
                dst.fill(0.0);
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fxdecon::options::FxdeconOptions;

    /// The host side of the slab decomposition: every window in one slab, every trace
    /// written, the passed-through shares summing to one, tables inside each slab.
    #[test]
    fn slabs_cover_every_window_and_trace_once() {
        let o = FxdeconOptions::default();
        for (nx, ny, dims, bytes) in [
            (1, 601, 2, 20 << 10),
            (40, 97, 3, 300 << 10),
            (30, 50, 3, 1),
        ] {
            let s = Setup::new(&o, 200, nx, ny, dims).unwrap();
            SLAB_LIMIT.store(bytes, Ordering::Relaxed);
            let slabs = plan_slabs(&s, usize::MAX);
            SLAB_LIMIT.store(0, Ordering::Relaxed);
            assert!(slabs.len() > 1, "{nx}×{ny}: one slab");
            let mut next = 0;
            let mut share = vec![0f64; ny];
            for sl in &slabs {
                assert_eq!(sl.windows.start, next);
                next = sl.windows.end;
                let ws = &s.y.windows[sl.windows.clone()];
                let t = AxisTables::new(ws, sl.read.start, s.y.local_len()).unwrap();
                assert!(t
                    .gather
                    .iter()
                    .all(|&g| g >= 0 && (g as usize) < sl.read.len()));
                for w in ws {
                    assert!(
                        sl.write.start <= w.out_first && w.out_first + w.out.len() <= sl.write.end
                    );
                    for (i, wt) in w.weights.iter().enumerate() {
                        share[w.out_first + i] += wt;
                    }
                }
                assert!(sl.write.start >= sl.read.start && sl.write.end <= sl.read.end);
            }
            assert_eq!(next, s.y.windows.len());
            assert!(share.iter().all(|v| (v - 1.0).abs() < 1e-12));
        }
    }
}
