//! The per-sample arithmetic of preprocessing, shared by the CPU backend and mirrored by
//! `kernels/xcorr.cu`: NoisePy's `preprocess_raw` on a station-day (detrend, tapers,
//! bandpass), `cut_trace_make_stat` and `noise_processing` on each window (max/std
//! statistic, demean, detrend, taper, time normalisation) and `whiten` on its spectrum.

use super::butterworth::{self, Section};
use super::geometry::Geometry;
use super::options::{FreqNorm, Options, TimeNorm};
use num_complex::{Complex32, Complex64};

/// Multiplies both ends of `x` by ObsPy's Hann taper of half-length `wlen`: the sides
/// of a symmetric Hann window of 2·wlen + 1 points (2·wlen when that is the length).
pub fn hann_taper(x: &mut [f64], wlen: usize) {
    let n = x.len();
    if wlen == 0 {
        return;
    }
    let m = if 2 * wlen == n {
        2 * wlen
    } else {
        2 * wlen + 1
    };
    let w = |k: usize| 0.5 - 0.5 * (std::f64::consts::TAU * k as f64 / (m - 1) as f64).cos();
    for k in 0..wlen {
        x[k] *= w(k);
        x[n - wlen + k] *= w(m - wlen + k);
    }
}

/// Removes the least-squares line (SciPy's detrend 'constant' then 'linear'; NoisePy's
/// QR detrend is the same fit).
pub fn detrend(x: &mut [f64]) {
    let n = x.len();
    if n == 0 {
        return;
    }
    let tm = (n as f64 - 1.0) / 2.0;
    let xm = x.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let t = i as f64 - tm;
        sxy += t * (v - xm);
        sxx += t * t;
    }
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    for (i, v) in x.iter_mut().enumerate() {
        *v -= xm + b * (i as f64 - tm);
    }
}

/// The day's half-lengths of NoisePy's two tapers: 5 % of the day, then 5 % capped at
/// 50 s (both also capped at half the day).
pub fn day_taper_lengths(n: usize, fs: f64) -> (usize, usize) {
    let p = (0.05 * n as f64) as usize;
    let half = n / 2;
    (p.min(half), p.min((50.0 * fs) as usize).min(half))
}

/// The Butterworth sections of the plan (empty when there is no bandpass).
pub fn day_filter(o: &Options) -> Vec<Section> {
    if o.bandpass_corners == 0 {
        return Vec::new();
    }
    let (lo, hi) = butterworth::noisepy_corners(o.freqmin, o.freqmax, o.sampling_rate);
    butterworth::bandpass(o.bandpass_corners, lo, hi, o.sampling_rate)
}

/// Preprocesses one station-day in place: gap samples zeroed, then (NoisePy's
/// preprocess_raw) detrend, the two tapers, and the zero-phase bandpass.
pub fn prepare_day(x: &mut [f64], valid: Option<&[u8]>, o: &Options, sections: &[Section]) {
    if let Some(valid) = valid {
        for (v, &ok) in x.iter_mut().zip(valid) {
            if ok == 0 {
                *v = 0.0;
            }
        }
    }
    if o.detrend_taper {
        detrend(x);
        let (w1, w2) = day_taper_lengths(x.len(), o.sampling_rate);
        hann_taper(x, w1);
        hann_taper(x, w2);
    }
    if !sections.is_empty() {
        butterworth::filter_zero_phase(sections, x);
    }
}

/// Population standard deviation (NumPy's `np.std`).
pub fn std_dev(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt()
}

/// NoisePy's `moving_ave(a, n)`: mean of `n` samples ending (n−1)/2 after each one
/// (rounded down), the ends extended with the first and last values.
pub fn moving_average(a: &[f64], n: usize, out: &mut [f64]) {
    let len = a.len() as isize;
    let back = ((n - 1) / 2) as isize;
    let at = |i: isize| a[i.clamp(0, len - 1) as usize];
    // Running sum over the clamped window [i + back − n + 1, i + back].
    let mut sum: f64 = (0..n as isize).map(|j| at(back - j)).sum();
    for i in 0..len {
        out[i as usize] = sum / n as f64;
        sum += at(i + 1 + back) - at(i + 1 + back - n as isize);
    }
}

