//! Rows (pairs, or pair-windows) on their way from cross-spectra to trimmed correlations:
//! NoisePy's spectral-mean removal, one batched cuFFT C2R and the lag trim.

use super::kit::{blocks, grid_dim, Kit};
use super::put::{put_rows, RowsAt};
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::array::{complex_mut, part, part_mut, Part, PartMut};
use crate::backend::cuda::fft::{FftPlan, Shape};
use crate::backend::cuda::staging::{scatter_runs, PinnedBuffer};
use crate::backend::cuda::workspace::Work;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;
use crate::xcorr::calls::Correlations;
use crate::xcorr::geometry::Geometry;
use std::sync::Arc;

/// Rows per C2R batch: bounds the gather, FFT and trim buffers.
pub(super) const ROW_CHUNK: usize = 32768;

/// Buffers for `ROW_CHUNK` rows: spectra of nfft/2 + 1 bins (interleaved complex, which
/// the stages fill), the inverse FFTs' nfft reals, the trimmed lags; and the C2R plan of a
/// full chunk, made on first use.
pub(super) struct RowBuffers<'k> {
    pub(super) spec: Work<'k, f32>,
    real: Work<'k, f32>,
    trimmed: Work<'k, f32>,
    fft_full: Option<Arc<FftPlan>>,
}

