//! Operations on coefficients: compression (keep the S largest), hard/soft thresholding at a
//! value, at k·σ per level, or at the level white noise of a known σ reaches in each box, and
//! POCS interpolation of missing traces.

use super::inverse::CorrectionFilter;
use super::layout::Layout;
use super::WavepacketPlan;
use crate::error::Result;
use crate::progress::Reporter;
use crate::sample::Real;
use num_complex::Complex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdMode {
    /// Zero below the threshold, keep above.
    Hard,
    /// Zero below, shrink the magnitude by the threshold above (phase kept).
    Soft,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThresholdLevel {
    /// One threshold for every coefficient.
    Value(f64),
    /// k·σ_level, σ_level = median(|c|)/0.6745 over the level's coefficients (the median
    /// absolute value of mostly-noise coefficients, as in wavelet denoising).
    Sigma(f64),
}

/// Keeps the `s` coefficients of largest magnitude, zeroes the others (ties: any of them).
pub fn keep_largest<T: Real>(coeffs: &mut [Complex<T>], s: usize) {
    if s >= coeffs.len() {
        return;
    }
    if s == 0 {
        coeffs.fill(Complex::new(T::zero(), T::zero()));
        return;
    }
    let mut mags: Vec<T> = coeffs.iter().map(|z| z.norm_sqr()).collect();
    let k = coeffs.len() - s;
    let (_, &mut cut, _) = mags.select_nth_unstable_by(k, |a, b| a.partial_cmp(b).unwrap());
    let mut kept = 0;
    for z in coeffs.iter_mut() {
        if z.norm_sqr() > cut {
            kept += 1;
        }
    }
    let mut ties = s - kept;
    for z in coeffs.iter_mut() {
        let m = z.norm_sqr();
        if m < cut || (m == cut && ties == 0) {
            *z = Complex::new(T::zero(), T::zero());
        } else if m == cut {
            ties -= 1;
        }
    }
}

/// σ of each level (index = level): median(|c|)/0.6745 over its boxes' coefficients.
pub fn level_sigmas<T: Real>(layout: &Layout, coeffs: &[Complex<T>]) -> Vec<f64> {
    (0..=layout.levels)
        .map(|k| {
            let mut m: Vec<f64> = layout
                .boxes
                .iter()
                .filter(|b| b.level == k)
                .flat_map(|b| &coeffs[b.offset..b.offset + b.n_coefficients()])
                .map(|z| z.norm().to_f64().unwrap())
                .collect();
            if m.is_empty() {
                return 0.0;
            }
            let mid = m.len() / 2;
            let (_, med, _) = m.select_nth_unstable_by(mid, |a, b| a.partial_cmp(b).unwrap());
            *med / 0.6745
        })
        .collect()
}

/// Thresholds `coeffs` in place.
pub fn threshold<T: Real>(
    layout: &Layout,
    coeffs: &mut [Complex<T>],
    mode: ThresholdMode,
    level: ThresholdLevel,
) -> Result<()> {
    if coeffs.len() != layout.n_coefficients {
        return Err(crate::invalid!(
            "coefficient array has {} values; the layout has {}",
            coeffs.len(),
            layout.n_coefficients
        ));
    }
    let per_level: Vec<f64> = match level {
        ThresholdLevel::Value(t) if t.is_finite() && t >= 0.0 => vec![t; layout.levels + 1],
        ThresholdLevel::Sigma(k) if k.is_finite() && k >= 0.0 => level_sigmas(layout, coeffs)
            .into_iter()
            .map(|s| k * s)
            .collect(),
        other => {
            return Err(crate::invalid!(
                "threshold {other:?} is not a finite value ≥ 0"
            ))
        }
    };
    for b in &layout.boxes {
        let t = per_level[b.level];
        for z in &mut coeffs[b.offset..b.offset + b.n_coefficients()] {
            shrink(z, t, mode);
        }
    }
    Ok(())
}

/// Thresholds each box b at k·σ·‖ψ_b‖ (`norms` = `WavepacketPlan::packet_norms`): a
/// coefficient of white noise of standard deviation σ has E|c|² = σ²‖ψ_b‖², and the packets'
/// norms differ from box to box, so one value or one per level would be too high in some boxes
/// and too low in others. |c| of complex Gaussian noise exceeds k·σ‖ψ_b‖ with probability
/// e^(−k²): k ≈ 2.5 (hard) removes all but 0.2 % of the noise's coefficients.
pub fn threshold_noise<T: Real>(
    layout: &Layout,
    norms: &[f64],
    coeffs: &mut [Complex<T>],
    mode: ThresholdMode,
    k: f64,
    sigma: f64,
) -> Result<()> {
    if coeffs.len() != layout.n_coefficients || norms.len() != layout.boxes.len() {
        return Err(crate::invalid!(
            "{} coefficients and {} packet norms; the layout has {} and {} boxes",
            coeffs.len(),
            norms.len(),
            layout.n_coefficients,
            layout.boxes.len()
        ));
    }
    if !(k.is_finite() && k >= 0.0 && sigma.is_finite() && sigma >= 0.0) {
        return Err(crate::invalid!(
            "k = {k}, sigma = {sigma}; expected finite values ≥ 0"
        ));
    }
    for (b, &nb) in layout.boxes.iter().zip(norms) {
        let t = k * sigma * nb;
        for z in &mut coeffs[b.offset..b.offset + b.n_coefficients()] {
            shrink(z, t, mode);
        }
    }
    Ok(())
}

/// σ of white noise in data from its coefficients: the median of |c|/‖ψ_b‖ over the finest
/// level's coefficients that lie inside the data (a Rayleigh median, σ·√ln 2; the finest
/// level holds the least signal).
pub fn estimate_noise<T: Real>(layout: &Layout, norms: &[f64], coeffs: &[Complex<T>]) -> f64 {
    let mut m = Vec::new();
    noise_samples(layout, norms, |b, k| {
        m.push(coeffs[k].norm().to_f64().unwrap() / norms[b])
    });
    if m.is_empty() {
        return 0.0;
    }
    let mid = m.len() / 2;
    let (_, med, _) = m.select_nth_unstable_by(mid, f64::total_cmp);
    noise_sigma(*med)
}

/// σ from the median of |c|/‖ψ_b‖ over the noise estimate's samples.
pub(crate) fn noise_sigma(median: f64) -> f64 {
    median / std::f64::consts::LN_2.sqrt()
}

/// The noise estimate's samples as a bit per coefficient (bit k of word k/32), and their
/// count: what the device estimate reads.
pub(crate) fn noise_sample_bits(layout: &Layout, norms: &[f64]) -> (Vec<u32>, usize) {
    let mut bits = vec![0u32; layout.n_coefficients.div_ceil(32)];
    let mut count = 0;
    noise_samples(layout, norms, |_, k| {
        bits[k / 32] |= 1 << (k % 32);
        count += 1;
    });
    (bits, count)
}

/// Calls `visit(b, k)` for each coefficient k (of box b) the noise estimate reads: the finest
/// level's, packet norm > 0, the packet's centre inside the data; box after box, in order.
fn noise_samples(layout: &Layout, norms: &[f64], mut visit: impl FnMut(usize, usize)) {
    let half: Vec<f64> = layout.shape.iter().map(|&n| n as f64 / 2.0).collect();
    for (b, bx) in layout.boxes.iter().enumerate() {
        if bx.level != layout.levels || norms[b] <= 0.0 {
            continue;
        }
        let [n1, n2, n3] = bx.shape;
        let mut k = bx.offset;
        for y3 in 0..n3 {
            for y2 in 0..n2 {
                for y1 in 0..n1 {
                    let x = layout.position(b, [y1, y2, y3]);
                    if (0..layout.dim).all(|d| x[d].abs() < half[d]) {
                        visit(b, k);
                    }
                    k += 1;
                }
            }
        }
    }
}

impl<T: Real> WavepacketPlan<T> {
    /// C* of the coefficients of C x at or below their box's threshold (`per_box`, by box
    /// index; the others zeroed): what a hard threshold removes. On a CUDA context the
    /// coefficients never leave the device: per call only x goes up and the result down
    /// (the coefficients are 20–70 times larger in 3D).
    pub(crate) fn synthesis_below(&self, x: &[T], per_box: &[f64]) -> Result<Vec<T>> {
        if let Some(y) = self.synthesis_on_device(x, Some(per_box))? {
            return Ok(y);
        }
        let l = self.layout();
        let zero = Complex::new(T::zero(), T::zero());
        let mut c = crate::error::try_vec(l.n_coefficients, zero, "wave-packet coefficients")?;
        self.forward_unchecked(x, &mut c)?;
        for (b, &t) in l.boxes.iter().zip(per_box) {
            for z in &mut c[b.offset..b.offset + b.n_coefficients()] {
                if z.norm().to_f64().unwrap() > t {
                    *z = zero;
                }
            }
        }
        let mut y = crate::error::try_vec(x.len(), T::zero(), "wave-packet data")?;
        self.adjoint_unchecked(&c, &mut y)?;
        Ok(y)
    }
}

fn shrink<T: Real>(z: &mut Complex<T>, t: f64, mode: ThresholdMode) {
    let m = z.norm().to_f64().unwrap();
    if m <= t {
        *z = Complex::new(T::zero(), T::zero());
    } else if mode == ThresholdMode::Soft {
        *z = *z * T::from_f64(1.0 - t / m).unwrap();
    }
}

/// How the POCS threshold falls from its first to its last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    Linear,
    Exponential,
}

