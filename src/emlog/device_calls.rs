//! The plan's and the result's calls on device memory, ordered on the context's caller
//! stream (`sg_context_set_stream`). Making a plan and searching wait for the stream (the
//! plan's closed-form answer and the result's summary are host values); writing a
//! result's histograms or models to device arrays does not.

use super::criterion::SearchOptions;
use super::cuda::gather::{gather, DeviceProblem};
use super::cuda::resident::bins_to_caller;
use super::gathered::Gathered;
use super::grid::Axis;
use super::matrix::{Data, Shape};
use super::result::SearchResult;
use super::{cuda, EmlogPlan};
use crate::backend::cuda::array::{DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::write;
use crate::backend::cuda::CudaBackend;
use crate::context::Context;
use crate::error::Result;
use std::sync::Arc;

impl EmlogPlan {
    /// `new` on arrays in device memory: A spanning `shape`'s strides, σ₀ (m), f₀, f_exp
    /// and δ (n). The searched columns of A and their σ₀ are gathered on the caller's
    /// stream and copied to the host with f₀, f_exp and δ (n·(p + 3) + p values; the call
    /// waits for the stream); they are checked as `new` checks them, and the plan equals
    /// `new`'s on the same values bit for bit. The other columns are not read.
    pub fn from_device<A: DeviceArray<f64>>(
        ctx: Arc<Context>,
        shape: &Shape,
        arrays: &DeviceProblem<A>,
    ) -> Result<EmlogPlan> {
        let gpu = ctx.gpu_for("a device EM-logging plan")?;
        shape.check_sizes()?;
        let span = shape.check_strides()?;
        shape.check_searched()?;
        let (n, m) = (shape.n, shape.m);
        for (a, need, name) in [
            (&arrays.a, span, "a"),
            (&arrays.sigma0, m, "sigma0"),
            (&arrays.f0, n, "f0"),
            (&arrays.f_exp, n, "f_exp"),
            (&arrays.delta, n, "delta"),
        ] {
            if a.len() < need {
                return Err(crate::invalid!(
                    "`{name}` holds {} values; {need} needed",
                    a.len()
                ));
            }
        }
        let host = gather(gpu, shape, arrays)?;
        let problem = Gathered {
            n,
            columns: &host.columns,
            sigma0: &host.sigma0,
            data: Data {
                f0: &host.f0,
                f_exp: &host.f_exp,
                delta: &host.delta,
            },
            searched: shape.searched,
        }
        .validate()?;
        Self::from_problem(ctx, problem)
    }

    /// `search` ordered after the caller's stream (and the caller's stream after it),
    /// waiting for it: the result's counts, best model and extents are host values. The
    /// same launches as `search` on the same GPU, so the same result bit for bit; its
    /// histograms stay on the device too, for `SearchResult::histogram_device`.
    pub fn search_device(&self, axes: &[Axis], options: &SearchOptions) -> Result<SearchResult> {
        let gpu = self.ctx.gpu_for("a device EM-logging search")?;
        self.search_with(axes, options, |s, reporter| {
            let (tally, bins) = cuda::search_device(gpu, s, reporter, self.device_state()?)?;
            Ok((tally, Some(bins)))
        })
    }
}

/// One of a result's histograms.
#[derive(Clone, Copy, Debug)]
pub enum Histogram {
    /// The 1D marginal of a parameter.
    Marginal(usize),
    /// The 2D marginal of a requested pair (by its place in the request).
    Pair(usize),
}

impl SearchResult {
    /// The bins of `h`, where they start in the flat histograms (the marginals, then the
    /// pairs), and what they are (for a message).
    pub fn histogram(&self, h: Histogram) -> Result<(&[u64], usize, &'static str)> {
        let marginals: usize = self.marginals.iter().map(Vec::len).sum();
        match h {
            Histogram::Marginal(k) => {
                let m = self.marginals.get(k).ok_or_else(|| {
                    crate::invalid!("parameter {k}; the search has {}", self.marginals.len())
                })?;
                let start = self.marginals[..k].iter().map(Vec::len).sum();
                Ok((m, start, "the marginal"))
            }
            Histogram::Pair(q) => {
                let m = self.pairs.get(q).ok_or_else(|| {
                    crate::invalid!("pair {q}; the search asked for {}", self.pairs.len())
                })?;
                let start = marginals + self.pairs[..q].iter().map(|p| p.1.len()).sum::<usize>();
                Ok((&m.1, start, "the 2D marginal"))
            }
        }
    }

    /// The bins of `h` into `dst` (which holds them), on the caller's stream without
    /// waiting: from the device histograms of a device search, else from the host's.
    pub fn histogram_device(
        &self,
        gpu: &CudaBackend,
        h: Histogram,
        dst: &mut impl DeviceArrayMut<u64>,
    ) -> Result<()> {
        let (host, start, _) = self.histogram(h)?;
        check_room(dst.len(), host.len(), "counts")?;
        let what = "copying a histogram to the caller's device array";
        match &self.origin.bins {
            Some(bins) => bins_to_caller(gpu, bins, start, &mut part_of(dst, host.len()), what),
            None => write(&gpu.caller_stream(), host, dst, what),
        }
    }

    /// The listed models' indices (n_models) and values (p each) into `indices` and
    /// `values`, on the caller's stream without waiting. The models are listed on the host
    /// (as `search` lists them on a GPU), so they are copied from host memory.
    pub fn models_device(
        &self,
        gpu: &CudaBackend,
        indices: &mut impl DeviceArrayMut<u64>,
        values: &mut impl DeviceArrayMut<f64>,
    ) -> Result<()> {
        check_room(indices.len(), self.models.len(), "indices")?;
        check_room(values.len(), self.model_values.len(), "values")?;
        let what = "copying the listed models to the caller's device arrays";
        let stream = gpu.caller_stream();
        write(&stream, &self.models, indices, what)?;
        write(&stream, &self.model_values, values, what)
    }
}

/// The first `len` elements of `dst`.
fn part_of<T>(
    dst: &mut impl DeviceArrayMut<T>,
    len: usize,
) -> crate::backend::cuda::array::PartMut<'_, T> {
    crate::backend::cuda::array::part_mut(dst, 0, len)
}

fn check_room(have: usize, need: usize, name: &str) -> Result<()> {
    if have < need {
        return Err(crate::error::Error::BufferTooSmall(format!(
            "`{name}` holds {have} elements; {need} needed"
        )));
    }
    Ok(())
}
