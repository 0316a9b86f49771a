//! Ambient-noise cross-correlation, following NoisePy (Jiang & Denolle 2020) so that
//! results compare number for number: station-day preprocessing into window spectra,
//! all-pairs correlation as matrix products, and stacking.
//!
//! Stages:
//! 1. `XcorrPlan::preprocess`: station-days (n_stations × n_samples, optional per-sample
//!    validity) → `Spectra`: for each station and window, the whitened (or plain)
//!    spectrum on the band bins, stored frequency-major `[bin][station][window]`, and
//!    which windows were kept. On a CUDA context they stay on the device.
//! 2. `XcorrPlan::correlate`: one or more days of spectra → one stack per station pair
//!    of a block (see `pairs`). Linear stacks are, per frequency, the Hermitian product
//!    of the window-spectra matrix with itself (rejected windows are zero columns; the
//!    per-pair window count is the product of the masks), then one inverse FFT per pair.
//!    Nonlinear stacks correlate each window, in pair chunks, then stack.

pub mod butterworth;
pub mod calls;
pub mod correlate;
pub mod cpu;
pub mod cuda;
pub mod device_calls;
pub mod geometry;
pub mod groups;
pub mod method;
pub mod options;
pub mod pairs;
pub mod plan;
pub mod preprocess;
pub mod spectra;
pub mod stack;

use crate::error::Result;
use crate::layout::TraceBatch;
use calls::PreprocessCall;
pub use correlate::StackOut;
use method::{Method, Planes};
use num_complex::Complex32;
pub use plan::XcorrPlan;
pub use spectra::{Spectra, SpectraData};
use std::sync::Arc;

impl XcorrPlan {
    /// Preprocesses `batch.n_traces` station-days (`batch.n_samples` samples each, station
    /// s at `days[s·trace_stride..]`). `valid`, if given, has the same layout: 0 marks a
    /// missing sample (set to 0, and every window touching it is rejected).
    pub fn preprocess(
        &self,
        days: &[f32],
        batch: TraceBatch,
        valid: Option<&[u8]>,
    ) -> Result<Spectra> {
        let n_windows = self.check_station_days(batch, days.len(), valid.map(|v| v.len()))?;
        batch.check_finite(days, &self.ctx.cpu)?;
        let mut reporter = self.ctx.reporter();
        let call = PreprocessCall {
            plan: self,
            days,
            batch,
            valid,
            n_windows,
        };
        let (kept, data) = match self.ctx.cuda() {
            Some(gpu) => cuda::preprocess(gpu, &self.ctx.cpu, call, &mut reporter)?,
            None => cpu::preprocess(&self.ctx.cpu, call, &mut reporter)?,
        };
        let planes = Planes {
            n_stations: batch.n_traces,
            n_windows,
        };
        let (data, source) = self.divide(data, planes, true, None)?;
        reporter.finish();
        Ok(self.spectra(planes, kept, data, source))
    }

    fn spectra(
        &self,
        p: Planes,
        kept: Vec<u8>,
        data: SpectraData,
        source: Option<SpectraData>,
    ) -> Spectra {
        Spectra {
            ctx: self.ctx.clone(),
            geometry: self.geometry,
            method: Method::of(&self.options),
            n_stations: p.n_stations,
            n_windows: p.n_windows,
            kept,
            data,
            source,
        }
    }

    /// The divisions of the plan's correlation method: the stored values (coherency, when
    /// `stored` — spectra given back by `import` are divided already) and the source side
    /// (deconvolution). Device spectra are divided on `kit`'s stream without waiting, or
    /// (None) on a stream of their own, waited for.
    fn divide(
        &self,
        data: SpectraData,
        p: Planes,
        stored: bool,
        kit: Option<&cuda::Kit>,
    ) -> Result<(SpectraData, Option<SpectraData>)> {
        let m = Method::of(&self.options);
        let (g, n) = (&self.geometry, m.smoothspect_n);
        let by = |d: &SpectraData, power: i32| -> Result<SpectraData> {
            Ok(match d {
                SpectraData::Host(v) => {
                    SpectraData::Host(self.ctx.cpu.install(|| method::divided(v, p, g, n, power)))
                }
                SpectraData::Device(v) => {
                    let gpu = self.ctx.cuda().ok_or_else(|| {
                        crate::error::Error::Internal("device spectra on a CPU context".into())
                    })?;
                    SpectraData::Device(match kit {
                        Some(kit) => cuda::divided_on(kit, v, p, g, (n, power))?,
                        None => cuda::divided(gpu, v, p, g, n, power)?,
                    })
                }
            })
        };
        let data = match m.stored_power() {
            power if power > 0 && stored => by(&data, power)?,
            _ => data,
        };
        let source = match m.source_power() {
            Some(power) => Some(by(&data, power)?),
            None => None,
        };
        Ok((data, source))
    }

