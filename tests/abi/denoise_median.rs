//! σ = median(|d|)/0.6745, where the median of an even count of coefficients is the mean of
//! the two middle values (as NumPy's `median`), pinned through `sg_dwt_denoise_f64` on Haar
//! transforms small enough to follow by hand: the thresholds it returns are the universal
//! threshold of that σ, not of the lower or the upper middle value.

use crate::common;

use common::*;
use seisgpu::ffi::dwt::*;

const MAD_TO_SIGMA: f64 = 0.6745;

/// The thresholds `sg_dwt_denoise_f64` reports for one trace.
fn thresholds(x: &[f64], noise_estimate: i32) -> Vec<f64> {
    let n = x.len();
    let ctx = Ctx::cpu();
    let plan = ctx.plan(SG_WAVELET_HAAR, 2, n);
    let mut options = sg_dwt_denoise_options_default();
    options.noise_estimate = noise_estimate;
    let mut y = vec![0.0; n];
    let mut t = vec![f64::NAN; n.trailing_zeros() as usize];
    ok(sg_dwt_denoise_f64(
        plan.0,
        &options,
        x.as_ptr(),
        y.as_mut_ptr(),
        1,
        n,
        t.as_mut_ptr(),
    ));
    t
}

fn universal(median: f64, n: usize) -> f64 {
    median / MAD_TO_SIGMA * (2.0 * (n as f64).ln()).sqrt()
}

#[track_caller]
fn assert_rel(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-13 * want.abs(),
        "{what}: threshold {got}, want {want}"
    );
}

#[test]
fn the_median_of_an_even_count_is_the_mean_of_the_two_middle_values() {
    // Haar level 1: d[i] = (x[2i] − x[2i+1])/√2, so |d| = (4, 1, 3, 2)/√2: four values,
    // middle pair 2/√2 and 3/√2, median 2.5/√2 (not 2/√2 or 3/√2).
    let r = std::f64::consts::FRAC_1_SQRT_2;
    let x = [4.0, 0.0, 1.0, 0.0, 3.0, 0.0, 2.0, 0.0];
    let t = thresholds(&x, SG_NOISE_FINEST_LEVEL);
    let want = universal(2.5 * r, 8);
    for (j, &tj) in t.iter().enumerate() {
        assert_rel(tj, want, &format!("finest-level σ, level {}", j + 1));
    }
    for wrong in [2.0 * r, 3.0 * r] {
        assert!((t[0] - universal(wrong, 8)).abs() > 0.1 * want);
    }

    // Per level: level 2 has two coefficients, (a₀ − a₁)/√2 and (a₂ − a₃)/√2 from the
    // level-1 approximations a = (4, 1, 3, 2)/√2, i.e. 1.5 and 0.5: median 1.0. Level 3
    // has one, (a'₀ − a'₁)/√2 with a' = (5, 5)/2: 0 — an odd count is its middle value.
    let t = thresholds(&x, SG_NOISE_PER_LEVEL);
    assert_rel(t[0], want, "per-level σ, level 1 (four values)");
    assert_rel(t[1], universal(1.0, 8), "per-level σ, level 2 (two values)");
    assert!(t[2].abs() < 1e-15, "level 3 (one value, 0): {}", t[2]);

    // Eight values (n = 16): |d₁| = k/√2 for k = 1..8 shuffled, median 4.5/√2.
    let x: Vec<f64> = [3.0, 8.0, 1.0, 6.0, 5.0, 2.0, 7.0, 4.0]
        .iter()
        .flat_map(|&k| [k, 0.0])
        .collect();
    let t = thresholds(&x, SG_NOISE_FINEST_LEVEL);
    assert_rel(t[0], universal(4.5 * r, 16), "eight values");
}
