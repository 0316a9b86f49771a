//! Preprocessing on the GPU. Station-days go up in chunks, staged through the pool's
//! page-locked pieces (the first filled while the chunk before is worked);
//! per chunk, day kernels (gaps, detrend and tapers, zero-phase Butterworth), window
//! kernels, one batched cuFFT R2C, and whitening written straight into the frequency-major
//! spectra `[bin][station][window]`, which stay on the device.

use super::day_filter::{self, filter_days, Days, FilterWork};
use super::held::PlanTables;
use super::kit::{blocks, grid_dim, Kit};
use super::spectra::DeviceSpectra;
use super::tables::plan_tables;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{complex, complex_mut, part, part_mut, DeviceArray, Part};
use crate::backend::cuda::buffers::{alloc, download, upload};
use crate::backend::cuda::fft::{FftPlan, Shape};
use crate::backend::cuda::memory::untallied;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::staging::{gather_runs, upload_pieces, RowMap};
use crate::backend::cuda::workspace::Work;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::layout::TraceBatch;
use crate::progress::Reporter;
use crate::xcorr::calls::PreprocessCall;
use crate::xcorr::options::{FreqNorm, Options, TimeNorm};
use crate::xcorr::plan::XcorrPlan;
use crate::xcorr::preprocess as pre;
use crate::xcorr::spectra::SpectraData;
use std::sync::Arc;

/// A call's sizes: `n_sta` station-days of `n` samples and `nw` windows, `chunk` stations
/// at a time.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    n: usize,
    n_sta: usize,
    nw: usize,
    chunk: usize,
    /// A validity mask comes with the days.
    masked: bool,
    /// Running-mean time normalisation (which needs a scratch row per window).
    rma: bool,
}

impl Sizes {
    fn new(kit: &Kit, plan: &XcorrPlan, batch: TraceBatch, masked: bool, nw: usize) -> Sizes {
        let (g, o) = (plan.geometry(), plan.options());
        let (n, n_sta) = (batch.n_samples, batch.n_traces);
        let nbins = g.nfft / 2 + 1;
        let rma = o.time_norm == TimeNorm::RunningMean;
        let per_station = n * 4
            + day_filter::bytes_per_day(n, plan.sections().len())
            + if masked { n } else { 0 }
            + nw * (g.nfft * 4 + nbins * 8 + if rma { g.npts * 4 } else { 0 } + 1)
            + 8;
        // Grid limits: stations of a chunk on grid.y (≤ 65535), its rows/32 on grid.y too.
        let chunk =
            (kit.budget() / per_station).clamp(1, n_sta.min(65535).min((65535 * 32 / nw).max(1)));
        Sizes {
            n,
            n_sta,
            nw,
            chunk,
            masked,
            rma,
        }
    }

    /// Windows of all stations: the spectra's plane per bin.
    fn plane(&self) -> usize {
        self.n_sta * self.nw
    }
}

/// The device arrays of a call: the spectra (`2·band_len·plane` floats, interleaved
/// complex, which go to the call's result) and window flags it makes; one chunk's
/// station-days, mask, day statistics, windows (nfft reals a row), running-mean scratch
/// (npts a row) and window spectra (nfft/2 + 1 bins a row), work arrays of the kit's; the
/// plan's Butterworth sections (5 values each) and whitening taper (band_len values).
struct Arrays<'w, 't> {
    out: DeviceBuf<f32>,
    kept: Work<'w, u8>,
    day: Work<'w, f32>,
    valid: Option<Work<'w, u8>>,
    day_std: Work<'w, f64>,
    win: Work<'w, f32>,
    scratch: Option<Work<'w, f32>>,
    spec: Work<'w, f32>,
    filter: FilterWork<'w>,
    sos: Part<'t, f64>,
    taper: Part<'t, f32>,
}

/// The whole of `a`.
fn all<T>(a: &impl DeviceArray<T>) -> Part<'_, T> {
    part(a, 0, a.len())
}

