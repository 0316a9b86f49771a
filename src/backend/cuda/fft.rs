//! cuFFT plans, made one way for every capability: bound to the caller's stream, ready
//! before their first use, destroyed without panicking (on any thread). Executed through
//! typed arrays: `exec_c2c::<T>` picks C2C or Z2Z by the sample type, and the arrays'
//! lengths are checked against the plan's extent, so the calls are safe.

use super::array::{DeviceArray, DeviceArrayMut};
use super::buffers::alloc;
use super::memory::DeviceBuf;
use super::{bind, wait_for_library_setup};
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::cufft::{result, sys};
use cudarc::driver::CudaStream;
use num_complex::Complex;
use std::sync::Arc;

pub use sys::cufftType as FftKind;

/// The direction of a complex transform (cuFFT's sign of the exponent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// e^{-2πi jk/n}
    Forward,
    /// e^{+2πi jk/n}, unnormalised
    Inverse,
}

impl Direction {
    fn sign(self) -> i32 {
        match self {
            Direction::Forward => -1,
            Direction::Inverse => 1,
        }
    }
}

/// What kind of transform, independent of the precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// complex to complex
    C2C,
    /// real to half-spectrum
    R2C,
    /// half-spectrum to real
    C2R,
}

fn is_double<T: Sample>() -> bool {
    std::mem::size_of::<T>() == 8
}

/// A device array's address and length, for the checked execute.
fn span<U>(a: &impl DeviceArray<U>) -> (u64, usize) {
    (a.addr(), a.len())
}

/// The cuFFT type of `shape` in `T`'s precision.
pub fn kind<T: Sample>(shape: Shape) -> FftKind {
    match (shape, is_double::<T>()) {
        (Shape::C2C, false) => FftKind::CUFFT_C2C,
        (Shape::C2C, true) => FftKind::CUFFT_Z2Z,
        (Shape::R2C, false) => FftKind::CUFFT_R2C,
        (Shape::R2C, true) => FftKind::CUFFT_D2Z,
        (Shape::C2R, false) => FftKind::CUFFT_C2R,
        (Shape::C2R, true) => FftKind::CUFFT_Z2D,
    }
}

pub struct FftPlan {
    handle: sys::cufftHandle,
    /// The plan's work area, from the context's allocator (cuFFT allocates none itself);
    /// dropped after the handle is destroyed.
    _work: Option<DeviceBuf<u8>>,
    stream: Arc<CudaStream>,
    kind: FftKind,
    /// Elements (of the input's and the output's type) the batch spans.
    extent: (usize, usize),
}

// SAFETY: a cuFFT handle may be used from any thread; each owner serialises its executes.
unsafe impl Send for FftPlan {}
unsafe impl Sync for FftPlan {}

impl FftPlan {
    /// A plan of `batch` transforms of `dims` (slowest first, as cuFFT orders them), each
    /// vector contiguous, `dist` = (input, output) elements between consecutive vectors;
    /// `what` names them in errors ("the fine-grid FFT").
    pub fn many(
        dims: &[usize],
        dist: (usize, usize),
        kind: FftKind,
        batch: usize,
        stream: &Arc<CudaStream>,
        what: &'static str,
    ) -> Result<FftPlan> {
        let (mut n, idist, odist, batch) = plan_sizes(dims, dist, batch, what)?;
        bind(stream.context())?;
        let handle = create_handle(what)?;
        let planned = make_plan(handle, &mut n, (idist, odist), kind, batch, what)
            .and_then(|bytes| work_area(handle, bytes, stream, what));
        let work = match planned {
            Ok(work) => work,
            Err(e) => {
                // SAFETY: made above, destroyed once.
                let _ = unsafe { result::destroy(handle) };
                return Err(e);
            }
        };
        let plan = FftPlan {
            handle,
            _work: work,
            stream: stream.clone(),
            kind,
            extent: extent(dims, dist, kind, batch as usize),
        };
        // SAFETY: the plan holds the stream, so the stream outlives it.
        unsafe { result::set_stream(handle, stream.cu_stream() as _) }
            .map_err(error_with("binding to a stream", what))?;
        wait_for_library_setup(stream.context())?;
        Ok(plan)
    }

    /// Complex to complex in `T`'s precision (C2C or Z2Z); `input` and `output` may be the
    /// same array (use `exec_c2c_in_place`).
    pub fn exec_c2c<T: Sample>(
        &self,
        input: &impl DeviceArray<Complex<T>>,
        output: &mut impl DeviceArrayMut<Complex<T>>,
        direction: Direction,
    ) -> Result<()> {
        self.run::<T>(Shape::C2C, span(input), span(output), direction)
    }

