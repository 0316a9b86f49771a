//! The long-signal passes over one group of traces: tile kernels that run K levels each,
//! and the whole-trace kernel for the levels left once the approximation fits it.

use super::kit::{log2, Kit};
use super::long::{LongPlan, Pass, ShrinkTable};
use super::rows::{check_rows, whole, whole_mut, Io, Rows, Shape};
use crate::backend::cuda::array::{piece_bytes, Part, PartMut, Pieces};
use crate::backend::cuda::launch::Launch;
use crate::error::Result;
use crate::sample::Sample;

/// What every launch of a group's passes shares: the kit, the plan and the trace count.
struct Tiles<'k, 'a, T> {
    kit: &'k Kit<'a, T>,
    plan: &'k LongPlan,
    traces: usize,
}

/// One group of long traces: its passes, and the two scratch approximations they
/// alternate between (pass p writes scratch p % 2), cut from the call's work memory.
pub(super) struct LongGroup<'k, 'a, 'w, T> {
    tiles: Tiles<'k, 'a, T>,
    scratch: [PartMut<'w, T>; 2],
}

/// The scratch approximation `write` and the other one, to read.
fn split<'s, 'w, T>(
    scratch: &'s mut [PartMut<'w, T>; 2],
    write: usize,
) -> (&'s PartMut<'w, T>, &'s mut PartMut<'w, T>) {
    let [even, odd] = scratch;
    if write % 2 == 0 {
        (odd, even)
    } else {
        (even, odd)
    }
}

/// Bytes of a group's two scratch approximations for `traces` traces (`Pieces`).
pub(super) fn scratch_bytes<T>(plan: &LongPlan, traces: usize) -> usize {
    let lens = plan.scratch_lens();
    piece_bytes::<T>(lens[0] * traces) + piece_bytes::<T>(lens[1] * traces)
}

impl<'k, 'a, 'w, T: Sample> LongGroup<'k, 'a, 'w, T> {
    /// The group of `traces` traces, its scratch cut from `work` (`scratch_bytes`).
    pub(super) fn new(
        kit: &'k Kit<'a, T>,
        plan: &'k LongPlan,
        traces: usize,
        work: &mut Pieces<'w>,
    ) -> Result<Self> {
        let lens = plan.scratch_lens();
        let a = work.take::<T>(lens[0] * traces);
        let b = work.take::<T>(lens[1] * traces);
        Ok(LongGroup {
            tiles: Tiles { kit, plan, traces },
            scratch: [a, b],
        })
    }

    pub(super) fn plan(&self) -> &'k LongPlan {
        self.tiles.plan
    }

    pub(super) fn traces(&self) -> usize {
        self.tiles.traces
    }

    /// Forward levels of the group's traces in `input` into `coef` (stride n).
    pub(super) fn forward(&mut self, input: Rows<Part<T>>, coef: &mut PartMut<T>) -> Result<()> {
        let plan = self.tiles.plan;
        let mut m = plan.n;
        for (p, pass) in plan.passes.iter().enumerate() {
            let (read, write) = split(&mut self.scratch, p);
            let src = match p {
                0 => Rows {
                    data: input.data,
                    stride: input.stride,
                },
                _ => Rows {
                    data: whole(read),
                    stride: m,
                },
            };
            let dst = (pass.s + pass.k < plan.levels).then(|| Rows {
                data: whole_mut(write),
                stride: m >> pass.k,
            });
            self.tiles.forward_pass(pass, m, src, coef, dst)?;
            m >>= pass.k;
        }
        if plan.s_final < plan.levels {
            // The last pass left the approximation in its scratch.
            let src = match plan.passes.len() {
                0 => input,
                passes => Rows {
                    data: whole(&self.scratch[(passes - 1) % 2]),
                    stride: m,
                },
            };
            let out = Rows {
                data: whole_mut(coef),
                stride: plan.n,
            };
            let shape = Shape {
                n: m,
                traces: self.tiles.traces,
            };
            let kit = self.tiles.kit;
            kit.whole_forward(shape, plan.levels - plan.s_final, Io::Apart(src, out))?;
        }
        Ok(())
    }

    /// Inverse levels from `coef` (stride n) into `output`, thresholding by `shrink`.
    pub(super) fn inverse(
        &mut self,
        coef: Part<T>,
        mut output: Rows<PartMut<T>>,
        shrink: &ShrinkTable<T>,
    ) -> Result<()> {
        let plan = self.tiles.plan;
        let (n, passes) = (plan.n, plan.passes.len());
        if plan.s_final < plan.levels {
            let dst = match passes {
                0 => output.reborrow(),
                _ => Rows {
                    data: whole_mut(&mut self.scratch[(passes - 1) % 2]),
                    stride: plan.m_final,
                },
            };
            let table = ShrinkTable {
                level0: plan.s_final,
                ..*shrink
            };
            let shape = Shape {
                n: plan.m_final,
                traces: self.tiles.traces,
            };
            let io = Io::Apart(
                Rows {
                    data: coef,
                    stride: n,
                },
                dst,
            );
            let kit = self.tiles.kit;
            kit.whole_inverse(shape, plan.levels - plan.s_final, io, &table)?;
        }
        for (p, pass) in plan.passes.iter().enumerate().rev() {
            // Pass p reads scratch p % 2 (or the coefficients) and writes the other one (or
            // the output).
            let (read, write) = split(&mut self.scratch, p + 1);
            let src = if pass.s + pass.k == plan.levels {
                Rows {
                    data: coef,
                    stride: n,
                }
            } else {
                Rows {
                    data: whole(read),
                    stride: n >> (pass.s + pass.k),
                }
            };
            let dst = match p {
                0 => output.reborrow(),
                _ => Rows {
                    data: whole_mut(write),
                    stride: n >> pass.s,
                },
            };
            self.tiles.inverse_pass(pass, src, coef, dst, shrink)?;
        }
        Ok(())
    }
}

