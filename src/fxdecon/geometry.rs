//! Where the filter works: time windows, spatial windows, frequency band, operator stencil.
//! Everything here is decided once per plan, on the host, and shared by both backends
//! (the GPU receives it as tables).
//!
//! Axes: every section or volume is `nx × ny` traces. A volume's x is its inline index
//! and y its crossline index (the slowest, along which the GPU cuts slabs); a 2D section
//! is `1 × n_traces`, so its traces lie along y.

use super::options::{FxdeconOptions, OutOfBand, Prediction};
use crate::error::Result;
use std::ops::Range;

/// Overlapping time windows and the weight of each window's samples in the output.
#[derive(Clone, Debug)]
pub struct TimeWindows {
    pub starts: Vec<usize>,
    pub lens: Vec<usize>,
    /// Per window, one weight per sample (the weights of all windows sum to one at each
    /// output sample).
    pub weights: Vec<Vec<f64>>,
}

impl TimeWindows {
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    pub fn max_len(&self) -> usize {
        self.lens.iter().copied().max().unwrap_or(0)
    }
}

/// One spatial window along one axis. Local positions index `gather`, which names the
/// trace (along this axis) each local position reads; the operator is estimated from the
/// local positions `est` and applied at `out`, whose first trace is `out_first`.
#[derive(Clone, Debug)]
pub struct AxisWindow {
    pub gather: Vec<usize>,
    pub est: Range<usize>,
    pub out: Range<usize>,
    pub out_first: usize,
    /// One per `out` position.
    pub weights: Vec<f64>,
}

#[derive(Clone, Debug)]
pub struct AxisWindows {
    pub windows: Vec<AxisWindow>,
}

impl AxisWindows {
    /// The longest gather.
    pub fn local_len(&self) -> usize {
        self.windows
            .iter()
            .map(|w| w.gather.len())
            .max()
            .unwrap_or(0)
    }

    /// A trivial axis of one trace.
    fn single() -> AxisWindows {
        AxisWindows {
            windows: vec![AxisWindow {
                gather: vec![0],
                est: 0..1,
                out: 0..1,
                out_first: 0,
                weights: vec![1.0],
            }],
        }
    }

    /// Windows of `window` traces stepping by `window − overlap` over `n` traces, the last
    /// one moved back to end at the last trace; each gathers `halo` traces more on both
    /// sides (the edge trace repeated beyond the ends). Output weights are trapezoids with
    /// ramps over the overlap, divided by their sum so that they add up to one.
    fn overlapping(n: usize, window: usize, overlap: usize, halo: usize) -> AxisWindows {
        let w = window.min(n);
        let overlap = overlap.min(w - 1);
        let (starts, weights) = ramped_windows(n, w, overlap);
        let windows = starts
            .into_iter()
            .zip(weights)
            .map(|(s, weights)| AxisWindow {
                gather: (0..w + 2 * halo)
                    .map(|j| (s + j).saturating_sub(halo).min(n - 1))
                    .collect(),
                est: halo..halo + w,
                out: halo..halo + w,
                out_first: s,
                weights,
            })
            .collect();
        AxisWindows { windows }
    }

    /// `sufxdecon`'s spatial blocks: ntrw traces (the last block takes the remainder),
    /// extended by ntrf traces on each side with its edge replication, the autocorrelation
    /// taken over the first ntrwu traces of the extended block.
    fn seismic_unix(n: usize, ntrw: usize, ntrf: usize) -> AxisWindows {
        // sufxdecon writes nothing when there are fewer traces than one block; one block of
        // all traces is the sensible reading of that case.
        let nwx = (n / ntrw).max(1);
        let last = n - 1;
        let windows = (0..nwx)
            .map(|jx| {
                let ntrwu = if n < jx * ntrw + 2 * ntrw {
                    n - jx * ntrw
                } else {
                    ntrw
                };
                let gather = (0..ntrwu + 2 * ntrf)
                    .map(|jw| {
                        let t = if jx > 0 && jx + 1 < nwx {
                            jw + jx * ntrw - ntrf
                        } else if jx == 0 {
                            if jw < ntrf {
                                0
                            } else if jw < ntrw + ntrf || nwx > 1 {
                                jw - ntrf
                            } else {
                                last
                            }
                        } else if jw < ntrwu + ntrf {
                            jw + jx * ntrw - ntrf
                        } else {
                            last
                        };
                        t.min(last)
                    })
                    .collect();
                AxisWindow {
                    gather,
                    est: 0..ntrwu,
                    out: ntrf..ntrf + ntrwu,
                    out_first: jx * ntrw,
                    weights: vec![1.0; ntrwu],
                }
            })
            .collect();
        AxisWindows { windows }
    }
}

