//! The long path's passes: how many levels each tile pass runs, and its scratch sizes.

use crate::backend::cuda::array::Part;

#[derive(Clone, Copy, Debug)]
pub(super) struct Pass {
    pub(super) s: u32,
    pub(super) k: u32,
    pub(super) log2t: u32,
    pub(super) log2t0: u32,
}

/// The passes over n-sample traces for `levels` levels (none: the whole-trace kernels take
/// them), then the whole-trace kernel's levels from s_final on m_final samples.
#[derive(Clone, Debug)]
pub(super) struct LongPlan {
    pub(super) n: usize,
    pub(super) levels: u32,
    pub(super) passes: Vec<Pass>,
    pub(super) s_final: u32,
    pub(super) m_final: usize,
}

impl LongPlan {
    pub(super) fn is_long(&self) -> bool {
        !self.passes.is_empty()
    }

    /// Elements of the two scratch approximations, per trace.
    pub(super) fn scratch_lens(&self) -> [usize; 2] {
        let mut lens = [0, 0];
        for (p, pass) in self.passes.iter().enumerate() {
            lens[p % 2] = lens[p % 2].max(self.n >> (pass.s + pass.k));
        }
        lens
    }
}

/// Thresholds applied by inverse kernels: `lam` (None: none) holds `stride` per trace.
#[derive(Clone, Copy)]
pub(super) struct ShrinkTable<'x, T> {
    pub(super) lam: Option<Part<'x, T>>,
    pub(super) stride: usize,
    pub(super) level0: u32,
    pub(super) mask: u64,
    pub(super) hard: bool,
}

impl<T> ShrinkTable<'_, T> {
    /// No thresholding.
    pub(super) fn none() -> Self {
        ShrinkTable {
            lam: None,
            stride: 0,
            level0: 0,
            mask: 0,
            hard: false,
        }
    }
}