    /// Complex to complex in place.
    pub fn exec_c2c_in_place<T: Sample>(
        &self,
        data: &mut impl DeviceArrayMut<Complex<T>>,
        direction: Direction,
    ) -> Result<()> {
        let d = span(data);
        self.run::<T>(Shape::C2C, d, d, direction)
    }

    /// Real to half-spectrum (R2C or D2Z).
    pub fn exec_r2c<T: Sample>(
        &self,
        input: &impl DeviceArray<T>,
        output: &mut impl DeviceArrayMut<Complex<T>>,
    ) -> Result<()> {
        let forward = Direction::Forward;
        self.run::<T>(Shape::R2C, span(input), span(output), forward)
    }

    /// Half-spectrum to real (C2R or Z2D); cuFFT may overwrite the input.
    pub fn exec_c2r<T: Sample>(
        &self,
        input: &mut impl DeviceArrayMut<Complex<T>>,
        output: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let inverse = Direction::Inverse;
        self.run::<T>(Shape::C2R, span(input), span(output), inverse)
    }

    /// The plan run from `i` to `o`, each an address and its length in elements, after
    /// checking both against the plan (`direction` matters to complex-to-complex plans).
    fn run<T: Sample>(
        &self,
        shape: Shape,
        i: (u64, usize),
        o: (u64, usize),
        direction: Direction,
    ) -> Result<()> {
        self.check::<T>(shape, i.1, o.1)?;
        let (h, i, o, sign) = (self.handle, i.0, o.0, direction.sign());
        bind(self.stream.context())?;
        // SAFETY: both addresses span the plan's extent (checked above) in its precision;
        // cuFFT allows input and output to coincide.
        let done = unsafe {
            match (shape, is_double::<T>()) {
                (Shape::C2C, true) => result::exec_z2z(h, i as *mut _, o as *mut _, sign),
                (Shape::C2C, false) => result::exec_c2c(h, i as *mut _, o as *mut _, sign),
                (Shape::R2C, true) => result::exec_d2z(h, i as *mut _, o as *mut _),
                (Shape::R2C, false) => result::exec_r2c(h, i as *mut _, o as *mut _),
                (Shape::C2R, true) => result::exec_z2d(h, i as *mut _, o as *mut _),
                (Shape::C2R, false) => result::exec_c2r(h, i as *mut _, o as *mut _),
            }
        };
        done.map_err(error(match shape {
            Shape::C2C => "running a complex FFT",
            Shape::R2C => "running a real-to-complex FFT",
            Shape::C2R => "running a complex-to-real FFT",
        }))
    }

    fn check<T: Sample>(&self, shape: Shape, input: usize, output: usize) -> Result<()> {
        if kind::<T>(shape) != self.kind {
            return Err(Error::Internal(format!(
                "a {:?} cuFFT plan executed as {:?}",
                self.kind,
                kind::<T>(shape)
            )));
        }
        if input < self.extent.0 || output < self.extent.1 {
            return Err(Error::Internal(format!(
                "cuFFT arrays of {input} and {output} elements for a plan spanning {} and {}",
                self.extent.0, self.extent.1
            )));
        }
        Ok(())
    }
}

/// The work area a plan of `FftPlan::many`'s arguments (vectors contiguous) would take,
/// bytes, from a plan made and destroyed here: nothing is allocated. The calling thread's
/// CUDA context must be current.
pub fn work_bytes(
    dims: &[usize],
    kind: FftKind,
    batch: usize,
    what: &'static str,
) -> Result<usize> {
    let size: usize = dims.iter().product();
    let (mut n, idist, odist, batch) = plan_sizes(dims, (size, size), batch, what)?;
    let handle = create_handle(what)?;
    let bytes = make_plan(handle, &mut n, (idist, odist), kind, batch, what);
    // SAFETY: made above, destroyed once.
    let _ = unsafe { result::destroy(handle) };
    bytes
}

/// `dims`, `dist` and `batch` as cuFFT's 32-bit sizes, or a refusal naming `what`.
fn plan_sizes(
    dims: &[usize],
    dist: (usize, usize),
    batch: usize,
    what: &str,
) -> Result<(Vec<i32>, i32, i32, i32)> {
    let fits = |v: usize| i32::try_from(v).ok();
    let n: Vec<i32> = dims
        .iter()
        .map(|&d| fits(d))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{what} of {dims:?} points is beyond cuFFT's 32-bit plan sizes"
            ))
        })?;
    match (fits(dist.0), fits(dist.1), fits(batch)) {
        (Some(idist), Some(odist), Some(b)) => Ok((n, idist, odist, b)),
        _ => Err(Error::Unsupported(format!(
            "{what}: a batch of {batch}, {} elements apart, is beyond cuFFT's 32-bit plan sizes",
            dist.0.max(dist.1)
        ))),
    }
}

