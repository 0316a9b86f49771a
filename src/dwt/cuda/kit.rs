//! Launching: one wavelet's module on one stream, and the launchers of the whole-trace kernels.

use super::geometry::{Geometry, Kind};
use super::long::{LongPlan, Pass, ShrinkTable};
use super::prelude::prelude;
use super::rows::{check_rows, Io, Shape};
use super::shrink::Rules;
use super::tuning::{
    ITEMS_PER_THREAD, SINGLE_KERNEL_LIMIT, TILE_LEVELS, TILE_SAMPLES_F32, TILE_THREADS,
    WARP_TEAMS_PER_BLOCK,
};
use crate::backend::cuda::array::{Part, PartMut};
use crate::backend::cuda::kernels;
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::CudaBackend;

use crate::dwt::wavelet::Wavelet;
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::driver::{CudaModule, CudaStream, LaunchConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One wavelet's module on one stream.
pub(super) struct Kit<'a, T> {
    pub(super) gpu: &'a CudaBackend,
    pub(super) module: Arc<CudaModule>,
    pub(super) geo: Geometry,
    pub(super) stream: &'a Arc<CudaStream>,
    pub(super) _t: std::marker::PhantomData<T>,
}

pub(super) fn log2(n: usize) -> i32 {
    n.trailing_zeros() as i32
}

pub(super) fn too_many(what: &str) -> Error {
    Error::Unsupported(format!("{what} exceeds what one kernel launch can index"))
}

/// Loads the wavelet's kernels for samples of `T` (a plan's reserve does, so that its
/// first call may be captured).
pub(crate) fn load_kernels<T: Sample>(gpu: &CudaBackend, wavelet: &Wavelet) -> Result<()> {
    let prelude = prelude::<T>(wavelet);
    gpu.modules
        .get(&gpu.ctx, &gpu.arch, &kernels::DWT, &prelude)
        .map(drop)
}

impl<'a, T: Sample> Kit<'a, T> {
    pub(super) fn new(
        gpu: &'a CudaBackend,
        wavelet: &Wavelet,
        stream: &'a Arc<CudaStream>,
    ) -> Result<Self> {
        let module = gpu.modules.get_on(
            &gpu.ctx,
            &gpu.arch,
            &kernels::DWT,
            &prelude::<T>(wavelet),
            stream,
            "a captured DWT call",
        )?;
        Ok(Kit {
            gpu,
            module,
            geo: Geometry::new::<T>(wavelet),
            stream,
            _t: std::marker::PhantomData,
        })
    }

    // --- Whole-trace kernels.