impl<'k> RowBuffers<'k> {
    pub(super) fn new(kit: &'k Kit, nfft: usize, n_lags: usize) -> Result<RowBuffers<'k>> {
        Ok(RowBuffers {
            spec: kit.take(
                2 * ROW_CHUNK * (nfft / 2 + 1),
                "allocating correlation spectra",
            )?,
            real: kit.take(ROW_CHUNK * nfft, "allocating correlations")?,
            trimmed: kit.take(ROW_CHUNK * n_lags, "allocating correlations")?,
            fft_full: None,
        })
    }

    /// Mean removal (bin 0 also zeroed for the rows flagged in `zero_dc`, if given), C2R
    /// and trim of the first `rows` rows of `spec`, the trimmed rows queued for `host`
    /// without waiting (`PinnedBuffer::slice_mut` waits for them).
    pub(super) fn finish_to_host(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        (rows, zero_dc): (usize, Option<&Work<'_, u8>>),
        host: &mut PinnedBuffer,
    ) -> Result<()> {
        self.transform(kit, g, (rows, zero_dc), None)?;
        let len = rows * g.n_lags();
        let trimmed = part(&self.trimmed, 0, len);
        host.download_from(
            &kit.stream,
            &trimmed,
            len,
            "copying correlations to the host",
        )
    }

    /// `finish` with the trimmed rows put into a device call's output at rows `at.dst`
    /// (one per row).
    pub(super) fn finish_into(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        zero_dc: Option<&Work<'_, u8>>,
        at: RowsAt,
        out: &mut PartMut<f32>,
    ) -> Result<()> {
        let rows = at.dst.len();
        self.transform(kit, g, (rows, zero_dc), None)?;
        let trimmed = part(&self.trimmed, 0, rows * g.n_lags());
        put_rows(kit, Some(&trimmed), at, out)
    }

    /// `finish` with the trimmed rows left on the device, in `out` (rows·n_lags floats).
    pub(super) fn finish_on_device(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        (rows, zero_dc): (usize, Option<&Work<'_, u8>>),
        out: &mut PartMut<f32>,
    ) -> Result<()> {
        self.transform(kit, g, (rows, zero_dc), Some(out))
    }

    /// Mean removal, C2R and trim of the first `rows` rows, into `out` or (None) the
    /// buffers' own trimmed rows; a one-off plan is destroyed only once the stream ran it.
    fn transform(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        (rows, zero_dc): (usize, Option<&Work<'_, u8>>),
        out: Option<&mut PartMut<f32>>,
    ) -> Result<()> {
        let nbins = g.nfft / 2 + 1;
        self.center(kit, g, rows, zero_dc)?;
        let one_off = match rows == ROW_CHUNK {
            true => None,
            false => Some(kit.fft_plan(g.nfft, Shape::C2R, rows)?),
        };
        if one_off.is_none() && self.fft_full.is_none() {
            self.fft_full = Some(kit.fft_plan(g.nfft, Shape::C2R, ROW_CHUNK)?);
        }
        let fft = one_off.as_ref().or(self.fft_full.as_ref()).unwrap();
        let mut spec = complex_mut(&mut self.spec);
        let mut spec = part_mut(&mut spec, 0, rows * nbins);
        let mut real = part_mut(&mut self.real, 0, rows * g.nfft);
        fft.exec_c2r::<f32>(&mut spec, &mut real)?;
        let real = part(&self.real, 0, rows * g.nfft);
        match out {
            Some(o) => trim(kit, g, rows, &real, o)?,
            None => trim(
                kit,
                g,
                rows,
                &real,
                &mut part_mut(&mut self.trimmed, 0, rows * g.n_lags()),
            )?,
        }
        if one_off.is_some() {
            kit.release_one_off("correlating")?;
        }
        Ok(())
    }

    /// NoisePy's spectral mean removal over bins 0..nfft2 of each row.
    fn center(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        rows: usize,
        zero_dc: Option<&Work<'_, u8>>,
    ) -> Result<()> {
        let nbins = g.nfft / 2 + 1;
        let mut spec = complex_mut(&mut self.spec);
        let mut spec = part_mut(&mut spec, 0, rows * nbins);
        let zero_dc = zero_dc.map(|z| part(z, 0, rows));
        let cfg = blocks((rows.div_ceil(8) as u32, 1), (256, 1));
        let mut l = kit.launch("xc_pair_center", cfg)?;
        l.output(&mut spec)
            .scalar(rows as i32)
            .scalar(nbins as i32)
            .scalar(g.nfft2 as i32)
            .optional(zero_dc.as_ref());
        // SAFETY: xc_pair_center(c32* spec, int n_rows, int nbins, int nfft2,
        // const unsigned char* zero_dc): one warp per row (8 a block), row < n_rows = rows;
        // it touches bins k < nbins of its row, inside spec's rows·nbins, and zero_dc[row]
        // (rows flags, or null).
        unsafe { l.run() }
    }
}

/// Lags −maxlag..maxlag of each of `rows` rows of nfft reals into `out`.
fn trim(
    kit: &Kit,
    g: &Geometry,
    rows: usize,
    real: &Part<f32>,
    out: &mut PartMut<f32>,
) -> Result<()> {
    let real = part(real, 0, rows * g.nfft);
    let mut trimmed = part_mut(out, 0, rows * g.n_lags());
    let grid = (grid_dim(rows, "pairs")?, g.n_lags().div_ceil(256) as u32);
    let mut l = kit.launch("xc_trim", blocks(grid, (256, 1)))?;
    l.input(&real)
        .scalar(g.nfft as i32)
        .scalar(g.maxlag as i32)
        .output(&mut trimmed);
    // SAFETY: xc_trim(const float* y, int nfft, int maxlag, float* out): block row
    // < rows reads y[row·nfft + tau], tau < nfft, inside real's rows·nfft, and writes
    // out[row·n_lags + k] for k < n_lags = 2·maxlag + 1 (threads past it return),
    // inside trimmed's rows·n_lags.
    unsafe { l.run() }
}

/// A chunk's pairs: the tile's two station slots and the pair's index in the block.
pub(super) type Slots<'s> = &'s [(i32, i32, usize)];

/// Where a host call's rows go: the pair of index k to row `row(k)` of the caller's
/// correlations, copied on the CPU pool; `done(n)` once n more rows are there.
pub(super) struct HostDest<'d, 'o> {
    pub(super) out: &'d mut Correlations<'o>,
    pub(super) row: &'d dyn Fn(usize) -> usize,
    pub(super) cpu: &'d CpuBackend,
    pub(super) done: &'d mut dyn FnMut(usize) -> Result<()>,
}

impl HostDest<'_, '_> {
    /// The rows of `slots` (n_lags floats each, in `data`) into place.
    fn put(&mut self, slots: Slots, data: &[f32], n_lags: usize) -> Result<()> {
        let (out, stride) = self.out.rows_mut();
        let mut runs: Vec<(usize, usize, usize)> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| ((self.row)(s.2) * stride, i * n_lags, n_lags))
            .collect();
        // Distinct pairs, distinct rows: ascending, the runs do not overlap.
        runs.sort_unstable_by_key(|r| r.0);
        scatter_runs(self.cpu, data, out, &runs, ROWS_PER_TASK);
        // Row by row, as the rows were once put: a report (and a stop) between any two.
        slots.iter().try_for_each(|_| (self.done)(1))
    }
}

/// Rows a pool task copies at least (~100 KB).
const ROWS_PER_TASK: usize = 64;

/// A host call's rows on their way out through two page-locked buffers: chunk k's rows are
/// copied into buffer k mod 2 while the host puts chunk k − 1's into place, so the device
/// works on one chunk while the host copies the one before.
pub(super) struct HostRows<'k, 's> {
    gpu: &'k CudaBackend,
    bufs: [PinnedBuffer; 2],
    n_lags: usize,
    /// The chunk queued last and not yet put: its index and its slots.
    pending: Option<(usize, Slots<'s>)>,
}

impl<'k, 's> HostRows<'k, 's> {
    /// Buffers for chunks of up to `rows` rows of `n_lags` floats, from the context's pool.
    pub(super) fn new(gpu: &'k CudaBackend, rows: usize, n_lags: usize) -> Result<Self> {
        let bytes = rows.min(ROW_CHUNK) * n_lags * 4;
        let take = || gpu.staging.take(&gpu.ctx, bytes);
        Ok(HostRows {
            gpu,
            bufs: [take()?, take()?],
            n_lags,
            pending: None,
        })
    }

    /// The buffer chunk `k`'s rows go to (`RowBuffers::finish_to_host`).
    pub(super) fn buffer(&mut self, k: usize) -> &mut PinnedBuffer {
        &mut self.bufs[k % 2]
    }

    /// Chunk `k` (`slots`) is queued: the chunk before it is put into place once its copy
    /// has landed.
    pub(super) fn queued(&mut self, k: usize, slots: Slots<'s>, dest: &mut HostDest) -> Result<()> {
        self.flush(dest)?;
        self.pending = Some((k, slots));
        Ok(())
    }

    /// Puts the chunk still pending, if any.
    pub(super) fn flush(&mut self, dest: &mut HostDest) -> Result<()> {
        let Some((k, slots)) = self.pending.take() else {
            return Ok(());
        };
        let n_lags = self.n_lags;
        let data = self.bufs[k % 2].slice_mut::<f32>(slots.len() * n_lags)?;
        dest.put(slots, data, n_lags)
    }

    /// The buffers back to the pool (each once its copies are done).
    pub(super) fn release(self) {
        let [a, b] = self.bufs;
        self.gpu.staging.put(a);
        self.gpu.staging.put(b);
    }
}
