//! FFT lengths that rustfft and cuFFT transform fast.

/// The smallest 5-smooth number (2^a·3^b·5^c) ≥ n; SciPy's `next_fast_len`, which NoisePy
/// uses for its FFT length, picks the same.
pub fn next_fast_len(n: usize) -> usize {
    let mut m = n.max(1);
    loop {
        let mut r = m;
        for p in [2, 3, 5] {
            while r % p == 0 {
                r /= p;
            }
        }
        if r == 1 {
            return m;
        }
        m += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::next_fast_len;

    #[test]
    fn smooth_lengths() {
        assert_eq!(next_fast_len(0), 1);
        assert_eq!(next_fast_len(7), 8);
        assert_eq!(next_fast_len(14), 15);
        assert_eq!(next_fast_len(77), 80);
        assert_eq!(next_fast_len(512), 512);
        assert_eq!(next_fast_len(86400), 86400);
    }
}
