//! Deterministic pseudo-random numbers for the benches' inputs (same input every run,
//! in any thread order).

/// SplitMix64: advances `state`, returns the next 64 random bits.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 53 random bits as a float in [0, 1).
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Element `i` of the uniform [0, 1) stream `seed`, without state.
pub fn uniform(seed: u64, i: usize) -> f64 {
    let mut s = seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407);
    unit(splitmix64(&mut s))
}
