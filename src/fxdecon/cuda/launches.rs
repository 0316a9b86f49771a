//! One slab's device buffers and its kernels (kernels/fxdecon.cu): `fx_extract`,
//! `fx_init_out`, `fx_window_solve`, `fx_overlap_add`.
//!
//! A slab of `nread` traces (its read lines × nx, trace index tr = ix + nx · local line) is
//! read from `Lines` (a staged copy or the caller's volume) into work buffers sized for the
//! largest slab: windows `[tr][ntw][nfft]`, spectra `[tr][ntw][nf]` complex (nf = nfft/2 + 1,
//! cuFFT's R2C/C2R layout); its written traces go to `Lines` again.

use super::tables::{to_i32, SharedTables, SlabTables};
use crate::backend::cuda::array::{
    complex, complex_mut, part, part_mut, DeviceArray, DeviceArrayMut, Part, PartMut,
};
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::fft::FftPlan;
use crate::backend::cuda::launch::{for_elems_in_blocks_of, Launch};
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::CudaBackend;
use crate::error::{Error, Result};
use crate::fxdecon::geometry::Setup;
use crate::fxdecon::options::OutOfBand;
use crate::fxdecon::volume::Volume;
use cudarc::driver::{CudaModule, CudaStream, LaunchConfig};
use num_complex::Complex;
use std::sync::Arc;

/// Threads per block of `fx_window_solve` (`FX_THREADS`).
const SOLVE_THREADS: u32 = 256;
/// Relative pivot threshold of the Cholesky (f64 on f32 data).
const TOL_REL: f64 = 1e-10;
/// Threads per block of the element-wise kernels, and their most blocks: they loop over
/// the rest (grid-stride).
const THREADS: u32 = 256;
const MAX_BLOCKS: u32 = 65535 * 16;

/// The prelude of kernels/fxdecon.cu (one module for every shape).
pub fn prelude() -> String {
    format!("#define FX_THREADS {SOLVE_THREADS}\n")
}

/// The shared memory `fx_window_solve` uses (a mirror of its layout): double2 lags, partial
/// sums, matrix and right-hand side, then the float2 local traces.
pub(super) fn solve_shared_bytes(s: &Setup) -> usize {
    let (x_max, y_max) = (s.x.local_len(), s.y.local_len());
    let (lx, ly) = s.stencil.lag_extent();
    let nl = (2 * lx + 1) * (2 * ly + 1);
    let nh = nl - (nl - 1) / 2;
    let k = s.stencil.offsets.len();
    16 * (nl + nh.max(SOLVE_THREADS as usize) + k * k + k) + 8 * x_max * y_max
}

/// `Unsupported` when `fx_window_solve` cannot run this setup (`fits`).
pub(super) fn check_fits(gpu: &CudaBackend, s: &Setup) -> Result<()> {
    let shared = solve_shared_bytes(s);
    if shared > gpu.max_shared_bytes {
        return Err(Error::Unsupported(format!(
            "the operator ({} coefficients) and windows need {shared} bytes of shared memory per block; the GPU has {}",
            s.stencil.offsets.len(),
            gpu.max_shared_bytes
        )));
    }
    Ok(())
}

/// Whether `fx_window_solve` can run this setup: its operator and windows fit in a block's
/// shared memory (up to about 110 coefficients with 20 × 20 windows on an H100).
pub fn fits(gpu: &CudaBackend, s: &Setup) -> bool {
    solve_shared_bytes(s) <= gpu.max_shared_bytes
}

/// One thread per element of `total`, at most `MAX_BLOCKS` blocks.
pub(super) fn grid_stride(total: usize) -> LaunchConfig {
    let mut cfg = for_elems_in_blocks_of(total, THREADS);
    cfg.grid_dim.0 = cfg.grid_dim.0.min(MAX_BLOCKS);
    cfg
}

/// Traces of consecutive crossline lines in a device array: trace `ix + nx·line` (line
/// counted from the first) at element `ix·stride_x + line·stride_y` of `data`.
pub(super) struct Lines<A> {
    pub(super) data: A,
    pub(super) stride_x: usize,
    pub(super) stride_y: usize,
}

