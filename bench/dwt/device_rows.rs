//! The rows with the data already on the GPU: the device-resident denoise (the kernels
//! alone, CUDA events) and two references measured in the same run, a pinned H→D + D→H
//! transfer and a D2D copy of the case's bytes.

use crate::config::Config;
use crate::harness::cuda::{drv_err, pinned_round_trip, Events};
use crate::harness::timing::{guarded, measure, ms_since, Sample};
use crate::internal::{denoise_device_enqueue, DeviceTraces};
use crate::row_types::{CaseRefs, Check, Mode, Rows, Work};
use crate::{lib_err, MEMBER};
use seisgpu::backend::cuda::CudaBackend;
use seisgpu::context::Context;
use seisgpu::dwt::wavelet::{Family, Wavelet};
use std::sync::Arc;
use std::time::Instant;

pub struct Gpu {
    pub ctx: Arc<Context>,
    /// For the device-resident and reference rows.
    pub backend: Result<CudaBackend, String>,
}

const PINNED: &str = "ref: pinned H→D + D→H";
const DEVICE: &str = "seisgpu GPU device-resident";
const D2D: &str = "ref: D2D copy";

pub fn run(cfg: &Config, gpu: &Gpu, work: &Work, refs: &CaseRefs, rows: &mut Rows) {
    if !(cfg.device || cfg.refs) {
        return;
    }
    let Work { input, batch, .. } = *work;
    let setup = match &gpu.backend {
        Err(e) => Err(e.clone()),
        Ok(backend) => guarded(|| {
            let stream = backend.stream().map_err(lib_err)?;
            let d_in = stream
                .clone_htod(input)
                .map_err(drv_err("copying the input to the device"))?;
            let d_out = stream
                .alloc_zeros::<f32>(input.len())
                .map_err(drv_err("allocating the device output"))?;
            stream
                .synchronize()
                .map_err(drv_err("synchronizing the stream"))?;
            Ok((backend, stream, d_in, d_out))
        }),
    };
    let (backend, stream, d_in, mut d_out) = match setup {
        Ok(s) => s,
        Err(e) => {
            for (on, mode, label) in [
                (cfg.refs, Mode::RefPinned, PINNED),
                (cfg.device, Mode::GpuDevice, DEVICE),
                (cfg.refs, Mode::RefD2d, D2D),
            ] {
                if on {
                    rows.push(mode, label, Err(e.clone()));
                }
            }
            return;
        }
    };

    // (5a) Pinned host→device then device→host of the case's bytes.
    if cfg.refs {
        rows.progress("pinned transfer reference");
        let r = guarded(|| {
            pinned_round_trip(&stream, input, cfg.gpu_reps(), |back| {
                Check::copy_of(back, input)
            })
        });
        rows.push(Mode::RefPinned, PINNED, r);
    }

    // (4) Device-resident denoise: input and output already on the GPU.
    if cfg.device {
        rows.progress("seisgpu GPU device-resident");
        let r = guarded(|| {
            let wavelet = Wavelet::new(Family::Daubechies, MEMBER).map_err(lib_err)?;
            let levels = batch.n_samples.trailing_zeros();
            let ev = Events::new(&backend.ctx, 2)?;
            // Start from zeros, so that a call that writes nothing cannot pass the check.
            stream
                .memset_zeros(&mut d_out)
                .map_err(drv_err("clearing the output"))?;
            measure(cfg.gpu_reps(), |checked| {
                let t0 = Instant::now();
                ev.record(0, &stream)?;
                // The kernels alone: turning the medians into per-trace thresholds on the
                // host is left out of the timing (it is only done for the checked calls).
                let traces = DeviceTraces::new(&d_in, &mut d_out, batch);
                let medians =
                    denoise_device_enqueue(backend, &wavelet, &work.opts, levels, traces, &stream)
                        .map_err(lib_err)?;
                ev.record(1, &stream)?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let s = Sample {
                    ms: ev.ms(0, 1)?,
                    wall_ms: ms_since(t0),
                    parts: Vec::new(),
                };
                if !checked || refs.for_gpu().is_none() {
                    return Ok((s, None));
                }
                let host = stream
                    .clone_dtoh(&d_out)
                    .map_err(drv_err("copying the output back"))?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let thr = match &refs.cpu_thr {
                    Some(_) => Some(medians.thresholds(backend, &stream).map_err(lib_err)?),
                    None => None,
                };
                Ok((s, refs.check_gpu(&host, thr.as_deref())))
            })
        });
        rows.push(Mode::GpuDevice, DEVICE, r);
    }

    // (5b) Device-to-device copy of the same bytes.
    if cfg.refs {
        rows.progress("device-to-device copy reference");
        let r = guarded(|| {
            let ev = Events::new(&backend.ctx, 2)?;
            measure(cfg.gpu_reps(), |checked| {
                let t0 = Instant::now();
                ev.record(0, &stream)?;
                stream
                    .memcpy_dtod(&d_in, &mut d_out)
                    .map_err(drv_err("copying device to device"))?;
                ev.record(1, &stream)?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let s = Sample {
                    ms: ev.ms(0, 1)?,
                    wall_ms: ms_since(t0),
                    parts: Vec::new(),
                };
                if !checked {
                    return Ok((s, None));
                }
                let host = stream
                    .clone_dtoh(&d_out)
                    .map_err(drv_err("copying the output back"))?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                Ok((s, Some(Check::copy_of(&host, input))))
            })
        });
        rows.push(Mode::RefD2d, D2D, r);
    }
}