    /// Spectra from values and kept flags laid out as `Spectra::to_host` and `kept` give
    /// them (`n_stations` × `n_windows` windows, `[bin][station][window]`), e.g. received
    /// from another process that made them with the same settings: on a CUDA context they
    /// are uploaded. Rejected windows must be zero columns; values must be finite.
    pub fn import(
        &self,
        values: &[Complex32],
        kept: &[u8],
        n_stations: usize,
        n_windows: usize,
    ) -> Result<Spectra> {
        let g = &self.geometry;
        if n_stations == 0 || n_windows == 0 {
            return Err(crate::invalid!(
                "n_stations {n_stations} and n_windows {n_windows}: expected ≥ 1 each"
            ));
        }
        let n = crate::alloc::host_bytes(
            &[g.band_len, n_stations, n_windows],
            8,
            "the window spectra (band bins × stations × windows, complex f32)",
        )? / 8;
        if values.len() < n || kept.len() < n_stations * n_windows {
            return Err(crate::invalid!(
                "values hold {} and kept {} elements; {n_stations} stations × {n_windows} windows need {n} and {}",
                values.len(),
                kept.len(),
                n_stations * n_windows
            ));
        }
        let (values, kept) = (&values[..n], &kept[..n_stations * n_windows]);
        if let Some(k) = kept.iter().position(|&k| k > 1) {
            return Err(crate::invalid!("kept[{k}] is {}; expected 0 or 1", kept[k]));
        }
        let nonfinite = |c: &Complex32| !(c.re.is_finite() && c.im.is_finite());
        if self.ctx.cpu.install(|| {
            use rayon::prelude::*;
            values.par_iter().any(nonfinite)
        }) {
            return Err(crate::error::Error::NonFinite(
                "values hold a non-finite value (NaN or infinity)".into(),
            ));
        }
        let p = Planes {
            n_stations,
            n_windows,
        };
        let data = match self.ctx.cuda() {
            Some(gpu) => SpectraData::Device(cuda::spectra::DeviceSpectra::upload(gpu, values)?),
            None => SpectraData::Host(values.to_vec()),
        };
        let (data, source) = self.divide(data, p, false, None)?;
        Ok(self.spectra(p, kept.to_vec(), data, source))
    }

    /// Checks that every day was made by this plan's context and geometry for the same
    /// stations.
    /// The windows of a day of `batch` after the checks of every preprocess path: the
    /// spectra fit in memory, the arrays (`days` and `valid` elements) hold the batch.
    pub(super) fn check_station_days(
        &self,
        batch: TraceBatch,
        days: usize,
        valid: Option<usize>,
    ) -> Result<usize> {
        let n_windows = self.geometry.n_windows(batch.n_samples)?;
        crate::alloc::host_bytes(
            &[batch.n_traces, n_windows, self.geometry.band_len],
            8,
            "the window spectra (stations × windows × band bins, complex f32)",
        )?;
        let span = batch.span();
        if days < span || valid.is_some_and(|v| v < span) {
            return Err(crate::invalid!(
                "arrays shorter than the {span} elements the station-days span"
            ));
        }
        Ok(n_windows)
    }

    pub(super) fn check_days(&self, days: &[&Spectra]) -> Result<usize> {
        let first = days
            .first()
            .ok_or_else(|| crate::invalid!("n_days is 0; expected at least one day of spectra"))?;
        for (d, s) in days.iter().enumerate() {
            if !Arc::ptr_eq(&s.ctx, &self.ctx) {
                return Err(crate::invalid!(
                    "day {d}: spectra made on another context; correlate them with a plan of that context"
                ));
            }
            if s.geometry != self.geometry || s.method != Method::of(&self.options) {
                return Err(crate::invalid!(
                    "day {d}: spectra made by a plan with other window, band, lag or cc_method settings"
                ));
            }
            if s.n_stations != first.n_stations {
                return Err(crate::invalid!(
                    "day {d} has {} stations, day 0 has {}",
                    s.n_stations,
                    first.n_stations
                ));
            }
        }
        Ok(first.n_stations)
    }
}
