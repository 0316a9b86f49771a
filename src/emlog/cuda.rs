//! The exhaustive search on the GPU (kernels/emlog.cu): models enumerated by index in
//! launches of whole rows, reduced on the device (count, histograms, each block's best);
//! the host adds the blocks' bests. Both modes decide on the same f64 value as the CPU
//! (bit for bit: the same order, unfused roundings), so the two backends agree exactly.
//! The first equivalent models, when asked for, are listed by the CPU over the rows of the
//! first launches that found any (the GPU's count says which).
//! With a progress callback, the rows run in groups sized to about the report interval,
//! each group's launches waited for, reported (and a stop honoured) before the next.

use super::cpu;
use super::criterion::{Mode, Norm};
use super::result::Tally;
use super::setup::SearchSetup;
use crate::backend::cuda::buffers::dptr;
use crate::backend::cuda::launch::kernel;
use crate::backend::cuda::{driver_error, kernels, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

const THREADS: u32 = 256;
/// Histogram bins kept in a block's shared memory (u32 each); more go to global atomics.
const SHARED_BINS: usize = 6144;
/// Axis-0 values per work item of both kernels (the direct kernel's EM_LANES).
const SEGMENT: usize = 16;
/// Models per launch: fast, direct (per 1,000 measurements).
const FAST_MODELS: u64 = 1 << 30;
const DIRECT_MODEL_MEASUREMENTS: u64 = 1 << 36;

/// The prelude of kernels/emlog.cu for `p` parameters.
pub fn prelude(p: usize) -> String {
    format!("#define EM_P {p}\n")
}

/// Every prelude the library compiles (p = 1…16).
pub fn preludes() -> Vec<(String, String)> {
    (1..=super::matrix::MAX_PARAMETERS)
        .map(|p| (format!("p = {p}"), prelude(p)))
        .collect()
}

fn up<T: cudarc::driver::DeviceRepr + Clone>(
    stream: &Arc<CudaStream>,
    v: &[T],
    fill: T,
) -> Result<CudaSlice<T>> {
    // Zero-length buffers are not allowed: pad with one element.
    let padded: Vec<T> = if v.is_empty() { vec![fill] } else { v.to_vec() };
    stream
        .clone_htod(&padded)
        .map_err(driver_error("copying search tables to the device"))
}

fn i32s(v: impl IntoIterator<Item = usize>) -> Result<Vec<i32>> {
    v.into_iter()
        .map(|x| {
            i32::try_from(x).map_err(|_| {
                Error::Unsupported(format!(
                    "a table index ({x}) exceeds what the kernels index"
                ))
            })
        })
        .collect()
}

pub fn search(gpu: &CudaBackend, s: &SearchSetup, reporter: &mut Reporter) -> Result<Tally> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let g = &s.grid;
    let p = g.p();
    let n0 = g.len(0) as u64;
    let module = gpu
        .modules
        .get(&gpu.ctx, &gpu.arch, &kernels::EMLOG, &prelude(p))?;
    let stream = gpu.stream()?;
    let lens = i32s((0..p).map(|k| g.len(k)))?;
    let axis_offset = i32s(s.bins.axis_offset.iter().copied())?;
    let pair_a = i32s(s.bins.pairs.iter().map(|q| q.0))?;
    let pair_b = i32s(s.bins.pairs.iter().map(|q| q.1))?;
    let pair_offset = i32s(s.bins.pair_offset.iter().copied())?;
    let n_bins = i32s([s.bins.len])?[0];
    let use_shared = (s.bins.len <= SHARED_BINS) as i32;
    let shared_bytes = if use_shared == 1 {
        4 * s.bins.len as u32
    } else {
        0
    };
    let blocks = (gpu.multiprocessors * 8).max(1);

    let d_lens = up(&stream, &lens, 0)?;
    let d_axis = up(&stream, &axis_offset, 0)?;
    let d_pa = up(&stream, &pair_a, 0)?;
    let d_pb = up(&stream, &pair_b, 0)?;
    let d_po = up(&stream, &pair_offset, 0)?;
    let d_bins = up(&stream, &vec![0u64; s.bins.len], 0)?;
    let d_total = up(&stream, &[0u64], 0)?;
    let d_bq = up(&stream, &vec![f64::INFINITY; blocks], 0.0)?;
    let d_bi = up(&stream, &vec![u64::MAX; blocks], 0)?;
    // Mode tables.
    let (t1, t2, t3) = match s.mode {
        Mode::Fast => {
            let off = i32s(s.fast.offset.iter().copied())?;
            (
                up(&stream, &s.fast.w, 0.0)?,
                up(&stream, &s.fast.t, 0.0)?,
                up(&stream, &off, 0)?,
            )
        }
        Mode::Direct => {
            let mut off = Vec::new();
            let mut vals = Vec::new();
            for v in &g.values {
                off.push(vals.len());
                vals.extend_from_slice(v);
            }
            let mut a = s.problem.a_w.clone();
            a.extend_from_slice(&s.problem.d);
            (
                up(&stream, &a, 0.0)?,
                up(&stream, &vals, 0.0)?,
                up(&stream, &i32s(off)?, 0)?,
            )
        }
    };
    let st = &stream;
    let (p_lens, p_axis, p_pa, p_pb, p_po) = (
        dptr(&d_lens, st),
        dptr(&d_axis, st),
        dptr(&d_pa, st),
        dptr(&d_pb, st),
        dptr(&d_po, st),
    );
    let (p_bins, p_total, p_bq, p_bi) = (
        dptr(&d_bins, st),
        dptr(&d_total, st),
        dptr(&d_bq, st),
        dptr(&d_bi, st),
    );
    let (p1, p2, p3) = (dptr(&t1, st), dptr(&t2, st), dptr(&t3, st));
    let n_pairs = pair_a.len() as i32;

    let rows = g.rows();
    let rows_per_launch = match s.mode {
        Mode::Fast => FAST_MODELS / n0,
        Mode::Direct => DIRECT_MODEL_MEASUREMENTS / (s.problem.n as u64).max(1) / n0,
    }
    .max(1);
    let name = match s.mode {
        Mode::Fast => "emlog_fast",
        Mode::Direct => "emlog_direct",
    };
    let f = kernel(&module, name, shared_bytes as usize)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared_bytes,
    };
    let k_max = s.options.max_models;
    let mut listed = Tally::new(s.bins.len);
    let mut seen = 0u64;
    reporter.stage("emlog search", 1.0, rows as usize);
    let active = reporter.is_active();
    reporter.for_chunks(rows as usize, 1, |group| {
        let (mut row, rows) = (group.start as u64, group.end as u64);
        while row < rows {
            let end = (row + rows_per_launch).min(rows);
            let mut b = stream.launch_builder(&f);
            let (phi_min, q_thr) = (s.fast.phi_min, s.q_thr);
            let n_seg = n0.div_ceil(SEGMENT as u64) as i32;
            let seg = SEGMENT as i32;
            let items = (end - row) * n_seg as u64;
            let n_meas = s.problem.n as i32;
            let p_d = p1 + 8 * s.problem.a_w.len() as u64;
            let norm: i32 = match s.norm {
                Norm::L2 => 0,
                Norm::L1 => 1,
                Norm::Max => 2,
            };
            match s.mode {
                Mode::Fast => {
                    b.arg(&p1)
                        .arg(&p2)
                        .arg(&p3)
                        .arg(&p_lens)
                        .arg(&phi_min)
                        .arg(&q_thr)
                        .arg(&row)
                        .arg(&items)
                        .arg(&seg)
                        .arg(&n_seg);
                }
                Mode::Direct => {
                    b.arg(&p1)
                        .arg(&p_d)
                        .arg(&n_meas)
                        .arg(&p2)
                        .arg(&p3)
                        .arg(&p_lens)
                        .arg(&norm)
                        .arg(&q_thr)
                        .arg(&row)
                        .arg(&items)
                        .arg(&seg)
                        .arg(&n_seg);
                }
            }
            b.arg(&p_bins)
                .arg(&n_bins)
                .arg(&use_shared)
                .arg(&p_axis)
                .arg(&n_pairs)
                .arg(&p_pa)
                .arg(&p_pb)
                .arg(&p_po);
            b.arg(&p_total).arg(&p_bq).arg(&p_bi);
            // SAFETY: the arguments are the kernel's, in order; buffers sized for the grid.
            unsafe { b.launch(cfg) }.map_err(driver_error("launching an EM-logging kernel"))?;
            if listed.models.len() < k_max {
                let total = stream
                    .clone_dtoh(&d_total)
                    .map_err(driver_error("reading the count"))?[0];
                if total > seen {
                    // This launch found some: list them on the CPU, stopping once there are enough.
                    let step = cpu::chunk_rows(s);
                    let mut r0 = row;
                    while r0 < end && listed.models.len() < k_max {
                        let r1 = (r0 + step).min(end);
                        let before = std::mem::replace(&mut listed, Tally::new(0));
                        listed = cpu::scan_rows(s, before, r0, r1);
                        r0 = r1;
                    }
                    seen = total;
                }
            }
            row = end;
        }
        if active {
            // The group's launches are done before it is reported.
            stream
                .synchronize()
                .map_err(driver_error("running the EM-logging search"))?;
        }
        Ok(())
    })?;
    let bins = stream
        .clone_dtoh(&d_bins)
        .map_err(driver_error("reading the histograms"))?;
    let total = stream
        .clone_dtoh(&d_total)
        .map_err(driver_error("reading the count"))?;
    let bq = stream
        .clone_dtoh(&d_bq)
        .map_err(driver_error("reading the best models"))?;
    let bi = stream
        .clone_dtoh(&d_bi)
        .map_err(driver_error("reading the best models"))?;
    let mut t = Tally::new(0);
    t.count = total[0];
    t.bins = bins[..s.bins.len].to_vec();
    for (&q, &i) in bq.iter().zip(&bi) {
        if q < t.best_q || (q == t.best_q && i < t.best_index) {
            t.best_q = q;
            t.best_index = i;
        }
    }
    listed.models.truncate(k_max);
    t.models = listed.models;
    Ok(t)
}
