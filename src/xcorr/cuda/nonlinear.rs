//! Nonlinear stacks on the device: batches of whole pairs; per batch, the window products,
//! C2R and trim of every (pair, day, window) row into device memory (in chunks of
//! `ROW_CHUNK` rows), then the stacks (`stacks`: phase-weighted, robust) and, with
//! substacks, the groups' means, each pair in one launch, and one copy of the results to
//! the host.

use super::days::DaySpectra;
use super::kit::{blocks, grid_dim, Kit};
use super::pace::Pace;
use super::put::{put_rows, RowsAt};
use super::rows::{RowBuffers, ROW_CHUNK};
use super::stacks::{group_means_on, stack_on, to_host, RowsOnDevice};
use crate::backend::cuda::array::{complex_mut, part, part_mut, DeviceArray};
use crate::backend::cuda::workspace::Work;
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::xcorr::calls::CorrelateCall;
use crate::xcorr::method::Method;
use crate::xcorr::options::StackMethod;
use crate::xcorr::spectra::Spectra;
use crate::xcorr::stack::pws_length;

/// The days as `xc_window_products` reads them: per day the addresses of its receiver
/// and source spectra, its plane (stations × windows) and its windows per station.
struct DayTables<'a, 'k> {
    /// The spectra the addresses point to, borrowed while the tables live.
    _days: Vec<DaySpectra<'a>>,
    x: Work<'k, u64>,
    a: Work<'k, u64>,
    plane: Work<'k, i64>,
    nw: Work<'k, i32>,
}

impl<'a, 'k> DayTables<'a, 'k> {
    fn upload(kit: &'k Kit, days: &[&'a Spectra]) -> Result<DayTables<'a, 'k>> {
        let days: Vec<DaySpectra> = days
            .iter()
            .map(|d| DaySpectra::of(d))
            .collect::<Result<_>>()?;
        let x: Vec<u64> = days.iter().map(|d| d.x.addr()).collect();
        let a: Vec<u64> = days.iter().map(|d| d.a.addr()).collect();
        let plane: Vec<i64> = days.iter().map(|d| d.plane as i64).collect();
        let nw: Vec<i32> = days.iter().map(|d| d.nw as i32).collect();
        Ok(DayTables {
            x: kit.upload(&x, "uploading day pointers")?,
            a: kit.upload(&a, "uploading day pointers")?,
            plane: kit.upload(&plane, "uploading day sizes")?,
            nw: kit.upload(&nw, "uploading day sizes")?,
            _days: days,
        })
    }
}

/// Device bytes a batch's row takes: its trimmed lags, and for PWS its analytic signal
/// (n complex doubles).
fn bytes_per_row(call: &CorrelateCall, method: StackMethod) -> usize {
    let m = call.plan.geometry().n_lags();
    let pws = match method {
        StackMethod::PhaseWeighted => 16 * pws_length(m),
        _ => 0,
    };
    4 * m + pws + 8 + 16
}

/// Consecutive pairs whose rows (counts[p]) fit `cap` rows together (a pair with more
/// rows than that is a batch of its own).
fn batches(counts: &[u32], cap: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut first, mut rows) = (0, 0usize);
    for (p, &c) in counts.iter().enumerate() {
        if p > first && rows + c as usize > cap {
            out.push(first..p);
            (first, rows) = (p, 0);
        }
        rows += c as usize;
    }
    if first < counts.len() {
        out.push(first..counts.len());
    }
    out
}

