//! Rows (pairs, or pair-windows) on their way from cross-spectra to trimmed correlations:
//! NoisePy's spectral-mean removal, one batched cuFFT C2R and the lag trim.

use super::kit::{blocks, grid_dim, Kit};
use super::put::{put_rows, RowsAt};
use crate::backend::cuda::array::{complex_mut, part, part_mut, Part, PartMut};
use crate::backend::cuda::buffers::download;
use crate::backend::cuda::fft::{FftPlan, Shape};
use crate::backend::cuda::workspace::Work;
use crate::error::Result;
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
    /// and trim of the first `rows` rows of `spec`; returns the trimmed rows on the host.
    pub(super) fn finish(
        &mut self,
        kit: &Kit,
        g: &Geometry,
        rows: usize,
        zero_dc: Option<&Work<'_, u8>>,
    ) -> Result<Vec<f32>> {
        self.transform(kit, g, (rows, zero_dc), None)?;
        let mut host = vec![0f32; rows * g.n_lags()];
        download(
            &kit.stream,
            &self.trimmed,
            &mut host,
            "copying correlations to the host",
        )?;
        Ok(host)
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
