//! A host call's rows kept on the device: with a progress callback, the host stays one chunk
//! ahead of the device and reports a chunk's rows once the device has made them, so the
//! report means work done and a stop takes effect within a chunk. Without one, nothing
//! waits.

use crate::backend::cuda::driver_error;
use crate::error::Result;
use crate::progress::Reporter;
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::Arc;

pub(super) struct Pace {
    stream: Arc<CudaStream>,
    /// The rows queued last and the event after them.
    pending: Option<(CudaEvent, usize)>,
}

impl Pace {
    /// A pace for the call's `stream`, if `reporter` has a listener.
    pub(super) fn new(stream: &Arc<CudaStream>, reporter: &Reporter) -> Option<Pace> {
        reporter.is_active().then(|| Pace {
            stream: stream.clone(),
            pending: None,
        })
    }

    /// `rows` more rows are queued: waits for the rows queued before them and reports
    /// those.
    pub(super) fn queued(&mut self, rows: usize, reporter: &mut Reporter) -> Result<()> {
        let event = self
            .stream
            .record_event(None)
            .map_err(driver_error("recording a progress event"))?;
        match self.pending.replace((event, rows)) {
            Some(before) => done(before, reporter),
            None => Ok(()),
        }
    }

    /// Waits for the rows queued last and reports them.
    pub(super) fn finish(&mut self, reporter: &mut Reporter) -> Result<()> {
        match self.pending.take() {
            Some(last) => done(last, reporter),
            None => Ok(()),
        }
    }
}

fn done((event, rows): (CudaEvent, usize), reporter: &mut Reporter) -> Result<()> {
    event
        .synchronize()
        .map_err(driver_error("waiting for correlations"))?;
    reporter.advance(rows)
}