/// POCS interpolation settings. The threshold of iteration i runs from `first`·max to
/// `last`·max of |c|/‖ψ_b‖ (c the coefficients of the first guess: the gaps linearly
/// interpolated, `gaps::fill_linear`). The first guess is already close, so the thresholds
/// start low: a high one would first strip the guess down to its few largest packets. The
/// default holds the threshold at 0.003·max for 40 iterations (the best of the schedules
/// measured from that guess on Penobscot windows: tests/wavepacket_processing.rs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PocsOptions {
    pub iterations: usize,
    pub schedule: Schedule,
    pub first: f64,
    pub last: f64,
}

impl Default for PocsOptions {
    fn default() -> Self {
        PocsOptions {
            iterations: 40,
            schedule: Schedule::Exponential,
            first: 3e-3,
            last: 3e-3,
        }
    }
}

impl PocsOptions {
    /// The relative threshold of iteration i.
    pub fn threshold(&self, i: usize) -> f64 {
        let u = if self.iterations > 1 {
            i as f64 / (self.iterations - 1) as f64
        } else {
            1.0
        };
        match self.schedule {
            Schedule::Linear => self.first + (self.last - self.first) * u,
            Schedule::Exponential => self.first * (self.last / self.first).powf(u),
        }
    }
}

impl<T: Real> WavepacketPlan<T> {
    /// Fills the dead traces of `data` (in place): `live[t]` says whether trace t (the data
    /// columns along axis 1, numbered over axes 2[, 3]) was recorded. The iteration starts
    /// from the linear interpolation between the nearest live traces (`gaps::fill_linear`, a
    /// standard first guess: started from zeros, POCS fell short of that interpolation on
    /// nearly flat reflectors; tests/wavepacket_processing.rs). Packets straddling the data's
    /// edges see the data end abruptly; padding the section with a few dead traces on each
    /// side keeps that away from the gaps (the test pads 8). Iteration i takes the
    /// coefficients c = Cx of the current estimate x, ranks them by |c|/‖ψ_b‖ (the
    /// correlation with the unit packet: `packet_norms`), and removes from the dead traces what
    /// the coefficients at or below the threshold t_i carry: x ← x − F·C*(c − H_t(c)) there
    /// (F the correction filter), the recorded traces staying as they are. With C*C = I this
    /// is the classic step x ← C*H_t(Cx); written as a correction it also stays stable where
    /// the frame's upper bound exceeds one (packets wrapping at the data's edges), which makes
    /// the classic step diverge once t is small. Reports progress to the context's callback
    /// (stage "wave-packet POCS", one item per iteration); `data` is written only at the end,
    /// so a stop leaves it as it was.
    pub fn pocs_interpolate(
        &self,
        filter: &CorrectionFilter<T>,
        data: &mut [T],
        live: &[bool],
        opts: &PocsOptions,
    ) -> Result<()> {
        let mut reporter = self.context().reporter();
        self.pocs_reported(filter, data, live, opts, &mut reporter)
    }

