//! Trace arrays as the kernels index them: rows of samples a stride apart, checked against
//! the arrays' lengths before a launch relies on them.

use crate::backend::cuda::array::{part, part_mut, DeviceArray, DeviceArrayMut, Part, PartMut};
use crate::error::{Error, Result};

/// `traces` traces of `n` samples each.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub(super) n: usize,
    pub(super) traces: usize,
}

/// A trace array: trace i starts at element i·stride.
pub(super) struct Rows<A> {
    pub(super) data: A,
    pub(super) stride: usize,
}

impl<T> Rows<Part<'_, T>> {
    /// The rows of traces `first..first + count` (each `n` samples long).
    pub(super) fn traces(&self, first: usize, count: usize, n: usize) -> Rows<Part<'_, T>> {
        Rows {
            data: part(&self.data, first * self.stride, span(count, self.stride, n)),
            stride: self.stride,
        }
    }
}

impl<T> Rows<PartMut<'_, T>> {
    /// The same rows, borrowed for a shorter while.
    pub(super) fn reborrow(&mut self) -> Rows<PartMut<'_, T>> {
        Rows {
            data: whole_mut(&mut self.data),
            stride: self.stride,
        }
    }

    /// The rows of traces `first..first + count` (each `n` samples long), writable.
    pub(super) fn traces_mut(
        &mut self,
        first: usize,
        count: usize,
        n: usize,
    ) -> Rows<PartMut<'_, T>> {
        let stride = self.stride;
        Rows {
            data: part_mut(&mut self.data, first * stride, span(count, stride, n)),
            stride,
        }
    }
}

/// The traces a whole-trace kernel reads and where it writes its results.
pub(super) enum Io<'x, T> {
    /// Input and output in separate arrays.
    Apart(Rows<Part<'x, T>>, Rows<PartMut<'x, T>>),
    /// One array: each team loads its trace to shared memory before it writes the trace back.
    InPlace(Rows<PartMut<'x, T>>),
}

impl<T> Io<'_, T> {
    /// Checks that the arrays hold `shape`'s traces at their strides.
    pub(super) fn check(&self, shape: Shape) -> Result<()> {
        match self {
            Io::Apart(input, output) => {
                check_rows(
                    &input.data,
                    shape.traces,
                    input.stride,
                    shape.n,
                    "DWT input",
                )?;
                check_rows(
                    &output.data,
                    shape.traces,
                    output.stride,
                    shape.n,
                    "DWT output",
                )
            }
            Io::InPlace(data) => {
                check_rows(&data.data, shape.traces, data.stride, shape.n, "DWT traces")
            }
        }
    }
}

/// Elements that `rows` rows of `len` elements, `stride` apart, reach over.
fn span(rows: usize, stride: usize, len: usize) -> usize {
    match rows {
        0 => 0,
        rows => (rows - 1) * stride + len,
    }
}

/// Checks that `rows` rows of `len` elements, `stride` apart, lie inside `a`: what each
/// launch's SAFETY line relies on (a failure is an internal bug, reported, not launched).
pub(super) fn check_rows<T, A: DeviceArray<T> + ?Sized>(
    a: &A,
    rows: usize,
    stride: usize,
    len: usize,
    what: &str,
) -> Result<()> {
    let need = match rows {
        0 => Some(0),
        rows => (rows - 1)
            .checked_mul(stride)
            .and_then(|r| r.checked_add(len)),
    };
    match need {
        Some(need) if need <= a.len() => Ok(()),
        _ => Err(Error::Internal(format!(
            "{what}: {rows} rows of {len} elements, {stride} apart, in an array of {}",
            a.len()
        ))),
    }
}

/// All of `a`, as a sub-array.
pub(super) fn whole<T, A: DeviceArray<T> + ?Sized>(a: &A) -> Part<'_, T> {
    part(a, 0, a.len())
}

/// All of `a`, writable.
pub(super) fn whole_mut<T, A: DeviceArrayMut<T> + ?Sized>(a: &mut A) -> PartMut<'_, T> {
    let len = a.len();
    part_mut(a, 0, len)
}
