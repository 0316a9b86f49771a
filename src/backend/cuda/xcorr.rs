//! stub
use super::CudaBackend;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::xcorr::pairs::Block;
use crate::xcorr::{Spectra, SpectraData, XcorrPlan};
use num_complex::Complex32;

pub struct DeviceSpectra {}

impl DeviceSpectra {
    pub fn to_host(&self, _ctx: &Context) -> Result<Vec<Complex32>> {
        Err(Error::Unsupported("todo".into()))
    }
}

pub fn preprocess(
    _gpu: &CudaBackend,
    _plan: &XcorrPlan,
    _days: &[f32],
    _batch: TraceBatch,
    _valid: Option<&[u8]>,
    _n_windows: usize,
) -> Result<(Vec<u8>, SpectraData)> {
    Err(Error::Unsupported("todo".into()))
}

pub fn correlate(
    _gpu: &CudaBackend,
    _plan: &XcorrPlan,
    _days: &[&Spectra],
    _block: &Block,
    _counts: &[u32],
    _out: &mut [f32],
    _pair_stride: usize,
) -> Result<()> {
    Err(Error::Unsupported("todo".into()))
}
