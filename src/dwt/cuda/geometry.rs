//! Geometry: a mirror of the constants and shared-memory layouts of kernels/dwt.cu, so that the
//! host asks for exactly the shared memory the kernels use (they trap on a mismatch).

use crate::dwt::wavelet::Wavelet;
use crate::sample::Sample;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Forward = 0,
    Inverse = 1,
    Denoise = 2,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Geometry {
    pub(super) vec: i64,
    sig_min: i64,
    sig_max: i64,
    nvf: i64,
    nvg: i64,
    hist_words: i64,
    pub(super) size: usize,
}

fn round_up(x: i64, a: i64) -> i64 {
    (x + a - 1) / a * a
}

impl Geometry {
    pub(super) fn new<T: Sample>(w: &Wavelet) -> Geometry {
        let size = std::mem::size_of::<T>();
        let vec = 16 / size as i64;
        let (nc, off) = (w.taps() as i64, w.offset as i64);
        let sig_min = (-off).div_euclid(2);
        let sig_max = (nc - 1 - off).div_euclid(2);
        let span = sig_max - sig_min;
        let shf = round_up(-sig_min, vec);
        let nvf = (sig_min + shf + vec + span + vec - 1) / vec;
        let shg = round_up(sig_max, vec);
        let nvg = (shg - sig_max + vec + span + vec - 1) / vec;
        let hist_ints = 256 + 32 + 8 + 4;
        let hist_words = round_up((hist_ints * 4 + size as i64 - 1) / size as i64, vec);
        Geometry {
            vec,
            sig_min,
            sig_max,
            nvf,
            nvg,
            hist_words,
            size,
        }
    }

    fn blf(&self, h: i64) -> i64 {
        if h > 0 {
            self.vec * ((h + self.vec - 1) / self.vec + self.nvf - 1)
        } else {
            0
        }
    }

    fn blg(&self, h: i64) -> i64 {
        if h > 0 {
            self.vec * ((h + self.vec - 1) / self.vec + self.nvg - 1)
        } else {
            0
        }
    }

    /// REALs per trace of a whole-trace kernel (`layout_of` in the kernel).
    pub(super) fn layout_words(&self, n: usize, levels: u32, kind: Kind) -> usize {
        let n = n as i64;
        let (h1, h2) = (n / 2, (n / 4).max(1));
        let (mut x0, mut x1) = (2 * self.blf(h1), 2 * self.blf(h2));
        let (mut d, mut a, mut lam) = (0, 0, 0);
        if kind != Kind::Forward {
            x0 = x0.max(self.blg(h1));
            x1 = x1.max(self.blg(h2));
            d = (1..=levels).map(|l| self.blg(n >> l)).sum();
            a = self.blg(n >> levels);
            lam = round_up(levels as i64, self.vec);
        }
        if kind == Kind::Denoise {
            x1 = x1.max(self.hist_words);
        }
        (x0 + x1 + d + a + lam) as usize
    }

    fn floor_vec(&self, x: i64) -> i64 {
        x & !(self.vec - 1)
    }

    /// First output and count of level k of a forward pass (`forward_range`).
    fn forward_range(&self, k: u32, levels: u32, b: i64, t: i64) -> (i64, i64) {
        let (mut lo, mut cnt) = (b * t, t);
        for _ in k..levels {
            let l2 = self.floor_vec(2 * lo + 2 * self.sig_min);
            let h2 = 2 * (lo + cnt) + 2 * self.sig_max;
            lo = l2;
            cnt = round_up(h2 - l2, self.vec);
        }
        (lo, cnt)
    }

    pub(super) fn tile_forward_words(&self, levels: u32, t: i64) -> usize {
        let window = |c: i64| self.vec * (c / self.vec + self.nvf);
        let c1 = self.forward_range(1, levels, 0, t).1;
        let c2 = if levels >= 2 {
            2 * window(self.forward_range(2, levels, 0, t).1)
        } else {
            0
        };
        (2 * window(c1) + c2) as usize
    }

    /// First sample pair and pair count of level k of an inverse pass (`inverse_range`).
    fn inverse_range(&self, k: u32, b: i64, t0: i64) -> (i64, i64) {
        let (mut p, mut c) = (b * (t0 / 2), t0 / 2);
        for _ in 2..=k {
            let (jlo, jhi) = (p - self.sig_max, p + c - self.sig_min);
            let plo = self.floor_vec(jlo.div_euclid(2));
            let phi = (jhi + 1) >> 1;
            p = plo;
            c = round_up(phi - plo, self.vec);
        }
        (p, c)
    }

    pub(super) fn tile_inverse_words(&self, levels: u32, t0: i64) -> usize {
        let window = |c: i64| self.vec * (c / self.vec + self.nvg);
        let (mut d, mut y0, mut y1) = (0, 0, 0);
        for k in 1..=levels {
            let bl = window(self.inverse_range(k, 0, t0).1);
            d += bl;
            if k < levels {
                if (k + 1) % 2 == 0 {
                    y0 = y0.max(bl);
                } else {
                    y1 = y1.max(bl);
                }
            }
        }
        (window(self.inverse_range(levels, 0, t0).1) + y0 + y1 + d) as usize
    }
}