impl AxisWindow {
    /// The same window with trace numbers counted from `first`.
    pub fn shifted(&self, first: usize) -> AxisWindow {
        AxisWindow {
            gather: self.gather.iter().map(|&t| t - first).collect(),
            out_first: self.out_first - first,
            ..self.clone()
        }
    }
}

/// Consecutive y-windows processed together, the y-lines they read (with their halos) and
/// those they write. A line written by two slabs gets each slab's windows' part.
#[derive(Clone, Debug)]
pub struct Slab {
    pub windows: Range<usize>,
    pub read: Range<usize>,
    pub write: Range<usize>,
}

/// Window starts: multiples of `step`, the last one clamped to end at `n`.
fn starts(n: usize, w: usize, step: usize) -> Vec<usize> {
    if n <= w {
        return vec![0];
    }
    let count = (n - w).div_ceil(step) + 1;
    (0..count).map(|k| (k * step).min(n - w)).collect()
}

/// Windows of `w` samples (≤ n) stepping by `w − overlap` over `n` samples, the last one
/// moved back to end at the last sample: each window's start, and its weights, trapezoids
/// with linear ramps over `overlap` + 1 samples divided by their sum, so that the weights of
/// all windows add up to one at every sample.
fn ramped_windows(n: usize, w: usize, overlap: usize) -> (Vec<usize>, Vec<Vec<f64>>) {
    let starts = starts(n, w, w - overlap);
    let shape: Vec<f64> = (0..w)
        .map(|i| (i + 1).min(w - i).min(overlap + 1) as f64)
        .collect();
    let mut sum = vec![0.0; n];
    for &s in &starts {
        for i in 0..w {
            sum[s + i] += shape[i];
        }
    }
    let weights = starts
        .iter()
        .map(|&s| (0..w).map(|i| shape[i] / sum[s + i]).collect())
        .collect();
    (starts, weights)
}

/// The prediction operator: the offsets (dx, dy) of the traces it combines.
#[derive(Clone, Debug)]
pub struct Stencil {
    pub offsets: Vec<(i32, i32)>,
    /// Forward/backward averaging: `offsets` are the forward ones, and the backward
    /// prediction uses the negated offsets with conjugated coefficients.
    pub forward_backward: bool,
}

