//! cuFFT plans, made one way for every capability: bound to the caller's stream, ready
//! before their first use, destroyed without panicking (on any thread).

use super::{driver_error, wait_for_library_setup};
use crate::error::{Error, Result};
use cudarc::cufft::{result, sys};
use cudarc::driver::CudaStream;
use std::sync::Arc;

pub use sys::cufftType as FftKind;

pub struct FftPlan {
    handle: sys::cufftHandle,
    stream: Arc<CudaStream>,
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
        let fits = |v: usize| i32::try_from(v).ok();
        let mut n: Vec<i32> = dims
            .iter()
            .map(|&d| fits(d))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "{what} of {dims:?} points is beyond cuFFT's 32-bit plan sizes"
                ))
            })?;
        let (Some(idist), Some(odist), Some(batch)) = (fits(dist.0), fits(dist.1), fits(batch))
        else {
            return Err(Error::Unsupported(format!(
                "{what}: a batch of {batch}, {} elements apart, is beyond cuFFT's 32-bit plan sizes",
                dist.0.max(dist.1)
            )));
        };
        stream
            .context()
            .bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        // SAFETY: plain plan creation; the handle is owned by the returned value.
        let handle = unsafe {
            result::plan_many(
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
            )
        }
        .map_err(error_with("planning", what))?;
        let plan = FftPlan {
            handle,
            stream: stream.clone(),
        };
        // SAFETY: the plan holds the stream, so the stream outlives it.
        unsafe { result::set_stream(handle, stream.cu_stream() as _) }
            .map_err(error_with("binding to a stream", what))?;
        wait_for_library_setup(stream.context())?;
        Ok(plan)
    }

    pub fn handle(&self) -> sys::cufftHandle {
        self.handle
    }
}

impl Drop for FftPlan {
    fn drop(&mut self) {
        // The plan may be dropped on another thread than the one that made it.
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: made by cufftPlanMany, destroyed once.
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
