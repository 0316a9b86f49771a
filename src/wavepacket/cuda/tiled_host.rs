//! A tiled volume's host-to-host calls with the common grids on the device: the input goes
//! up once, the tiles run as the device-resident calls run them (`tiled.rs`: cut, pass,
//! added into the common grids in tile order, the same arithmetic), and the result comes
//! down once. Against the host's common grids this saves, per tile, the coefficients'
//! trip to the host and their scatter there; the grids' one copy is smaller than the
//! tiles' (neighbouring windows share rows).
//!
//! Over several GPUs of one host that reach each other's memory, the common grids are cut
//! by boxes into one part per GPU, each kept (uploaded, downloaded) by its GPU over its own
//! link. Tile i runs on GPU i mod K; once its coefficients are made and tile i − 1's adds
//! are done, it adds them into every part, the other GPUs' through their addresses. So
//! every coefficient is summed in tile order, with one GPU's arithmetic: the result does
//! not depend on the number of GPUs. The adjoint takes each tile's window from the parts
//! the same way and puts the tile's samples into the first GPU's volume (tiles do not
//! overlap).

use super::tiled::{GridPart, TileTables, TileWork};
use super::{BoxStage, Pass};
use crate::backend::cuda::buffers::{alloc, fill_zero};
use crate::backend::cuda::driver_error;
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::{Error, Result};
use crate::sample::Real;
use cudarc::driver::{CudaEvent, CudaStream};

/// What a host-to-host tiled call does: its passes in order (C, C*, or C then C*), and
/// the sizes of the volume (samples) and of the common grids (reals).
pub struct TiledCall<'a> {
    pub passes: &'a [Pass],
    pub samples: usize,
    pub grid_reals: usize,
}

/// One GPU of a tiled call: its tile transform's stage, its tables and the part of the
/// common grids it keeps (the parts in order cover all the grids).
pub struct TileGpu<'a, T: Real> {
    pub stage: &'a BoxStage<T>,
    pub tables: &'a TileTables<T>,
    pub part: GridPart,
}

/// One GPU's arrays for a call: its part of the common grids, and the volume (on the
/// first GPU always; on the others for a forward pass, whose tiles they cut from it).
struct Held<T> {
    grids: DeviceBuf<T>,
    volume: Option<DeviceBuf<T>>,
}

