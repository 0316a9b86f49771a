//! One search, checked and ready for a backend: the grid, the decision rule, the tables
//! of the fast mode or the weighted problem of the direct mode, and the histogram layout.

use super::criterion::{Mode, Norm, SearchOptions};
use super::grid::Grid;
use super::matrix::Problem;
use super::result::Bins;
use super::tables::FastTables;

/// The tie rule: a model is equivalent when its decision value q ≤ q_thr, both f64.
/// Fast mode: q = Φ from the centred form (tables.rs). Direct mode: q = Σr² (L2), Σ|r|
/// (L1) or max|r| (max norm) summed over the measurements in order. The two modes round
/// differently (relative differences of order n·10⁻¹⁶), so a model with q within
/// 10⁻⁹·q_thr of the threshold may be decided differently by the two; elsewhere they agree
/// exactly. In either mode the GPU reproduces the CPU's value bit for bit.
pub struct SearchSetup<'a> {
    pub grid: Grid,
    pub mode: Mode,
    pub norm: Norm,
    pub q_thr: f64,
    pub fast: FastTables,
    pub problem: &'a Problem,
    pub bins: Bins,
    pub options: SearchOptions,
}

impl SearchSetup<'_> {
    /// Models along axis 0.
    pub fn n0(&self) -> usize {
        self.grid.len(0)
    }

    /// F from a decision value.
    pub fn misfit(&self, q: f64) -> f64 {
        let n = self.problem.n as f64;
        match (self.mode, self.norm) {
            (Mode::Fast, _) | (_, Norm::L2) => (q / n).sqrt(),
            (_, Norm::L1) => q / n,
            (_, Norm::Max) => q,
        }
    }
}
