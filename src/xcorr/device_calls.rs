//! The plan's calls on arrays already in device memory. Each is ordered on the context's
//! caller stream (`sg_context_set_stream`) with `ordered_on`: the plan's own stream waits for
//! what the caller queued before, the host calls' kernels are queued there in the same
//! order, and the caller's stream waits for them. The plan keeps the cuBLAS handle and
//! cuFFT plans of these calls (`cuda::held`), so that none waits to destroy them.

use super::calls::{CorrelateCall, DeviceOut};
use super::correlate::{Floats, Stacks};
use super::cuda::{self, DeviceDays, Kit};
use super::groups::{stack_counts, WindowGroups};
use super::method::Planes;
use super::spectra::SpectraData;
use super::{Spectra, XcorrPlan};
use crate::backend::cuda::array::{DeviceArray, Part, PartMut};
use crate::backend::cuda::buffers::download;
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::checks::Rows;
use crate::backend::cuda::workspace::Workspace;
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::progress::Reporter;

/// A device call's stacks: rows `pair_stride` floats apart in `out` (device memory), and
/// the window count of each row to `counts` (host memory), if given.
pub type DeviceStacks<'a> = Stacks<'a, PartMut<'a, f32>>;

impl Floats for PartMut<'_, f32> {
    fn floats(&self) -> usize {
        self.len()
    }
}

impl XcorrPlan {
    /// `preprocess` of station-days in device memory (`valid` too, if given), queued on the
    /// caller's stream. Waits for the stream at the end: the window flags (which windows
    /// were kept) come to the host, where the correlations are planned with them. The
    /// spectra stay on the device. Non-finite samples are looked for only with device checks on.
    pub fn preprocess_device(
        &self,
        days: Part<f32>,
        batch: TraceBatch,
        valid: Option<Part<u8>>,
    ) -> Result<Spectra> {
        let gpu = self.ctx.gpu_for("a device preprocess")?;
        let n_windows = self.check_station_days(batch, days.len(), valid.map(|v| v.len()))?;
        let planes = Planes {
            n_stations: batch.n_traces,
            n_windows,
        };
        let rows = Rows::traces(batch.n_samples, batch.n_traces, batch.trace_stride);
        gpu.check_finite(&gpu.caller_stream(), &days, rows, || {
            "a device preprocess's station-days".into()
        })?;
        let tables = self
            .device
            .tables()
            .ok_or_else(|| Error::Internal("an xcorr plan without its device tables".into()))?;
        let mut guard = self.device.lock(gpu)?;
        let stream = guard.stream();
        let mut work = self.device.work();
        let input = DeviceDays {
            days,
            valid,
            batch,
            n_windows,
        };
        // The cuFFT plans and work arrays this call makes are the plan's, kept; the spectra
        // are the result's.
        let (host, data, source) = self.held.scope("a device preprocess", || {
            let kit = Kit::held(gpu, guard.held(), &mut work)?;
            let (kept, data, source) = ordered_on(&gpu.caller_stream(), &stream, || {
                let (kept, spectra) = cuda::preprocess_on(&kit, self, input, tables)?;
                let data = SpectraData::Device(spectra);
                let (data, source) = self.divide(data, planes, true, Some(&kit))?;
                Ok((kept, data, source))
            })?;
            let mut host = vec![0u8; batch.n_traces * n_windows];
            download(&stream, &kept, &mut host, "copying the window flags")?;
            drop(kept);
            let asked = kit.asked();
            drop(kit);
            keep(&mut work, &stream, &gpu.caller_stream(), asked)?;
            Ok((host, data, source))
        })?;
        Ok(self.spectra(planes, host, data, source))
    }

    /// `correlate` (and, with `sub`, `correlate_substacks`) into device arrays, queued on
    /// the caller's stream without waiting (the window counts are the host's: made from the
    /// days' window flags). Returns the block's pairs.
    pub fn correlate_device(
        &self,
        days: &[&Spectra],
        block: (usize, usize, usize, usize),
        all: DeviceStacks,
        sub: Option<(&WindowGroups, DeviceStacks)>,
    ) -> Result<usize> {
        let gpu = self.ctx.gpu_for("a device correlation")?;
        let groups = sub.as_ref().map(|(g, _)| *g);
        let Some(block) = self.checked_block(days, block, &all, groups)? else {
            return Ok(0);
        };
        let (n_pairs, n_lags) = (block.n_pairs(), self.geometry.n_lags());
        if let Some((g, s)) = &sub {
            s.check(g.n_groups * n_pairs, n_lags, "substacks")?;
            if s.pair_stride != all.pair_stride {
                return Err(crate::invalid!(
                    "substacks: pair_stride {} differs from the stacks' {}",
                    s.pair_stride,
                    all.pair_stride
                ));
            }
        }
        let (pair_counts, sub_counts) = stack_counts(&self.ctx.cpu, days, &block, groups);
        let (mut none, mut none_sub) = ([0f32; 0], [0f32; 0]);
        let (sub_array, sub_counts_out) = match sub {
            Some((_, s)) => (Some(s.out), s.counts),
            None => (None, None),
        };
        let counts = [&pair_counts[..], &sub_counts];
        let mut call = CorrelateCall::new(
            self,
            days,
            &block,
            groups,
            counts,
            [&mut none, &mut none_sub],
        );
        call.device = Some(DeviceOut {
            stacks: all.out,
            substacks: sub_array,
            stride: all.pair_stride,
        });
        let mut guard = self.device.lock(gpu)?;
        let stream = guard.stream();
        let mut work = self.device.work();
        // The cuFFT plans and work arrays this call makes are the plan's, kept.
        self.held.scope("a device correlation", || {
            let kit = Kit::held(gpu, guard.held(), &mut work)?;
            ordered_on(&gpu.caller_stream(), &stream, || {
                cuda::correlate_on(&kit, call, &mut Reporter::new(None))
            })?;
            let asked = kit.asked();
            drop(kit);
            keep(&mut work, &stream, &gpu.caller_stream(), asked)
        })?;
        if let Some(c) = all.counts {
            c[..n_pairs].copy_from_slice(&pair_counts);
        }
        if let Some(c) = sub_counts_out {
            c[..sub_counts.len()].copy_from_slice(&sub_counts);
        }
        Ok(n_pairs)
    }
}

/// After a device call queued on the plan's `stream` that asked for `asked` bytes of work
/// arrays: the plan's workspace holds that much for the next call. Not while the caller's
/// stream is captured (the plan's stream is then part of the capture, and the call fitted in
/// the workspace: nothing may be allocated there).
fn keep(
    work: &mut Workspace,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    caller: &cudarc::driver::CudaStream,
    asked: usize,
) -> Result<()> {
    if crate::backend::cuda::workspace::capturing(caller)? {
        return Ok(());
    }
    work.reserve(stream, asked, "keeping a device xcorr call's work arrays")?;
    work.finish(stream)
}