    /// The configuration of a whole-trace kernel (a team per trace, each with `words` REALs
    /// of shared memory) and `words`.
    pub(super) fn whole_launch(
        &self,
        shape: Shape,
        levels: u32,
        kind: Kind,
    ) -> Result<(LaunchConfig, i32)> {
        let (n, traces) = (shape.n, shape.traces);
        let words = self.geo.layout_words(n, levels, kind);
        let bytes = words * self.geo.size;
        let items = (n / 2).div_ceil(self.geo.vec as usize);
        let team = (items / ITEMS_PER_THREAD)
            .next_power_of_two()
            .clamp(32, 1024);
        let per_block = if team == 32 {
            WARP_TEAMS_PER_BLOCK
                .min(self.gpu.max_shared_bytes / bytes.max(1))
                .min(traces)
                .max(1)
        } else {
            1
        };
        let blocks = traces.div_ceil(per_block);
        if blocks > i32::MAX as usize {
            return Err(too_many("the number of traces"));
        }
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (team as u32, per_block as u32, 1),
            shared_mem_bytes: (per_block * bytes) as u32,
        };
        Ok((cfg, words as i32))
    }

    /// A whole-trace kernel's launch with its first seven parameters pushed (in, out,
    /// in_stride, out_stride, n_traces, log2n, L), the arrays checked to hold the traces;
    /// and the REALs of shared memory per trace, its last parameter.
    fn whole(
        &self,
        name: &str,
        kind: Kind,
        shape: Shape,
        levels: u32,
        io: &mut Io<T>,
    ) -> Result<(Launch<'a>, i32)> {
        io.check(shape)?;
        let (cfg, words) = self.whole_launch(shape, levels, kind)?;
        let mut l = Launch::new(&self.module, self.stream, name, cfg)?;
        match io {
            Io::Apart(input, output) => l
                .input(&input.data)
                .output(&mut output.data)
                .scalar(input.stride as i64)
                .scalar(output.stride as i64),
            Io::InPlace(rows) => l
                .input(&rows.data)
                .output(&mut rows.data)
                .scalar(rows.stride as i64)
                .scalar(rows.stride as i64),
        };
        l.scalar(shape.traces as i32)
            .scalar(log2(shape.n))
            .scalar(levels as i32);
        Ok((l, words))
    }

    pub(super) fn whole_forward(&self, shape: Shape, levels: u32, mut io: Io<T>) -> Result<()> {
        let (mut l, words) = self.whole("dwt_forward", Kind::Forward, shape, levels, &mut io)?;
        l.scalar(words);
        // SAFETY: dwt_forward(const REAL* in, REAL* out, long long in_stride,
        // long long out_stride, int n_traces, int log2n, int L, int smem_words). The team of
        // trace t < n_traces reads its n = 2^log2n samples of `in` and writes its n
        // coefficients to `out`, at the strides: `whole` checked that both arrays hold
        // n_traces such rows. Each team's shared memory is smem_words REALs of cfg's
        // per-block share, as the kernel's layout for (n, L) (it traps on a mismatch).
        unsafe { l.run() }
    }

    pub(super) fn whole_inverse(
        &self,
        shape: Shape,
        levels: u32,
        mut io: Io<T>,
        shrink: &ShrinkTable<T>,
    ) -> Result<()> {
        if let Some(lam) = &shrink.lam {
            let reach = (shrink.level0 + levels) as usize;
            check_rows(lam, shape.traces, shrink.stride, reach, "DWT thresholds")?;
        }
        let (mut l, words) = self.whole("dwt_inverse", Kind::Inverse, shape, levels, &mut io)?;
        l.optional(shrink.lam.as_ref())
            .scalar(shrink.stride as i32)
            .scalar(shrink.level0 as i32)
            .scalar(shrink.mask)
            .scalar(shrink.hard as i32)
            .scalar(words);
        // SAFETY: dwt_inverse(const REAL* in, REAL* out, long long in_stride,
        // long long out_stride, int n_traces, int log2n, int L, const REAL* lam,
        // int lam_stride, int level0, unsigned long long mask, int hard, int smem_words).
        // Trace t < n_traces reads its n coefficients and writes its n samples at the strides
        // (rows checked in `whole`); lam is null or holds n_traces rows of lam_stride
        // thresholds of which trace t reads entries below level0 + L (checked above). Shared
        // memory as in `whole_forward`.
        unsafe { l.run() }
    }

    /// The whole-trace denoise; `medians` (traces × seg_levels) may be None only for the
    /// fixed rule, which writes none.
    pub(super) fn whole_denoise(
        &self,
        rules: &Rules<T>,
        shape: Shape,
        levels: u32,
        mut io: Io<T>,
        mut medians: Option<PartMut<T>>,
    ) -> Result<()> {
        let segs = rules.seg_levels as usize;
        match &medians {
            Some(m) => check_rows(m, shape.traces, segs, segs, "DWT medians")?,
            None if rules.universal() => {
                return Err(Error::Internal("a denoise without its medians".into()))
            }
            None => {}
        }
        let (mut l, words) = self.whole("dwt_denoise", Kind::Denoise, shape, levels, &mut io)?;
        l.scalar(rules.flags)
            .scalar(rules.mask)
            .scalar(rules.fixed)
            .scalar(rules.factor);
        match medians.as_mut() {
            Some(m) => l.output(m),
            None => l.optional::<T, Part<T>>(None),
        };
        l.scalar(words);
        // SAFETY: dwt_denoise(const REAL* in, REAL* out, long long in_stride,
        // long long out_stride, int n_traces, int log2n, int L, int flags,
        // unsigned long long mask, REAL fixed_lambda, double factor, REAL* medians,
        // int smem_words). Traces as in `whole_inverse` (rows checked in `whole`); trace t
        // writes medians[t·seg_levels + i], i < seg_levels (L per level, else 1), only under
        // the universal rule, whose medians are present and checked above. Shared memory as
        // in `whole_forward`.
        unsafe { l.run() }
    }

    // --- Long signals.

    /// The passes of the long path for n-sample traces and `levels` levels.
    pub(super) fn long_plan(&self, n: usize, levels: u32, kind: Kind) -> LongPlan {
        Sizing::of(self).long_plan(n, levels, kind)
    }

    pub(super) fn tile_config(
        &self,
        blocks: usize,
        traces: usize,
        words: usize,
    ) -> Result<LaunchConfig> {
        if blocks > i32::MAX as usize || traces > 65535 {
            return Err(too_many("a long-signal pass"));
        }
        Ok(LaunchConfig {
            grid_dim: (blocks as u32, traces as u32, 1),
            block_dim: (TILE_THREADS, 1, 1),
            shared_mem_bytes: (words * self.geo.size) as u32,
        })
    }
}