    /// `pocs_interpolate` reporting to `reporter`.
    pub(super) fn pocs_reported(
        &self,
        filter: &CorrectionFilter<T>,
        data: &mut [T],
        live: &[bool],
        opts: &PocsOptions,
        reporter: &mut Reporter,
    ) -> Result<()> {
        self.check_pocs(data, live, opts)?;
        let l = self.layout();
        let n1 = l.shape[0];
        let zero = Complex::new(T::zero(), T::zero());
        let mut c = vec![zero; l.n_coefficients];
        let mut x: Vec<T> = data.to_vec();
        super::gaps::fill_linear(l.shape, &mut x, live);
        let norms = self.packet_norms();
        self.forward_unchecked(&x, &mut c)?;
        let smax = largest_correlation(l, &c, &norms);
        drop(c);
        reporter.stage("wave-packet POCS", 1.0, opts.iterations);
        for i in 0..opts.iterations {
            // What lies at or below the threshold (|c|/‖ψ_b‖ ≤ t): the part to remove.
            let t = opts.threshold(i) * smax;
            let per_box: Vec<f64> = norms
                .iter()
                .map(|&nb| if nb > 0.0 { t * nb } else { f64::INFINITY })
                .collect();
            let y = self.synthesis_below(&x, &per_box)?;
            let y = filter.apply(&y);
            for (t, &ok) in live.iter().enumerate() {
                if !ok {
                    for k in t * n1..(t + 1) * n1 {
                        x[k] = x[k] - y[k];
                    }
                }
            }
            reporter.advance(1)?;
        }
        data.copy_from_slice(&x);
        reporter.finish();
        Ok(())
    }

