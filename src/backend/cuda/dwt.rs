//! The DWT on the GPU: kernels/dwt.cu, with the wavelet and the sample type baked in through
//! an NVRTC prelude (one module per wavelet and sample type; trace length and depth are
//! kernel arguments, so that every length shares that module).
//!
//! Two paths compute the same function as the CPU reference (src/dwt/transform.rs):
//! - Whole trace (n up to `single_kernel_max`): one team (a warp, or a block for long traces)
//!   per trace loads it to shared memory once, runs every level there and writes once.
//!   Denoising is one launch: forward levels, median of |d| by radix selection in shared
//!   memory, thresholds, inverse levels with the shrinkage applied as details are read.
//! - Long signals: passes over tiles that each run K levels from an input window with its halo
//!   (`dwt_forward_tiles`, `dwt_inverse_tiles`) until the approximation fits the whole-trace
//!   kernel, which finishes. The median of |d| is a radix selection over device memory
//!   (histogram passes per (trace, level) segment); thresholds are applied as the inverse
//!   passes load the details.
//!
//! Host arrays are staged through page-locked buffers in chunks of traces on two streams, so
//! that the copies and kernels of one chunk overlap the host-side gather/scatter of the other.

use super::kernels;
use super::staging::PinnedBuffer;
use super::{driver_error, CudaBackend};
use crate::backend::cpu::CpuBackend;
use crate::dwt::denoise::{self, DenoiseOptions, NoiseEstimate, ThresholdMode, ThresholdRule};

use crate::dwt::wavelet::{self, Wavelet};
use crate::dwt::{Direction, Traces};
use crate::error::{Error, Result};
use crate::layout::TraceBatch;
use crate::sample::Sample;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    result, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig,
    PushKernelArg,
};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Launches kernel `$name` of `$kit`'s module with the arguments (references to locals whose
/// types match the kernel's parameters: i32 int, i64 long long, u64 pointers and masks).
macro_rules! launch {
    ($kit:expr, $name:expr, $cfg:expr, $($arg:expr),* $(,)?) => {{
        let cfg: LaunchConfig = $cfg;
        let f = $kit.function($name, cfg.shared_mem_bytes as usize)?;
        let mut b = $kit.stream.launch_builder(&f);
        $( b.arg($arg); )*
        // SAFETY: every call site passes the parameters of the kernel it names, and buffers
        // that span the batch it describes.
        unsafe { b.launch(cfg) }.map_err(driver_error("launching a DWT kernel"))?;
    }};
}

// ---------------------------------------------------------------------------------------------
// Tuning.

/// Level-1 work items (VEC outputs each) per thread when sizing a trace's team.
const ITEMS_PER_THREAD: usize = 4;
/// Traces per block when a trace's team is one warp.
const WARP_TEAMS_PER_BLOCK: usize = 4;
/// Levels per pass of the long-signal path.
const TILE_LEVELS: u32 = 5;
/// Samples of input window per forward tile and of output per inverse tile (f32; half for f64).
const TILE_SAMPLES_F32: usize = 8192;
/// Threads of the tile kernels (their `__launch_bounds__`).
const TILE_THREADS: u32 = 256;
/// Elements per block of the median's histogram passes over device memory.
const SELECT_CHUNK: usize = 16384;
/// Digit width and histogram bins of those passes (`SELECT_BINS` in the kernel).
const SELECT_DIGIT_BITS: i32 = 11;
const SELECT_BINS: usize = 1 << SELECT_DIGIT_BITS;
/// Traces per launch group of the long path (grid.y and segment limits).
const LONG_GROUP_TRACES: usize = 1024;
/// Bytes of samples per staged chunk of host traces.
const CHUNK_BYTES: usize = 64 << 20;

/// 0: the whole-trace limit follows from shared memory alone.
static SINGLE_KERNEL_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Caps the trace length of the whole-trace kernels (None: shared memory decides), so that
/// tests can run the long-signal path on short traces. Process-wide; values below 256 are
/// raised to 256.
pub fn set_single_kernel_limit(samples: Option<usize>) {
    SINGLE_KERNEL_LIMIT.store(samples.map_or(0, |s| s.max(256)), Ordering::Relaxed);
}

// ---------------------------------------------------------------------------------------------
// The prelude.