impl<'w, 't> Arrays<'w, 't> {
    fn new(
        kit: &'w Kit,
        plan: &XcorrPlan,
        sz: Sizes,
        (sos, taper): (Part<'t, f64>, Part<'t, f32>),
    ) -> Result<Arrays<'w, 't>> {
        let g = plan.geometry();
        let (n, nw, chunk) = (sz.n, sz.nw, sz.chunk);
        let nbins = g.nfft / 2 + 1;
        let out_len = 2 * g.band_len * sz.plane();
        let masked = |what| sz.masked.then(|| kit.take(chunk * n, what)).transpose();
        let rma = |what| {
            sz.rma
                .then(|| kit.take(chunk * nw * g.npts, what))
                .transpose()
        };
        Ok(Arrays {
            out: untallied(|| alloc(&kit.stream, out_len, "allocating the window spectra"))?,
            kept: kit.take(sz.plane(), "allocating the window flags")?,
            day: kit.take(chunk * n, "allocating station-days")?,
            valid: masked("allocating the validity mask")?,
            day_std: kit.take(chunk, "allocating day statistics")?,
            win: kit.take(chunk * nw * g.nfft, "allocating windows")?,
            scratch: rma("allocating windows")?,
            spec: kit.take(2 * chunk * nw * nbins, "allocating window spectra")?,
            filter: FilterWork::new(kit, chunk, n, plan.sections().len())?,
            sos,
            taper,
        })
    }
}

/// The kernels' codes of the time and frequency normalisations (`time_norm` and
/// `freq_norm` in kernels/xcorr.cu).
fn codes(o: &Options) -> (i32, i32) {
    let time = match o.time_norm {
        TimeNorm::None => 0,
        TimeNorm::OneBit => 1,
        TimeNorm::RunningMean => 2,
    };
    let freq = match o.freq_norm {
        FreqNorm::None => 0,
        FreqNorm::RunningMean => 1,
        FreqNorm::PhaseOnly => 2,
    };
    (time, freq)
}

/// Preprocesses host station-days: each chunk staged up through the pool's page-locked
/// pieces (a few tens of MB, whatever the batch), then worked on the device.
pub fn preprocess(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    call: PreprocessCall,
    reporter: &mut Reporter,
) -> Result<(Vec<u8>, SpectraData)> {
    let plan = call.plan;
    let kit = Kit::new(gpu)?;
    let sz = Sizes::new(&kit, plan, call.batch, call.valid.is_some(), call.n_windows);
    let (sos, taper) = plan_tables(plan.sections(), plan.geometry(), plan.options());
    let s = &kit.stream;
    let sos = upload(s, &sos, "uploading the filter")?;
    let taper = upload(s, &taper, "uploading the whitening taper")?;
    let mut chunks = Chunks {
        kit: &kit,
        plan,
        sz,
        a: Arrays::new(&kit, plan, sz, (all(&*sos), all(&*taper)))?,
        fft_full: None,
    };
    reporter.stage("xcorr preprocess", 1.0, sz.n_sta);
    for s0 in (0..sz.n_sta).step_by(sz.chunk) {
        let c = sz.chunk.min(sz.n_sta - s0);
        chunks.upload(cpu, &call, s0, c)?;
        chunks.chunk(s0, c)?;
        reporter.advance(c)?;
    }
    let mut kept = vec![0u8; sz.plane()];
    download(
        &kit.stream,
        &chunks.a.kept,
        &mut kept,
        "copying the window flags",
    )?;
    let len = plan.geometry().band_len * sz.plane();
    let spectra = DeviceSpectra::new(chunks.a.out, len);
    Ok((kept, SpectraData::Device(spectra)))
}