pub(super) fn run(
    kit: &Kit,
    call: CorrelateCall,
    method: StackMethod,
    rows: &mut RowBuffers,
    reporter: &mut Reporter,
) -> Result<()> {
    let tables = DayTables::upload(kit, call.days)?;
    let pairs = call.block.pairs();
    let per_pair_sub = call
        .groups
        .map_or(0, |g| 12 * g.n_groups * call.plan.geometry().n_lags());
    let per_row = bytes_per_row(&call, method) + per_pair_sub;
    let cap = (kit.budget() / per_row).clamp(ROW_CHUNK, i32::MAX as usize / 2);
    let mut call = call;
    let mut pace = Pace::new(&kit.stream, reporter);
    for range in batches(call.counts, cap) {
        let b = Batch::new(&call, &pairs, range.clone())?;
        let on_device = b.rows_on_device(kit, &call, &tables, rows)?;
        if call.device.is_some() {
            put_batch(
                kit,
                &mut call,
                method,
                &on_device,
                (&b.labels, range.clone()),
            )?;
            if let Some(p) = pace.as_mut() {
                p.queued(range.len(), reporter)?;
            }
            continue;
        }
        let m = call.plan.geometry().n_lags();
        let stacked = stack_on(kit, &call, method, &on_device)?;
        let what = "copying stacks to the host";
        let stacked = to_host(kit, &stacked, on_device.n_pairs * m, what)?;
        for (k, row) in range.clone().zip(stacked.chunks_exact(m)) {
            call.out.put(k, row);
        }
        if let Some(groups) = call.groups {
            let n_pairs = pairs.len();
            let labels = &b.labels;
            let means = group_means_on(kit, &call, groups, &on_device, labels, range.clone())?;
            let len = on_device.n_pairs * groups.n_groups * m;
            let means = to_host(kit, &means, len, "copying substacks to the host")?;
            for (q, k) in range.clone().enumerate() {
                for g in 0..groups.n_groups {
                    let row = &means[(q * groups.n_groups + g) * m..][..m];
                    call.sub.put(g * n_pairs + k, row);
                }
            }
        }
        reporter.advance(range.len())?;
    }
    match pace.as_mut() {
        Some(p) => p.finish(reporter),
        None => Ok(()),
    }
}

/// A batch's stacks (pairs `range`) and substacks put into a device call's outputs.
fn put_batch(
    kit: &Kit,
    call: &mut CorrelateCall,
    method: StackMethod,
    r: &RowsOnDevice,
    (labels, range): (&[i32], std::ops::Range<usize>),
) -> Result<()> {
    let n_lags = call.plan.geometry().n_lags();
    let stacked = stack_on(kit, call, method, r)?;
    let stacked = part(&stacked, 0, range.len() * n_lags);
    let means = match call.groups {
        Some(groups) => Some(group_means_on(kit, call, groups, r, labels, range.clone())?),
        None => None,
    };
    let n_pairs = call.block.n_pairs();
    let ng = call.groups.map_or(0, |g| g.n_groups);
    let d = call
        .device
        .as_mut()
        .ok_or_else(|| Error::Internal("no device output".into()))?;
    let stride = d.stride;
    let dst: Vec<i64> = range.clone().map(|k| k as i64).collect();
    let at = RowsAt::new(&dst, n_lags, stride);
    put_rows(kit, Some(&stacked), at, &mut d.stacks)?;
    if let (Some(means), Some(out)) = (means, d.substacks.as_mut()) {
        // Row q·n_groups + g of the means is group g's stack of pair range.start + q.
        let dst: Vec<i64> = range
            .clone()
            .flat_map(|k| (0..ng).map(move |g| (g * n_pairs + k) as i64))
            .collect();
        let means = part(&means, 0, dst.len() * n_lags);
        put_rows(kit, Some(&means), RowsAt::new(&dst, n_lags, stride), out)?;
    }
    Ok(())
}

/// One batch's rows: (day, i, j, window) each, their group labels, and each pair's first
/// row.
struct Batch {
    rows: Vec<[i32; 4]>,
    labels: Vec<i32>,
    start: Vec<i32>,
}