/// The NVRTC prelude of kernels/dwt.cu for one wavelet and sample type.
pub fn prelude<T: Sample>(wavelet: &Wavelet) -> String {
    let size = std::mem::size_of::<T>();
    let (key, bits) = if size == 4 {
        ("unsigned int", 32)
    } else {
        ("unsigned long long", 64)
    };
    let array = |name: &str, taps: &[f64]| {
        let values: Vec<String> = taps.iter().map(|c| format!("{c:.16e}")).collect();
        format!(
            "__constant__ REAL {name}[NC] = {{{}}};\n",
            values.join(", ")
        )
    };
    format!(
        "// {} member {}, {}\n#define REAL {}\n#define KEY {key}\n#define KEY_BITS {bits}\n#define VEC {}\n\
         #define NC {}\n#define OFF {}\n{}{}{}{}",
        wavelet.family.name(),
        wavelet.member,
        T::C_TYPE,
        T::C_TYPE,
        16 / size,
        wavelet.taps(),
        wavelet.offset,
        array("H1", &wavelet.h1),
        array("G1", &wavelet.g1),
        array("H2", &wavelet.h2),
        array("G2", &wavelet.g2),
    )
}

/// Every prelude this module can produce, labelled: each GSL family and member, f32 and f64.
/// (Trace length, depth and launch shape are kernel arguments, not prelude constants.)
pub fn dwt_kernel_preludes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in wavelet::all() {
        let label = format!("{} {}", w.family.name(), w.member);
        out.push((format!("{label} f32"), prelude::<f32>(&w)));
        out.push((format!("{label} f64"), prelude::<f64>(&w)));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Geometry: a mirror of the constants and shared-memory layouts of kernels/dwt.cu, so that the
// host asks for exactly the shared memory the kernels use (they trap on a mismatch).

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward = 0,
    Inverse = 1,
    Denoise = 2,
}

#[derive(Clone, Copy, Debug)]
struct Geometry {
    vec: i64,
    sig_min: i64,
    sig_max: i64,
    nvf: i64,
    nvg: i64,
    hist_words: i64,
    size: usize,
}

fn round_up(x: i64, a: i64) -> i64 {
    (x + a - 1) / a * a
}

impl Geometry {
    fn new<T: Sample>(w: &Wavelet) -> Geometry {
        let size = std::mem::size_of::<T>();
        let vec = 16 / size as i64;
        let (nc, off) = (w.taps() as i64, w.offset as i64);
        let sig_min = (-off).div_euclid(2);
        let sig_max = (nc - 1 - off).div_euclid(2);
        let span = sig_max - sig_min;
        let shf = round_up(-sig_min, vec);
        let nvf = (sig_min + shf + vec + span + vec - 1) / vec;
        let shg = round_up(sig_max, vec);
        let nvg = (shg - sig_max + vec + span + vec - 1) / vec;
        let hist_ints = 256 + 32 + 8 + 4;
        let hist_words = round_up((hist_ints * 4 + size as i64 - 1) / size as i64, vec);
        Geometry {
            vec,
            sig_min,
            sig_max,
            nvf,
            nvg,
            hist_words,
            size,
        }
    }

    fn blf(&self, h: i64) -> i64 {
        if h > 0 {
            self.vec * ((h + self.vec - 1) / self.vec + self.nvf - 1)
        } else {
            0
        }
    }

    fn blg(&self, h: i64) -> i64 {
        if h > 0 {
            self.vec * ((h + self.vec - 1) / self.vec + self.nvg - 1)
        } else {
            0
        }
    }

    /// REALs per trace of a whole-trace kernel (`layout_of` in the kernel).
    fn layout_words(&self, n: usize, levels: u32, kind: Kind) -> usize {
        let n = n as i64;
        let (h1, h2) = (n / 2, (n / 4).max(1));
        let (mut x0, mut x1) = (2 * self.blf(h1), 2 * self.blf(h2));
        let (mut d, mut a, mut lam) = (0, 0, 0);
        if kind != Kind::Forward {
            x0 = x0.max(self.blg(h1));
            x1 = x1.max(self.blg(h2));
            d = (1..=levels).map(|l| self.blg(n >> l)).sum();
            a = self.blg(n >> levels);
            lam = round_up(levels as i64, self.vec);
        }
        if kind == Kind::Denoise {
            x1 = x1.max(self.hist_words);
        }
        (x0 + x1 + d + a + lam) as usize
    }

    fn floor_vec(&self, x: i64) -> i64 {
        x & !(self.vec - 1)
    }

    /// First output and count of level k of a forward pass (`forward_range`).
    fn forward_range(&self, k: u32, levels: u32, b: i64, t: i64) -> (i64, i64) {
        let (mut lo, mut cnt) = (b * t, t);
        for _ in k..levels {
            let l2 = self.floor_vec(2 * lo + 2 * self.sig_min);
            let h2 = 2 * (lo + cnt) + 2 * self.sig_max;
            lo = l2;
            cnt = round_up(h2 - l2, self.vec);
        }
        (lo, cnt)
    }