impl<T: Sample> Tiles<'_, '_, T> {
    /// Levels s+1..s+k of a pass over rows of m samples in `src`: the details into `coef`
    /// (rows of n), the level-(s+k) approximation into `dst` (None: into `coef`, the pass
    /// being the last).
    fn forward_pass(
        &self,
        pass: &Pass,
        m: usize,
        src: Rows<Part<T>>,
        coef: &mut PartMut<T>,
        mut dst: Option<Rows<PartMut<T>>>,
    ) -> Result<()> {
        let (kit, n, traces) = (self.kit, self.plan.n, self.traces);
        let out = m >> pass.k;
        check_rows(&src.data, traces, src.stride, m, "DWT pass input")?;
        check_rows(coef, traces, n, n, "DWT coefficients")?;
        if let Some(dst) = &dst {
            check_rows(&dst.data, traces, dst.stride, out, "DWT pass output")?;
        }
        let words = kit.geo.tile_forward_words(pass.k, 1 << pass.log2t);
        let cfg = kit.tile_config(out >> pass.log2t, traces, words)?;
        let mut l = Launch::new(&kit.module, kit.stream, "dwt_forward_tiles", cfg)?;
        l.input(&src.data)
            .scalar(src.stride as i64)
            .scalar(log2(m))
            .output(coef)
            .scalar(n as i64)
            .scalar(log2(n))
            .scalar(pass.s as i32)
            .scalar(pass.k as i32)
            .scalar(pass.log2t as i32);
        match dst.as_mut() {
            Some(dst) => l.output(&mut dst.data).scalar(dst.stride as i64),
            None => l.output(coef).scalar(n as i64),
        };
        l.scalar(words as i32);
        // SAFETY: dwt_forward_tiles(const REAL* src, long long src_stride, int log2m,
        // REAL* coef, long long coef_stride, int log2n, int s0, int K, int log2T, REAL* dst,
        // long long dst_stride, int smem_words). Block (b, trace) of the grid's
        // (m >> K) / 2^log2T × traces reads src's row `trace` at indices wrapped into
        // [0, m), writes the details it owns of levels s0+1..s0+K into coef's row (inside
        // [0, n)) and its 2^log2T approximations into dst's row (inside [0, m >> K)): the
        // rows are checked above (dst = coef when absent, rows of n ≥ m >> K). Shared memory
        // is smem_words REALs, the kernel's tile layout for (K, 2^log2T).
        unsafe { l.run() }
    }

    /// Levels s+k..s+1 of a pass: from the level-(s+k) approximation in `src` and the
    /// details in `coef` (thresholded by `shrink`) to rows of n >> s samples in `dst`.
    fn inverse_pass(
        &self,
        pass: &Pass,
        src: Rows<Part<T>>,
        coef: Part<T>,
        mut dst: Rows<PartMut<T>>,
        shrink: &ShrinkTable<T>,
    ) -> Result<()> {
        let (kit, n, traces) = (self.kit, self.plan.n, self.traces);
        let top = pass.s + pass.k;
        check_rows(&src.data, traces, src.stride, n >> top, "DWT pass input")?;
        check_rows(&coef, traces, n, n, "DWT coefficients")?;
        check_rows(
            &dst.data,
            traces,
            dst.stride,
            n >> pass.s,
            "DWT pass output",
        )?;
        if let Some(lam) = &shrink.lam {
            check_rows(lam, traces, shrink.stride, top as usize, "DWT thresholds")?;
        }
        let words = kit.geo.tile_inverse_words(pass.k, 1 << pass.log2t0);
        let cfg = kit.tile_config((n >> pass.s) >> pass.log2t0, traces, words)?;
        let mut l = Launch::new(&kit.module, kit.stream, "dwt_inverse_tiles", cfg)?;
        l.input(&src.data)
            .scalar(src.stride as i64)
            .input(&coef)
            .scalar(n as i64)
            .scalar(log2(n))
            .scalar(pass.s as i32)
            .scalar(pass.k as i32)
            .scalar(pass.log2t0 as i32)
            .output(&mut dst.data)
            .scalar(dst.stride as i64)
            .optional(shrink.lam.as_ref())
            .scalar(shrink.stride as i32)
            .scalar(shrink.mask)
            .scalar(shrink.hard as i32)
            .scalar(words as i32);
        // SAFETY: dwt_inverse_tiles(const REAL* src, long long src_stride, const REAL* coef,
        // long long coef_stride, int log2n, int s0, int K, int log2T0, REAL* dst,
        // long long dst_stride, const REAL* lam, int lam_stride, unsigned long long mask,
        // int hard, int smem_words). Block (b, trace) of the grid's (n >> s0) / 2^log2T0 ×
        // traces reads src's row `trace` at indices wrapped into [0, n >> (s0+K)), the
        // details of levels s0+1..s0+K in coef's row (inside [0, n)), lam's row below entry
        // s0+K when lam is present, and writes its 2^log2T0 samples of dst's row (inside
        // [0, n >> s0)): all checked above. Shared memory is smem_words REALs, the kernel's
        // tile layout for (K, 2^log2T0).
        unsafe { l.run() }
    }
}
