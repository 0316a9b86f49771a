//! The zero-phase Butterworth bandpass of NoisePy's preprocessing (ObsPy's
//! `bandpass(..., corners, zerophase=True)`): SciPy's `iirfilter` design (analog
//! prototype, band transform, bilinear transform with prewarping) as second-order
//! sections, run forward then backward over the day with zero initial state.
//!
//! Each section is (1 − z⁻²)/(1 + a1 z⁻¹ + a2 z⁻²): one zero at z = 1 and one at z = −1
//! per conjugate pole pair, the gain on the first section. The sections are grouped
//! differently from SciPy's `zpk2sos`; the filter is the same up to rounding.

use num_complex::Complex64;

/// One second-order section: y = b0·x + b1·x₋₁ + b2·x₋₂ − a1·y₋₁ − a2·y₋₂.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Section {
    pub b: [f64; 3],
    pub a: [f64; 2],
}

/// The bandpass corners NoisePy's preprocess_raw uses for freqmin/freqmax at `fs`:
/// 0.9·freqmin and 1.1·freqmax, or 0.45·fs when 1.1·freqmax is above it.
pub fn noisepy_corners(freqmin: f64, freqmax: f64, fs: f64) -> (f64, f64) {
    let f4 = if 1.1 * freqmax > 0.45 * fs {
        0.45 * fs
    } else {
        1.1 * freqmax
    };
    (0.9 * freqmin, f4)
}

/// `corners`-order Butterworth bandpass from `f_low` to `f_high` Hz at `fs`, as
/// `corners` sections.
pub fn bandpass(corners: u32, f_low: f64, f_high: f64, fs: f64) -> Vec<Section> {
    let n = corners as usize;
    // Prewarped edges (SciPy: fs = 2 for normalised frequencies).
    let warp = |f: f64| 4.0 * (std::f64::consts::PI * (f / (fs / 2.0)) / 2.0).tan();
    let (w1, w2) = (warp(f_low), warp(f_high));
    let bw = w2 - w1;
    let wo = (w1 * w2).sqrt();
    // Analog Butterworth prototype poles, then lowpass → bandpass.
    let mut poles = Vec::with_capacity(2 * n);
    for m in 0..n {
        let k = -(n as f64) + 1.0 + 2.0 * m as f64;
        let p = -Complex64::from_polar(1.0, std::f64::consts::PI * k / (2.0 * n as f64));
        let pl = p * (bw / 2.0);
        let root = (pl * pl - wo * wo).sqrt();
        poles.push(pl + root);
        poles.push(pl - root);
    }
    // Bilinear transform (2·fs = 4): zeros at s = 0 → z = 1, at ∞ → z = −1.
    let fs2 = 4.0;
    let zpoles: Vec<Complex64> = poles.iter().map(|p| (fs2 + p) / (fs2 - p)).collect();
    let mut denom = Complex64::new(1.0, 0.0);
    for p in &poles {
        denom *= fs2 - p;
    }
    let gain = bw.powi(n as i32) * (fs2.powi(n as i32) / denom).re;
    // One section per pole with positive imaginary part (with its conjugate). An odd
    // order's real prototype pole becomes, for a band wider than its centre frequency,
    // two real poles: they share one section.
    let real = |p: &Complex64| p.im.abs() <= 1e-12 * p.norm();
    let mut upper: Vec<Complex64> = zpoles
        .iter()
        .copied()
        .filter(|p| !real(p) && p.im > 0.0)
        .collect();
    upper.sort_by(|a, b| a.norm().total_cmp(&b.norm()));
    let mut denominators: Vec<[f64; 2]> =
        upper.iter().map(|p| [-2.0 * p.re, p.norm_sqr()]).collect();
    let reals: Vec<f64> = zpoles.iter().filter(|p| real(p)).map(|p| p.re).collect();
    denominators.extend(reals.chunks(2).map(|r| [-(r[0] + r[1]), r[0] * r[1]]));
    assert_eq!(
        denominators.len(),
        n,
        "Butterworth bandpass poles come in conjugate or real pairs"
    );
    denominators
        .into_iter()
        .enumerate()
        .map(|(s, a)| {
            let g = if s == 0 { gain } else { 1.0 };
            Section { b: [g, 0.0, -g], a }
        })
        .collect()
}