    fn tile_forward_words(&self, levels: u32, t: i64) -> usize {
        let window = |c: i64| self.vec * (c / self.vec + self.nvf);
        let c1 = self.forward_range(1, levels, 0, t).1;
        let c2 = if levels >= 2 {
            2 * window(self.forward_range(2, levels, 0, t).1)
        } else {
            0
        };
        (2 * window(c1) + c2) as usize
    }

    /// First sample pair and pair count of level k of an inverse pass (`inverse_range`).
    fn inverse_range(&self, k: u32, b: i64, t0: i64) -> (i64, i64) {
        let (mut p, mut c) = (b * (t0 / 2), t0 / 2);
        for _ in 2..=k {
            let (jlo, jhi) = (p - self.sig_max, p + c - self.sig_min);
            let plo = self.floor_vec(jlo.div_euclid(2));
            let phi = (jhi + 1) >> 1;
            p = plo;
            c = round_up(phi - plo, self.vec);
        }
        (p, c)
    }

    fn tile_inverse_words(&self, levels: u32, t0: i64) -> usize {
        let window = |c: i64| self.vec * (c / self.vec + self.nvg);
        let (mut d, mut y0, mut y1) = (0, 0, 0);
        for k in 1..=levels {
            let bl = window(self.inverse_range(k, 0, t0).1);
            d += bl;
            if k < levels {
                if (k + 1) % 2 == 0 {
                    y0 = y0.max(bl);
                } else {
                    y1 = y1.max(bl);
                }
            }
        }
        (window(self.inverse_range(levels, 0, t0).1) + y0 + y1 + d) as usize
    }
}

// ---------------------------------------------------------------------------------------------
// Launching.

/// One wavelet's module on one stream.
struct Kit<'a, T> {
    gpu: &'a CudaBackend,
    module: Arc<CudaModule>,
    geo: Geometry,
    stream: &'a Arc<CudaStream>,
    _t: std::marker::PhantomData<T>,
}

/// Kernel arguments are raw device addresses (`CUdeviceptr`), so that chunks and sub-arrays
/// need no views; every buffer is used on the stream it was allocated on.
type DevPtr = u64;

fn dptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> DevPtr {
    let (p, _record) = s.device_ptr(stream);
    p
}

fn log2(n: usize) -> i32 {
    n.trailing_zeros() as i32
}

fn too_many(what: &str) -> Error {
    Error::Unsupported(format!("{what} exceeds what one kernel launch can index"))
}

impl<'a, T: Sample> Kit<'a, T> {
    fn new(gpu: &'a CudaBackend, wavelet: &Wavelet, stream: &'a Arc<CudaStream>) -> Result<Self> {
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

    fn function(&self, name: &str, shared_bytes: usize) -> Result<CudaFunction> {
        let f = self
            .module
            .load_function(name)
            .map_err(driver_error("finding a DWT kernel"))?;
        if shared_bytes > 48 * 1024 {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as i32,
            )
            .map_err(driver_error("raising a DWT kernel's shared-memory limit"))?;
        }
        Ok(f)
    }