/// Runs `call` from the host array `input` into the host array `output` (written only once
/// every pass has run) on `gpus`, reporting each tile (`after_tile`: an error stops the
/// call) once it has run on a single pass; `Ok(false)` when the device arrays do not fit
/// (a plan's cap or a device's free memory): nothing ran, the caller takes the host's
/// common grids.
pub fn tiled_host<T: Real>(
    gpus: &[TileGpu<'_, T>],
    call: TiledCall<'_>,
    input: &[T],
    output: &mut [T],
    after_tile: &mut dyn FnMut() -> Result<()>,
) -> Result<bool> {
    let Some(mut held) = allocate(gpus, &call)? else {
        return Ok(false);
    };
    let run = run_passes(gpus, &call, &mut held, input, output, after_tile);
    if run.is_err() {
        // The queued work may still read and write the arrays: let it end before they go.
        for g in gpus {
            let _ = g.stage.stream.synchronize();
        }
    }
    run.map(|_| true)
}

/// Each GPU's arrays for `call`, counted towards its plan; None where one does not fit.
fn allocate<T: Real>(
    gpus: &[TileGpu<'_, T>],
    call: &TiledCall<'_>,
) -> Result<Option<Vec<Held<T>>>> {
    let forward = call.passes.contains(&Pass::Forward);
    let mut held = Vec::with_capacity(gpus.len());
    for (k, g) in gpus.iter().enumerate() {
        let s = &g.stage.stream;
        let made = g.stage.held.scope("a wave-packet volume call", || {
            let grids = alloc(
                s,
                2 * g.part.common.len(),
                "allocating the volume's common grids",
            )?;
            let volume = match k == 0 || forward {
                true => Some(alloc(s, call.samples, "allocating the volume")?),
                false => None,
            };
            Ok(Held { grids, volume })
        });
        match made {
            Err(Error::DeviceOutOfMemory(_)) => return Ok(None),
            made => held.push(made?),
        }
    }
    Ok(Some(held))
}

/// The call's passes between one upload and one download per GPU.
fn run_passes<T: Real>(
    gpus: &[TileGpu<'_, T>],
    call: &TiledCall<'_>,
    held: &mut [Held<T>],
    input: &[T],
    output: &mut [T],
    after_tile: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let first = call.passes.first().copied();
    on_each(gpus, held, |g, h| {
        // Whatever queues on a stage's stream holds its lock (a capture there takes in
        // only its own work); the copies wait for themselves, the passes take it anew.
        let _queue = g.stage.lock();
        let io = g.stage.stager()?;
        match (first, h.volume.as_mut()) {
            (Some(Pass::Adjoint), _) => io.up(&mut h.grids, &input[reals(&g.part.common)]),
            (_, Some(volume)) => io.up(volume, input),
            _ => Ok(()),
        }
    })?;
    let mut report = match call.passes.len() {
        1 => Some(after_tile),
        _ => None,
    };
    let mut done: Option<Done> = None;
    for pass in call.passes {
        let report = report
            .as_mut()
            .map(|r| &mut **r as &mut dyn FnMut() -> Result<()>);
        done = Some(match pass {
            Pass::Forward => forward(gpus, held, report)?,
            Pass::Adjoint => adjoint(gpus, held, done.as_ref(), report)?,
        });
    }
    let Some(done) = done else { return Ok(()) };
    match call.passes.last() {
        Some(Pass::Forward) => {
            let parts = split_parts(gpus, output);
            let work = held.iter_mut().zip(parts);
            on_each_with(gpus, work, |g, (h, out)| {
                done.wait_on(&g.stage.stream)?;
                let _queue = g.stage.lock();
                g.stage.stager()?.down(&h.grids, out)
            })
        }
        _ => {
            let g = &gpus[0];
            done.wait_on(&g.stage.stream)?;
            let _queue = g.stage.lock();
            let volume = held[0].volume.as_ref();
            let volume = volume.ok_or_else(|| Error::Internal("the volume is missing".into()))?;
            g.stage.stager()?.down(volume, output)
        }
    }
}

/// The reals of a range of complex coefficients.
fn reals(r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
    2 * r.start..2 * r.end
}

/// `output` (the common grids' reals) cut into each GPU's part.
fn split_parts<'o, T: Real>(gpus: &[TileGpu<'_, T>], mut output: &'o mut [T]) -> Vec<&'o mut [T]> {
    let mut parts = Vec::with_capacity(gpus.len());
    for g in gpus {
        let (head, tail) = output.split_at_mut(2 * g.part.common.len());
        parts.push(head);
        output = tail;
    }
    parts
}

/// The end of a pass: for each GPU, the event after its last work.
struct Done {
    last: Vec<CudaEvent>,
}

impl Done {
    /// Makes `stream` wait for the whole pass.
    fn wait_on(&self, stream: &CudaStream) -> Result<()> {
        let what = "ordering a wave-packet volume's GPUs";
        for e in &self.last {
            stream.wait(e).map_err(driver_error(what))?;
        }
        Ok(())
    }
}

/// Tiles in tile order, tile i on GPU i mod K: `step(i, gpu, work)` queues tile i on its
/// GPU's stream. With `report`, each tile is reported once it has run, K − 1 tiles behind
/// the last queued (so that every GPU stays busy); without, nothing waits.
fn by_tile<T: Real>(
    gpus: &[TileGpu<'_, T>],
    mut report: Option<&mut dyn FnMut() -> Result<()>>,
    mut step: impl FnMut(usize, &TileGpu<'_, T>, &mut TileWork<'_, T>) -> Result<()>,
) -> Result<Done> {
    let k = gpus.len();
    let what = "ordering a wave-packet volume's tiles";
    let mut queued: std::collections::VecDeque<CudaEvent> = Default::default();
    for i in 0..gpus[0].tables.n_tiles() {
        let g = &gpus[i % k];
        let s = &g.stage.stream;
        g.stage.on_tiles(s, |w| step(i, g, w))?;
        let Some(report) = report.as_deref_mut() else {
            continue;
        };
        queued.push_back(s.record_event(None).map_err(driver_error(what))?);
        if queued.len() == k {
            if let Some(e) = queued.pop_front() {
                e.synchronize().map_err(driver_error(what))?;
            }
            report()?;
        }
    }
    if let Some(report) = report {
        for e in queued {
            e.synchronize().map_err(driver_error(what))?;
            report()?;
        }
    }
    let mut last = Vec::with_capacity(k);
    for g in gpus {
        last.push(
            g.stage
                .stream
                .record_event(None)
                .map_err(driver_error(what))?,
        );
    }
    Ok(Done { last })
}

/// C: the common grids' parts cleared, then each tile's coefficients made on its GPU and
/// added into every part after the previous tile's adds.
fn forward<T: Real>(
    gpus: &[TileGpu<'_, T>],
    held: &mut [Held<T>],
    report: Option<&mut dyn FnMut() -> Result<()>>,
) -> Result<Done> {
    let what = "ordering a wave-packet volume's tiles";
    let mut cleared = Vec::with_capacity(gpus.len());
    for (g, h) in gpus.iter().zip(held.iter_mut()) {
        let s = &g.stage.stream;
        fill_zero(
            s,
            &mut h.grids,
            "clearing the wave-packet volume's coefficients",
        )?;
        cleared.push(s.record_event(None).map_err(driver_error(what))?);
    }
    let mut previous: Option<CudaEvent> = None;
    let k = gpus.len();
    by_tile(gpus, report, |i, g, w| {
        let s = &g.stage.stream;
        let volume = held[i % k].volume.as_ref();
        let volume = volume.ok_or_else(|| Error::Internal("a GPU's volume is missing".into()))?;
        g.stage.forward_tile(g.tables, i, volume, w)?;
        let waits = match i < k {
            true => cleared.iter().collect::<Vec<_>>(),
            false => Vec::new(),
        };
        for e in waits.into_iter().chain(previous.as_ref()) {
            s.wait(e).map_err(driver_error(what))?;
        }
        for (p, h) in gpus.iter().zip(held.iter_mut()) {
            g.stage
                .tile_grids("wp_tile_add", g.tables, i, &p.part, &*w.local, &mut h.grids)?;
        }
        previous = Some(s.record_event(None).map_err(driver_error(what))?);
        Ok(())
    })
}

/// C*: each tile's window taken from every part on its GPU (after `before`, the pass
/// that made the grids, if any), its adjoint, and its samples put into the first GPU's
/// volume.
fn adjoint<T: Real>(
    gpus: &[TileGpu<'_, T>],
    held: &mut [Held<T>],
    before: Option<&Done>,
    report: Option<&mut dyn FnMut() -> Result<()>>,
) -> Result<Done> {
    let k = gpus.len();
    let (grids, volumes): (Vec<_>, Vec<_>) =
        held.iter_mut().map(|h| (&h.grids, &mut h.volume)).unzip();
    let volume = volumes.into_iter().next().and_then(|v| v.as_mut());
    let volume = volume.ok_or_else(|| Error::Internal("the volume is missing".into()))?;
    by_tile(gpus, report, |i, g, w| {
        if let (true, Some(before)) = (i < k, before) {
            before.wait_on(&g.stage.stream)?;
        }
        for (p, part) in gpus.iter().zip(&grids) {
            g.stage
                .tile_grids("wp_tile_take", g.tables, i, &p.part, *part, w.local)?;
        }
        g.stage.adjoint_tile(g.tables, i, w, volume)
    })
}

/// Runs `f` for each GPU with its arrays: on the calling thread for one GPU, else one
/// thread each (their copies run at once, each over its GPU's link).
fn on_each<T: Real>(
    gpus: &[TileGpu<'_, T>],
    held: &mut [Held<T>],
    f: impl Fn(&TileGpu<'_, T>, &mut Held<T>) -> Result<()> + Sync,
) -> Result<()> {
    on_each_with(gpus, held.iter_mut(), |g, h| f(g, h))
}

/// `on_each` over any per-GPU items.
fn on_each_with<T: Real, I: Send>(
    gpus: &[TileGpu<'_, T>],
    items: impl Iterator<Item = I>,
    f: impl Fn(&TileGpu<'_, T>, I) -> Result<()> + Sync,
) -> Result<()> {
    let items: Vec<I> = items.collect();
    if gpus.len() == 1 {
        return items.into_iter().try_for_each(|i| f(&gpus[0], i));
    }
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = gpus
            .iter()
            .zip(items)
            .map(|(g, i)| scope.spawn(move || f(g, i)))
            .collect();
        let mut result = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("a GPU's copy thread panicked".into())));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}
