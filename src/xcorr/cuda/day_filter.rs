//! The zero-phase Butterworth day filter on the GPU: each day cut into segments of
//! `FILTER_SEGMENT` samples, each filtered by a thread of its own from the state the
//! segments before it leave (kernels/xcorr.cu, `xc_filter_*`), forward then backward; then
//! each day's std. One thread a day left most of the GPU idle (62 ms for 1,000 days of
//! 86,400 samples on an H200).

use super::kit::Kit;
use super::tables::FILTER_SEGMENT;
use crate::backend::cuda::array::{part, part_mut, DeviceArray, Part, PartMut};
use crate::backend::cuda::launch::{for_elems, for_elems_in_blocks_of, Launch};
use crate::backend::cuda::workspace::Work;
use crate::error::Result;

/// Segments of a day of `n` samples.
fn segments(n: usize) -> usize {
    n.div_ceil(FILTER_SEGMENT).max(1)
}

/// Device bytes of filter work per day of `n` samples with `sections` sections.
pub(super) fn bytes_per_day(n: usize, sections: usize) -> usize {
    segments(n) * (2 * sections + 2) * 8
}

/// The filter's work arrays for `days` days of `n` samples: each segment's state and its
/// two sums.
pub(super) struct FilterWork<'w> {
    states: Work<'w, f64>,
    sums: Work<'w, f64>,
}

impl<'w> FilterWork<'w> {
    pub(super) fn new(kit: &'w Kit, days: usize, n: usize, sections: usize) -> Result<Self> {
        let threads = days * segments(n);
        let what = "allocating the day filter's states";
        Ok(FilterWork {
            states: kit.take((threads * 2 * sections).max(1), what)?,
            sums: kit.take(2 * threads, what)?,
        })
    }
}

/// The days of a chunk: `c` of `n` samples in `day`, their std to `day_std`.
pub(super) struct Days<'a, 'b> {
    pub(super) day: &'a mut PartMut<'b, f32>,
    pub(super) day_std: &'a mut PartMut<'b, f64>,
    pub(super) c: usize,
    pub(super) n: usize,
}

/// The arguments a pass's segment kernels end with: days, samples, the segment length,
/// segments, sections, the filter table and the direction.
fn pass_args(
    l: &mut Launch,
    (c, n, n_seg): (usize, usize, usize),
    (sections, table): (usize, &Part<f64>),
    reverse: i32,
) {
    l.scalar(c as i32)
        .scalar(n as i64)
        .scalar(FILTER_SEGMENT as i32)
        .scalar(n_seg as i32)
        .scalar(sections as i32)
        .input(table)
        .scalar(reverse);
}

/// Filters the days in place, forward then backward, with `sections` sections of `table`
/// (`plan_tables`), and writes each day's std (of the filtered samples as stored).
pub(super) fn filter_days(
    kit: &Kit,
    days: Days,
    (sections, table): (usize, &Part<f64>),
    work: &mut FilterWork,
) -> Result<()> {
    let (c, n) = (days.c, days.n);
    let n_seg = segments(n);
    let threads = c * n_seg;
    let mut states = part_mut(&mut work.states, 0, (threads * 2 * sections).max(1));
    let mut sums = part_mut(&mut work.sums, 0, 2 * threads);
    let transition = part(table, 5 * sections, table.len() - 5 * sections);
    for reverse in [0i32, 1] {
        if sections > 0 {
            let mut l = kit.launch("xc_filter_states", for_elems(threads))?;
            l.input(&*days.day).output(&mut states);
            pass_args(&mut l, (c, n, n_seg), (sections, table), reverse);
            // SAFETY: xc_filter_states(const float* day, double* states, int n_days, i64 n,
            // int seg, int n_seg, int n_sections, const double* sos, int reverse): thread
            // id < c·n_seg (the others return) reads day[(id / n_seg)·n + t] for t < n,
            // inside day's c·n part, and writes states[id·2·sections ..] (2·sections
            // values), inside its threads·2·sections part; it reads 5·sections ≤ 50 table
            // values (Options::validate allows at most 10 sections).
            unsafe { l.run() }?;
            let mut l = kit.launch("xc_filter_carry", for_elems_in_blocks_of(c, 64))?;
            l.output(&mut states)
                .scalar(c as i32)
                .scalar(n_seg as i32)
                .scalar(sections as i32)
                .input(&transition);
            // SAFETY: xc_filter_carry(double* states, int n_days, int n_seg, int n_sections,
            // const double* m): thread d < c (the others return) touches states[(d·n_seg + k)
            // ·2·sections ..] for k < n_seg, inside the threads·2·sections part, and reads
            // (2·sections)² values of m, the table past its sections (plan_tables).
            unsafe { l.run() }?;
        }
        if sections == 0 && reverse == 0 {
            continue;
        }
        let sums_out = (reverse == 1).then_some(&mut sums);
        let mut l = kit.launch("xc_filter_apply", for_elems(threads))?;
        l.output(&mut *days.day)
            .input(&states)
            .optional_output(sums_out);
        pass_args(&mut l, (c, n, n_seg), (sections, table), reverse);
        // SAFETY: xc_filter_apply(float* day, const double* states, double* sums, int n_days,
        // i64 n, int seg, int n_seg, int n_sections, const double* sos, int reverse): thread
        // id < c·n_seg touches day[(id / n_seg)·n + t] for t < n (c·n part), reads
        // states[id·2·sections ..] (read only with sections, then inside its part) and 5 table
        // values a section, and writes sums[2·id], sums[2·id + 1] (null on the forward
        // pass), inside the 2·threads part.
        unsafe { l.run() }?;
    }
    let mut l = kit.launch("xc_filter_std", for_elems_in_blocks_of(c, 64))?;
    l.input(&sums)
        .output(&mut *days.day_std)
        .scalar(c as i32)
        .scalar(n as i64)
        .scalar(n_seg as i32);
    // SAFETY: xc_filter_std(const double* sums, double* day_std, int n_days, i64 n,
    // int n_seg): thread d < c reads sums[2·(d·n_seg + k) ..] for k < n_seg, inside the
    // 2·threads part, and writes day_std[d], inside its c part.
    unsafe { l.run() }
}
