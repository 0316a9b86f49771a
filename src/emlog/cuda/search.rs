//! The search's device state: the tables the kernels read, one launch of both kernels
//! over a range of rows, and the reductions read back.

use super::super::criterion::{Mode, Norm};
use super::super::result::Tally;
use super::super::setup::SearchSetup;
use super::state::{blocks, Held};
use super::{i32s, prelude};
use crate::backend::cuda::array::{part, piece_bytes, PartMut, Pieces};
use crate::backend::cuda::buffers::{download, fill_zero, write, zeros};
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

/// The search on the device: its module and the plan's stream, the tables the kernels
/// read (cut from the plan's table workspace) and the reductions they add to (the plan's,
/// reset for this search; the histograms this search's own).
pub struct DeviceSearch<'s> {
    s: &'s SearchSetup<'s>,
    module: Arc<CudaModule>,
    pub stream: Arc<CudaStream>,
    cfg: LaunchConfig,
    /// Models along axis 0.
    pub n0: u64,
    /// Per axis: its length; its first histogram bin.
    lens: PartMut<'s, i32>,
    axis_offset: PartMut<'s, i32>,
    /// Per requested pair: its two axes and its first histogram bin.
    pair_a: PartMut<'s, i32>,
    pair_b: PartMut<'s, i32>,
    pair_offset: PartMut<'s, i32>,
    n_pairs: i32,
    n_bins: i32,
    use_shared: i32,
    /// The histograms, the count, each block's best decision value and its model.
    bins: DeviceBuf<u64>,
    total: &'s mut DeviceBuf<u64>,
    block_q: &'s mut DeviceBuf<f64>,
    block_index: &'s mut DeviceBuf<u64>,
    mode: ModeTables<'s>,
}

/// The tables of the mode's kernel.
enum ModeTables<'s> {
    /// emlog_fast: w (axis 0), the other axes' columns and where each axis's start.
    Fast {
        w: PartMut<'s, f64>,
        table: PartMut<'s, f64>,
        table_offset: PartMut<'s, i32>,
    },
    /// emlog_direct: Ã (column-major, n × p) followed by d (n), in one array (the plan's);
    /// every axis's values and where each axis's start.
    Direct {
        a_d: &'s DeviceBuf<f64>,
        a_len: usize,
        values: PartMut<'s, f64>,
        value_offset: PartMut<'s, i32>,
    },
}

/// The search's tables on the host, as the kernels read them.
struct HostTables {
    lens: Vec<i32>,
    axis_offset: Vec<i32>,
    pair_a: Vec<i32>,
    pair_b: Vec<i32>,
    pair_offset: Vec<i32>,
    /// Fast: w, the table and its offsets; direct: every axis's values and their offsets.
    reals: [Vec<f64>; 2],
    offsets: Vec<i32>,
}

impl HostTables {
    fn new(s: &SearchSetup) -> Result<HostTables> {
        let g = &s.grid;
        let (reals, offsets) = match s.mode {
            Mode::Fast => (
                [s.fast.w.clone(), s.fast.t.clone()],
                i32s(s.fast.offset.iter().copied())?,
            ),
            Mode::Direct => {
                let mut offset = Vec::new();
                let mut values = Vec::new();
                for v in &s.grid.values {
                    offset.push(values.len());
                    values.extend_from_slice(v);
                }
                ([Vec::new(), values], i32s(offset)?)
            }
        };
        Ok(HostTables {
            lens: i32s((0..g.p()).map(|k| g.len(k)))?,
            axis_offset: i32s(s.bins.axis_offset.iter().copied())?,
            pair_a: i32s(s.bins.pairs.iter().map(|q| q.0))?,
            pair_b: i32s(s.bins.pairs.iter().map(|q| q.1))?,
            pair_offset: i32s(s.bins.pair_offset.iter().copied())?,
            reals,
            offsets,
        })
    }

