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
        // (n, the smallest 5-smooth length ≥ n): 0 rounds up to 1, smooth n stay.
        let cases = [
            (0, 1),
            (7, 8),
            (14, 15),
            (77, 80),
            (512, 512),
            (86400, 86400),
        ];
        for (n, want) in cases {
            assert_eq!(next_fast_len(n), want, "n = {n}");
        }
    }
}