impl Batch {
    fn new(
        call: &CorrelateCall,
        pairs: &[(usize, usize)],
        range: std::ops::Range<usize>,
    ) -> Result<Batch> {
        let mut b = Batch {
            rows: Vec::new(),
            labels: Vec::new(),
            start: vec![0],
        };
        for &(i, j) in &pairs[range.clone()] {
            for (d, day) in call.days.iter().enumerate() {
                let nw = day.n_windows;
                for w in 0..nw {
                    if day.kept[i * nw + w] != 0 && day.kept[j * nw + w] != 0 {
                        b.rows.push([d as i32, i as i32, j as i32, w as i32]);
                        let label = call.groups.map_or(0, |g| g.label(d, w));
                        b.labels.push(label as i32);
                    }
                }
            }
            b.start.push(b.rows.len() as i32);
        }
        let want: usize = call.counts[range].iter().map(|&c| c as usize).sum();
        if want != b.rows.len() {
            return Err(Error::Internal(format!(
                "nonlinear stack: {} rows for {want} windows",
                b.rows.len()
            )));
        }
        Ok(b)
    }

    /// The rows correlated and trimmed into device memory, chunk by chunk.
    fn rows_on_device<'k>(
        &self,
        kit: &'k Kit,
        call: &CorrelateCall,
        tables: &DayTables,
        buffers: &mut RowBuffers,
    ) -> Result<RowsOnDevice<'k>> {
        let g = call.plan.geometry();
        let m = g.n_lags();
        let method = Method::of(call.plan.options());
        let mut all = kit.take::<f32>(self.rows.len().max(1) * m, "allocating correlations")?;
        for (c, chunk) in self.rows.chunks(ROW_CHUNK).enumerate() {
            let zero_dc: Vec<u8> = chunk
                .iter()
                .map(|r| method.zero_dc(r[1] as usize, r[2] as usize) as u8)
                .collect();
            let zero_dc = kit.upload(&zero_dc, "uploading rows")?;
            window_products(kit, call, tables, chunk, buffers)?;
            let mut dst = part_mut(&mut all, c * ROW_CHUNK * m, chunk.len() * m);
            buffers.finish_on_device(kit, g, (chunk.len(), Some(&zero_dc)), &mut dst)?;
        }
        Ok(RowsOnDevice {
            rows: all,
            start: kit.upload(&self.start, "uploading rows")?,
            start_host: self.start.clone(),
            n_rows: self.rows.len(),
            n_pairs: self.start.len() - 1,
        })
    }
}

/// conj(A_i)·X_j of each row's window, scaled by 1/nfft, into the row buffers' spectra.
fn window_products(
    kit: &Kit,
    call: &CorrelateCall,
    t: &DayTables,
    chunk: &[[i32; 4]],
    rows: &mut RowBuffers,
) -> Result<()> {
    let g = call.plan.geometry();
    let n_rows = chunk.len();
    let nbins = g.nfft / 2 + 1;
    let col = |k: usize| chunk.iter().map(|r| r[k]).collect::<Vec<i32>>();
    let what = "uploading rows";
    let (row_day, row_i, row_j, row_w) = (
        kit.upload(&col(0), what)?,
        kit.upload(&col(1), what)?,
        kit.upload(&col(2), what)?,
        kit.upload(&col(3), what)?,
    );
    let mut spec = complex_mut(&mut rows.spec);
    let mut spec = part_mut(&mut spec, 0, n_rows * nbins);
    let cfg = blocks((grid_dim(n_rows, "rows")?, 1), (128, 1));
    let mut l = kit.launch("xc_window_products", cfg)?;
    l.input(&t.x)
        .input(&t.a)
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
    // SAFETY: xc_window_products(const unsigned long long* day_x, const unsigned long long*
    // day_a, const i64* day_plane, const int* day_nw, const int* row_day, const int* row_i,
    // const int* row_j, const int* row_w, c32* spec, int nbins, int band_start,
    // int band_len, float scale): block r < n_rows (the row tables' length) takes day
    // d = row_day[r] < the day tables' length; day_x[d] and day_a[d] are that day's
    // spectra (band_len·plane values each, borrowed by the tables), read at
    // f·plane + i·nw + w for bins f < band_len, its stations i, j and windows w < nw, so
    // inside them; it writes spec[r·nbins + k] for k < nbins, inside spec's n_rows·nbins
    // part.
    unsafe { l.run() }
}
