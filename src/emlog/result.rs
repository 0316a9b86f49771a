//! What a search reports, reduced over the grid rather than one value per model, and the
//! running tally it is reduced from.

use super::grid::Grid;
use crate::backend::cuda::memory::DeviceBuf;
use crate::context::Context;
use std::sync::Arc;

/// Where each histogram lives in one flat array of counts: the 1D marginals of every
/// axis, then the 2D marginals of the requested pairs (bin i_a + n_a·i_b).
#[derive(Clone, Debug)]
pub struct Bins {
    pub axis_offset: Vec<usize>,
    pub pairs: Vec<(usize, usize)>,
    pub pair_offset: Vec<usize>,
    pub len: usize,
}

impl Bins {
    pub fn new(g: &Grid, pairs: &[(usize, usize)]) -> Bins {
        let mut len = 0;
        let axis_offset = (0..g.p())
            .map(|k| {
                len += g.len(k);
                len - g.len(k)
            })
            .collect();
        let pair_offset = pairs
            .iter()
            .map(|&(a, b)| {
                len += g.len(a) * g.len(b);
                len - g.len(a) * g.len(b)
            })
            .collect();
        Bins {
            axis_offset,
            pairs: pairs.to_vec(),
            pair_offset,
            len,
        }
    }
}

/// A partial reduction over some rows; merged in index order.
#[derive(Clone, Debug)]
pub struct Tally {
    pub count: u64,
    /// Least decision value seen and the first model index that has it.
    pub best_q: f64,
    pub best_index: u64,
    pub bins: Vec<u64>,
    /// First equivalent models, in index order, at most `max_models`.
    pub models: Vec<u64>,
}

impl Tally {
    pub fn new(len: usize) -> Tally {
        Tally {
            count: 0,
            best_q: f64::INFINITY,
            best_index: u64::MAX,
            bins: vec![0; len],
            models: Vec::new(),
        }
    }

    /// `self` holds models before `later`'s.
    pub fn merge(mut self, later: Tally, max_models: usize) -> Tally {
        self.count += later.count;
        if later.best_q < self.best_q
            || (later.best_q == self.best_q && later.best_index < self.best_index)
        {
            self.best_q = later.best_q;
            self.best_index = later.best_index;
        }
        self.bins
            .iter_mut()
            .zip(&later.bins)
            .for_each(|(a, b)| *a += b);
        let room = max_models - self.models.len().min(max_models);
        self.models.extend(later.models.iter().take(room));
        self
    }
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// Models in the grid.
    pub total: u64,
    /// Equivalent models.
    pub count: u64,
    /// The grid's best model (least misfit, equivalent or not; first index on ties), its
    /// values and its misfit F.
    pub best_index: u64,
    pub best_model: Vec<f64>,
    pub best_misfit: f64,
    /// Per parameter, the least and greatest value taken by an equivalent model (NaN when
    /// there is none): the parameter's uncertainty on the grid.
    pub value_min: Vec<f64>,
    pub value_max: Vec<f64>,
    /// Per parameter, equivalent models per axis value.
    pub marginals: Vec<Vec<u64>>,
    /// Per requested pair (a, b), equivalent models per (i_a, i_b) at i_a + n_a·i_b.
    pub pairs: Vec<((usize, usize), Vec<u64>)>,
    /// Indices of the first equivalent models (at most the requested number), and their
    /// parameter values (p per model).
    pub models: Vec<u64>,
    pub model_values: Vec<f64>,
    /// More equivalent models than were listed.
    pub more_models: bool,
    pub origin: Origin,
}

/// Where a search ran: its context (for the calls that write results to device memory)
/// and, after a device search, its histograms left on the device (`Bins`'s flat layout:
/// the marginals, then the pairs).
#[derive(Clone)]
pub struct Origin {
    pub ctx: Arc<Context>,
    pub bins: Option<Arc<DeviceBuf<u64>>>,
}

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Origin")
            .field("histograms_on_device", &self.bins.is_some())
            .finish()
    }
}

impl SearchResult {
    pub fn from_tally(
        t: Tally,
        g: &Grid,
        bins: &Bins,
        misfit: impl Fn(f64) -> f64,
        origin: Origin,
    ) -> SearchResult {
        let p = g.p();
        let marginals: Vec<Vec<u64>> = (0..p)
            .map(|k| t.bins[bins.axis_offset[k]..bins.axis_offset[k] + g.len(k)].to_vec())
            .collect();
        let extent = |k: usize, last: bool| {
            let m = &marginals[k];
            let i = if last {
                m.iter().rposition(|&c| c > 0)
            } else {
                m.iter().position(|&c| c > 0)
            };
            i.map_or(f64::NAN, |i| g.values[k][i])
        };
        SearchResult {
            total: g.total,
            count: t.count,
            best_index: t.best_index,
            best_model: g.model(t.best_index),
            best_misfit: misfit(t.best_q),
            value_min: (0..p).map(|k| extent(k, false)).collect(),
            value_max: (0..p).map(|k| extent(k, true)).collect(),
            pairs: bins
                .pairs
                .iter()
                .zip(&bins.pair_offset)
                .map(|(&(a, b), &o)| ((a, b), t.bins[o..o + g.len(a) * g.len(b)].to_vec()))
                .collect(),
            marginals,
            more_models: t.count > t.models.len() as u64,
            model_values: t.models.iter().flat_map(|&i| g.model(i)).collect(),
            models: t.models,
            origin,
        }
    }
}
