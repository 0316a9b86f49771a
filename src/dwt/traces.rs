//! The direction of a transform, the caller's arrays and the work of one batch, as both
//! backends take them.

use super::denoise::DenoiseOptions;
use super::wavelet::Wavelet;
use crate::layout::TraceBatch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Inverse,
}

/// The caller's arrays: one array transformed in place, or an input and an output.
pub enum Traces<'a, T> {
    InPlace(&'a mut [T]),
    Separate { input: &'a [T], output: &'a mut [T] },
}

impl<T> Traces<'_, T> {
    pub fn input(&self) -> &[T] {
        match self {
            Traces::InPlace(d) => d,
            Traces::Separate { input, .. } => input,
        }
    }
}

/// What a call does to every trace.
#[derive(Clone, Copy)]
pub enum Op<'o> {
    Transform(Direction),
    /// Forward transform, thresholding, inverse transform.
    Denoise(&'o DenoiseOptions),
}

/// One batch of a call as a backend takes it: the operation, the wavelet, the depth
/// (resolved, ≥ 1) and the caller's traces; `checked`: their samples are known finite
/// (else the backend refuses a non-finite one before writing anything).
pub struct Job<'a, T> {
    pub op: Op<'a>,
    pub wavelet: &'a Wavelet,
    pub levels: u32,
    pub traces: Traces<'a, T>,
    pub batch: TraceBatch,
    pub checked: bool,
}
