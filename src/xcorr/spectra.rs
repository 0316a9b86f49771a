//! A day's window spectra, on the host or the device.

use super::cuda::spectra::DeviceSpectra;
use super::geometry::Geometry;
use super::method::{Method, Planes};
use crate::context::Context;
use crate::error::Result;
use num_complex::Complex32;
use std::sync::Arc;

/// Where a day's spectra live.
pub enum SpectraData {
    Host(Vec<Complex32>),
    Device(DeviceSpectra),
}

/// The window spectra of one day of `n_stations` stations, made by one plan.
pub struct Spectra {
    pub(crate) ctx: Arc<Context>,
    pub(crate) geometry: Geometry,
    pub(crate) method: Method,
    pub n_stations: usize,
    pub n_windows: usize,
    /// kept[s·n_windows + w]: 1 where window w of station s is used, 0 where it was
    /// rejected (max/std, a gap, a dead station).
    pub kept: Vec<u8>,
    /// The stored spectra, `[bin][station][window]`: whitened (or not), and for coherency
    /// divided by their smoothed amplitude; the receiver side of every correlation.
    pub data: SpectraData,
    /// The source side where it differs from `data` (deconvolution: data divided by its
    /// smoothed amplitude squared), derived from `data`.
    pub source: Option<SpectraData>,
}

impl Spectra {
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn planes(&self) -> Planes {
        Planes {
            n_stations: self.n_stations,
            n_windows: self.n_windows,
        }
    }

    /// The spectra as `[bin][station][window]` complex values (a copy from the device
    /// on a CUDA context).
    pub fn to_host(&self) -> Result<Vec<Complex32>> {
        match &self.data {
            SpectraData::Host(v) => Ok(v.clone()),
            SpectraData::Device(d) => d.to_host(&self.ctx),
        }
    }
}
