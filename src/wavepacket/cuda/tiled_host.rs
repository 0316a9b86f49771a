//! A tiled volume's host-to-host calls with the common grids on the device: the input goes
//! up once, the tiles run as the device-resident calls run them (`tiled.rs`: cut, pass,
//! added into the common grids in tile order, the same arithmetic), and the result comes
//! down once. Against the host's common grids this saves, per tile, the coefficients'
//! trip to the host and their scatter there; the grids' one copy is smaller than the
//! tiles' (neighbouring windows share rows).

use super::tiled::TileTables;
use super::{BoxStage, Pass};
use crate::backend::cuda::buffers::alloc;
use crate::backend::cuda::driver_error;
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::{Error, Result};
use crate::sample::Real;

/// What a host-to-host tiled call does: its passes in order (C, C*, or C then C*), and
/// the sizes of the volume (samples) and of the common grids (reals).
pub struct TiledCall<'a> {
    pub passes: &'a [Pass],
    pub samples: usize,
    pub grid_reals: usize,
}

impl<T: Real> BoxStage<T> {
    /// Runs `call` from the host array `input` into the host array `output` (written only
    /// once every pass has run), waiting for each tile before `after_tile` (progress
    /// reports; an error stops the call); `Ok(false)` when the device arrays do not fit
    /// (the plan's cap or the device's free memory): nothing ran, the caller takes the
    /// host's common grids.
    pub fn tiled_host(
        &self,
        t: &TileTables<T>,
        call: TiledCall<'_>,
        input: &[T],
        output: &mut [T],
        after_tile: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool> {
        let io = self.stager()?;
        let s = &self.stream;
        let arrays = self.held.scope("a wave-packet volume call", || {
            let volume: DeviceBuf<T> = alloc(s, call.samples, "allocating the volume")?;
            let grids = alloc(s, call.grid_reals, "allocating the volume's common grids")?;
            Ok((volume, grids))
        });
        let (mut volume, mut grids) = match arrays {
            Err(Error::DeviceOutOfMemory(_)) => return Ok(false),
            arrays => arrays?,
        };
        let waited = &mut || {
            s.synchronize()
                .map_err(driver_error("running a wave-packet volume's tile"))?;
            after_tile()
        };
        let report: &mut dyn FnMut() -> Result<()> = match call.passes {
            [_] => waited,
            _ => &mut || Ok(()),
        };
        // Whatever queues on the stage's stream holds its lock (a capture there takes in
        // only its own work); the copies wait for themselves, the passes take it anew.
        {
            let _queue = self.lock();
            match call.passes.first() {
                Some(Pass::Adjoint) => io.up(&mut grids, input)?,
                _ => io.up(&mut volume, input)?,
            }
        }
        for pass in call.passes {
            match pass {
                Pass::Forward => self.tiled_ordered(*pass, s, t, &volume, &mut grids, report)?,
                Pass::Adjoint => self.tiled_ordered(*pass, s, t, &grids, &mut volume, report)?,
            }
        }
        let _queue = self.lock();
        match call.passes.last() {
            Some(Pass::Forward) => io.down(&grids, output)?,
            _ => io.down(&volume, output)?,
        }
        Ok(true)
    }
}
