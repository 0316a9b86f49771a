//! Nonlinear stacks: per chunk of (pair, day, window) rows, the window products, C2R and
//! trim on the GPU; the stack itself (PWS, robust) on the host's cores.

use super::days::DaySpectra;
use super::kit::{blocks, grid_dim, Kit};
use super::rows::{RowBuffers, ROW_CHUNK};
use crate::backend::cuda::array::{complex_mut, part_mut, DeviceArray};
use crate::backend::cuda::buffers::upload;
use crate::backend::cuda::launch::Launch;
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::xcorr::calls::{CorrelateCall, Correlations};
use crate::xcorr::options::StackMethod;
use crate::xcorr::plan::XcorrPlan;
use crate::xcorr::spectra::Spectra;
use crate::xcorr::stack::stack_windows;
use cudarc::driver::CudaSlice;
use rayon::prelude::*;

/// The days as `xc_window_products` reads them: per day the address of its spectra, its
/// plane (stations × windows) and its windows per station.
struct DayTables<'a> {
    /// The spectra the addresses point to, borrowed while the tables live.
    _days: Vec<DaySpectra<'a>>,
    addr: CudaSlice<u64>,
    plane: CudaSlice<i64>,
    nw: CudaSlice<i32>,
}

impl<'a> DayTables<'a> {
    fn upload(kit: &Kit, days: &[&'a Spectra]) -> Result<DayTables<'a>> {
        let days: Vec<DaySpectra> = days
            .iter()
            .map(|d| DaySpectra::of(d))
            .collect::<Result<_>>()?;
        let addr: Vec<u64> = days.iter().map(|d| d.x.addr()).collect();
        let plane: Vec<i64> = days.iter().map(|d| d.plane as i64).collect();
        let nw: Vec<i32> = days.iter().map(|d| d.nw as i32).collect();
        let s = &kit.stream;
        Ok(DayTables {
            addr: upload(s, &addr, "uploading day pointers")?,
            plane: upload(s, &plane, "uploading day sizes")?,
            nw: upload(s, &nw, "uploading day sizes")?,
            _days: days,
        })
    }
}

pub(super) fn run(
    kit: &Kit,
    call: CorrelateCall,
    method: StackMethod,
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
) -> Result<()> {
    let days = call.days;
    let tables = DayTables::upload(kit, days)?;
    let pairs = call.block.pairs();
    let mut stacks = Stacks {
        kit,
        plan: call.plan,
        method,
        counts: call.counts,
        n_pairs: pairs.len(),
        tables,
        rows,
        chunk: Vec::with_capacity(ROW_CHUNK),
        pending: Vec::new(),
        next_pair: 0,
        out: call.out,
        reporter,
    };
    // Rows (pair, day, window kept in both) are made pair by pair into chunks of at most
    // ROW_CHUNK; a pair is stacked once all its rows (counts[p]) are back on the host.
    for &(i, j) in &pairs {
        for (d, day) in days.iter().enumerate() {
            let nw = day.n_windows;
            for w in 0..nw {
                if day.kept[i * nw + w] != 0 && day.kept[j * nw + w] != 0 {
                    stacks.chunk.push([d as i32, i as i32, j as i32, w as i32]);
                    if stacks.chunk.len() == ROW_CHUNK {
                        stacks.flush()?;
                    }
                }
            }
        }
    }
    stacks.flush()?;
    if stacks.next_pair != pairs.len() {
        return Err(Error::Internal(format!(
            "nonlinear stack: {} of {} pairs stacked",
            stacks.next_pair,
            pairs.len()
        )));
    }
    Ok(())
}

/// A block's pairs on their way to their stacks, in block order.
struct Stacks<'a> {
    kit: &'a Kit<'a>,
    plan: &'a XcorrPlan,
    method: StackMethod,
    counts: &'a [u32],
    n_pairs: usize,
    tables: DayTables<'a>,
    rows: &'a mut RowBuffers,
    /// Rows to correlate: day, stations i and j, window.
    chunk: Vec<[i32; 4]>,
    /// Trimmed rows of pairs next_pair.. not stacked yet.
    pending: Vec<f32>,
    next_pair: usize,
    out: Correlations<'a>,
    reporter: &'a mut Reporter,
}

impl Stacks<'_> {
    /// Correlates the chunk's rows, then stacks every pair whose rows are all here.
    fn flush(&mut self) -> Result<()> {
        if !self.chunk.is_empty() {
            let g = self.plan.geometry();
            // NoisePy zeroes bin 0 of single-window cross-correlations of two stations.
            let zero_dc: Vec<u8> = self.chunk.iter().map(|r| (r[1] != r[2]) as u8).collect();
            let zero_dc = upload(&self.kit.stream, &zero_dc, "uploading rows")?;
            self.window_products()?;
            let trimmed = self
                .rows
                .finish(self.kit, g, self.chunk.len(), Some(&zero_dc))?;
            self.pending.extend_from_slice(&trimmed);
            self.chunk.clear();
        }
        self.stack_ready()
    }

