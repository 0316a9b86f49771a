//! Station pairs and their order in the output.
//!
//! A block correlates stations [i0, i0 + ni) against [j0, j0 + nj). Either the two
//! ranges are the same (a diagonal block: pairs i < j, or i ≤ j with autocorrelations,
//! in row-major order: (i0, i0+1), (i0, i0+2), …, (i0+1, i0+2), …) or the first ends
//! before the second starts (an off-diagonal block: all ni·nj pairs, p = (i − i0)·nj +
//! (j − j0)). The whole correlation of n stations is the diagonal block (0, n, 0, n); a
//! caller splitting the work (MPI ranks, several GPUs) hands out diagonal and
//! off-diagonal blocks that together cover the upper triangle.

use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub i0: usize,
    pub ni: usize,
    pub j0: usize,
    pub nj: usize,
    pub autocorrelation: bool,
}

impl Block {
    pub fn new(
        i0: usize,
        ni: usize,
        j0: usize,
        nj: usize,
        n_stations: usize,
        autocorrelation: bool,
    ) -> Result<Block> {
        let end = |s: usize, n: usize| s.checked_add(n).filter(|&e| e <= n_stations);
        if ni == 0 || nj == 0 || end(i0, ni).is_none() || end(j0, nj).is_none() {
            return Err(crate::invalid!(
                "block [{i0}, {i0}+{ni}) × [{j0}, {j0}+{nj}) is empty or reaches past the {n_stations} stations"
            ));
        }
        let diagonal = i0 == j0 && ni == nj;
        if !diagonal && i0 + ni > j0 {
            return Err(crate::invalid!(
                "block [{i0}, {}) × [{j0}, {}): the ranges must be equal (a diagonal block) or the first must end before the second starts",
                i0 + ni,
                j0 + nj
            ));
        }
        let block = Block {
            i0,
            ni,
            j0,
            nj,
            autocorrelation: autocorrelation && diagonal,
        };
        // Pair indices (and the row arithmetic, ni·nj) are size_t: a larger block cannot
        // be addressed.
        if ni.checked_mul(nj).is_none() {
            return Err(crate::invalid!(
                "block of {ni} × {nj} stations: its pair indices overflow size_t"
            ));
        }
        Ok(block)
    }

    pub fn is_diagonal(&self) -> bool {
        self.i0 == self.j0 && self.ni == self.nj
    }

    pub fn n_pairs(&self) -> usize {
        if self.is_diagonal() {
            let n = self.ni;
            n * (n - 1) / 2 + if self.autocorrelation { n } else { 0 }
        } else {
            self.ni * self.nj
        }
    }

    /// First pair index of local row `a` (station i0 + a) and its first column.
    fn row_start(&self, a: usize) -> (usize, usize) {
        if !self.is_diagonal() {
            return (a * self.nj, 0);
        }
        let n = self.ni;
        if self.autocorrelation {
            (a * n - a * a.saturating_sub(1) / 2, a)
        } else {
            (a * n - a * (a + 1) / 2, a + 1)
        }
    }

    /// The output index of pair (i, j) (global station numbers), if the block holds it.
    pub fn index(&self, i: usize, j: usize) -> Option<usize> {
        let a = i.checked_sub(self.i0).filter(|&a| a < self.ni)?;
        let b = j.checked_sub(self.j0).filter(|&b| b < self.nj)?;
        let (start, first) = self.row_start(a);
        (b >= first).then(|| start + b - first)
    }

    /// Pair `p` (global station numbers), found without listing the pairs before it.
    pub fn pair(&self, p: usize) -> Option<(usize, usize)> {
        if p >= self.n_pairs() {
            return None;
        }
        // Rows hold pairs in order: the last row whose first pair index is ≤ p (bisection).
        let (mut lo, mut hi) = (0, self.ni);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.row_start(mid).0 <= p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (start, first) = self.row_start(lo);
        Some((self.i0 + lo, self.j0 + first + (p - start)))
    }

    /// Every pair (i, j), global station numbers, in output order.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::with_capacity(self.n_pairs());
        for a in 0..self.ni {
            let (i, js) = self.row(a);
            v.extend(js.map(|j| (i, j)));
        }
        v
    }

    /// Local row `a`'s pairs, consecutive in output order: station i0 + a against the
    /// stations `js` (global numbers).
    pub fn row(&self, a: usize) -> (usize, std::ops::Range<usize>) {
        let (_, first) = self.row_start(a);
        (self.i0 + a, self.j0 + first..self.j0 + self.nj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_pairs_agree_in_every_kind_of_block() {
        for (i0, ni, j0, nj, auto) in [
            (0, 5, 0, 5, false),
            (0, 5, 0, 5, true),
            (2, 3, 2, 3, true),
            (0, 2, 3, 4, false),
            (0, 1, 0, 1, false),
        ] {
            let b = Block::new(i0, ni, j0, nj, 7, auto).unwrap();
            let pairs = b.pairs();
            assert_eq!(pairs.len(), b.n_pairs());
            for (p, &ij) in pairs.iter().enumerate() {
                assert_eq!(b.pair(p), Some(ij));
            }
            assert_eq!(b.pair(pairs.len()), None);
            for (p, &(i, j)) in pairs.iter().enumerate() {
                assert_eq!(b.index(i, j), Some(p));
                assert!(if auto { i <= j } else { i < j });
            }
        }
        assert!(Block::new(0, 3, 2, 3, 7, false).is_err());
        assert!(Block::new(0, 3, 0, 9, 7, false).is_err());
    }
}
