//! The kernels' tables: time windows, band, operator and x-windows, the same for every
//! slab (`SharedTables`), and each slab's y-windows and pass-through shares
//! (`SlabTables`).

use crate::backend::cuda::buffers::upload;
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::{Error, Result};
use crate::fxdecon::geometry::{AxisWindow, Setup, Slab};
use cudarc::driver::CudaStream;
use std::sync::Arc;

const COPYING: &str = "copying tables to the device";

pub(super) fn to_i32(v: usize, what: &str) -> Result<i32> {
    i32::try_from(v)
        .map_err(|_| Error::Unsupported(format!("{what} ({v}) exceeds what the kernels index")))
}

/// An axis's windows as kernel tables: gather, params (6 per window), weights.
pub(super) struct AxisTables {
    pub(super) gather: Vec<i32>,
    pub(super) params: Vec<i32>,
    pub(super) weight: Vec<f32>,
}

impl AxisTables {
    pub(super) fn new(windows: &[AxisWindow], shift: usize, max: usize) -> Result<AxisTables> {
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

/// `AxisTables` on the device: `max` gathered traces and weights per window (the axis's
/// local length), 6 params per window.
pub(super) struct AxisOnDevice {
    pub(super) gather: DeviceBuf<i32>,
    pub(super) params: DeviceBuf<i32>,
    pub(super) weight: DeviceBuf<f32>,
}

impl AxisOnDevice {
    fn upload(stream: &Arc<CudaStream>, t: &AxisTables) -> Result<AxisOnDevice> {
        Ok(AxisOnDevice {
            gather: upload(stream, &t.gather, COPYING)?,
            params: upload(stream, &t.params, COPYING)?,
            weight: upload(stream, &t.weight, COPYING)?,
        })
    }
}

/// The tables every slab reads: time windows (`tw_weight` is ntw rows of `tw_max`), the
/// band's bins and an in-band flag per bin, the operator's (dx, dy) offsets, the x-windows.
pub(super) struct SharedTables {
    pub(super) tw_start: DeviceBuf<i32>,
    pub(super) tw_len: DeviceBuf<i32>,
    pub(super) tw_weight: DeviceBuf<f32>,
    pub(super) tw_max: usize,
    pub(super) band: DeviceBuf<i32>,
    pub(super) in_band: DeviceBuf<i32>,
    pub(super) offsets: DeviceBuf<i32>,
    pub(super) x: AxisOnDevice,
}

impl SharedTables {
    /// Uploaded on `stream` without waiting (and freed in its order).
    pub(super) fn upload_on(stream: &Arc<CudaStream>, s: &Setup) -> Result<SharedTables> {
        let (ntw, nf) = (s.time.count(), s.n_freq());
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
        let xt = AxisTables::new(&s.x.windows, 0, s.x.local_len())?;
        let tables = SharedTables {
            tw_start: upload(stream, &tw_start, COPYING)?,
            tw_len: upload(stream, &tw_len, COPYING)?,
            tw_weight: upload(stream, &tw_weight, COPYING)?,
            tw_max,
            band: upload(stream, &band, COPYING)?,
            in_band: upload(stream, &in_band, COPYING)?,
            offsets: upload(stream, &offsets, COPYING)?,
            x: AxisOnDevice::upload(stream, &xt)?,
        };
        Ok(tables)
    }
}

/// One slab's tables, uploaded on its slot's stream (and so freed in that stream's order,
/// after the kernels that read them): the y-windows, their gathers shifted to the slab's
/// first read line, and per read line the share of its window weights that the slab's
/// windows hold (what the slab passes through of the out-of-band spectrum).
pub(super) struct SlabTables {
    pub(super) y: AxisOnDevice,
    pub(super) share: DeviceBuf<f32>,
}

impl SlabTables {
    pub(super) fn upload(stream: &Arc<CudaStream>, s: &Setup, slab: &Slab) -> Result<SlabTables> {
        let ws = &s.y.windows[slab.windows.clone()];
        let yt = AxisTables::new(ws, slab.read.start, s.y.local_len())?;
        let y = AxisOnDevice::upload(stream, &yt)?;
        let share: Vec<f32> = s.share(slab).iter().map(|&v| v as f32).collect();
        Ok(SlabTables {
            y,
            share: upload(stream, &share, COPYING)?,
        })
    }
}