    /// conj(X_i)·X_j of each row's window, scaled by 1/nfft, into the rows' spectra.
    fn window_products(&mut self) -> Result<()> {
        let (g, kit, t) = (self.plan.geometry(), self.kit, &self.tables);
        let n_rows = self.chunk.len();
        let nbins = g.nfft / 2 + 1;
        let col = |k: usize| self.chunk.iter().map(|r| r[k]).collect::<Vec<i32>>();
        let what = "uploading rows";
        let (row_day, row_i, row_j, row_w) = (
            upload(&kit.stream, &col(0), what)?,
            upload(&kit.stream, &col(1), what)?,
            upload(&kit.stream, &col(2), what)?,
            upload(&kit.stream, &col(3), what)?,
        );
        let mut spec = complex_mut(&mut self.rows.spec);
        let mut spec = part_mut(&mut spec, 0, n_rows * nbins);
        let cfg = blocks((grid_dim(n_rows, "rows")?, 1), (128, 1));
        let mut l = Launch::new(&kit.module, &kit.stream, "xc_window_products", cfg)?;
        l.input(&t.addr)
            .input(&t.plane)
            .input(&t.nw)
            .input(&row_day)
            .input(&row_i)
            .input(&row_j)
            .input(&row_w)
            .output(&mut spec)
            .scalar(nbins as i32)
            .scalar(g.band_start as i32)
            .scalar(g.band_len as i32)
            .scalar(1.0f32 / g.nfft as f32);
        // SAFETY: xc_window_products(const unsigned long long* day_ptr, const i64* day_plane,
        // const int* day_nw, const int* row_day, const int* row_i, const int* row_j,
        // const int* row_w, c32* spec, int nbins, int band_start, int band_len, float scale):
        // block r < n_rows (the row tables' length) takes day d = row_day[r] < the day
        // tables' length; day_ptr[d] is that day's spectra (band_len·plane values, borrowed
        // by the tables), read at f·plane + i·nw + w for bins f < band_len, its stations
        // i, j and windows w < nw, so inside them; it writes spec[r·nbins + k] for
        // k < nbins, inside spec's n_rows·nbins part.
        unsafe { l.run() }
    }

    /// Stacks every pair whose rows are all here (pairs without rows give zeros).
    fn stack_ready(&mut self) -> Result<()> {
        let m = self.plan.geometry().n_lags();
        let counts = self.counts;
        let mut last = self.next_pair;
        let mut have = self.pending.len() / m;
        let mut ends = Vec::new();
        let mut used = 0usize;
        while last < self.n_pairs && (counts[last] as usize) <= have {
            used += counts[last] as usize;
            have -= counts[last] as usize;
            ends.push(used);
            last += 1;
        }
        let (pending, method, o) = (&self.pending, self.method, self.plan.options());
        let stacked: Vec<Vec<f32>> = self.plan.context().cpu.install(|| {
            (0..ends.len())
                .into_par_iter()
                .map(|q| {
                    let a = if q == 0 { 0 } else { ends[q - 1] };
                    let rows = &pending[a * m..ends[q] * m];
                    stack_windows(rows, m, method, o)
                })
                .collect()
        });
        for (p, s) in (self.next_pair..last).zip(stacked) {
            self.out.put(p, &s);
        }
        self.pending.drain(..used * m);
        let stacked = last - self.next_pair;
        self.next_pair = last;
        self.reporter.advance(stacked)
    }
}
