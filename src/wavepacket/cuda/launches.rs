//! The box stage's kernels (`kernels/wavepacket.cu`), one function each. Complex arrays
//! are interleaved reals; the element-wise kernels stride over their elements from at most
//! 2^20 blocks.

use super::tables::GroupRows;
use super::{BoxStage, Shifts};
use crate::backend::cuda::array::{part, DeviceArray, DeviceArrayMut};
use crate::backend::cuda::buffers::{download, fill_bytes, upload};
use crate::backend::cuda::launch::{for_elems, Launch, THREADS};
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::Result;
use crate::sample::Real;
use cudarc::driver::LaunchConfig;

/// A thread per element of `n`, at most 2^20 blocks (the kernels stride over the rest).
pub(super) fn grid_stride(n: usize) -> LaunchConfig {
    let mut cfg = for_elems(n);
    cfg.grid_dim.0 = cfg.grid_dim.0.min(1 << 20);
    cfg
}

/// A shifted call's tables for `wp_gather` and `wp_scatter` (NULL for an unshifted one).
fn shift_arguments<T>(l: &mut Launch<'_>, shifts: Option<&Shifts<'_, T>>) {
    l.optional(shifts.map(|s| &s.at))
        .optional(shifts.map(|s| &s.factors));
}

/// A block per box for `n_boxes` boxes, at most 2^16 blocks (the kernels stride over the
/// rest), each block's threads over the box's coefficients.
fn box_blocks(n_boxes: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n_boxes.clamp(1, 1 << 16) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Where a device threshold stands: one value for every coefficient, or a scale of each
/// box's ‖ψ_b‖ (box by box).
#[derive(Clone, Copy, Debug)]
pub enum ThresholdAt {
    Value(f64),
    BoxNorms(f64),
}

impl<T: Real> BoxStage<T> {
    pub(super) fn launch(&self, kernel: &str, cfg: LaunchConfig) -> Result<Launch<'_>> {
        Launch::new(&self.module, &self.stream, kernel, cfg)
    }

    /// Between the data (n reals) and the USFFT's complex modes (2n reals):
    /// `wp_complex_from_real` from the data `src` into the type-2 USFFT's modes `dst`, or
    /// `wp_real_part` from the type-1 USFFT's modes `src` into the data `dst` (the adjoint's).
    pub(super) fn modes(
        &self,
        kernel: &str,
        src: &impl DeviceArray<T>,
        dst: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let n = self.layout.n_samples();
        let mut l = self.launch(kernel, grid_stride(n))?;
        l.input(src).output(dst).scalar(n as i64);
        // SAFETY: wp_complex_from_real(const REAL* data, cpx* modes, long long n) and
        // wp_real_part(const cpx* modes, REAL* data, long long n): the callers pass the data
        // and modes in the kernel's order. Element i < n touches data[i] (the data hold n:
        // checked by the callers) and modes[i] (the modes hold 2n reals).
        unsafe { l.run() }
    }

    /// The box phases applied to the work array in place (`conj`: their conjugates), as
    /// `phase` applies them on the way to or from the coefficients: host-to-host calls stage
    /// the coefficients from there (`box_order`).
    pub(super) fn phase_work(&self, work: &mut DeviceBuf<T>, conj: bool) -> Result<()> {
        let t = &self.tables;
        let mut l = self.launch("wp_phase_work", grid_stride(self.n_work))?;
        l.output(work)
            .input(&t.boxes.table)
            .input(&t.boxes.work_start);
        l.scalar(self.order.len() as i32).scalar(self.n_work as i64);
        l.input(&t.boxes.phase).scalar(conj as i32);
        // SAFETY: wp_phase_work(cpx* work, const long long* table, const long long*
        // work_start, int n_boxes, long long total, const cpx* phase, int conj): element
        // e < n_work of box j reads and writes work[e] (the stage's work array holds
        // 2·n_work reals) and reads the box's phase factors (n1 + n2 + n3 at its F_PHASE).
        unsafe { l.run() }
    }

    /// Forward, first half, for one group of directions: its boxes' work = window ·
    /// lattice value (· the box's grid shift), from the group's lattice values.
    pub(super) fn gather(
        &self,
        group: &GroupRows,
        values: &DeviceBuf<T>,
        work: &mut DeviceBuf<T>,
        shifts: Option<&Shifts<'_, T>>,
    ) -> Result<()> {
        let t = &self.tables;
        let elements = group.work.len();
        let mut l = self.launch("wp_gather", grid_stride(elements))?;
        l.input(values).input(&t.windows);
        l.input(&t.boxes.table).input(&t.boxes.work_start);
        l.scalar(self.order.len() as i32)
            .scalar(group.work.start as i64)
            .scalar(group.work.end as i64);
        shift_arguments(&mut l, shifts);
        l.output(work);
        // SAFETY: wp_gather(const cpx* values, const REAL* windows, const long long* table,
        // const long long* work_start, int n_boxes, long long first, long long end, const
        // long long* shift_at, const cpx* shift, cpx* work): element first ≤ e < end (the
        // group's, ≤ n_work) finds its box j < n_boxes in the table (BOX_FIELDS per box)
        // built with the layout and these groups, reads one lattice value inside its
        // lattice, numbered from the group's first point (values holds 2·(the largest
        // group's points) reals), one window value (the box's coefficients), its shift
        // factors where shift_at[j] ≥ 0 (shift tables made for this layout by
        // `shift_factors`: one entry per box in work order, each box's n1 + n2 + n3
        // factors; or NULL), and writes work[e] (work holds 2·n_work reals).
        unsafe { l.run() }
    }

    /// Between the work array (2·n_work reals) and the coefficients by the box phases:
    /// `wp_to_coefficients` (forward, after the box FFTs: coefficients = work · the box's
    /// phase) from `src` = work into `dst` = coefficients, or its transpose
    /// `wp_from_coefficients` (adjoint, before the box FFTs: work = coefficients · the
    /// conjugate phase) from `src` = coefficients into `dst` = work.
    pub(super) fn phase(
        &self,
        kernel: &str,
        src: &impl DeviceArray<T>,
        dst: &mut impl DeviceArrayMut<T>,
    ) -> Result<()> {
        let t = &self.tables;
        let mut l = self.launch(kernel, grid_stride(self.n_work))?;
        l.input(src)
            .input(&t.boxes.table)
            .input(&t.boxes.work_start);
        l.scalar(self.order.len() as i32).scalar(self.n_work as i64);
        l.input(&t.boxes.phase).output(dst);
        // SAFETY: wp_to_coefficients(const cpx* work, const long long* table, const long
        // long* work_start, int n_boxes, long long total, const cpx* phase, cpx* coeffs) and
        // wp_from_coefficients(const cpx* coeffs, … the same, cpx* work): the callers pass
        // the work and coefficient arrays in the kernel's order. Element e < n_work of box j
        // touches work[e] (2·n_work reals), the box's phase factors (n1 + n2 + n3 at its
        // F_PHASE) and coefficient F_COEFF + k of the box (the coefficients hold
        // 2·n_coefficients reals: checked by the callers).
        unsafe { l.run() }
    }

    /// Adjoint, second half, for one group of directions: each of its lattice values
    /// summed over its boxes, window · work (· the conjugate grid shift), by one thread (no
    /// atomics, a fixed order), into the group's values.
    pub(super) fn scatter(
        &self,
        group: &GroupRows,
        work: &DeviceBuf<T>,
        values: &mut DeviceBuf<T>,
        shifts: Option<&Shifts<'_, T>>,
    ) -> Result<()> {
        let t = &self.tables;
        let n_points = group.points.len();
        let (l0, n_lat) = (group.lattices.start, group.lattices.len());
        let mut l = self.launch("wp_scatter", grid_stride(n_points))?;
        let lat = &t.lattices;
        l.input(work).input(&t.windows).input(&t.boxes.table);
        l.input(&part(&lat.start, l0, n_lat))
            .input(&part(&lat.len, 2 * l0, 2 * n_lat));
        l.input(&part(&lat.first, l0, n_lat + 1)).input(&lat.boxes);
        l.scalar(n_lat as i32).scalar(n_points as i64);
        shift_arguments(&mut l, shifts);
        l.output(values);
        // SAFETY: wp_scatter(const cpx* work, const REAL* windows, const long long* table,
        // const long long* lat_start, const long long* lat_len, const int* lat_first, const
        // int* lat_boxes, int n_lattices, long long n_points, const long long* shift_at,
        // const cpx* shift, cpx* values): the group's point p < n_points (numbered from its
        // first) finds its lattice l < n_lattices among the group's (parts of the lattice
        // tables from its first lattice: n_lat starts, 2·n_lat lengths, n_lat + 1 list
        // offsets into the whole lat_boxes), reads the work and window values of the boxes
        // listed for l that hold it (tables built with the layout and these groups), their
        // shift factors as in wp_gather, and writes values[p] (values holds 2·(the largest
        // group's points) reals).
        unsafe { l.run() }
    }

    /// The index of the first non-finite value of `x` (an uploaded input), if any: checked
    /// on the device, where the values already are (one 8-byte read-back).
    pub(super) fn find_non_finite(
        &self,
        x: &impl DeviceArray<T>,
        first: &mut DeviceBuf<u64>,
    ) -> Result<Option<usize>> {
        let what = "checking the wave-packet input";
        fill_bytes(&self.stream, first, 0xff, what)?;
        let n = x.len();
        let mut l = self.launch("wp_first_non_finite", grid_stride(n))?;
        l.input(x).scalar(n as i64).output(first);
        // SAFETY: wp_first_non_finite(const REAL* x, long long n, unsigned long long*
        // first): element i < n reads x[i] (x holds n) and lowers the one flag.
        unsafe { l.run() }?;
        let mut found = [0u64];
        download(&self.stream, first, &mut found, what)?;
        Ok((found[0] != u64::MAX).then_some(found[0] as usize))
    }

    /// Zeroes every coefficient of the work array (phased, work order) above its box's
    /// threshold (`thresholds` by box index), in place. Returns the thresholds' device
    /// copy, which must live until the stream has run the kernel.
    pub(super) fn keep_below(
        &self,
        work: &mut DeviceBuf<T>,
        thresholds: &[f64],
    ) -> Result<DeviceBuf<f64>> {
        let by_work: Vec<f64> = self.order.iter().map(|&b| thresholds[b]).collect();
        let t = upload(
            &self.stream,
            &by_work,
            "uploading the wave-packet thresholds",
        )?;
        let mut l = self.launch("wp_keep_below", box_blocks(by_work.len()))?;
        l.output(work).input(&self.tables.boxes.table).input(&t);
        l.scalar(by_work.len() as i64);
        // SAFETY: wp_keep_below(cpx* work, const long long* table, const double* t, long
        // long n_boxes): blocks stride over the n_boxes boxes in work order (t holds one
        // threshold each, the table a row each), threads over each box's elements from its
        // F_WORK (the work array holds 2·n_work reals).
        unsafe { l.run() }?;
        Ok(t)
    }

    /// Thresholds the coefficients in place at `level` (hard, or soft with `soft`).
    pub(super) fn shrink(
        &self,
        coeffs: &mut impl DeviceArrayMut<T>,
        level: ThresholdAt,
        soft: bool,
    ) -> Result<()> {
        let (n, n_boxes) = (self.layout.n_coefficients, self.order.len());
        match level {
            ThresholdAt::Value(t) => {
                let mut l = self.launch("wp_shrink", grid_stride(n))?;
                l.output(coeffs).scalar(n as i64).scalar(t);
                l.scalar(soft as i32);
                // SAFETY: wp_shrink(cpx* coeffs, long long n, double t, int soft): element
                // i < n reads and writes coeffs[i] (coeffs holds 2n reals: checked by the
                // callers).
                unsafe { l.run() }
            }
            ThresholdAt::BoxNorms(scale) => {
                let t = &self.tables;
                let mut l = self.launch("wp_shrink_boxes", box_blocks(n_boxes))?;
                l.output(coeffs).input(&t.boxes.table).input(&t.norms);
                l.scalar(n_boxes as i64).scalar(scale).scalar(soft as i32);
                // SAFETY: wp_shrink_boxes(cpx* coeffs, const long long* table, const
                // double* norms, long long n_boxes, double scale, int soft): blocks stride
                // over the n_boxes boxes (a table row and a norm each), threads over each
                // box's coefficients (coeffs holds 2·n_coefficients reals: checked by the
                // callers).
                unsafe { l.run() }
            }
        }
    }
}
