//! The search's device state: the tables the kernels read, one launch of both kernels
//! over a range of rows, and the reductions read back.

use super::super::criterion::{Mode, Norm};
use super::super::result::Tally;
use super::super::setup::SearchSetup;
use super::{i32s, prelude};
use crate::backend::cuda::array::part;
use crate::backend::cuda::buffers::{download, upload, zeros};
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::{kernels, CudaBackend};
use crate::error::Result;
use cudarc::driver::{CudaModule, CudaStream, DeviceRepr, LaunchConfig};
use std::sync::Arc;

const THREADS: u32 = 256;
/// Histogram bins kept in a block's shared memory (u32 each); more go to global atomics.
const SHARED_BINS: usize = 6144;
/// Axis-0 values per work item of both kernels (the direct kernel's EM_LANES).
const SEGMENT: usize = 16;
/// What the table uploads report on failure.
const TABLES: &str = "copying search tables to the device";

/// The search on the device: its module and stream, the tables the kernels read and the
/// reductions they add to.
pub struct DeviceSearch<'s> {
    s: &'s SearchSetup<'s>,
    module: Arc<CudaModule>,
    pub stream: Arc<CudaStream>,
    cfg: LaunchConfig,
    /// Models along axis 0.
    pub n0: u64,
    /// Per axis: its length; its first histogram bin.
    lens: DeviceBuf<i32>,
    axis_offset: DeviceBuf<i32>,
    /// Per requested pair: its two axes and its first histogram bin.
    pair_a: DeviceBuf<i32>,
    pair_b: DeviceBuf<i32>,
    pair_offset: DeviceBuf<i32>,
    n_pairs: i32,
    n_bins: i32,
    use_shared: i32,
    /// The histograms, the count, each block's best decision value and its model.
    bins: DeviceBuf<u64>,
    total: DeviceBuf<u64>,
    block_q: DeviceBuf<f64>,
    block_index: DeviceBuf<u64>,
    mode: ModeTables,
}

/// The tables of the mode's kernel.
enum ModeTables {
    /// emlog_fast: w (axis 0), the other axes' columns and where each axis's start.
    Fast {
        w: DeviceBuf<f64>,
        table: DeviceBuf<f64>,
        table_offset: DeviceBuf<i32>,
    },
    /// emlog_direct: Ã (column-major, n × p) followed by d (n), in one array; every axis's
    /// values and where each axis's start.
    Direct {
        a_d: DeviceBuf<f64>,
        a_len: usize,
        values: DeviceBuf<f64>,
        value_offset: DeviceBuf<i32>,
    },
}

