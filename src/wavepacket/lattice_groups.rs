//! The lattices in groups of directions, whose lattice values a device plan holds one group
//! at a time: a memory cap's trade of speed for memory (`footprint::within_cap`). One group
//! is the whole layout.

use super::layout::Layout;
use crate::usfft::points::MAX_POINTS;
use std::ops::Range;

/// Consecutive lattices and their points (as numbered in the layout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatticeGroup {
    pub lattices: Range<usize>,
    pub points: Range<usize>,
}

/// The layout's lattices in `count` consecutive groups (at most one a lattice, at least
/// one) of about equal points: each group ends at the first lattice that reaches its share.
pub fn split(layout: &Layout, count: usize) -> Vec<LatticeGroup> {
    let n = layout.lattices.len();
    let count = count.clamp(1, n.max(1));
    let total = layout.n_points;
    let mut groups = Vec::with_capacity(count);
    let (mut first, mut at) = (0, 0);
    for (l, lattice) in layout.lattices.iter().enumerate() {
        at += lattice.n_points();
        let k = groups.len() + 1;
        // Leave at least one lattice for each group still to come.
        let share = at as u128 * count as u128 >= total as u128 * k as u128;
        if k < count && (share || n - l - 1 == count - k) {
            groups.push(group(layout, first..l + 1));
            first = l + 1;
        }
    }
    groups.push(group(layout, first..n));
    groups
}

/// The fewest groups whose points one USFFT plan numbers (`MAX_POINTS` a group), with at
/// most one lattice a group: a layout of more points is held in groups even without a cap.
pub fn fewest(layout: &Layout) -> usize {
    let lattices = layout.lattices.len().max(1);
    let mut count = layout.n_points.div_ceil(MAX_POINTS).max(1);
    while count < lattices
        && split(layout, count)
            .iter()
            .any(|g| g.points.len() > MAX_POINTS)
    {
        count += 1;
    }
    count
}

fn group(layout: &Layout, lattices: Range<usize>) -> LatticeGroup {
    let at = |l: usize| {
        layout
            .lattices
            .get(l)
            .map_or(layout.n_points, |x| x.point_offset)
    };
    LatticeGroup {
        points: at(lattices.start)..at(lattices.end),
        lattices,
    }
}

/// The group of each lattice.
pub fn of_lattices(groups: &[LatticeGroup]) -> Vec<usize> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(g, x)| x.lattices.clone().map(move |_| g))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wavepacket::layout::LayoutOptions;

    #[test]
    fn groups_cover_every_lattice_once_with_balanced_points() {
        let layout = Layout::for_tests(&[24, 20, 22], 26, 2);
        let n = layout.lattices.len();
        for count in [1, 2, 3, 5, n, n + 4] {
            let groups = split(&layout, count);
            assert_eq!(groups.len(), count.min(n), "{count}");
            assert_eq!(groups[0].lattices.start, 0);
            assert_eq!(groups.last().unwrap().lattices.end, n);
            assert_eq!(groups.last().unwrap().points.end, layout.n_points);
            for w in groups.windows(2) {
                assert_eq!(w[0].lattices.end, w[1].lattices.start);
                assert_eq!(w[0].points.end, w[1].points.start);
            }
            assert!(groups.iter().all(|g| !g.lattices.is_empty()));
            let most = groups.iter().map(|g| g.points.len()).max().unwrap();
            let largest = layout.lattices.iter().map(|l| l.n_points()).max().unwrap();
            assert!(
                most <= layout.n_points / groups.len() + largest,
                "{count}: {most}"
            );
            assert_eq!(of_lattices(&groups).len(), n);
        }
    }

    #[test]
    fn a_layout_of_more_points_than_a_plan_numbers_takes_the_fewest_groups_that_fit() {
        let small = Layout::new(3, &[24, 20, 22], &LayoutOptions::default()).unwrap();
        assert_eq!(fewest(&small), 1);
        // 256 × 512 × 512 at 350 directions, 5 levels, cutoff 0.2: 2.25e9 lattice points.
        let opts = LayoutOptions {
            directions: 350,
            levels: 5,
            cutoff: 0.2,
            ..Default::default()
        };
        let big = Layout::new(3, &[256, 512, 512], &opts).unwrap();
        assert!(big.n_points > MAX_POINTS, "{}", big.n_points);
        let count = fewest(&big);
        let groups = split(&big, count);
        assert!(groups.iter().all(|g| g.points.len() <= MAX_POINTS));
        let one_fewer = split(&big, count - 1);
        assert!(one_fewer.iter().any(|g| g.points.len() > MAX_POINTS));
        assert_eq!(count, 2);
    }
}