    /// The integer tables in the order they are cut.
    fn ints(&self) -> [&[i32]; 6] {
        [
            &self.lens,
            &self.axis_offset,
            &self.pair_a,
            &self.pair_b,
            &self.pair_offset,
            &self.offsets,
        ]
    }

    /// Bytes of the workspace they take.
    fn bytes(&self) -> usize {
        let ints: usize = self
            .ints()
            .iter()
            .map(|v| piece_bytes::<i32>(v.len()))
            .sum();
        ints + self
            .reals
            .iter()
            .map(|v| piece_bytes::<f64>(v.len()))
            .sum::<usize>()
    }
}

impl<'s> DeviceSearch<'s> {
    /// The search of `s` with the plan's state `held` (on its stream).
    pub fn new(gpu: &CudaBackend, s: &'s SearchSetup<'s>, held: &'s mut Held) -> Result<Self> {
        let g = &s.grid;
        let module = gpu
            .modules
            .get(&gpu.ctx, &gpu.arch, &kernels::EMLOG, &prelude(g.p()))?;
        let host = HostTables::new(s)?;
        let n_bins = i32s([s.bins.len])?[0];
        let use_shared = s.bins.len <= SHARED_BINS;
        let blocks = blocks(gpu);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: if use_shared { 4 * s.bins.len as u32 } else { 0 },
        };
        let Held {
            stream,
            a_d,
            a_len,
            total,
            block_q,
            block_index,
            tables,
            tally,
        } = held;
        let stream = stream.clone();
        let growing = "an EM-logging search's tables";
        tally.scope(growing, || tables.reserve(&stream, host.bytes(), growing))?;
        let mut pieces = tables.for_call(&stream, host.bytes(), TABLES)?;
        let mut cut_ints = host
            .ints()
            .into_iter()
            .map(|v| cut(&mut pieces, &stream, v));
        let mut next_ints = || cut_ints.next().expect("six integer tables");
        let (lens, axis_offset, pair_a) = (next_ints()?, next_ints()?, next_ints()?);
        let (pair_b, pair_offset, offsets) = (next_ints()?, next_ints()?, next_ints()?);
        drop(cut_ints);
        let first = cut(&mut pieces, &stream, &host.reals[0])?;
        let second = cut(&mut pieces, &stream, &host.reals[1])?;
        fill_zero(&stream, &mut **total, TABLES)?;
        write(
            &stream,
            &vec![f64::INFINITY; blocks],
            &mut **block_q,
            TABLES,
        )?;
        write(&stream, &vec![u64::MAX; blocks], &mut **block_index, TABLES)?;
        let mode = match s.mode {
            Mode::Fast => ModeTables::Fast {
                w: first,
                table: second,
                table_offset: offsets,
            },
            Mode::Direct => ModeTables::Direct {
                a_d,
                a_len: *a_len,
                values: second,
                value_offset: offsets,
            },
        };
        Ok(DeviceSearch {
            bins: zeros(&stream, s.bins.len, TABLES)?,
            n_pairs: host.pair_a.len() as i32,
            lens,
            axis_offset,
            pair_a,
            pair_b,
            pair_offset,
            total,
            block_q,
            block_index,
            mode,
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
                .input(&part(*a_d, 0, *a_len))
                .input(&part(*a_d, *a_len, a_d.len() - a_len))
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
            .output(&mut *self.total)
            .output(&mut *self.block_q)
            .output(&mut *self.block_index);
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
        Ok(read(&self.stream, self.total, 1, "reading the count")?[0])
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
        let bq = read(&self.stream, self.block_q, blocks, what)?;
        let bi = read(&self.stream, self.block_index, blocks, what)?;
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

/// The next piece of `pieces`, holding a copy of `host`.
fn cut<'w, U: DeviceRepr>(
    pieces: &mut Pieces<'w>,
    stream: &CudaStream,
    host: &[U],
) -> Result<PartMut<'w, U>> {
    let mut d = pieces.take::<U>(host.len());
    write(stream, host, &mut d, TABLES)?;
    Ok(d)
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