impl<'s> DeviceSearch<'s> {
    pub fn new(gpu: &CudaBackend, s: &'s SearchSetup<'s>, stream: Arc<CudaStream>) -> Result<Self> {
        let g = &s.grid;
        let module = gpu
            .modules
            .get(&gpu.ctx, &gpu.arch, &kernels::EMLOG, &prelude(g.p()))?;
        let lens = i32s((0..g.p()).map(|k| g.len(k)))?;
        let axis_offset = i32s(s.bins.axis_offset.iter().copied())?;
        let pair_a = i32s(s.bins.pairs.iter().map(|q| q.0))?;
        let pair_b = i32s(s.bins.pairs.iter().map(|q| q.1))?;
        let pair_offset = i32s(s.bins.pair_offset.iter().copied())?;
        let n_bins = i32s([s.bins.len])?[0];
        let use_shared = s.bins.len <= SHARED_BINS;
        let blocks = (gpu.multiprocessors * 8).max(1);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: if use_shared { 4 * s.bins.len as u32 } else { 0 },
        };
        Ok(DeviceSearch {
            lens: upload(&stream, &lens, TABLES)?,
            axis_offset: upload(&stream, &axis_offset, TABLES)?,
            pair_a: upload(&stream, &pair_a, TABLES)?,
            pair_b: upload(&stream, &pair_b, TABLES)?,
            pair_offset: upload(&stream, &pair_offset, TABLES)?,
            bins: zeros(&stream, s.bins.len, TABLES)?,
            total: zeros(&stream, 1, TABLES)?,
            block_q: upload(&stream, &vec![f64::INFINITY; blocks], TABLES)?,
            block_index: upload(&stream, &vec![u64::MAX; blocks], TABLES)?,
            mode: ModeTables::new(s, &stream)?,
            n_pairs: pair_a.len() as i32,
            n_bins,
            use_shared: use_shared as i32,
            n0: g.len(0) as u64,
            s,
            module,
            stream,
            cfg,
        })
    }

    /// Queues the launch over rows `row..end`.
    pub fn launch(&mut self, row: u64, end: u64) -> Result<()> {
        let s = self.s;
        let n_seg = self.n0.div_ceil(SEGMENT as u64) as i32;
        let items = (end - row) * n_seg as u64;
        let name = match self.mode {
            ModeTables::Fast { .. } => "emlog_fast",
            ModeTables::Direct { .. } => "emlog_direct",
        };
        let mut l = Launch::new(&self.module, &self.stream, name, self.cfg)?;
        match &self.mode {
            ModeTables::Fast {
                w,
                table,
                table_offset,
            } => l
                .input(w)
                .input(table)
                .input(table_offset)
                .input(&self.lens)
                .scalar(s.fast.phi_min),
            ModeTables::Direct {
                a_d,
                a_len,
                values,
                value_offset,
            } => l
                .input(&part(a_d, 0, *a_len))
                .input(&part(a_d, *a_len, a_d.len() - a_len))
                .scalar(s.problem.n as i32)
                .input(values)
                .input(value_offset)
                .input(&self.lens)
                .scalar(norm_code(s.norm)),
        };
        l.scalar(s.q_thr)
            .scalar(row)
            .scalar(items)
            .scalar(SEGMENT as i32)
            .scalar(n_seg)
            .output(&mut self.bins)
            .scalar(self.n_bins)
            .scalar(self.use_shared)
            .input(&self.axis_offset)
            .scalar(self.n_pairs)
            .input(&self.pair_a)
            .input(&self.pair_b)
            .input(&self.pair_offset)
            .output(&mut self.total)
            .output(&mut self.block_q)
            .output(&mut self.block_index);
        // SAFETY: emlog_fast(const double* w, const double* table, const int* table_offset,
        // const int* lens, double phi_min, …) and emlog_direct(const double* a_w,
        // const double* d, int n, const double* values, const int* value_offset,
        // const int* lens, int norm, …), then both (double q_thr, u64 row_begin, u64 items,
        // int seg, int n_seg, u64* bins, int n_bins, int use_shared, const int* axis_offset,
        // int n_pairs, const int* pair_a, const int* pair_b, const int* pair_offset,
        // u64* total, double* block_q, u64* block_index). The threads stride over `items`
        // = n_seg segments of each row in row..end, all below the grid's rows: the digits
        // they index the tables with are the grid's, so they stay inside SearchSetup's
        // tables (lens: p; w: n0 values; table and offsets: FastTables's; a_w: n·p and d: n,
        // the two parts of a_d; values: every axis's, at value_offset); histogram bins
        // index below n_bins (Bins's layout, `bins` holds them all); block b < blocks
        // writes block_q[b] and block_index[b] (one per block of cfg), total is one element.
        unsafe { l.run() }
    }

    /// The count of equivalent models so far, once the queued launches are done.
    pub fn count(&self) -> Result<u64> {
        Ok(read(&self.stream, &self.total, 1, "reading the count")?[0])
    }

    /// The reductions, once the queued launches are done, with the models `listed`; and
    /// the histograms on the device.
    pub fn tally(self, listed: Tally) -> Result<(Tally, DeviceBuf<u64>)> {
        let blocks = self.block_q.len();
        let bins = read(
            &self.stream,
            &self.bins,
            self.s.bins.len,
            "reading the histograms",
        )?;
        let count = self.count()?;
        let what = "reading the best models";
        let bq = read(&self.stream, &self.block_q, blocks, what)?;
        let bi = read(&self.stream, &self.block_index, blocks, what)?;
        let mut t = Tally::new(0);
        t.count = count;
        t.bins = bins;
        for (&q, &i) in bq.iter().zip(&bi) {
            if q < t.best_q || (q == t.best_q && i < t.best_index) {
                t.best_q = q;
                t.best_index = i;
            }
        }
        t.models = listed.models;
        t.models.truncate(self.s.options.max_models);
        Ok((t, self.bins))
    }
}

impl ModeTables {
    fn new(s: &SearchSetup, stream: &Arc<CudaStream>) -> Result<ModeTables> {
        Ok(match s.mode {
            Mode::Fast => {
                let offset = i32s(s.fast.offset.iter().copied())?;
                ModeTables::Fast {
                    w: upload(stream, &s.fast.w, TABLES)?,
                    table: upload(stream, &s.fast.t, TABLES)?,
                    table_offset: upload(stream, &offset, TABLES)?,
                }
            }
            Mode::Direct => {
                let mut offset = Vec::new();
                let mut values = Vec::new();
                for v in &s.grid.values {
                    offset.push(values.len());
                    values.extend_from_slice(v);
                }
                let mut a_d = s.problem.a_w.clone();
                a_d.extend_from_slice(&s.problem.d);
                ModeTables::Direct {
                    a_d: upload(stream, &a_d, TABLES)?,
                    a_len: s.problem.a_w.len(),
                    values: upload(stream, &values, TABLES)?,
                    value_offset: upload(stream, &i32s(offset)?, TABLES)?,
                }
            }
        })
    }
}

/// The direct kernel's norm: 0 L2 (sum of squares), 1 L1 (sum of |r|), 2 max |r|.
fn norm_code(norm: Norm) -> i32 {
    match norm {
        Norm::L2 => 0,
        Norm::L1 => 1,
        Norm::Max => 2,
    }
}

/// The first `len` elements of `src`, once the stream's queued work is done.
fn read<U: DeviceRepr + Default + Clone>(
    stream: &CudaStream,
    src: &DeviceBuf<U>,
    len: usize,
    what: &'static str,
) -> Result<Vec<U>> {
    let mut host = vec![U::default(); len];
    download(stream, src, &mut host, what)?;
    Ok(host)
}
