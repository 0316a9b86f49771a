//! The days of spectra a correlation reads, on the device.

use super::spectra::DeviceSpectra;
use crate::backend::cuda::array::Part;
use crate::error::{Error, Result};
use crate::xcorr::spectra::{Spectra, SpectraData};
use cudarc::driver::CudaStream;
use num_complex::Complex32;

/// Spectra on the device.
fn device(d: &SpectraData) -> Result<&DeviceSpectra> {
    match d {
        SpectraData::Device(s) => Ok(s),
        SpectraData::Host(_) => Err(Error::Internal("host spectra on a CUDA context".into())),
    }
}

/// Records `stream`'s reads of the days' spectra, so that spectra destroyed later (freed
/// on the stream that made them) wait for a device correlation that has not run yet.
/// Called once a correlation is queued.
pub(super) fn order_reads(days: &[&Spectra], stream: &CudaStream) -> Result<()> {
    for day in days {
        for d in std::iter::once(&day.data).chain(day.source.as_ref()) {
            device(d)?.read_on(stream)?;
        }
    }
    Ok(())
}

/// A day's window spectra `x` (the receiver side) and `a` (the source side: `x` itself but
/// for deconvolution), `[bin][station][window]`: `nw` windows a station, `plane` =
/// stations × nw values a bin, band_len bins.
pub(super) struct DaySpectra<'a> {
    pub(super) x: Part<'a, Complex32>,
    pub(super) a: Part<'a, Complex32>,
    pub(super) nw: usize,
    pub(super) plane: usize,
}

impl<'a> DaySpectra<'a> {
    pub(super) fn of(day: &'a Spectra) -> Result<DaySpectra<'a>> {
        let x = device(&day.data)?.values();
        let a = match &day.source {
            Some(s) => device(s)?.values(),
            None => device(&day.data)?.values(),
        };
        Ok(DaySpectra {
            x,
            a,
            nw: day.n_windows,
            plane: day.n_stations * day.n_windows,
        })
    }
}