/// Station-days already on the device, in the host call's layout (station s at
/// `days[s·trace_stride..]`, the mask alike).
pub struct DeviceDays<'a> {
    pub days: Part<'a, f32>,
    pub valid: Option<Part<'a, u8>>,
    pub batch: TraceBatch,
    pub n_windows: usize,
}

/// `preprocess` of station-days on the device, queued on the kit's stream without
/// waiting: the same chunks and kernels, each chunk gathered on the device instead of
/// staged from the host, with the kit's work arrays and the plan's `tables`. Returns the
/// window flags (a work array) and the spectra.
pub fn preprocess_on<'w>(
    kit: &'w Kit,
    plan: &'w XcorrPlan,
    input: DeviceDays,
    tables: &PlanTables,
) -> Result<(Work<'w, u8>, DeviceSpectra)> {
    let sz = Sizes::new(
        kit,
        plan,
        input.batch,
        input.valid.is_some(),
        input.n_windows,
    );
    let tables = (all(&*tables.sos), all(&*tables.taper));
    let mut chunks = Chunks {
        kit,
        plan,
        sz,
        a: Arrays::new(kit, plan, sz, tables)?,
        fft_full: None,
    };
    for s0 in (0..sz.n_sta).step_by(sz.chunk) {
        let c = sz.chunk.min(sz.n_sta - s0);
        chunks.gather(&input, s0, c)?;
        chunks.chunk(s0, c)?;
    }
    let len = plan.geometry().band_len * sz.plane();
    let a = chunks.a;
    Ok((a.kept, DeviceSpectra::new(a.out, len)))
}

/// A call's chunks of stations on their way to the spectra.
struct Chunks<'a, 'k, 't> {
    kit: &'a Kit<'k>,
    plan: &'a XcorrPlan,
    sz: Sizes,
    a: Arrays<'a, 't>,
    /// The R2C plan of a full chunk, made on first use.
    fft_full: Option<Arc<FftPlan>>,
}