/// One sample `y` through the cascade, direct form II transposed: each section's state
/// (z0, z1) in `state`. Returns the output.
pub fn cascade_step(sections: &[Section], state: &mut [[f64; 2]], mut y: f64) -> f64 {
    for (s, z) in sections.iter().zip(state.iter_mut()) {
        let out = s.b[0] * y + z[0];
        z[0] = s.b[1] * y - s.a[0] * out + z[1];
        z[1] = s.b[2] * y - s.a[1] * out;
        y = out;
    }
    y
}

/// Runs the sections over `x` in place, direct form II transposed, zero initial state.
fn run(sections: &[Section], x: &mut [f64], reverse: bool) {
    let mut state = vec![[0.0f64; 2]; sections.len()];
    let mut step = |v: &mut f64| *v = cascade_step(sections, &mut state, *v);
    if reverse {
        x.iter_mut().rev().for_each(&mut step);
    } else {
        x.iter_mut().for_each(&mut step);
    }
}

/// Forward then backward pass (ObsPy's zerophase=True).
pub fn filter_zero_phase(sections: &[Section], x: &mut [f64]) {
    run(sections, x, false);
    run(sections, x, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |H(e^{iω})| of the cascade.
    fn gain_at(sections: &[Section], f: f64, fs: f64) -> f64 {
        let z = Complex64::from_polar(1.0, -std::f64::consts::TAU * f / fs);
        sections
            .iter()
            .map(|s| {
                let num = s.b[0] + s.b[1] * z + s.b[2] * z * z;
                let den = 1.0 + s.a[0] * z + s.a[1] * z * z;
                (num / den).norm()
            })
            .product()
    }

    #[test]
    fn butterworth_gain_is_half_power_at_the_corners_and_flat_between() {
        let fs = 1.0;
        let s = bandpass(4, 0.045, 0.44, fs);
        assert_eq!(s.len(), 4);
        for f in [0.045, 0.44] {
            let g = gain_at(&s, f, fs);
            assert!((g - 0.5f64.sqrt()).abs() < 1e-9, "gain {g} at corner {f}");
        }
        // Unit gain at the centre of the prewarped band, mapped back to Hz.
        let warp = |f: f64| (std::f64::consts::PI * f / fs).tan();
        let centre = fs / std::f64::consts::PI * (warp(0.045) * warp(0.44)).sqrt().atan();
        assert!((gain_at(&s, centre, fs) - 1.0).abs() < 1e-9);
        assert!(gain_at(&s, 0.0, fs) < 1e-12 && gain_at(&s, 0.5, fs) < 1e-12);
        // Poles inside the unit circle: stable.
        assert!(s.iter().all(|x| x.a[1] < 1.0));
    }

    /// Odd orders, narrow and wide bands (a wide one turns the real prototype pole into
    /// two real poles; found by the ABI fuzzer, where it panicked).
    #[test]
    fn odd_orders_are_half_power_at_the_corners() {
        for corners in [1, 3, 5] {
            for (lo, hi) in [(0.45, 4.4), (0.45, 2.2), (0.045, 0.44), (1.0, 1.5)] {
                let fs = 10.0;
                let s = bandpass(corners, lo, hi, fs);
                assert_eq!(s.len(), corners as usize);
                for f in [lo, hi] {
                    let g = gain_at(&s, f, fs);
                    assert!(
                        (g - 0.5f64.sqrt()).abs() < 1e-9,
                        "order {corners}, band {lo}–{hi}: gain {g} at {f}"
                    );
                }
                assert!(gain_at(&s, 0.0, fs) < 1e-12 && gain_at(&s, fs / 2.0, fs) < 1e-12);
                assert!(
                    s.iter().all(|x| x.a[1] < 1.0 && x.a[1] > -1.0),
                    "unstable: {s:?}"
                );
            }
        }
    }

    #[test]
    fn zero_phase_filter_has_squared_gain_and_no_delay() {
        // A sinusoid in the middle of a long record comes out scaled by |H|² and unshifted.
        let (fs, f) = (1.0, 0.2);
        let s = bandpass(4, 0.045, 0.25, fs);
        let n = 20000;
        let mut x: Vec<f64> = (0..n)
            .map(|i| (std::f64::consts::TAU * f * i as f64 / fs).sin())
            .collect();
        filter_zero_phase(&s, &mut x);
        let g2 = gain_at(&s, f, fs).powi(2);
        for (i, &v) in x.iter().enumerate().take(11000).skip(9000) {
            let want = g2 * (std::f64::consts::TAU * f * i as f64 / fs).sin();
            assert!((v - want).abs() < 1e-6, "sample {i}: {v} vs {want}");
        }
    }
}
