//! The DWT on the GPU. (Being written: see kernels/dwt.cu.)

use super::CudaBackend;
use crate::backend::cpu::CpuBackend;
use crate::dwt::denoise::DenoiseOptions;
use crate::dwt::wavelet::Wavelet;
use crate::dwt::{Direction, Traces};
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::{CudaSlice, CudaStream};

pub fn transform<T: Sample>(
    _gpu: &CudaBackend,
    _cpu: &CpuBackend,
    _wavelet: &Wavelet,
    _direction: Direction,
    _levels: u32,
    _traces: Traces<T>,
    _batch: TraceBatch,
) -> Result<()> {
    Err(Error::Unsupported("GPU DWT not yet built".into()))
}

pub fn denoise<T: Sample>(
    _gpu: &CudaBackend,
    _cpu: &CpuBackend,
    _wavelet: &Wavelet,
    _options: &DenoiseOptions,
    _levels: u32,
    _traces: Traces<T>,
    _batch: TraceBatch,
) -> Result<Vec<f64>> {
    Err(Error::Unsupported("GPU DWT not yet built".into()))
}

/// Device-resident denoise: input and output already on the GPU (contiguous traces,
/// stride = batch.trace_stride), work queued on `stream`. Returns the thresholds.
#[allow(clippy::too_many_arguments)]
pub fn denoise_device<T: Sample>(
    _gpu: &CudaBackend,
    _wavelet: &Wavelet,
    _options: &DenoiseOptions,
    _levels: u32,
    _input: &CudaSlice<T>,
    _output: &mut CudaSlice<T>,
    _batch: TraceBatch,
    _stream: &std::sync::Arc<CudaStream>,
) -> Result<Vec<f64>> {
    Err(Error::Unsupported("GPU DWT not yet built".into()))
}
