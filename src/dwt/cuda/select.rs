//! The long path's thresholds: the median of |d| per (trace, level) segment by radix
//! selection over device memory (histogram passes of one digit each), then the thresholds.

use super::kit::{log2, too_many, Kit};
use super::rows::{check_rows, Shape};
use super::shrink::Rules;
use super::tuning::{SELECT_BINS, SELECT_CHUNK, SELECT_DIGIT_BITS};
use crate::backend::cuda::array::{piece_bytes, Part, PartMut, Pieces};
use crate::backend::cuda::buffers::fill_zero;
use crate::backend::cuda::launch::{for_elems_in_blocks_of, Launch};
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::driver::LaunchConfig;

/// Threads per block of the per-segment and per-trace kernels.
const FLAT_THREADS: u32 = 128;
/// Threads per block of the histogram passes.
const SCAN_THREADS: u32 = 256;

/// One selection over a group's coefficients: segment g = trace · seg_levels + li is detail
/// level li + 1 of the trace. Its state per segment: prefix and mask of the bits selected,
/// the largest key below the prefix, the rank left, and a histogram of `SELECT_BINS` counts.
struct Select<'k, 'a, 'w, T> {
    kit: &'k Kit<'a, T>,
    rules: &'k Rules<T>,
    shape: Shape,
    segs: usize,
    prefix: PartMut<'w, u64>,
    pmask: PartMut<'w, u64>,
    below: PartMut<'w, u64>,
    rank: PartMut<'w, i32>,
    hist: PartMut<'w, i32>,
}

/// Bytes of the selection state of `segs` segments (`Pieces`).
pub(super) fn select_bytes(segs: usize) -> usize {
    3 * piece_bytes::<u64>(segs) + piece_bytes::<i32>(segs) + piece_bytes::<i32>(segs * SELECT_BINS)
}

/// One digit of the keys: `width` bits from bit `lo`; `last` when it holds bit 0.
#[derive(Clone, Copy)]
struct Digit {
    lo: i32,
    width: i32,
    last: i32,
}

impl Digit {
    /// The digit as the histogram and digit kernels take it: `int lo, int width, int last`.
    fn push<'l, 's>(self, l: &'l mut Launch<'s>) -> &'l mut Launch<'s> {
        l.scalar(self.lo).scalar(self.width).scalar(self.last)
    }
}

impl<T: Sample> Kit<'_, T> {
    /// Medians of |d| (into `medians`, traces × seg_levels; None only for the fixed rule,
    /// which has none) and thresholds (into `lam`, traces × levels) of the coefficients in
    /// `coef` (traces × n, dense); the selection's state is cut from `work` (`select_bytes`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn long_thresholds(
        &self,
        rules: &Rules<T>,
        shape: Shape,
        levels: u32,
        coef: Part<T>,
        medians: Option<PartMut<T>>,
        lam: &mut PartMut<T>,
        work: &mut Pieces,
    ) -> Result<()> {
        let mut select = Select::new(self, rules, shape, work)?;
        if rules.universal() && rules.seg_mask != 0 {
            check_rows(&coef, shape.traces, shape.n, shape.n, "DWT coefficients")?;
            select.init()?;
            // Digits of up to 11 bits from the top, below the sign bit (3 passes for f32).
            let mut top = 8 * self.geo.size as i32 - 2;
            while top >= 0 {
                let width = (top + 1).min(SELECT_DIGIT_BITS);
                let lo = top - width + 1;
                let digit = Digit {
                    lo,
                    width,
                    last: i32::from(lo == 0),
                };
                select.digit(coef, digit)?;
                top = lo - 1;
            }
        }
        select.finish(levels, medians, lam)
    }
}

impl<'k, 'a, 'w, T: Sample> Select<'k, 'a, 'w, T> {
    fn new(
        kit: &'k Kit<'a, T>,
        rules: &'k Rules<T>,
        shape: Shape,
        work: &mut Pieces<'w>,
    ) -> Result<Self> {
        let segs = shape.traces * rules.seg_levels as usize;
        if segs > 65535 {
            return Err(too_many("the number of median segments"));
        }
        let mut hist = work.take(segs * SELECT_BINS);
        // The passes count into cleared histograms (each digit clears what it used).
        fill_zero(kit.stream, &mut hist, "clearing median histograms")?;
        Ok(Select {
            kit,
            rules,
            shape,
            segs,
            prefix: work.take(segs),
            pmask: work.take(segs),
            below: work.take(segs),
            rank: work.take(segs),
            hist,
        })
    }

