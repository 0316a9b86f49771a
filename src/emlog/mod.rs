//! EM-logging inversion by exhaustive search: the quasi-solution region (every model whose
//! misfit is within the measurement errors) of a linearised 2D EM-logging problem
//! δf = A·δσ (Glinskikh & Gorbatenko 2015), over a grid of the searched conductivities.
//!
//! A plan holds the weighted problem and its centred form (analytic.rs); `analytic` gives
//! the closed-form ellipsoid and the SVD, `search` enumerates a grid on the CPU or the GPU
//! and reduces it to counts, extents, marginals and the best model (result.rs).

pub mod analytic;
pub mod cpu;
pub mod criterion;
pub mod cuda;
pub mod device_calls;
pub mod gathered;
pub mod grid;
pub mod matrix;
pub mod result;
pub mod setup;
pub mod synthetic;
pub mod tables;

use crate::backend::cuda::memory::{DeviceBuf, Tally as MemoryTally};
use crate::context::Context;
use crate::error::Result;
use crate::progress::Reporter;
use analytic::{AnalyticRegion, Centred};
use criterion::{Criterion, Norm, SearchOptions};
use grid::{Axis, Grid};
use matrix::{Problem, SensitivitySpec};
use result::{Bins, Origin, SearchResult, Tally};
use setup::SearchSetup;
use std::sync::Arc;

/// Histogram bins a device search leaves in device memory.
type DeviceBins = DeviceBuf<u64>;
use tables::FastTables;

/// Most bins of one 2D marginal (each search task holds its histograms).
const MAX_PAIR_BINS: usize = 1 << 22;

/// A sensitivity-matrix plan: any number of threads may search it at once (on a CUDA
/// context their searches take turns with the plan's device state).
pub struct EmlogPlan {
    ctx: Arc<Context>,
    problem: Problem,
    centred: Centred,
    /// The searches' device state (CUDA contexts), made with the plan.
    device: Option<cuda::state::PlanState>,
    /// Device bytes the plan holds.
    held: Arc<MemoryTally>,
}

impl EmlogPlan {
    /// Device bytes the plan holds (0 on a CPU context): the weighted matrix and the
    /// searches' reductions, made with the plan, and the search tables' workspace, grown to
    /// the largest search seen and kept. A search's histograms are its result's.
    pub fn device_bytes(&self) -> usize {
        self.held.bytes()
    }

    pub fn new(ctx: Arc<Context>, spec: &SensitivitySpec) -> Result<EmlogPlan> {
        Self::from_problem(ctx, spec.validate()?)
    }

    /// The plan of a checked problem: its centred form made once.
    fn from_problem(ctx: Arc<Context>, problem: Problem) -> Result<EmlogPlan> {
        let centred = Centred::new(&problem)?;
        let held = Arc::<MemoryTally>::default();
        let device = match ctx.cuda() {
            Some(gpu) => Some(held.scope("creating the EM-logging plan", || {
                cuda::state::PlanState::new(gpu, &problem, &held)
            })?),
            None => None,
        };
        Ok(EmlogPlan {
            ctx,
            problem,
            centred,
            device,
            held,
        })
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Measurements and searched parameters.
    pub fn n(&self) -> usize {
        self.problem.n
    }

    pub fn p(&self) -> usize {
        self.problem.p()
    }

    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// σ*, F_min, the ellipsoid of `criterion` (least squares) and the SVD of Ã.
    pub fn analytic(&self, criterion: Criterion) -> AnalyticRegion {
        AnalyticRegion::new(&self.centred, criterion)
    }

    /// Searches the grid `axes` (axis 0 varies fastest).
    pub fn search(&self, axes: &[Axis], options: &SearchOptions) -> Result<SearchResult> {
        self.search_with(axes, options, |s, reporter| {
            let tally = match self.ctx.cuda() {
                Some(gpu) => cuda::search(gpu, s, reporter, self.device_state()?)?,
                None => cpu::search(&self.ctx.cpu, s, reporter)?,
            };
            Ok((tally, None))
        })
    }

    /// The searches' device state (made with the plan on a CUDA context).
    fn device_state(&self) -> Result<&cuda::state::PlanState> {
        self.device.as_ref().ok_or_else(|| {
            crate::error::Error::Internal("an EM-logging plan without its device state".into())
        })
    }

    /// A search of `axes`: `run` tallies the checked setup, and gives the histograms it
    /// leaves in device memory, if any.
    fn search_with(
        &self,
        axes: &[Axis],
        options: &SearchOptions,
        run: impl FnOnce(&SearchSetup, &mut Reporter) -> Result<(Tally, Option<DeviceBins>)>,
    ) -> Result<SearchResult> {
        let s = self.setup(axes, options)?;
        let mut reporter = self.ctx.reporter();
        let (tally, bins) = run(&s, &mut reporter)?;
        let origin = Origin {
            ctx: self.ctx.clone(),
            bins: bins.map(Arc::new),
        };
        let result = SearchResult::from_tally(tally, &s.grid, &s.bins, |q| s.misfit(q), origin);
        reporter.finish();
        Ok(result)
    }

    /// The grid, the options and the plan made into one checked search.
    fn setup(&self, axes: &[Axis], options: &SearchOptions) -> Result<SearchSetup<'_>> {
        let grid = Grid::new(axes, self.p())?;
        options.validate(self.p())?;
        for &(a, b) in &options.pairs {
            if grid.len(a) * grid.len(b) > MAX_PAIR_BINS {
                return Err(crate::invalid!(
                    "the 2D marginal of parameters {a} and {b} would have {} × {} bins; at most {MAX_PAIR_BINS}",
                    grid.len(a),
                    grid.len(b)
                ));
            }
        }
        let n = self.n() as f64;
        let q_thr = match (options.norm, options.criterion) {
            (Norm::L2, c) => self.centred.phi_threshold(c),
            (Norm::L1, Criterion::FitWithinErrors) => n,
            (Norm::L1, Criterion::MaxMisfit(l)) => n * l,
            (_, Criterion::FitWithinErrors) => 1.0,
            (_, Criterion::MaxMisfit(l)) => l,
            (_, Criterion::DeltaChiSquare(_)) => unreachable!("refused by SearchOptions::validate"),
        };
        Ok(SearchSetup {
            fast: FastTables::new(&self.centred, &grid),
            bins: Bins::new(&grid, &options.pairs),
            grid,
            mode: options.mode,
            norm: options.norm,
            q_thr,
            problem: &self.problem,
            options: options.clone(),
        })
    }
}