impl Stencil {
    /// Half extents (x, y) of the lags the normal equations need: every difference of two
    /// offsets and every offset.
    pub fn lag_extent(&self) -> (usize, usize) {
        let extent = |c: fn(&(i32, i32)) -> i32| {
            let (lo, hi) = self
                .offsets
                .iter()
                .map(c)
                .fold((0, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
            // Differences span hi − lo; the offsets themselves (the right-hand side) reach
            // max(|lo|, hi), which hi − lo covers since 0 lies in [lo, hi].
            (hi - lo) as usize
        };
        (extent(|o| o.0), extent(|o| o.1))
    }

    /// How far (x, y) the operator reaches from the predicted trace.
    pub fn reach(&self) -> (usize, usize) {
        let mut e = (0usize, 0usize);
        for &(x, y) in &self.offsets {
            e = (
                e.0.max(x.unsigned_abs() as usize),
                e.1.max(y.unsigned_abs() as usize),
            );
        }
        e
    }
}

/// Everything a backend needs to filter one shape.
#[derive(Clone, Debug)]
pub struct Setup {
    pub n_samples: usize,
    pub nx: usize,
    pub ny: usize,
    pub nfft: usize,
    /// Frequency bins filtered, ascending.
    pub band: Vec<usize>,
    pub out_of_band: OutOfBand,
    pub time: TimeWindows,
    pub x: AxisWindows,
    pub y: AxisWindows,
    pub stencil: Stencil,
    pub damping: f64,
    /// Too few traces for the operator: the output is the input.
    pub pass_through: bool,
}

impl Setup {
    pub fn new(
        o: &FxdeconOptions,
        n_samples: usize,
        nx: usize,
        ny: usize,
        dims: usize,
    ) -> Result<Setup> {
        o.validate(dims)?;
        if n_samples == 0 {
            return Err(crate::invalid!(
                "n_samples is 0; expected at least one sample"
            ));
        }
        if nx == 0 || ny == 0 {
            return Err(crate::invalid!("the data has no traces ({nx} × {ny})"));
        }
        // The caller's volume (f32 at least) must fit the host before the per-trace and
        // per-sample tables of the plan are built.
        crate::alloc::host_bytes(&[n_samples, nx, ny], 4, "the data (n_samples × traces)")?;
        if o.su_compatible {
            Self::seismic_unix(o, n_samples, ny)
        } else {
            Self::standard(o, n_samples, nx, ny, dims)
        }
    }

    fn standard(o: &FxdeconOptions, n: usize, nx: usize, ny: usize, dims: usize) -> Result<Setup> {
        let dt = o.sample_interval;
        let samples = |s: f64| (s / dt).round() as usize;
        let len = if o.time_window > 0.0 {
            samples(o.time_window).clamp(1, n)
        } else {
            n
        };
        let taper = samples(o.taper).min(len / 2);
        let nfft = fft_length(o.fft_length, len, len.next_power_of_two())?;
        check_working_set(n, nx, nfft)?;
        let time = tapered_windows(n, len, taper);
        let df = 1.0 / (nfft as f64 * dt);
        let fmax = o.fmax_hz();
        let band = (0..nfft / 2 + 1)
            .filter(|&k| {
                let f = k as f64 * df;
                f >= o.fmin && f <= fmax
            })
            .collect();
        let (stencil, x, y, pass_through) = if dims == 2 {
            let l = o.operator_traces as i32;
            let offsets: Vec<(i32, i32)> = match o.prediction {
                Prediction::TwoSided => (1..=l).flat_map(|p| [(0, -p), (0, p)]).collect(),
                Prediction::ForwardBackward => (1..=l).map(|p| (0, -p)).collect(),
            };
            let stencil = Stencil {
                offsets,
                forward_backward: o.prediction == Prediction::ForwardBackward,
            };
            let halo = stencil.reach().1;
            let y = AxisWindows::overlapping(ny, o.window_traces, o.overlap_traces, halo);
            (stencil, AxisWindows::single(), y, ny < 2)
        } else {
            let (hx, hy) = ((o.operator[0] / 2) as i32, (o.operator[1] / 2) as i32);
            let offsets = (-hy..=hy)
                .flat_map(|dy| (-hx..=hx).map(move |dx| (dx, dy)))
                .filter(|&d| d != (0, 0))
                .collect();
            let stencil = Stencil {
                offsets,
                forward_backward: false,
            };
            let x = AxisWindows::overlapping(nx, o.window[0], o.overlap[0], hx as usize);
            let y = AxisWindows::overlapping(ny, o.window[1], o.overlap[1], hy as usize);
            // An axis of one trace cannot be predicted along; fewer traces than the
            // operator spans on an axis that has more than one leave too few equations.
            let short = |n: usize, l: usize| n < l && n > 1;
            let pass = (nx == 1 && ny == 1) || short(nx, o.operator[0]) || short(ny, o.operator[1]);
            (stencil, x, y, pass)
        };
        Ok(Setup {
            n_samples: n,
            nx,
            ny,
            nfft,
            band,
            out_of_band: o.out_of_band,
            time,
            x,
            y,
            stencil,
            damping: o.damping,
            pass_through,
        })
    }

    /// `sufxdecon` as coded (see tests/data/sufxdecon/README.md), in its single precision
    /// where the window sizes, tapers and band edges depend on it.
    fn seismic_unix(o: &FxdeconOptions, nsp: usize, ntrc: usize) -> Result<Setup> {
        let dt = o.sample_interval as f32;
        let (time, nspwf) = su_time_windows(o, nsp)?;
        // sufxdecon's prime-factor size table is not reproduced: by default the smallest
        // 2,3,5,7-smooth even length ≥ 2·nspwf; pass its reported nfft to match it exactly.
        let nfft = match o.fft_length {
            0 => {
                check_working_set(nsp, 1, 2 * nspwf)?;
                (2 * nspwf..).find(|&m| m % 2 == 0 && smooth(m)).unwrap()
            }
            requested => requested,
        };
        let nfft = fft_length(o.fft_length, time.max_len(), nfft)?;
        check_working_set(nsp, 1, nfft)?;
        let d1 = (1.0f64 / (nfft as f32 * dt) as f64) as f32;
        let fmin = o.fmin as f32;
        let fmax = if o.fmax > 0.0 {
            o.fmax as f32
        } else {
            (0.6f64 / (2.0f32 * dt) as f64) as f32
        };
        let band = (0..nfft / 2 + 1)
            .filter(|&k| {
                let f = k as f32 * d1;
                f >= fmin && f <= fmax
            })
            .collect();
        let ntrf = o.operator_traces;
        Ok(Setup {
            n_samples: nsp,
            nx: 1,
            ny: ntrc,
            nfft,
            band,
            out_of_band: OutOfBand::Zero,
            time,
            x: AxisWindows::single(),
            y: AxisWindows::seismic_unix(ntrc, o.window_traces, ntrf),
            stencil: Stencil {
                offsets: (1..=ntrf as i32).map(|p| (0, -p)).collect(),
                forward_backward: true,
            },
            damping: 0.0,
            pass_through: false,
        })
    }

    /// The slab of y-windows `windows`.
    pub fn slab(&self, windows: Range<usize>) -> Slab {
        let ws = &self.y.windows[windows.clone()];
        let lo = ws
            .iter()
            .flat_map(|w| w.gather.iter().copied())
            .min()
            .unwrap();
        let hi = ws
            .iter()
            .flat_map(|w| w.gather.iter().copied())
            .max()
            .unwrap();
        let write = ws.iter().map(|w| w.out_first).min().unwrap()
            ..ws.iter().map(|w| w.out_first + w.out.len()).max().unwrap();
        Slab {
            windows,
            read: lo..hi + 1,
            write,
        }
    }

    /// Slabs that read at most `max_lines` y-lines each (but at least one window).
    pub fn slabs(&self, max_lines: usize) -> Vec<Slab> {
        let nwy = self.y.windows.len();
        let mut slabs = Vec::new();
        let mut w0 = 0;
        while w0 < nwy {
            let mut w1 = w0 + 1;
            while w1 < nwy && self.slab(w0..w1 + 1).read.len() <= max_lines {
                w1 += 1;
            }
            slabs.push(self.slab(w0..w1));
            w0 = w1;
        }
        slabs
    }

    /// Per line of `slab.read`: the part of its window weights that the slab's windows
    /// hold (what the slab passes through of the out-of-band spectrum).
    pub fn share(&self, slab: &Slab) -> Vec<f64> {
        let mut share = vec![0.0; slab.read.len()];
        for w in &self.y.windows[slab.windows.clone()] {
            for (i, &wt) in w.weights.iter().enumerate() {
                share[w.out_first + i - slab.read.start] += wt;
            }
        }
        share
    }

    pub fn n_freq(&self) -> usize {
        self.nfft / 2 + 1
    }

    pub fn n_traces(&self) -> usize {
        self.nx * self.ny
    }
}

/// `sufxdecon`'s time windows of `nsp`-sample traces and its nspwf (samples of a window
/// with its half taper), in its single precision.
fn su_time_windows(o: &FxdeconOptions, nsp: usize) -> Result<(TimeWindows, usize)> {
    let nint = |x: f32| (x as f64 + 0.5).floor() as usize;
    let dt = o.sample_interval as f32;
    // Sample counts are exact below 2^52 and their sums below fit a size_t: a longer window
    // or taper (its FFT could not be held anyway) is refused, naming the option.
    let counted = |seconds: f32, name: &str| {
        let samples = (seconds / dt) as f64 + 0.5;
        match samples < (1u64 << 52) as f64 {
            true => Ok(()),
            false => Err(crate::invalid!(
                "options.{name} is {seconds} s: {samples:e} samples at {dt} s, more than a plan counts"
            )),
        }
    };
    let taper = if o.taper == 0.0 {
        0.004f32
    } else {
        o.taper as f32
    };
    let mut twlen = if o.time_window > 0.0 {
        o.time_window as f32
    } else {
        (nsp - 1) as f32 * dt
    };
    if twlen < 0.3 {
        twlen = 0.3;
    }
    counted(taper, "taper_s")?;
    counted(twlen, "time_window_s")?;
    let mut nstaper = nint(taper / dt);
    if nstaper % 2 == 1 {
        nstaper += 1;
    }
    let ntw = nint((nsp - 1) as f32 * dt / twlen).max(1);
    let nspws = nint(twlen / dt) + 1;
    let nspwf = nspws + nstaper / 2;
    let nspwi = nspws + nstaper;
    let mut time = TimeWindows {
        starts: vec![],
        lens: vec![],
        weights: vec![],
    };
    for iw in 0..ntw {
        let (start, len) = if ntw == 1 {
            (0, nsp)
        } else if iw == 0 {
            (0, nspwf.min(nsp))
        } else {
            // A taper longer than the windows before it would start this one before the trace.
            let start = (iw * nspws).checked_sub(nstaper / 2).filter(|&s| s < nsp);
            let Some(start) = start else {
                return Err(crate::invalid!(
                    "the SU time windows (twlen {twlen} s, taper {taper} s) do not fit {nsp} samples"
                ));
            };
            let len = if iw + 1 < ntw { nspwi } else { nsp - start };
            (start, len.min(nsp - start))
        };
        time.starts.push(start);
        time.lens.push(len);
        time.weights
            .push(su_weights(iw, ntw, len, nstaper, dt, taper));
    }
    Ok((time, nspwf))
}

/// The weights of `sufxdecon`'s time window iw of ntw (len samples): linear ramps of
/// nstaper samples up at its start and down at its end, except at the trace's ends.
fn su_weights(iw: usize, ntw: usize, len: usize, nstaper: usize, dt: f32, taper: f32) -> Vec<f64> {
    let rise = |it: usize| (it as f32 * dt / taper) as f64;
    let fall = |k: usize| 1.0 - (k as f32 * dt / taper) as f64;
    let mut w = vec![1.0; len];
    if ntw > 1 {
        if iw > 0 {
            for (it, v) in w.iter_mut().enumerate().take(nstaper) {
                *v = rise(it);
            }
        }
        if iw + 1 < ntw {
            let from = len.saturating_sub(nstaper);
            for (it, v) in w.iter_mut().enumerate().skip(from) {
                *v = fall(it + nstaper - len);
            }
        } else {
            for v in w.iter_mut().skip(len.saturating_sub(nstaper)) {
                *v = 1.0;
            }
        }
    }
    w
}

/// Overlapping windows of `len` samples whose consecutive windows overlap by `taper`
/// samples (more for the last one, moved back to end at the last sample); linear ramps
/// over the overlaps, normalised so that the weights sum to one at every sample.
fn tapered_windows(n: usize, len: usize, taper: usize) -> TimeWindows {
    let (starts, weights) = ramped_windows(n, len, taper);
    TimeWindows {
        lens: vec![len; starts.len()],
        starts,
        weights,
    }
}

/// The least a CPU filter of `n`-sample traces, `nx` traces per y-line, holds: one y-line's
/// accumulator, spectra and filtered slices (a slab reads at least one line) and one FFT
/// buffer. An FFT length that makes that more than the host has is refused before the band
/// and the windows are built.
fn check_working_set(n: usize, nx: usize, nfft: usize) -> Result<()> {
    let nf = nfft / 2 + 1;
    let per_trace = nf
        .checked_mul(32)
        .and_then(|b| b.checked_add(n.checked_mul(8)?));
    let bytes = per_trace
        .and_then(|b| b.checked_mul(nx))
        .and_then(|b| b.checked_add(nfft.checked_mul(16)?))
        .filter(|&b| b <= isize::MAX as usize);
    let what = format!(
        "an FFT length of {nfft} for {n}-sample traces, {nx} per line: the filter's working set \
         (a line's spectra, filtered slices and accumulator, and one FFT buffer)"
    );
    let host = crate::alloc::host_memory();
    match bytes {
        None => Err(crate::error::Error::OutOfMemory(format!(
            "{what} overflows the address space (in bytes)"
        ))),
        Some(b) if b > host => Err(crate::error::Error::OutOfMemory(format!(
            "{what} needs {b} bytes; the host has {host} bytes"
        ))),
        Some(_) => Ok(()),
    }
}

fn smooth(mut m: usize) -> bool {
    for p in [2, 3, 5, 7] {
        while m % p == 0 {
            m /= p;
        }
    }
    m == 1
}

fn fft_length(requested: usize, longest_window: usize, auto: usize) -> Result<usize> {
    match requested {
        0 => Ok(auto.max(2)),
        n if n < longest_window => Err(crate::invalid!(
            "options.fft_length {n} is shorter than the time window ({longest_window} samples)"
        )),
        n if n % 2 == 1 => Err(crate::invalid!(
            "options.fft_length {n} is odd; expected even"
        )),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seismic_unix_time_windows_match_sufxdecon_report() {
        let o = FxdeconOptions {
            time_window: 0.5,
            window_traces: 20,
            operator_traces: 5,
            ..FxdeconOptions::seismic_unix()
        };
        let s = Setup::new(&o, 1501, 1, 601, 2).unwrap();
        let mut lens = vec![139, 128];
        lens.splice(1..1, [152; 10]);
        assert_eq!(s.time.lens, lens);
        // Overlaps sum to one.
        let mut sum = vec![0.0; 1501];
        for k in 0..s.time.count() {
            for i in 0..s.time.lens[k] {
                sum[s.time.starts[k] + i] += s.time.weights[k][i];
            }
        }
        assert!(sum.iter().all(|v| (v - 1.0).abs() < 1e-6), "{sum:?}");
    }

    #[test]
    fn standard_windows_weights_sum_to_one() {
        let w = AxisWindows::overlapping(250, 20, 3, 3);
        let mut sum = vec![0.0; 250];
        for win in &w.windows {
            for (i, wt) in win.weights.iter().enumerate() {
                sum[win.out_first + i] += wt;
            }
        }
        assert!(sum.iter().all(|v| (v - 1.0).abs() < 1e-12));
        let t = tapered_windows(1001, 150, 20);
        let mut sum = vec![0.0; 1001];
        for k in 0..t.count() {
            for i in 0..t.lens[k] {
                sum[t.starts[k] + i] += t.weights[k][i];
            }
        }
        assert!(sum.iter().all(|v| (v - 1.0).abs() < 1e-12));
    }
}