    fn launch(&self, name: &str, cfg: LaunchConfig) -> Result<Launch<'a>> {
        Launch::new(&self.kit.module, self.kit.stream, name, cfg)
    }

    /// Which level each segment is, as the kernels after init take it: `int seg_levels,
    /// unsigned long long seg_mask`.
    fn push_segments<'l>(&self, l: &'l mut Launch<'a>) -> &'l mut Launch<'a> {
        l.scalar(self.rules.seg_levels).scalar(self.rules.seg_mask)
    }

    /// Every segment's selection starts at the rank of its lower middle value.
    fn init(&mut self) -> Result<()> {
        let mut l = self.launch(
            "dwt_select_init",
            for_elems_in_blocks_of(self.segs, FLAT_THREADS),
        )?;
        l.scalar(log2(self.shape.n))
            .scalar(self.rules.seg_levels)
            .scalar(self.segs as i32)
            .output(&mut self.prefix)
            .output(&mut self.pmask)
            .output(&mut self.rank)
            .output(&mut self.below);
        // SAFETY: dwt_select_init(int log2n, int seg_levels, int n_segs,
        // unsigned long long* prefix, unsigned long long* pmask, int* rank,
        // unsigned long long* below): thread g < n_segs writes element g of each, and each
        // holds `segs` elements.
        unsafe { l.run() }
    }

    /// One digit of every wanted segment: a histogram pass over the keys under the
    /// segment's prefix, then the digit that holds the rank (which clears the histogram).
    fn digit(&mut self, coef: Part<T>, d: Digit) -> Result<()> {
        let n = self.shape.n;
        let scan = LaunchConfig {
            grid_dim: ((n / 2).div_ceil(SELECT_CHUNK) as u32, self.segs as u32, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = self.launch("dwt_select_count", scan)?;
        l.input(&coef).scalar(n as i64).scalar(log2(n));
        self.push_segments(&mut l);
        d.push(&mut l)
            .input(&self.prefix)
            .input(&self.pmask)
            .output(&mut self.hist)
            .output(&mut self.below)
            .scalar(SELECT_CHUNK as i32);
        // SAFETY: dwt_select_count(const REAL* coef, long long coef_stride, int log2n,
        // int seg_levels, unsigned long long mask, int lo, int width, int last,
        // const unsigned long long* prefix, const unsigned long long* pmask, int* hist,
        // unsigned long long* below, int chunk). Block (x, g), g < segs: segment g is level
        // g % seg_levels + 1 of trace g / seg_levels, whose details lie inside that trace's
        // n coefficients (coef holds the traces' rows of n, checked by the caller); the
        // block reads `chunk` of them from x·chunk, and touches prefix, pmask and below at g
        // and hist's row g below 2^width ≤ SELECT_BINS (all hold `segs` such rows).
        unsafe { l.run() }?;
        let per_segment = LaunchConfig {
            grid_dim: (self.segs as u32, 1, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = self.launch("dwt_select_digit", per_segment)?;
        l.output(&mut self.hist)
            .output(&mut self.prefix)
            .output(&mut self.pmask)
            .output(&mut self.rank)
            .output(&mut self.below);
        d.push(&mut l);
        self.push_segments(&mut l);
        // SAFETY: dwt_select_digit(int* hist, unsigned long long* prefix,
        // unsigned long long* pmask, int* rank, unsigned long long* below, int lo, int width,
        // int last, int seg_levels, unsigned long long mask): block g < segs touches element
        // g of prefix, pmask, rank and below and hist's row g below 2^width ≤ SELECT_BINS;
        // all hold `segs` such rows.
        unsafe { l.run() }
    }

    /// Medians per segment and thresholds per trace and level.
    fn finish(
        &self,
        levels: u32,
        mut medians: Option<PartMut<T>>,
        lam: &mut PartMut<T>,
    ) -> Result<()> {
        let (shape, rules) = (self.shape, self.rules);
        let (per_trace, lv) = (rules.seg_levels as usize, levels as usize);
        check_rows(lam, shape.traces, lv, lv, "DWT thresholds")?;
        match &medians {
            Some(m) => check_rows(m, shape.traces, per_trace, per_trace, "DWT medians")?,
            None if rules.universal() => {
                return Err(Error::Internal("a denoise without its medians".into()))
            }
            None => {}
        }
        let cfg = for_elems_in_blocks_of(shape.traces, FLAT_THREADS);
        let mut l = self.launch("dwt_select_finish", cfg)?;
        l.scalar(log2(shape.n))
            .scalar(shape.traces as i32)
            .scalar(levels as i32);
        self.push_segments(&mut l)
            .scalar(rules.mask)
            .scalar(rules.flags)
            .scalar(rules.fixed)
            .scalar(rules.factor)
            .input(&self.prefix)
            .input(&self.rank)
            .input(&self.below);
        match medians.as_mut() {
            Some(m) => l.output(m),
            None => l.optional::<T, Part<T>>(None),
        };
        l.output(lam);
        // SAFETY: dwt_select_finish(int log2n, int n_traces, int L, int seg_levels,
        // unsigned long long seg_mask, unsigned long long mask, int flags, REAL fixed_lambda,
        // double factor, const unsigned long long* prefix, const int* rank,
        // const unsigned long long* below, REAL* medians, REAL* lam). Thread t < n_traces
        // writes lam[t·L + l - 1], l ≤ L, and only under the universal rule (medians present)
        // reads and writes medians[t·seg_levels + i] and reads the state at that segment,
        // i < seg_levels: lam and medians are checked above, the state holds
        // n_traces × seg_levels segments.
        unsafe { l.run() }
    }
}
