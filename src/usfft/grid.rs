//! The upsampled ("fine") grid and its tiling into bins.

use crate::fft_len::next_fast_len;

/// Fine-grid size of one dimension with `n` modes: smallest smooth ≥ max(σn, 2·width).
pub fn fine_size(n: usize, upsampling: f64, width: usize) -> usize {
    let want = ((upsampling * n as f64).ceil() as usize).max(2 * width);
    next_fast_len(want)
}

/// A tiling of the fine grid: `tile[d]` cells per bin along dimension d, `bins[d]` bins
/// (the last one may be partial). Unused dimensions have tile = bins = 1 and nf = 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    pub nf: [usize; 3],
    pub tile: [usize; 3],
    pub bins: [usize; 3],
}

impl Tiling {
    pub fn new(nf: [usize; 3], tile: [usize; 3]) -> Tiling {
        let mut bins = [1; 3];
        for d in 0..3 {
            bins[d] = nf[d].div_ceil(tile[d]);
        }
        Tiling { nf, tile, bins }
    }

    pub fn n_bins(&self) -> usize {
        self.bins.iter().product()
    }
}

/// The largest divisor of `nf` in [lo, hi], or `nf` itself when there is none (one tile
/// spans the dimension). Whole tiles let the CPU colour them without partial-tile cases.
pub fn dividing_tile(nf: usize, lo: usize, hi: usize) -> usize {
    if nf <= hi {
        return nf;
    }
    (lo.max(1)..=hi).rev().find(|t| nf % t == 0).unwrap_or(nf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_sizes() {
        assert_eq!(fine_size(1, 2.0, 7), 15);
        assert_eq!(fine_size(256, 2.0, 7), 512);
    }

    #[test]
    fn dividing_tiles() {
        assert_eq!(dividing_tile(512, 6, 16), 16);
        assert_eq!(dividing_tile(30, 6, 16), 15);
        assert_eq!(dividing_tile(12, 6, 16), 12);
        assert_eq!(dividing_tile(54, 15, 16), 54);
    }
}