impl<A> Lines<A> {
    /// Lines laid out as a dense `[line][ix][sample]` block.
    pub(super) fn dense(data: A, s: &Setup) -> Lines<A> {
        Lines {
            data,
            stride_x: s.n_samples,
            stride_y: s.nx * s.n_samples,
        }
    }

    /// Lines of the caller's volume, from the line at the start of `data`.
    pub(super) fn strided(data: A, layout: Volume) -> Lines<A> {
        Lines {
            data,
            stride_x: layout.stride_x,
            stride_y: layout.stride_y,
        }
    }
}

/// A slot's work buffers, sized for `read` traces read.
pub(super) struct SlabBuffers {
    windows: DeviceBuf<f32>,
    /// Interleaved complex, as the FFTs and kernels see them.
    spec_in: DeviceBuf<f32>,
    spec_out: DeviceBuf<f32>,
}

impl SlabBuffers {
    pub(super) fn new(stream: &Arc<CudaStream>, s: &Setup, read: usize) -> Result<SlabBuffers> {
        let (nfft, nf, ntw) = (s.nfft, s.n_freq(), s.time.count());
        let what = "allocating device memory for a slab of traces";
        Ok(SlabBuffers {
            windows: alloc(stream, read * ntw * nfft, what)?,
            spec_in: alloc(stream, read * ntw * nf * 2, what)?,
            spec_out: alloc(stream, read * ntw * nf * 2, what)?,
        })
    }

    /// The first `len` values of the input and filtered spectra (interleaved complex).
    fn spectra(&mut self, len: usize) -> (Part<'_, f32>, PartMut<'_, f32>) {
        (
            part(&self.spec_in, 0, 2 * len),
            part_mut(&mut self.spec_out, 0, 2 * len),
        )
    }

    /// The time windows' spectra (R2C over the plan's batch of windows).
    pub(super) fn forward_fft(&mut self, r2c: &FftPlan) -> Result<()> {
        r2c.exec_r2c::<f32>(&self.windows, &mut complex_mut(&mut self.spec_in))
    }

    /// The filtered spectra back into the windows (C2R, which may overwrite its input:
    /// the filtered spectra are not needed afterwards).
    pub(super) fn inverse_fft(&mut self, c2r: &FftPlan) -> Result<()> {
        c2r.exec_c2r::<f32>(&mut complex_mut(&mut self.spec_out), &mut self.windows)
    }
}

/// The traces of the slab in flight: `read` traces in, of which the `write` traces from
/// `first` on go out, the first `add` of them added to what an earlier slab wrote there.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlabTraces {
    pub(super) read: usize,
    pub(super) write: usize,
    pub(super) first: usize,
    pub(super) add: usize,
    /// The slab's y-windows.
    pub(super) windows_y: usize,
}

/// A slab's spectra as the kernels take them: the input and the filtered ones (read·ntw·nf
/// complex bins each).
type Spectra<'b> = (Part<'b, Complex<f32>>, PartMut<'b, Complex<f32>>);

/// The kernels of one call on one stream.
pub(super) struct Kernels<'a> {
    pub(super) module: &'a Arc<CudaModule>,
    pub(super) stream: &'a Arc<CudaStream>,
    pub(super) s: &'a Setup,
    pub(super) tables: &'a SharedTables,
}

