//! Host-to-host calls stage the coefficients straight between the caller's array (box
//! order) and the work array (work order: boxes grouped by shape), each box one contiguous
//! run in both: the host's copies through the page-locked pieces do the reordering, so no
//! device array of the coefficients in box order is needed (4.5 GB at 256³ in f32).

/// Reals a copy task takes at the most (a large box is cut into several).
const SLICE: usize = 1 << 16;

/// Each box's coefficients in work order: (first work element, first coefficient, count),
/// complex elements.
pub(super) struct BoxRuns(Vec<(usize, usize, usize)>);

impl BoxRuns {
    /// From the box table (BOX_FIELDS per box in work order: F_WORK, F_COEFF, then the
    /// shape at F_N1..F_N3).
    pub(super) fn new(table: &[i64], fields: usize) -> BoxRuns {
        BoxRuns(
            table
                .chunks_exact(fields)
                .map(|b| (b[0] as usize, b[1] as usize, (b[5] * b[6] * b[7]) as usize))
                .collect(),
        )
    }

    /// The work array's reals `at..at + len` (a staged piece) as runs of at most SLICE
    /// reals: (offset in the caller's coefficients, offset in the piece, length), in reals,
    /// in work order.
    pub(super) fn runs(&self, at: usize, len: usize) -> Vec<(usize, usize, usize)> {
        let first = self.0.partition_point(|&(w, _, n)| 2 * (w + n) <= at);
        let mut out = Vec::new();
        for &(w, c, n) in &self.0[first..] {
            let (w, c, n) = (2 * w, 2 * c, 2 * n);
            if w >= at + len {
                break;
            }
            let (mut e, end) = (w.max(at), (w + n).min(at + len));
            while e < end {
                let l = (end - e).min(SLICE);
                out.push((c + e - w, e - at, l));
                e += l;
            }
        }
        out
    }

    /// `runs` in the order of the caller's coefficients (for copies into them).
    pub(super) fn runs_by_coefficient(&self, at: usize, len: usize) -> Vec<(usize, usize, usize)> {
        let mut runs = self.runs(at, len);
        runs.sort_unstable_by_key(|r| r.0);
        runs
    }

    /// The coefficient (box order) at work element `w`.
    pub(super) fn coefficient_of(&self, w: usize) -> usize {
        let k = self.0.partition_point(|&(start, _, _)| start <= w) - 1;
        let (start, c, _) = self.0[k];
        c + w - start
    }
}

#[cfg(test)]
mod tests {
    use super::BoxRuns;

    #[test]
    fn runs_map_work_order_to_box_order() {
        // Two boxes: box 1 (3 × 1 × 1) first in work order, then box 0 (2 × 2 × 1).
        let mut table = vec![0i64; 24];
        table[..8].copy_from_slice(&[0, 4, 0, 0, 0, 3, 1, 1]);
        table[12..20].copy_from_slice(&[3, 0, 0, 0, 0, 2, 2, 1]);
        let runs = BoxRuns::new(&table, 12);
        // Reals 4..10 of the work array: the last complex of box 1, then 2 of box 0.
        assert_eq!(runs.runs(4, 6), vec![(12, 0, 2), (0, 2, 4)]);
        assert_eq!(runs.coefficient_of(2), 6);
        assert_eq!(runs.coefficient_of(4), 1);
        assert_eq!(runs.runs_by_coefficient(4, 6), vec![(0, 2, 4), (12, 0, 2)]);
    }
}
