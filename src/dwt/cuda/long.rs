//! The long path's passes: how many levels each tile pass runs, and its scratch sizes.

use crate::backend::cuda::buffers::DevPtr;

#[derive(Clone, Copy, Debug)]
pub(super) struct Pass {
    pub(super) s: u32,
    pub(super) k: u32,
    pub(super) log2t: u32,
    pub(super) log2t0: u32,
}

#[derive(Clone, Debug)]
pub(super) struct LongPlan {
    pub(super) passes: Vec<Pass>,
    pub(super) s_final: u32,
    pub(super) m_final: usize,
}

impl LongPlan {
    pub(super) fn is_long(&self) -> bool {
        !self.passes.is_empty()
    }

    /// Elements of the two scratch approximations, per trace.
    pub(super) fn scratch_lens(&self, n: usize) -> [usize; 2] {
        let mut lens = [0, 0];
        for (p, pass) in self.passes.iter().enumerate() {
            lens[p % 2] = lens[p % 2].max(n >> (pass.s + pass.k));
        }
        lens
    }
}

/// Thresholds applied by inverse kernels: `lam` (null: none) holds `stride` per trace.
#[derive(Clone, Copy)]
pub(super) struct ShrinkTable {
    pub(super) lam: DevPtr,
    pub(super) stride: usize,
    pub(super) level0: u32,
    pub(super) mask: u64,
    pub(super) hard: bool,
}

pub(super) const NO_SHRINK: ShrinkTable = ShrinkTable {
    lam: 0,
    stride: 0,
    level0: 0,
    mask: 0,
    hard: false,
};