/// Whether a window is kept: NoisePy keeps max|x|/std(day) < max_over_std and > 0
/// (and not NaN); a window touching a gap is rejected too.
pub fn window_kept(max_abs: f64, day_std: f64, max_over_std: f64, touches_gap: bool) -> bool {
    let r = max_abs / day_std;
    !touches_gap && r < max_over_std && r > 0.0
}

/// One window after the statistic: demean, detrend, taper, time normalisation, in place.
pub fn prepare_window(x: &mut [f64], g: &Geometry, o: &Options, scratch: &mut Vec<f64>) {
    detrend(x);
    hann_taper(x, g.taper_len);
    match o.time_norm {
        TimeNorm::None => {}
        TimeNorm::OneBit => x.iter_mut().for_each(|v| {
            *v = if *v > 0.0 {
                1.0
            } else if *v < 0.0 {
                -1.0
            } else {
                0.0
            }
        }),
        TimeNorm::RunningMean => {
            let abs: Vec<f64> = x.iter().map(|v| v.abs()).collect();
            scratch.resize(x.len(), 0.0);
            moving_average(&abs, o.smooth_n, scratch);
            for (v, m) in x.iter_mut().zip(scratch.iter()) {
                *v = if *m > 0.0 { *v / m } else { 0.0 };
            }
        }
    }
}

/// Whitening of one window's full spectrum (nfft bins), written as the stored band
/// `out` (geometry band bins), each multiplied by `keep` (0 for a rejected window).
/// NoisePy's whiten: zero outside [ix00, ix11); inside, divide by the running mean of
/// |S| over the band slice (or keep the phase only); cosine-squared tapers on
/// [ix00, ix0) and [ix1, ix11).
pub fn whiten(spec: &[Complex64], g: &Geometry, o: &Options, keep: f32, out: &mut [Complex32]) {
    let cast = |c: Complex64| Complex32::new(c.re as f32 * keep, c.im as f32 * keep);
    let store = &mut out[..g.band_len];
    if o.freq_norm == FreqNorm::None {
        for (k, v) in store.iter_mut().enumerate() {
            *v = cast(spec[g.band_start + k]);
        }
        return;
    }
    let (a, b) = (g.ix00, g.ix11);
    let band = &spec[a..b];
    let mut w: Vec<Complex64> = match o.freq_norm {
        FreqNorm::PhaseOnly => band
            .iter()
            .map(|c| Complex64::from_polar(1.0, c.arg()))
            .collect(),
        _ => {
            // |S| as √(re² + im²) (hypot's overflow care is not needed here, and is slow)
            let abs: Vec<f64> = band.iter().map(|c| c.norm_sqr().sqrt()).collect();
            let mut smooth = vec![0.0; abs.len()];
            moving_average(&abs, o.smoothspect_n, &mut smooth);
            band.iter()
                .zip(&smooth)
                .map(|(c, m)| {
                    if *m > 0.0 {
                        c / m
                    } else {
                        Complex64::default()
                    }
                })
                .collect()
        }
    };
    cos2_tapers(&mut w, g, |wv, f| *wv *= f);
    for (k, v) in store.iter_mut().enumerate() {
        *v = cast(w[g.band_start + k - a]);
    }
}

/// NoisePy's cosine-squared tapers on a band slice that starts at bin ix00:
/// cos²(linspace(π/2, π, ix0 − ix00)) on [ix00, ix0), cos²(linspace(0, π/2, ix11 − ix1))
/// on [ix1, ix11).
pub fn cos2_tapers<T>(w: &mut [T], g: &Geometry, mut scale: impl FnMut(&mut T, f64)) {
    let lin = |start: f64, stop: f64, n: usize, m: usize| {
        if n == 1 {
            start
        } else {
            start + (stop - start) * m as f64 / (n - 1) as f64
        }
    };
    let half_pi = std::f64::consts::FRAC_PI_2;
    let left = g.ix0 - g.ix00;
    for (m, v) in w.iter_mut().enumerate().take(left) {
        let c = lin(half_pi, 2.0 * half_pi, left, m).cos();
        scale(v, c * c);
    }
    let right = g.ix11 - g.ix1;
    for m in 0..right {
        let c = lin(0.0, half_pi, right, m).cos();
        scale(&mut w[g.ix1 - g.ix00 + m], c * c);
    }
}