    /// The arguments of `pocs_interpolate`: sizes, options, and finite recorded samples
    /// (the dead ones are not read).
    fn check_pocs(&self, data: &[T], live: &[bool], opts: &PocsOptions) -> Result<()> {
        let l = self.layout();
        let n1 = l.shape[0];
        let traces = l.n_samples() / n1;
        if live.len() != traces {
            return Err(crate::invalid!(
                "trace mask has {} entries; the data has {traces} traces",
                live.len()
            ));
        }
        if data.len() != l.n_samples() {
            return Err(crate::invalid!(
                "data array has {} samples; expected {}",
                data.len(),
                l.n_samples()
            ));
        }
        if opts.iterations == 0
            || !(opts.first > 0.0
                && opts.first <= 1.0
                && opts.last > 0.0
                && opts.last <= opts.first)
        {
            return Err(crate::invalid!(
                "POCS options {opts:?}: need iterations ≥ 1 and 0 < last ≤ first ≤ 1"
            ));
        }
        let bad = live
            .iter()
            .enumerate()
            .filter(|&(_, &ok)| ok)
            .flat_map(|(t, _)| t * n1..(t + 1) * n1)
            .find(|&i| !data[i].is_finite());
        if let Some(i) = bad {
            return Err(crate::error::Error::NonFinite(format!(
                "data sample {i} (a live trace) is not finite; nothing was written"
            )));
        }
        Ok(())
    }
}

/// The largest |c|/‖ψ_b‖ over the coefficients of the boxes with a nonzero packet norm.
fn largest_correlation<T: Real>(l: &Layout, c: &[Complex<T>], norms: &[f64]) -> f64 {
    l.boxes
        .iter()
        .zip(norms)
        .filter(|(_, &nb)| nb > 0.0)
        .flat_map(|(b, &nb)| {
            c[b.offset..b.offset + b.n_coefficients()]
                .iter()
                .map(move |z| z.norm().to_f64().unwrap() / nb)
        })
        .fold(0.0, f64::max)
}
