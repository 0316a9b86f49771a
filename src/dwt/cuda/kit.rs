//! Launching: one wavelet's module on one stream, and the launchers of every DWT kernel.

use super::geometry::{Geometry, Kind};
use super::long::{LongPlan, Pass, ShrinkTable};
use super::prelude::prelude;
use super::shrink::Rules;
use super::tuning::{
    ITEMS_PER_THREAD, SELECT_BINS, SELECT_CHUNK, SELECT_DIGIT_BITS, SINGLE_KERNEL_LIMIT,
    TILE_LEVELS, TILE_SAMPLES_F32, TILE_THREADS, WARP_TEAMS_PER_BLOCK,
};
use crate::backend::cuda::buffers::{dptr, DevPtr};
use crate::backend::cuda::kernels;
use crate::backend::cuda::launch::launch;
use crate::backend::cuda::{driver_error, CudaBackend};

use crate::dwt::wavelet::Wavelet;
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::driver::{CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
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

impl<'a, T: Sample> Kit<'a, T> {
    pub(super) fn new(
        gpu: &'a CudaBackend,
        wavelet: &Wavelet,
        stream: &'a Arc<CudaStream>,
    ) -> Result<Self> {
        let module = gpu
            .modules
            .get(&gpu.ctx, &gpu.arch, &kernels::DWT, &prelude::<T>(wavelet))?;
        Ok(Kit {
            gpu,
            module,
            geo: Geometry::new::<T>(wavelet),
            stream,
            _t: std::marker::PhantomData,
        })
    }

    /// The longest trace the whole-trace kernel of `kind` takes.
    pub(super) fn single_kernel_max(&self, kind: Kind) -> usize {
        let mut n = 2usize;
        while self.geo.layout_words(2 * n, (2 * n).trailing_zeros(), kind) * self.geo.size
            <= self.gpu.max_shared_bytes
        {
            n *= 2;
        }
        match SINGLE_KERNEL_LIMIT.load(Ordering::Relaxed) {
            0 => n,
            limit => n.min(limit.next_power_of_two()),
        }
    }

    pub(super) fn alloc<U: cudarc::driver::DeviceRepr>(
        &self,
        len: usize,
        what: &'static str,
    ) -> Result<CudaSlice<U>> {
        // SAFETY: every element is written by a kernel or a copy before it is read.
        unsafe { self.stream.alloc::<U>(len.max(1)) }.map_err(driver_error(what))
    }

    // --- Whole-trace kernels.

    pub(super) fn whole_launch(
        &self,
        n: usize,
        levels: u32,
        kind: Kind,
        traces: usize,
    ) -> Result<(LaunchConfig, i32)> {
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

    #[allow(clippy::too_many_arguments)]
    pub(super) fn whole_forward(
        &self,
        levels: u32,
        input: DevPtr,
        in_stride: usize,
        output: DevPtr,
        out_stride: usize,
        n: usize,
        traces: usize,
    ) -> Result<()> {
        let (cfg, words) = self.whole_launch(n, levels, Kind::Forward, traces)?;
        let (ins, outs, nt, ln, l) = (
            in_stride as i64,
            out_stride as i64,
            traces as i32,
            log2(n),
            levels as i32,
        );
        launch!(
            self.module,
            self.stream,
            "dwt_forward",
            cfg,
            &input,
            &output,
            &ins,
            &outs,
            &nt,
            &ln,
            &l,
            &words
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn whole_inverse(
        &self,
        levels: u32,
        input: DevPtr,
        in_stride: usize,
        output: DevPtr,
        out_stride: usize,
        n: usize,
        traces: usize,
        shrink: &ShrinkTable,
    ) -> Result<()> {
        let (cfg, words) = self.whole_launch(n, levels, Kind::Inverse, traces)?;
        let (ins, outs, nt, ln, l) = (
            in_stride as i64,
            out_stride as i64,
            traces as i32,
            log2(n),
            levels as i32,
        );
        let (lam_stride, level0, hard) = (
            shrink.stride as i32,
            shrink.level0 as i32,
            shrink.hard as i32,
        );
        // `lam` is null or holds traces × stride thresholds.
        launch!(
            self.module,
            self.stream,
            "dwt_inverse",
            cfg,
            &input,
            &output,
            &ins,
            &outs,
            &nt,
            &ln,
            &l,
            &shrink.lam,
            &lam_stride,
            &level0,
            &shrink.mask,
            &hard,
            &words
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn whole_denoise(
        &self,
        rules: &Rules<T>,
        levels: u32,
        input: DevPtr,
        in_stride: usize,
        output: DevPtr,
        out_stride: usize,
        n: usize,
        traces: usize,
        medians: DevPtr,
    ) -> Result<()> {
        let (cfg, words) = self.whole_launch(n, levels, Kind::Denoise, traces)?;
        let (ins, outs, nt, ln, l) = (
            in_stride as i64,
            out_stride as i64,
            traces as i32,
            log2(n),
            levels as i32,
        );
        // `medians` holds traces × seg_levels values (unused by the fixed rule).
        launch!(
            self.module,
            self.stream,
            "dwt_denoise",
            cfg,
            &input,
            &output,
            &ins,
            &outs,
            &nt,
            &ln,
            &l,
            &rules.flags,
            &rules.mask,
            &rules.fixed,
            &rules.factor,
            &medians,
            &words
        );
        Ok(())
    }

    // --- Long signals.

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
            passes,
            s_final: s,
            m_final: m,
        }
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

    /// Forward levels of `traces` traces into `coef` (stride n). Scratch from `ws`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn long_forward(
        &self,
        plan: &LongPlan,
        levels: u32,
        input: DevPtr,
        in_stride: usize,
        coef: DevPtr,
        n: usize,
        traces: usize,
        ws: &LongScratch,
    ) -> Result<()> {
        let (mut src, mut src_stride, mut m) = (input, in_stride, n);
        for (p, pass) in plan.passes.iter().enumerate() {
            let last = pass.s + pass.k == levels;
            let (dst, dst_stride) = if last {
                (coef, n)
            } else {
                (ws.scratch[p % 2], m >> pass.k)
            };
            let words = self.geo.tile_forward_words(pass.k, 1 << pass.log2t);
            let blocks = (m >> pass.k) >> pass.log2t;
            let cfg = self.tile_config(blocks, traces, words)?;
            let (ss, lm, cs, ln, s0, k, lt, ds, w) = (
                src_stride as i64,
                log2(m),
                n as i64,
                log2(n),
                pass.s as i32,
                pass.k as i32,
                pass.log2t as i32,
                dst_stride as i64,
                words as i32,
            );
            launch!(
                self.module,
                self.stream,
                "dwt_forward_tiles",
                cfg,
                &src,
                &ss,
                &lm,
                &coef,
                &cs,
                &ln,
                &s0,
                &k,
                &lt,
                &dst,
                &ds,
                &w
            );
            src = dst;
            src_stride = dst_stride;
            m >>= pass.k;
        }
        if plan.s_final < levels {
            self.whole_forward(levels - plan.s_final, src, src_stride, coef, n, m, traces)?;
        }
        Ok(())
    }

    /// Inverse levels from `coef` (stride n) into `output`, thresholding by `shrink`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn long_inverse(
        &self,
        plan: &LongPlan,
        levels: u32,
        coef: DevPtr,
        output: DevPtr,
        out_stride: usize,
        n: usize,
        traces: usize,
        ws: &LongScratch,
        shrink: &ShrinkTable,
    ) -> Result<()> {
        let passes = plan.passes.len();
        if plan.s_final < levels {
            let (dst, dst_stride) = if passes == 0 {
                (output, out_stride)
            } else {
                (ws.scratch[(passes - 1) % 2], plan.m_final)
            };
            let table = ShrinkTable {
                level0: plan.s_final,
                ..*shrink
            };
            self.whole_inverse(
                levels - plan.s_final,
                coef,
                n,
                dst,
                dst_stride,
                plan.m_final,
                traces,
                &table,
            )?;
        }
        for (p, pass) in plan.passes.iter().enumerate().rev() {
            let (src, src_stride) = if pass.s + pass.k == levels {
                (coef, n)
            } else {
                (ws.scratch[p % 2], n >> (pass.s + pass.k))
            };
            let (dst, dst_stride) = if p == 0 {
                (output, out_stride)
            } else {
                (ws.scratch[(p - 1) % 2], n >> pass.s)
            };
            let words = self.geo.tile_inverse_words(pass.k, 1 << pass.log2t0);
            let blocks = (n >> pass.s) >> pass.log2t0;
            let cfg = self.tile_config(blocks, traces, words)?;
            let (ss, cs, ln, s0, k, lt, ds) = (
                src_stride as i64,
                n as i64,
                log2(n),
                pass.s as i32,
                pass.k as i32,
                pass.log2t0 as i32,
                dst_stride as i64,
            );
            let (lam_stride, hard, w) = (shrink.stride as i32, shrink.hard as i32, words as i32);
            launch!(
                self.module,
                self.stream,
                "dwt_inverse_tiles",
                cfg,
                &src,
                &ss,
                &coef,
                &cs,
                &ln,
                &s0,
                &k,
                &lt,
                &dst,
                &ds,
                &shrink.lam,
                &lam_stride,
                &shrink.mask,
                &hard,
                &w
            );
        }
        Ok(())
    }

    /// Medians of |d| (into `medians`, traces × seg_levels) and thresholds (into `lam`,
    /// traces × levels) of the coefficients in `coef`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn long_thresholds(
        &self,
        rules: &Rules<T>,
        levels: u32,
        coef: DevPtr,
        n: usize,
        traces: usize,
        medians: DevPtr,
        lam: DevPtr,
    ) -> Result<()> {
        let segs = traces * rules.seg_levels as usize;
        if segs > 65535 {
            return Err(too_many("the number of median segments"));
        }
        let (ln, sl, ns, cs) = (log2(n), rules.seg_levels, segs as i32, n as i64);
        let prefix = self.alloc::<u64>(segs, "allocating median state")?;
        let pmask = self.alloc::<u64>(segs, "allocating median state")?;
        let below = self.alloc::<u64>(segs, "allocating median state")?;
        let rank = self.alloc::<i32>(segs, "allocating median state")?;
        let hist = self
            .stream
            .alloc_zeros::<i32>(segs * SELECT_BINS)
            .map_err(driver_error("allocating median histograms"))?;
        let (pp, pm, pb, pr, ph) = (
            dptr(&prefix, self.stream),
            dptr(&pmask, self.stream),
            dptr(&below, self.stream),
            dptr(&rank, self.stream),
            dptr(&hist, self.stream),
        );
        let flat = |count: usize| LaunchConfig {
            grid_dim: (count.div_ceil(128) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        if rules.universal() && rules.seg_mask != 0 {
            launch!(
                self.module,
                self.stream,
                "dwt_select_init",
                flat(segs),
                &ln,
                &sl,
                &ns,
                &pp,
                &pm,
                &pr,
                &pb
            );
            let chunk = SELECT_CHUNK as i32;
            let scan = LaunchConfig {
                grid_dim: ((n / 2).div_ceil(SELECT_CHUNK) as u32, segs as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let digit = LaunchConfig {
                grid_dim: (segs as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // Digits of up to 11 bits from the top, below the sign bit (3 passes for f32).
            let mut top = 8 * self.geo.size as i32 - 2;
            while top >= 0 {
                let width = (top + 1).min(SELECT_DIGIT_BITS);
                let lo = top - width + 1;
                let last = i32::from(lo == 0);
                launch!(
                    self.module,
                    self.stream,
                    "dwt_select_count",
                    scan,
                    &coef,
                    &cs,
                    &ln,
                    &sl,
                    &rules.seg_mask,
                    &lo,
                    &width,
                    &last,
                    &pp,
                    &pm,
                    &ph,
                    &pb,
                    &chunk
                );
                launch!(
                    self.module,
                    self.stream,
                    "dwt_select_digit",
                    digit,
                    &ph,
                    &pp,
                    &pm,
                    &pr,
                    &pb,
                    &lo,
                    &width,
                    &last,
                    &sl,
                    &rules.seg_mask
                );
                top = lo - 1;
            }
        }
        let (nt, l) = (traces as i32, levels as i32);
        launch!(
            self.module,
            self.stream,
            "dwt_select_finish",
            flat(traces),
            &ln,
            &nt,
            &l,
            &sl,
            &rules.seg_mask,
            &rules.mask,
            &rules.flags,
            &rules.fixed,
            &rules.factor,
            &pp,
            &pr,
            &pb,
            &medians,
            &lam
        );
        Ok(())
    }
}

/// Device memory of the long path for one group of traces.
pub(super) struct LongScratch {
    pub(super) scratch: [DevPtr; 2],
    pub(super) _owned: Vec<Box<dyn std::any::Any>>,
}

impl LongScratch {
    pub(super) fn new<T: Sample>(
        kit: &Kit<T>,
        plan: &LongPlan,
        n: usize,
        traces: usize,
    ) -> Result<LongScratch> {
        let lens = plan.scratch_lens(n);
        let a = kit.alloc::<T>(lens[0] * traces, "allocating DWT scratch")?;
        let b = kit.alloc::<T>(lens[1] * traces, "allocating DWT scratch")?;
        Ok(LongScratch {
            scratch: [dptr(&a, kit.stream), dptr(&b, kit.stream)],
            _owned: vec![Box::new(a), Box::new(b)],
        })
    }
}