/// What decides the launches' sizes and the long path's passes: the wavelet's geometry in
/// one sample type and the device's shared memory (no module needed, so that a plan can
/// size its work memory before its first call).
#[derive(Clone, Copy)]
pub(super) struct Sizing {
    pub(super) geo: Geometry,
    pub(super) max_shared_bytes: usize,
}

impl Sizing {
    pub(super) fn new<T: Sample>(gpu: &CudaBackend, wavelet: &Wavelet) -> Sizing {
        Sizing {
            geo: Geometry::new::<T>(wavelet),
            max_shared_bytes: gpu.max_shared_bytes,
        }
    }

    pub(super) fn of<T>(kit: &Kit<T>) -> Sizing {
        Sizing {
            geo: kit.geo,
            max_shared_bytes: kit.gpu.max_shared_bytes,
        }
    }

    /// The longest trace the whole-trace kernel of `kind` takes.
    pub(super) fn single_kernel_max(&self, kind: Kind) -> usize {
        let mut n = 2usize;
        while self.geo.layout_words(2 * n, (2 * n).trailing_zeros(), kind) * self.geo.size
            <= self.max_shared_bytes
        {
            n *= 2;
        }
        match SINGLE_KERNEL_LIMIT.load(Ordering::Relaxed) {
            0 => n,
            limit => n.min(limit.next_power_of_two()),
        }
    }

    pub(super) fn tile_samples(&self) -> i64 {
        (TILE_SAMPLES_F32 * 4 / self.geo.size) as i64
    }

    /// The passes of the long path for n-sample traces and `levels` levels.
    pub(super) fn long_plan(&self, n: usize, levels: u32, kind: Kind) -> LongPlan {
        let single = self.single_kernel_max(kind).max(256);
        let tile_log2 = self.tile_samples().trailing_zeros();
        let mut passes = Vec::new();
        let (mut s, mut m) = (0u32, n);
        while s < levels && m > single {
            let k = TILE_LEVELS.min(levels - s).min(m.trailing_zeros() - 4);
            // Forward tiles own T outputs of the pass's last level: a 2^k T input window.
            let log2t = tile_log2
                .saturating_sub(k)
                .max(3)
                .min(m.trailing_zeros() - k);
            let log2t0 = tile_log2.min(m.trailing_zeros());
            passes.push(Pass {
                s,
                k,
                log2t,
                log2t0,
            });
            s += k;
            m >>= k;
        }
        LongPlan {
            n,
            levels,
            passes,
            s_final: s,
            m_final: m,
        }
    }
}