    /// The longest trace the whole-trace kernel of `kind` takes.
    fn single_kernel_max(&self, kind: Kind) -> usize {
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

    fn alloc<U: cudarc::driver::DeviceRepr>(
        &self,
        len: usize,
        what: &'static str,
    ) -> Result<CudaSlice<U>> {
        // SAFETY: every element is written by a kernel or a copy before it is read.
        unsafe { self.stream.alloc::<U>(len.max(1)) }.map_err(driver_error(what))
    }

    // --- Whole-trace kernels.

    fn whole_launch(
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
    fn whole_forward(
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
            self,
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
    fn whole_inverse(
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
            self,
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
    fn whole_denoise(
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
            self,
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

    fn tile_samples(&self) -> i64 {
        (TILE_SAMPLES_F32 * 4 / self.geo.size) as i64
    }

    /// The passes of the long path for n-sample traces and `levels` levels.
    fn long_plan(&self, n: usize, levels: u32, kind: Kind) -> LongPlan {
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

    fn tile_config(&self, blocks: usize, traces: usize, words: usize) -> Result<LaunchConfig> {
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
    fn long_forward(
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
                self,
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
    fn long_inverse(
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
                self,
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
    fn long_thresholds(
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
                self,
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
                    self,
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
                    self,
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
            self,
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

#[derive(Clone, Copy, Debug)]
struct Pass {
    s: u32,
    k: u32,
    log2t: u32,
    log2t0: u32,
}

#[derive(Clone, Debug)]
struct LongPlan {
    passes: Vec<Pass>,
    s_final: u32,
    m_final: usize,
}

impl LongPlan {
    fn is_long(&self) -> bool {
        !self.passes.is_empty()
    }

    /// Elements of the two scratch approximations, per trace.
    fn scratch_lens(&self, n: usize) -> [usize; 2] {
        let mut lens = [0, 0];
        for (p, pass) in self.passes.iter().enumerate() {
            lens[p % 2] = lens[p % 2].max(n >> (pass.s + pass.k));
        }
        lens
    }
}

/// Thresholds applied by inverse kernels: `lam` (null: none) holds `stride` per trace.
#[derive(Clone, Copy)]
struct ShrinkTable {
    lam: DevPtr,
    stride: usize,
    level0: u32,
    mask: u64,
    hard: bool,
}

const NO_SHRINK: ShrinkTable = ShrinkTable {
    lam: 0,
    stride: 0,
    level0: 0,
    mask: 0,
    hard: false,
};

/// Device memory of the long path for one group of traces.
struct LongScratch {
    scratch: [DevPtr; 2],
    _owned: Vec<Box<dyn std::any::Any>>,
}

impl LongScratch {
    fn new<T: Sample>(
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

/// The denoising rules as kernel arguments.
struct Rules<T> {
    flags: i32,
    mask: u64,
    /// Segments whose median is wanted: bit li for level li + 1 (finest: bit 0 only).
    seg_mask: u64,
    seg_levels: i32,
    fixed: T,
    factor: f64,
}

impl<T: Sample> Rules<T> {
    fn new(options: &DenoiseOptions, levels: u32, n: usize) -> Rules<T> {
        let universal = options.rule == ThresholdRule::Universal;
        let per_level = universal && options.noise == NoiseEstimate::PerLevel;
        let wanted = (1..=levels).fold(0u64, |m, l| {
            if options.thresholds_level(l) {
                m | 1 << (l - 1)
            } else {
                m
            }
        });
        let (seg_mask, seg_levels) = match (universal, per_level) {
            (false, _) => (0, 1),
            (true, false) => (u64::from(wanted != 0), 1),
            (true, true) => (wanted, levels as i32),
        };
        Rules {
            flags: i32::from(universal)
                | i32::from(per_level) << 1
                | i32::from(options.mode == ThresholdMode::Hard) << 2,
            mask: options.level_mask,
            seg_mask,
            seg_levels,
            fixed: T::from_f64(options.fixed_threshold).unwrap_or_else(T::zero),
            factor: denoise::universal_threshold(1.0, n),
        }
    }

    fn universal(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// The thresholds the CPU backend reports (n_traces × levels), from the medians the kernels
/// wrote (traces × seg_levels), by the same f64 arithmetic.
fn thresholds_from_medians<T: Sample>(
    options: &DenoiseOptions,
    levels: u32,
    n: usize,
    traces: usize,
    medians: &[T],
) -> Vec<f64> {
    let per_level = options.noise == NoiseEstimate::PerLevel;
    let mut out = Vec::with_capacity(traces * levels as usize);
    for t in 0..traces {
        for l in 1..=levels {
            out.push(if !options.thresholds_level(l) {
                0.0
            } else if options.rule == ThresholdRule::Fixed {
                options.fixed_threshold
            } else {
                let med = if per_level {
                    medians[t * levels as usize + l as usize - 1]
                } else {
                    medians[t]
                };
                denoise::universal_threshold(med.to_f64().unwrap() / denoise::MAD_TO_SIGMA, n)
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Device-resident operations on raw pointers: the work of one chunk, or of `denoise_device`.

/// A batch in device memory.
#[derive(Clone, Copy)]
struct DevBatch {
    n: usize,
    traces: usize,
    input: DevPtr,
    in_stride: usize,
    output: DevPtr,
    out_stride: usize,
}

#[derive(Clone, Copy)]
enum Op<'o> {
    Transform(Direction),
    Denoise(&'o DenoiseOptions),
}

impl Op<'_> {
    fn kind(&self) -> Kind {
        match self {
            Op::Transform(Direction::Forward) => Kind::Forward,
            Op::Transform(Direction::Inverse) => Kind::Inverse,
            Op::Denoise(_) => Kind::Denoise,
        }
    }
}

/// Queues `op` on `kit.stream`. Denoising writes medians (traces × seg_levels) to `medians`.
/// The whole-trace kernels may run in place (input == output); the long path may not.
fn run_on_device<T: Sample>(
    kit: &Kit<T>,
    op: Op,
    levels: u32,
    b: DevBatch,
    medians: DevPtr,
) -> Result<()> {
    let plan = kit.long_plan(b.n, levels, op.kind());
    if !plan.is_long() {
        return match op {
            Op::Transform(Direction::Forward) => kit.whole_forward(
                levels,
                b.input,
                b.in_stride,
                b.output,
                b.out_stride,
                b.n,
                b.traces,
            ),
            Op::Transform(Direction::Inverse) => kit.whole_inverse(
                levels,
                b.input,
                b.in_stride,
                b.output,
                b.out_stride,
                b.n,
                b.traces,
                &NO_SHRINK,
            ),
            Op::Denoise(options) => {
                let rules = Rules::<T>::new(options, levels, b.n);
                kit.whole_denoise(
                    &rules,
                    levels,
                    b.input,
                    b.in_stride,
                    b.output,
                    b.out_stride,
                    b.n,
                    b.traces,
                    medians,
                )
            }
        };
    }
    let size = std::mem::size_of::<T>() as u64;
    // Long traces: groups of traces, so that grids and median segments stay in range.
    for first in (0..b.traces).step_by(LONG_GROUP_TRACES) {
        let count = LONG_GROUP_TRACES.min(b.traces - first);
        let input = b.input + (first * b.in_stride) as u64 * size;
        let output = b.output + (first * b.out_stride) as u64 * size;
        let ws = LongScratch::new(kit, &plan, b.n, count)?;
        match op {
            Op::Transform(Direction::Forward) => {
                if b.out_stride != b.n {
                    return Err(Error::Internal("long forward output must be dense".into()));
                }
                kit.long_forward(&plan, levels, input, b.in_stride, output, b.n, count, &ws)?;
            }
            Op::Transform(Direction::Inverse) => {
                if b.in_stride != b.n {
                    return Err(Error::Internal("long inverse input must be dense".into()));
                }
                kit.long_inverse(
                    &plan,
                    levels,
                    input,
                    output,
                    b.out_stride,
                    b.n,
                    count,
                    &ws,
                    &NO_SHRINK,
                )?;
            }
            Op::Denoise(options) => {
                let rules = Rules::<T>::new(options, levels, b.n);
                let coef = kit.alloc::<T>(count * b.n, "allocating DWT coefficients")?;
                let lam = kit.alloc::<T>(count * levels as usize, "allocating DWT thresholds")?;
                let (pc, pl) = (dptr(&coef, kit.stream), dptr(&lam, kit.stream));
                kit.long_forward(&plan, levels, input, b.in_stride, pc, b.n, count, &ws)?;
                let med = medians + (first * rules.seg_levels as usize) as u64 * size;
                kit.long_thresholds(&rules, levels, pc, b.n, count, med, pl)?;
                let shrink = ShrinkTable {
                    lam: pl,
                    stride: levels as usize,
                    level0: 0,
                    mask: options.level_mask,
                    hard: options.mode == ThresholdMode::Hard,
                };
                kit.long_inverse(
                    &plan,
                    levels,
                    pc,
                    output,
                    b.out_stride,
                    b.n,
                    count,
                    &ws,
                    &shrink,
                )?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Host arrays: chunks of traces staged through page-locked buffers on two streams.

/// One stream's buffers.
struct Slot<T: Sample> {
    stream: Arc<CudaStream>,
    pinned: Option<PinnedBuffer>,
    pinned_medians: Option<PinnedBuffer>,
    input: CudaSlice<T>,
    output: Option<CudaSlice<T>>,
    medians: Option<CudaSlice<T>>,
    /// (first trace, trace count) of the chunk in flight.
    pending: Option<(usize, usize)>,
}

/// Returns the staging buffers to the pool once no copy can touch them any more.
struct Slots<'g, T: Sample> {
    gpu: &'g CudaBackend,
    slots: Vec<Slot<T>>,
}

impl<T: Sample> Drop for Slots<'_, T> {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            // A failed synchronisation leaves the buffers to be freed, not reused.
            let idle = slot.stream.synchronize().is_ok();
            for buffer in [slot.pinned.take(), slot.pinned_medians.take()]
                .into_iter()
                .flatten()
            {
                if idle {
                    self.gpu.staging.put(buffer);
                }
            }
        }
    }
}

/// Copies trace rows between caller memory (strided) and a dense staging buffer, in parallel.
fn gather<T: Sample>(
    cpu: &CpuBackend,
    src: &[T],
    first: usize,
    dst: &mut [T],
    n: usize,
    stride: usize,
) {
    cpu.install(|| {
        dst.par_chunks_mut(n)
            .with_min_len((1 << 14) / n + 1)
            .enumerate()
            .for_each(|(i, row)| copy_row(row, &src[(first + i) * stride..][..n]));
    })
}

fn scatter<T: Sample>(
    cpu: &CpuBackend,
    src: &[T],
    dst: &mut [T],
    first: usize,
    n: usize,
    stride: usize,
) {
    cpu.install(|| {
        let rows = src.len() / n;
        let region = &mut dst[first * stride..];
        let len = ((rows - 1) * stride + n).min(region.len());
        region[..len]
            .par_chunks_mut(stride)
            .zip(src.par_chunks(n))
            .with_min_len((1 << 14) / n + 1)
            .for_each(|(row, s)| copy_row(&mut row[..n], s));
    })
}

/// Long rows are copied in parallel pieces too.
fn copy_row<T: Sample>(dst: &mut [T], src: &[T]) {
    const PIECE: usize = 1 << 16;
    if dst.len() > 4 * PIECE {
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.copy_from_slice(src);
    }
}

/// Runs `op` over a host batch. Chunk results are written to caller memory as each chunk
/// completes: after validation the only failures left are driver errors (device memory
/// exhausted, a broken context), so a failed call may leave earlier chunks done and later ones
/// untouched; a batch of one chunk is written only once all its GPU work succeeded.
#[allow(clippy::too_many_arguments)]
fn run_host<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    op: Op,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
    seg_levels: usize,
) -> Result<Vec<T>> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let n = batch.n_samples;
    let size = std::mem::size_of::<T>();
    let first_stream = gpu.stream()?;
    let kit0 = Kit::<T>::new(gpu, wavelet, &first_stream)?;
    let long = kit0.long_plan(n, levels, op.kind()).is_long();
    let (free, _) = gpu
        .ctx
        .mem_get_info()
        .map_err(driver_error("reading free device memory"))?;
    // Device bytes per trace: input, output (long path), coefficients (long denoise).
    let per_trace = n * size * if long { 3 } else { 1 } + 64;
    let budget = (free / 4).max(per_trace);
    let chunk = (CHUNK_BYTES / (n * size))
        .clamp(1, batch.n_traces)
        .min(budget / per_trace)
        .max(1);
    let chunks = batch.n_traces.div_ceil(chunk);
    let n_slots = chunks.min(2);

    let mut slots = Slots::<T> {
        gpu,
        slots: Vec::new(),
    };
    for i in 0..n_slots {
        let stream = if i == 0 {
            first_stream.clone()
        } else {
            gpu.stream()?
        };
        let alloc = |len: usize, what: &'static str| {
            // SAFETY: written by copies or kernels before being read.
            unsafe { stream.alloc::<T>(len.max(1)) }.map_err(driver_error(what))
        };
        let input = alloc(chunk * n, "allocating device memory for a chunk of traces")?;
        let output = if long {
            Some(alloc(
                chunk * n,
                "allocating device memory for a chunk of traces",
            )?)
        } else {
            None
        };
        let medians = if seg_levels > 0 {
            Some(alloc(
                chunk * seg_levels,
                "allocating device memory for medians",
            )?)
        } else {
            None
        };
        let pinned = gpu.staging.take(&gpu.ctx, chunk * n * size)?;
        let pinned_medians = if seg_levels > 0 {
            Some(gpu.staging.take(&gpu.ctx, chunk * seg_levels * size)?)
        } else {
            None
        };
        slots.slots.push(Slot {
            stream,
            pinned: Some(pinned),
            pinned_medians,
            input,
            output,
            medians,
            pending: None,
        });
    }

    let mut medians = vec![T::zero(); batch.n_traces * seg_levels];
    let (source, dest): (Option<&[T]>, &mut [T]) = match traces {
        Traces::InPlace(d) => (None, d),
        Traces::Separate { input, output } => (Some(input), output),
    };
    let stride = batch.trace_stride;

    // Writes a finished chunk's samples and medians out of its slot.
    let finish = |slot: &mut Slot<T>, dest: &mut [T], medians: &mut [T]| -> Result<()> {
        if let Some((first, count)) = slot.pending.take() {
            slot.stream
                .synchronize()
                .map_err(driver_error("running the DWT"))?;
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            scatter(cpu, pinned, dest, first, n, stride);
            if seg_levels > 0 {
                let m = slot
                    .pinned_medians
                    .as_mut()
                    .unwrap()
                    .slice_mut::<T>(count * seg_levels);
                medians[first * seg_levels..(first + count) * seg_levels].copy_from_slice(m);
            }
        }
        Ok(())
    };

    for c in 0..chunks {
        let slot = &mut slots.slots[c % n_slots];
        finish(slot, dest, &mut medians)?;
        let first = c * chunk;
        let count = chunk.min(batch.n_traces - first);
        {
            let src: &[T] = source.unwrap_or(&*dest);
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            gather(cpu, src, first, pinned, n, stride);
        }
        let kit = Kit::<T>::new(gpu, wavelet, &slot.stream)?;
        let cu = slot.stream.cu_stream();
        let input = dptr(&slot.input, &slot.stream);
        let output = slot
            .output
            .as_ref()
            .map_or(input, |o| dptr(o, &slot.stream));
        let med = slot.medians.as_ref().map_or(0, |m| dptr(m, &slot.stream));
        {
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            // SAFETY: page-locked source, device buffer of chunk × n elements; the buffer
            // stays untouched by the host until the stream is synchronised in `finish`.
            unsafe { result::memcpy_htod_async(input, &*pinned, cu) }
                .map_err(driver_error("copying traces to the device"))?;
        }
        let b = DevBatch {
            n,
            traces: count,
            input,
            in_stride: n,
            output,
            out_stride: n,
        };
        run_on_device(&kit, op, levels, b, med)?;
        {
            let pinned = slot.pinned.as_mut().unwrap().slice_mut::<T>(count * n);
            // SAFETY: as above, device to host.
            unsafe { result::memcpy_dtoh_async(pinned, output, cu) }
                .map_err(driver_error("copying traces from the device"))?;
        }
        if seg_levels > 0 {
            let m = slot
                .pinned_medians
                .as_mut()
                .unwrap()
                .slice_mut::<T>(count * seg_levels);
            // SAFETY: as above.
            unsafe { result::memcpy_dtoh_async(m, med, cu) }
                .map_err(driver_error("copying medians from the device"))?;
        }
        slot.pending = Some((first, count));
    }
    for slot in &mut slots.slots {
        finish(slot, dest, &mut medians)?;
    }
    Ok(medians)
}

// ---------------------------------------------------------------------------------------------
// The backend's entry points.

pub fn transform<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<()> {
    run_host(
        gpu,
        cpu,
        wavelet,
        Op::Transform(direction),
        levels,
        traces,
        batch,
        0,
    )?;
    Ok(())
}

pub fn denoise<T: Sample>(
    gpu: &CudaBackend,
    cpu: &CpuBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    traces: Traces<T>,
    batch: TraceBatch,
) -> Result<Vec<f64>> {
    let n = batch.n_samples;
    let rules = Rules::<T>::new(options, levels, n);
    let seg_levels = if rules.universal() {
        rules.seg_levels as usize
    } else {
        0
    };
    let medians = run_host(
        gpu,
        cpu,
        wavelet,
        Op::Denoise(options),
        levels,
        traces,
        batch,
        seg_levels,
    )?;
    Ok(thresholds_from_medians(
        options,
        levels,
        n,
        batch.n_traces,
        &medians,
    ))
}

/// Device-resident transform of `levels` levels (0 = all): input and output already on the
/// GPU (stride = batch.trace_stride), queued on `stream` without waiting. Input and output
/// may be the same buffer only for traces the whole-trace kernels take; long traces need
/// dense coefficients (stride = n_samples).
#[allow(clippy::too_many_arguments)]
pub fn transform_device<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    direction: Direction,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let n = batch.n_samples;
    let levels = check_device_batch(n, levels, input.len(), output.len(), &batch)?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    if batch.trace_stride != n
        && kit
            .long_plan(n, levels, Op::Transform(direction).kind())
            .is_long()
    {
        return Err(crate::invalid!(
            "traces of {n} samples take the long-signal path, which needs trace_stride = n_samples"
        ));
    }
    let (pi, _ri) = input.device_ptr(stream);
    let (po, _ro) = output.device_ptr_mut(stream);
    let b = DevBatch {
        n,
        traces: batch.n_traces,
        input: pi,
        in_stride: batch.trace_stride,
        output: po,
        out_stride: batch.trace_stride,
    };
    run_on_device(&kit, Op::Transform(direction), levels, b, 0)
}

/// Checks a device-resident call's sizes; returns the depth (0 resolved to all levels).
fn check_device_batch(
    n: usize,
    levels: u32,
    input: usize,
    output: usize,
    batch: &TraceBatch,
) -> Result<u32> {
    if n < 2 || !n.is_power_of_two() {
        return Err(crate::invalid!(
            "n_samples is {n}; expected a power of two ≥ 2"
        ));
    }
    let levels = if levels == 0 {
        n.trailing_zeros()
    } else {
        levels
    };
    if levels > n.trailing_zeros() {
        return Err(crate::invalid!(
            "{levels} levels asked for {n}-sample traces"
        ));
    }
    if input < batch.span() || output < batch.span() {
        return Err(crate::invalid!(
            "device buffers shorter than the {} elements the batch spans",
            batch.span()
        ));
    }
    Ok(levels)
}

/// Device-resident denoise: input and output already on the GPU (contiguous traces,
/// stride = batch.trace_stride), work queued on `stream`. Returns the thresholds.
/// Waits for the stream: the thresholds depend on the data.
#[allow(clippy::too_many_arguments)]
pub fn denoise_device<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &std::sync::Arc<CudaStream>,
) -> Result<Vec<f64>> {
    denoise_device_enqueue(gpu, wavelet, options, levels, input, output, batch, stream)?
        .thresholds(gpu, stream)
}

/// The medians a queued denoise leaves on the device, until `thresholds` reads them.
pub struct DeviceMedians<T> {
    medians: CudaSlice<T>,
    options: DenoiseOptions,
    levels: u32,
    n: usize,
    traces: usize,
}

impl<T: Sample> DeviceMedians<T> {
    /// Waits for `stream` and returns the thresholds (n_traces × levels, as the CPU backend).
    pub fn thresholds(self, gpu: &CudaBackend, stream: &Arc<CudaStream>) -> Result<Vec<f64>> {
        let universal = self.options.rule == ThresholdRule::Universal;
        let len = if universal { self.medians.len() } else { 0 };
        let mut host = vec![T::zero(); len];
        if len > 0 {
            let mut pinned = gpu.staging.take(&gpu.ctx, len * std::mem::size_of::<T>())?;
            let staged = pinned.slice_mut::<T>(len);
            // SAFETY: page-locked destination of the medians' size; synchronised below
            // before the buffer is read or reused.
            let copied = unsafe {
                result::memcpy_dtoh_async(staged, dptr(&self.medians, stream), stream.cu_stream())
            }
            .map_err(driver_error("copying medians from the device"));
            let done = stream
                .synchronize()
                .map_err(driver_error("running the DWT denoise"));
            copied?;
            done?;
            host.copy_from_slice(pinned.slice_mut::<T>(len));
            gpu.staging.put(pinned);
        } else {
            stream
                .synchronize()
                .map_err(driver_error("running the DWT denoise"))?;
        }
        Ok(thresholds_from_medians(
            &self.options,
            self.levels,
            self.n,
            self.traces,
            &host,
        ))
    }
}

/// Queues a device-resident denoise on `stream` without waiting (for timing with events);
/// `levels` 0 means all. The returned medians turn into thresholds once the stream is done.
#[allow(clippy::too_many_arguments)]
pub fn denoise_device_enqueue<T: Sample>(
    gpu: &CudaBackend,
    wavelet: &Wavelet,
    options: &DenoiseOptions,
    levels: u32,
    input: &CudaSlice<T>,
    output: &mut CudaSlice<T>,
    batch: TraceBatch,
    stream: &std::sync::Arc<CudaStream>,
) -> Result<DeviceMedians<T>> {
    let n = batch.n_samples;
    let levels = check_device_batch(n, levels, input.len(), output.len(), &batch)?;
    options.validate()?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    let kit = Kit::<T>::new(gpu, wavelet, stream)?;
    let rules = Rules::<T>::new(options, levels, n);
    let medians = kit.alloc::<T>(
        batch.n_traces * rules.seg_levels as usize,
        "allocating device memory for medians",
    )?;
    {
        // The guards make `stream` wait for earlier work on the buffers, and later work
        // elsewhere wait for this.
        let (pi, _ri) = input.device_ptr(stream);
        let (po, _ro) = output.device_ptr_mut(stream);
        let b = DevBatch {
            n,
            traces: batch.n_traces,
            input: pi,
            in_stride: batch.trace_stride,
            output: po,
            out_stride: batch.trace_stride,
        };
        run_on_device(
            &kit,
            Op::Denoise(options),
            levels,
            b,
            dptr(&medians, stream),
        )?;
    }
    Ok(DeviceMedians {
        medians,
        options: *options,
        levels,
        n,
        traces: batch.n_traces,
    })
}