impl Chunks<'_, '_, '_> {
    /// Stations s0..s0 + c (and their mask) up to the chunk's rows. The host fills the
    /// first pieces while the chunk before is worked; returns once the rows are on the
    /// device (on the one stream, after that chunk's kernels).
    fn upload(
        &mut self,
        cpu: &CpuBackend,
        input: &PreprocessCall,
        s0: usize,
        c: usize,
    ) -> Result<()> {
        let (gpu, stream) = (self.kit.gpu, &self.kit.stream);
        let rows = RowMap {
            first: s0,
            n: self.sz.n,
            stride: input.batch.trace_stride,
        };
        let len = c * rows.n;
        let days = &mut part_mut(&mut self.a.day, 0, len);
        upload_pieces(&gpu.ctx, &gpu.staging, stream, days, len, |at, piece| {
            gather_runs(cpu, input.days, piece, &rows.runs(at, piece.len()));
            Ok(())
        })?;
        let mask = input.valid.filter(|_| self.a.valid.is_some());
        if let (Some(v), Some(d_valid)) = (mask, self.a.valid.as_mut()) {
            let valid = &mut part_mut(d_valid, 0, len);
            upload_pieces(&gpu.ctx, &gpu.staging, stream, valid, len, |at, piece| {
                gather_runs(cpu, v, piece, &rows.runs(at, piece.len()));
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Stations s0..s0 + c of device station-days (and their mask) packed into the chunk's
    /// rows, as `upload` packs them from the host.
    fn gather(&mut self, input: &DeviceDays, s0: usize, c: usize) -> Result<()> {
        let (n, stride) = (self.sz.n, input.batch.trace_stride);
        let span = (c - 1) * stride + n;
        let days = part(&input.days, s0 * stride, span);
        let valid = input.valid.as_ref().map(|v| part(v, s0 * stride, span));
        let a = &mut self.a;
        let mut day = part_mut(&mut a.day, 0, c * n);
        let mut mask = a.valid.as_mut().map(|v| part_mut(v, 0, c * n));
        let grid = ((n.div_ceil(256).min(1024)) as u32, grid_dim(c, "stations")?);
        let kit = self.kit;
        let mut l = kit.launch("xc_gather_days", blocks(grid, (256, 1)))?;
        l.input(&days)
            .optional(valid.as_ref())
            .scalar(stride as i64)
            .scalar(n as i64)
            .output(&mut day)
            .optional_output(mask.as_mut());
        // SAFETY: xc_gather_days(const float* src, const unsigned char* src_valid,
        // long long stride, long long n, float* day, unsigned char* valid): block row
        // s < c (grid.y) reads src and src_valid (both present or both null: a mask array
        // exists exactly when the input has one) at s·stride + t for t < n, inside their
        // (c − 1)·stride + n parts, and writes day and valid at s·n + t, inside the c·n parts.
        unsafe { l.run() }
    }

    /// Stations s0..s0 + c, uploaded: days, windows, their spectra, whitened into the output.
    fn chunk(&mut self, s0: usize, c: usize) -> Result<()> {
        self.day_kernels(c)?;
        self.windows(s0, c)?;
        let (rows, nfft) = (c * self.sz.nw, self.plan.geometry().nfft);
        let one_off = if c == self.sz.chunk {
            if self.fft_full.is_none() {
                self.fft_full = Some(self.kit.fft_plan(nfft, Shape::R2C, rows)?);
            }
            None
        } else {
            Some(self.kit.fft_plan(nfft, Shape::R2C, rows)?)
        };
        let fft = one_off.as_ref().or(self.fft_full.as_ref()).unwrap();
        fft.exec_r2c::<f32>(&self.a.win, &mut complex_mut(&mut self.a.spec))?;
        self.whiten(s0, c)?;
        if one_off.is_some() {
            // the one-off plan is dropped at the end of this chunk
            self.kit.release_one_off("preprocessing")?;
        }
        Ok(())
    }

    /// Gaps zeroed, detrend and day tapers, then the Butterworth filter and each day's std.
    fn day_kernels(&mut self, c: usize) -> Result<()> {
        let (o, n, kit) = (self.plan.options(), self.sz.n, self.kit);
        let (w1, w2) = pre::day_taper_lengths(n, o.sampling_rate);
        let a = &mut self.a;
        let mut day = part_mut(&mut a.day, 0, c * n);
        let valid = a.valid.as_ref().map(|v| part(v, 0, c * n));
        let mut day_std = part_mut(&mut a.day_std, 0, c);
        let cfg = blocks((grid_dim(c, "stations")?, 1), (256, 1));
        let mut l = kit.launch("xc_day_prepare", cfg)?;
        l.output(&mut day)
            .optional(valid.as_ref())
            .scalar(n as i64)
            .scalar(o.detrend_taper as i32)
            .scalar(w1 as i64)
            .scalar(w2 as i64);
        // SAFETY: xc_day_prepare(float* day, const unsigned char* valid, long long n,
        // int detrend_taper, long long w1, long long w2): block b < c touches day and valid
        // (null without a mask) at b·n .. (b + 1)·n, inside their c·n parts.
        unsafe { l.run() }?;
        let days = Days {
            day: &mut day,
            day_std: &mut day_std,
            c,
            n,
        };
        let filter = (self.plan.sections().len(), &a.sos);
        filter_days(kit, days, filter, &mut a.filter)
    }

    /// Cut, rejection, demean, detrend, taper and time normalisation of every window of
    /// the chunk: rows of nfft reals for the R2C, and their kept flags.
    fn windows(&mut self, s0: usize, c: usize) -> Result<()> {
        let (g, o, kit) = (self.plan.geometry(), self.plan.options(), self.kit);
        let (n, nw) = (self.sz.n, self.sz.nw);
        let rows = c * nw;
        let a = &mut self.a;
        let day = part(&a.day, 0, c * n);
        let valid = a.valid.as_ref().map(|v| part(v, 0, c * n));
        let day_std = part(&a.day_std, 0, c);
        let mut win = part_mut(&mut a.win, 0, rows * g.nfft);
        let mut scratch = a.scratch.as_mut().map(|s| part_mut(s, 0, rows * g.npts));
        let mut kept = part_mut(&mut a.kept, s0 * nw, rows);
        let cfg = blocks((grid_dim(nw, "windows")?, c as u32), (256, 1));
        let mut l = kit.launch("xc_windows", cfg)?;
        l.input(&day)
            .optional(valid.as_ref())
            .input(&day_std)
            .output(&mut win)
            .optional_output(scratch.as_mut())
            .output(&mut kept)
            .scalar(n as i64)
            .scalar(nw as i32)
            .scalar(g.npts as i32)
            .scalar(g.nfft as i32)
            .scalar(g.step as i32)
            .scalar(o.max_over_std)
            .scalar(g.taper_len as i32)
            .scalar(codes(o).0)
            .scalar(o.smooth_n as i32);
        // SAFETY: xc_windows(const float* day, const unsigned char* valid,
        // const double* day_std, float* win, float* scratch, unsigned char* kept,
        // long long n, int n_windows, int npts, int nfft, int step, double max_over_std,
        // int taper_len, int time_norm, int smooth_n): block (w < nw, s < c) reads day and
        // valid at s·n + w·step + t for t < npts, inside the c·n parts as
        // (nw − 1)·step + npts ≤ n (Geometry::n_windows), and day_std[s]; it writes row
        // r = s·nw + w < rows: kept[r], win[r·nfft ..] (nfft values) and, with time_norm 2
        // only (a running mean: scratch present), scratch[r·npts ..] (npts values), inside
        // the parts of rows, rows·nfft and rows·npts.
        unsafe { l.run() }
    }

    /// The chunk's window spectra, whitened (or not) on the band, into the output at
    /// `[bin][station][window]`.
    fn whiten(&mut self, s0: usize, c: usize) -> Result<()> {
        let (g, o, kit) = (self.plan.geometry(), self.plan.options(), self.kit);
        let (nw, plane) = (self.sz.nw, self.sz.plane());
        let rows = c * nw;
        let a = &mut self.a;
        let spec = complex(&a.spec);
        let spec = part(&spec, 0, rows * (g.nfft / 2 + 1));
        let kept = part(&a.kept, s0 * nw, rows);
        let mut out = complex_mut(&mut a.out);
        let grid = (
            grid_dim(g.band_len.div_ceil(32), "bins")?,
            grid_dim(rows.div_ceil(32), "windows")?,
        );
        let mut l = kit.launch("xc_whiten", blocks(grid, (32, 8)))?;
        l.input(&spec)
            .input(&kept)
            .input(&a.taper)
            .output(&mut out)
            .scalar(plane as i64)
            .scalar((s0 * nw) as i64)
            .scalar(rows as i32)
            .scalar(g.nfft as i32)
            .scalar(g.band_start as i32)
            .scalar(g.band_len as i32)
            .scalar(g.ix00 as i32)
            .scalar(g.ix11 as i32)
            .scalar(codes(o).1)
            .scalar(o.smoothspect_n as i32);
        // SAFETY: xc_whiten(const c32* spec, const unsigned char* kept, const float* taper,
        // c32* out, long long out_plane, long long row0, int rows, int nfft, int band_start,
        // int band_len, int ix00, int ix11, int freq_norm, int smoothspect_n): rows r < rows
        // read kept[r] and spec[r·nbins + k] for bins k ≤ nfft/2 (the band lies below
        // nfft2; smoothing bins fold at Nyquist), inside the parts of rows and rows·nbins;
        // taper[f] for f < band_len (its length); they write out[f·out_plane + row0 + r]
        // with row0 + r < plane = out_plane and f < band_len, inside band_len·plane.
        unsafe { l.run() }
    }
}