/// A fresh cuFFT handle (the caller plans it, and destroys it or hands it to a plan).
fn create_handle(what: &'static str) -> Result<sys::cufftHandle> {
    let mut handle: sys::cufftHandle = 0;
    // SAFETY: plain handle creation.
    unsafe { sys::cufftCreate(&mut handle) }
        .result()
        .map_err(error_with("planning", what))?;
    Ok(handle)
}

/// Plans `handle` without letting cuFFT allocate its work area; returns the area's bytes.
fn make_plan(
    handle: sys::cufftHandle,
    n: &mut [i32],
    (idist, odist): (i32, i32),
    kind: FftKind,
    batch: i32,
    what: &'static str,
) -> Result<usize> {
    // SAFETY: `handle` is a fresh handle, not yet planned.
    unsafe { sys::cufftSetAutoAllocation(handle, 0) }
        .result()
        .map_err(error_with("planning", what))?;
    let mut bytes = 0usize;
    // SAFETY: `n` holds the rank's dimensions; null embeds mean contiguous vectors.
    unsafe {
        sys::cufftMakePlanMany(
            handle,
            n.len() as i32,
            n.as_mut_ptr(),
            std::ptr::null_mut(),
            1,
            idist,
            std::ptr::null_mut(),
            1,
            odist,
            kind,
            batch,
            &mut bytes,
        )
    }
    .result()
    .map_err(error_with("planning", what))?;
    Ok(bytes)
}

/// The work area of a plan, `bytes` long, from the context's allocator, given to cuFFT.
fn work_area(
    handle: sys::cufftHandle,
    bytes: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<Option<DeviceBuf<u8>>> {
    if bytes == 0 {
        return Ok(None);
    }
    let work = alloc::<u8>(stream, bytes, what)?;
    // SAFETY: the area spans `bytes`, what the plan asked for, and the plan's owner keeps
    // it until the handle is destroyed.
    unsafe { sys::cufftSetWorkArea(handle, work.addr() as *mut std::ffi::c_void) }
        .result()
        .map_err(error_with("giving a work area to", what))?;
    Ok(Some(work))
}

/// Elements of the input's and output's types a batch spans: (batch − 1) vectors apart
/// plus one vector (a half spectrum on the complex side of a real transform).
fn extent(dims: &[usize], dist: (usize, usize), kind: FftKind, batch: usize) -> (usize, usize) {
    let full: usize = dims.iter().product();
    let last = dims.last().copied().unwrap_or(1);
    let half = full / last.max(1) * (last / 2 + 1);
    let (i, o) = match kind {
        FftKind::CUFFT_R2C | FftKind::CUFFT_D2Z => (full, half),
        FftKind::CUFFT_C2R | FftKind::CUFFT_Z2D => (half, full),
        _ => (full, full),
    };
    let span = |d: usize, v: usize| batch.saturating_sub(1) * d + v;
    (span(dist.0, i), span(dist.1, o))
}

impl Drop for FftPlan {
    fn drop(&mut self) {
        // The plan may be dropped on another thread than the one that made it.
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: made by cufftCreate, destroyed once.
        let _ = unsafe { result::destroy(self.handle) };
    }
}

/// Maps a cuFFT error to a status: its failed allocations are out-of-device-memory.
pub fn error(doing: &'static str) -> impl Fn(result::CufftError) -> Error {
    error_with(doing, "")
}

fn error_with(doing: &'static str, what: &'static str) -> impl Fn(result::CufftError) -> Error {
    let doing = if what.is_empty() {
        doing.to_string()
    } else {
        format!("{doing} {what}")
    };
    move |e| match e.0 {
        sys::cufftResult::CUFFT_ALLOC_FAILED => {
            Error::DeviceOutOfMemory(format!("cuFFT ran out of device memory while {doing}"))
        }
        other => Error::CudaDriver(format!("cuFFT error while {doing}: {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_span_the_batch_and_the_half_spectra() {
        assert_eq!(extent(&[8, 6], (48, 48), FftKind::CUFFT_C2C, 3), (144, 144));
        // 6 reals give 4 complex values per row; vectors 50 reals / 30 complex apart.
        assert_eq!(extent(&[8, 6], (50, 32), FftKind::CUFFT_R2C, 2), (98, 64));
        assert_eq!(extent(&[8, 6], (32, 50), FftKind::CUFFT_Z2D, 2), (64, 98));
        assert_eq!(kind::<f64>(Shape::C2C), FftKind::CUFFT_Z2Z);
        assert_eq!(kind::<f32>(Shape::R2C), FftKind::CUFFT_R2C);
    }
}