impl<'a> Kernels<'a> {
    /// `kernel` with a thread per element of `total`, grid-stride (`grid_stride`).
    fn per_element(&self, kernel: &str, total: usize) -> Result<Launch<'a>> {
        Launch::new(self.module, self.stream, kernel, grid_stride(total))
    }

    /// Cuts every trace of `input` (the slab's read lines) into its time windows,
    /// zero-padded to nfft.
    pub(super) fn extract<A: DeviceArray<f32>>(
        &self,
        b: &mut SlabBuffers,
        t: SlabTraces,
        input: &Lines<A>,
    ) -> Result<()> {
        let (s, tw) = (self.s, self.tables);
        let (ntw, nfft) = (s.time.count(), s.nfft);
        let total = t.read * ntw * nfft;
        let traces = part(&input.data, 0, extent(s, t.read, input));
        let mut windows = part_mut(&mut b.windows, 0, total);
        let mut l = self.per_element("fx_extract", total)?;
        l.input(&traces)
            .output(&mut windows)
            .scalar(total as i64)
            .scalar(ntw as i32)
            .scalar(nfft as i32)
            .scalar(s.nx as i32)
            .scalar(input.stride_x as i64)
            .scalar(input.stride_y as i64)
            .input(&tw.tw_start)
            .input(&tw.tw_len);
        // SAFETY: fx_extract(const float* traces, float* windows, long long total, int ntw,
        // int nfft, int nx, long long sx, long long sy, const int* tw_start,
        // const int* tw_len): threads stride over e < total = read·ntw·nfft, write
        // windows[e] (windows spans total) and read traces[(tr % nx)·sx + (tr / nx)·sy +
        // tw_start[k] + i] with tr < read, k < ntw (the tables' length), i < tw_len[k]: time
        // windows lie inside a trace, so below extent(read), which `traces` spans.
        unsafe { l.run() }
    }

    /// The filtered spectra of the slab's read traces (read·ntw·nf bins), from their input
    /// spectra: `init_out`, then each window's prediction filter added in band.
    pub(super) fn filter_spectra(
        &self,
        b: &mut SlabBuffers,
        t: SlabTraces,
        y: &SlabTables,
    ) -> Result<()> {
        let s = self.s;
        let (spec_in, mut spec_out) = b.spectra(t.read * s.time.count() * s.n_freq());
        let mut spec = (complex(&spec_in), complex_mut(&mut spec_out));
        self.init_out(&mut spec, y)?;
        if s.band.is_empty() {
            return Ok(());
        }
        self.window_solve(&mut spec, t, y)
    }

    /// The filtered spectra: zero in band (the windows add into them), outside it zero or
    /// the input times the slab's share of the trace.
    fn init_out(&self, (spec_in, spec_out): &mut Spectra, y: &SlabTables) -> Result<()> {
        let s = self.s;
        let (nf, ntw) = (s.n_freq(), s.time.count());
        let total = spec_in.len();
        let zero_out_of_band = (s.out_of_band == OutOfBand::Zero) as i32;
        let mut l = self.per_element("fx_init_out", total)?;
        l.input(spec_in)
            .output(spec_out)
            .scalar(total as i64)
            .scalar(nf as i32)
            .scalar(ntw as i32)
            .scalar(s.nx as i32)
            .input(&self.tables.in_band)
            .scalar(zero_out_of_band)
            .input(&y.share);
        // SAFETY: fx_init_out(const float2* spec_in, float2* spec_out, long long total, int nf,
        // int ntw, int nx, const int* in_band, int zero_out_of_band, const float* y_share):
        // threads stride over e < total = read·ntw·nf, the spectra's span; in_band[e mod nf]
        // holds nf flags; y_share[e / (nf·ntw) / nx] is the trace's read line, below the
        // slab's read lines that y_share holds.
        unsafe { l.run() }
    }

    /// One block per (band bin × time window, spatial window): each window's prediction
    /// filter, added into the filtered spectra.
    fn window_solve(
        &self,
        (spec_in, spec_out): &mut Spectra,
        t: SlabTraces,
        y: &SlabTables,
    ) -> Result<()> {
        let (s, tw) = (self.s, self.tables);
        let (nf, ntw, nband) = (s.n_freq(), s.time.count(), s.band.len());
        let (nwx, nwy) = (s.x.windows.len(), t.windows_y);
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
            shared_mem_bytes: solve_shared_bytes(s) as u32,
        };
        let mut l = Launch::new(self.module, self.stream, "fx_window_solve", cfg)?;
        l.input(spec_in)
            .output(spec_out)
            .scalar(nf as i32)
            .scalar(ntw as i32)
            .scalar(nband as i32)
            .input(&tw.band)
            .scalar(s.nx as i32)
            .input(&tw.x.gather)
            .input(&tw.x.params)
            .input(&tw.x.weight)
            .scalar(s.x.local_len() as i32)
            .scalar(nwx as i32)
            .input(&y.y.gather)
            .input(&y.y.params)
            .input(&y.y.weight)
            .scalar(s.y.local_len() as i32)
            .input(&tw.offsets)
            .scalar(s.stencil.offsets.len() as i32)
            .scalar(s.stencil.forward_backward as i32)
            .scalar(lx as i32)
            .scalar(ly as i32)
            .scalar(s.damping)
            .scalar(TOL_REL);
        // SAFETY: fx_window_solve(const float2* spec_in, float2* spec_out, int nf, int ntw,
        // int nband, const int* band, int nx, const int* x_gather, const int* x_params,
        // const float* x_weight, int x_max, int nwx, const int* y_gather,
        // const int* y_params, const float* y_weight, int y_max, const int* offsets, int K,
        // int forward_backward, int lx, int ly, double damping, double tol_rel).
        // blockIdx.x < nband·ntw picks band[b] < nf and time window k < ntw; blockIdx.y <
        // nwx·nwy picks an x-window (tables of nwx windows: x_max gathers and weights, 6
        // params each) and one of the slab's y-windows (its tables, y_max per window).
        // Spectra are read at traces x_gather + nx·y_gather and written at the windows'
        // output traces: x indices below nx, y indices below the slab's read lines (the
        // gathers are shifted to its first read line), so inside read·ntw·nf. offsets holds
        // 2K values; shared memory is solve_shared_bytes(s), the kernel's layout.
        unsafe { l.run() }
    }

    /// Blends the filtered windows of the written traces into `output` (the slab's written
    /// lines), with the time-window weights and the inverse FFT's 1/nfft.
    pub(super) fn overlap_add<A: DeviceArrayMut<f32>>(
        &self,
        b: &SlabBuffers,
        t: SlabTraces,
        output: &mut Lines<A>,
    ) -> Result<()> {
        let (s, tw) = (self.s, self.tables);
        let (n, ntw, nfft) = (s.n_samples, s.time.count(), s.nfft);
        let total = t.write * n;
        let windows = part(&b.windows, 0, t.read * ntw * nfft);
        let len = extent(s, t.write, output);
        let (stride_x, stride_y) = (output.stride_x, output.stride_y);
        let mut out = part_mut(&mut output.data, 0, len);
        let mut l = self.per_element("fx_overlap_add", total)?;
        l.input(&windows)
            .output(&mut out)
            .scalar(total as i64)
            .scalar(n as i32)
            .scalar(t.first as i64)
            .scalar(ntw as i32)
            .scalar(nfft as i32)
            .input(&tw.tw_start)
            .input(&tw.tw_len)
            .input(&tw.tw_weight)
            .scalar(tw.tw_max as i32)
            .scalar(1.0f32 / nfft as f32)
            .scalar(s.nx as i32)
            .scalar(stride_x as i64)
            .scalar(stride_y as i64)
            .scalar(t.add as i64);
        // SAFETY: fx_overlap_add(const float* windows, float* out, long long total,
        // int n_samples, long long first, int ntw, int nfft, const int* tw_start,
        // const int* tw_len, const float* tw_weight, int tw_max, float scale, int nx,
        // long long sx, long long sy, long long add_traces): threads stride over e < total =
        // write·n_samples and write out[(w % nx)·sx + (w / nx)·sy + t], w = e / n_samples <
        // write, t < n_samples: below extent(write), which `out` spans; they read windows of
        // trace first + w < first + write ≤ read (the written lines lie inside the read
        // ones), samples i < tw_len[k] ≤ nfft, so inside read·ntw·nfft; tw_weight holds ntw
        // rows of tw_max ≥ tw_len[k].
        unsafe { l.run() }
    }
}

/// Elements from the first sample of trace 0 to the last of trace `traces` − 1 of `lines`
/// (whole lines of nx traces).
pub(super) fn extent<A>(s: &Setup, traces: usize, lines: &Lines<A>) -> usize {
    let n_lines = traces / s.nx;
    (s.nx - 1) * lines.stride_x + (n_lines - 1) * lines.stride_y + s.n_samples
}
