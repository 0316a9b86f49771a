//! cuBLAS handles a context lends to its calls, made once and kept until the context
//! goes. A handle made and destroyed per call costs its set-up each time, and destroying
//! one synchronizes the whole device (cuBLAS waits for it): that stalls every other
//! thread's work, breaks their stream captures, and, with other threads making and
//! capturing work meanwhile, has been seen to crash inside the driver.

use super::blas::Blas;
use crate::error::Result;
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::{Arc, Mutex};

/// A handle no call holds, with the point of its last stream after its last work: the
/// next borrower's stream waits for it (its workspace may still be read until then).
struct Idle {
    blas: Blas,
    done: CudaEvent,
}

// SAFETY: a cuBLAS handle may be used from any thread, one at a time; the pool lends each
// to one call at a time, and an idle one is only moved.
unsafe impl Send for Idle {}

/// The context's idle handles: as many as calls have used at once.
#[derive(Default)]
pub struct BlasPool {
    idle: Mutex<Vec<Idle>>,
}

/// A handle lent to one call, on the call's stream; back to the pool when dropped.
pub struct LentBlas<'a> {
    pool: &'a BlasPool,
    blas: Option<Blas>,
}

impl BlasPool {
    /// A handle whose work runs on `stream`, ordered after its earlier work; `needed_by`
    /// names what needs cuBLAS where the library is missing.
    pub fn lend(&self, stream: &Arc<CudaStream>, needed_by: &'static str) -> Result<LentBlas<'_>> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let blas = match idle {
            Some(Idle { mut blas, done }) => {
                stream
                    .wait(&done)
                    .map_err(super::driver_error("ordering a cuBLAS handle's reuse"))?;
                blas.use_stream(stream)?;
                blas
            }
            None => Blas::new(stream, needed_by)?,
        };
        Ok(LentBlas {
            pool: self,
            blas: Some(blas),
        })
    }

    /// Handles the pool keeps now (each with its workspace).
    pub fn idle_count(&self) -> usize {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl std::ops::Deref for LentBlas<'_> {
    type Target = Blas;
    fn deref(&self) -> &Blas {
        self.blas.as_ref().expect("lent until dropped")
    }
}

impl Drop for LentBlas<'_> {
    fn drop(&mut self) {
        let Some(blas) = self.blas.take() else { return };
        // Without the event (a failing driver) the handle is destroyed instead of kept.
        if let Ok(done) = blas.stream().record_event(None) {
            let mut idle = self.pool.idle.lock().unwrap_or_else(|p| p.into_inner());
            idle.push(Idle { blas, done });
        }
    }
}
