//! The parameters of F-X / F-XY prediction filtering, with the defaults a processing
//! geophysicist expects (Seismic Unix `sufxdecon`'s where it has one, the seed paper's
//! 20 × 20 windows stepping 17 and 7 × 7 operator for volumes).

/// Which prediction operator is estimated and applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prediction {
    /// One noncausal operator that predicts each trace from its neighbours on both sides,
    /// the trace itself excluded (2D: ±1…±L traces; 3D: the Lx × Ly box less its centre).
    TwoSided,
    /// Average of a forward (from the L previous traces) and a backward (from the L next
    /// traces) prediction, as Canales/Gulunay f-x decon and `sufxdecon` do. 2D only.
    ForwardBackward,
}

/// What happens to frequencies outside [fmin, fmax].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfBand {
    /// Passed through unchanged.
    Pass,
    /// Set to zero: the output is band-limited (Seismic Unix's behaviour).
    Zero,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FxdeconOptions {
    /// Sample interval in seconds.
    pub sample_interval: f64,
    /// Lowest and highest frequency filtered, Hz; `fmax` 0 means 0.6 × Nyquist.
    pub fmin: f64,
    pub fmax: f64,
    /// Time window length in seconds, tapers included; 0 means the whole trace.
    pub time_window: f64,
    /// Overlap of consecutive time windows (linear tapers that sum to one), seconds.
    pub taper: f64,
    /// FFT length; 0 picks one (the next power of two ≥ the window; SU mode: see README).
    pub fft_length: usize,
    /// 2D: spatial window and overlap in traces; operator length L (traces on each side).
    pub window_traces: usize,
    pub overlap_traces: usize,
    pub operator_traces: usize,
    /// 3D: spatial window and overlap, [inline, crossline] in traces; operator extents
    /// [Lx, Ly] (odd, two-sided, centre excluded).
    pub window: [usize; 2],
    pub overlap: [usize; 2],
    pub operator: [usize; 2],
    /// Added to the diagonal of the normal equations, as a fraction of the zero-lag term.
    pub damping: f64,
    pub prediction: Prediction,
    pub out_of_band: OutOfBand,
    /// Reproduce `sufxdecon` (2D only): its windows, its autocorrelation offset, forward/
    /// backward averaging, zeroed out-of-band, no damping. Uses `sample_interval`, `fmin`,
    /// `fmax`, `time_window` (twlen), `taper`, `fft_length`, `window_traces` (ntrw) and
    /// `operator_traces` (ntrf); ignores the rest.
    pub su_compatible: bool,
}

impl Default for FxdeconOptions {
    fn default() -> Self {
        FxdeconOptions {
            sample_interval: 0.004,
            fmin: 6.0,
            fmax: 0.0,
            time_window: 0.0,
            taper: 0.1,
            fft_length: 0,
            window_traces: 20,
            overlap_traces: 3,
            operator_traces: 4,
            window: [20, 20],
            overlap: [3, 3],
            operator: [7, 7],
            damping: 0.01,
            prediction: Prediction::TwoSided,
            out_of_band: OutOfBand::Pass,
            su_compatible: false,
        }
    }
}

impl FxdeconOptions {
    /// `sufxdecon`'s defaults in SU-compatible mode (ntrw = 10, ntrf = 4, taper 0.1 s,
    /// fmin 6 Hz, fmax 0.6 × Nyquist, whole-trace window).
    pub fn seismic_unix() -> FxdeconOptions {
        FxdeconOptions {
            window_traces: 10,
            operator_traces: 4,
            damping: 0.0,
            prediction: Prediction::ForwardBackward,
            out_of_band: OutOfBand::Zero,
            su_compatible: true,
            ..Default::default()
        }
    }

    /// Checks the values that do not depend on the data's shape.
    pub fn validate(&self, dims: usize) -> crate::Result<()> {
        self.check_values()?;
        if self.su_compatible {
            self.check_seismic_unix(dims)
        } else if dims == 2 {
            self.check_section()
        } else {
            self.check_volume()
        }
    }

    /// The physical values: finite, ≥ 0 (the sample interval > 0), fmin ≤ fmax.
    fn check_values(&self) -> crate::Result<()> {
        let o = self;
        let finite_nonneg = |v: f64, name: &str| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(crate::invalid!(
                    "options.{name} is {v}; expected a finite value ≥ 0"
                ))
            }
        };
        if !(o.sample_interval.is_finite() && o.sample_interval > 0.0) {
            return Err(crate::invalid!(
                "options.sample_interval_s is {}; expected a positive number of seconds",
                o.sample_interval
            ));
        }
        finite_nonneg(o.fmin, "fmin_hz")?;
        finite_nonneg(o.fmax, "fmax_hz")?;
        finite_nonneg(o.time_window, "time_window_s")?;
        finite_nonneg(o.taper, "taper_s")?;
        finite_nonneg(o.damping, "damping")?;
        let fmax = self.fmax_hz();
        if o.fmin > fmax {
            return Err(crate::invalid!(
                "options.fmin_hz {} is above fmax {fmax} Hz",
                o.fmin
            ));
        }
        Ok(())
    }

    /// The SU-compatible mode: 2D, 1 ≤ ntrf < ntrw.
    fn check_seismic_unix(&self, dims: usize) -> crate::Result<()> {
        if dims != 2 {
            return Err(crate::error::Error::Unsupported(
                "the SU-compatible mode reproduces sufxdecon, which is 2D only".into(),
            ));
        }
        if self.window_traces == 0 {
            return Err(crate::invalid!("options.window_traces (ntrw) is 0"));
        }
        if self.operator_traces == 0 || self.operator_traces >= self.window_traces {
            return Err(crate::invalid!(
                "options.operator_traces (ntrf) is {}; sufxdecon needs 1 ≤ ntrf < ntrw = {}",
                self.operator_traces,
                self.window_traces
            ));
        }
        Ok(())
    }

    /// 2D: an operator of ≥ 1 trace that fits its spatial window.
    fn check_section(&self) -> crate::Result<()> {
        let o = self;
        if o.operator_traces == 0 {
            return Err(crate::invalid!(
                "options.operator_traces is 0; expected ≥ 1"
            ));
        }
        let l = o.operator_traces;
        let (extent, coefficients) = match o.prediction {
            Prediction::TwoSided => (
                l.checked_mul(2).and_then(|e| e.checked_add(1)),
                l.checked_mul(2),
            ),
            Prediction::ForwardBackward => (l.checked_add(1), Some(l)),
        };
        let (Some(extent), Some(k)) = (extent, coefficients) else {
            return Err(crate::invalid!(
                "options.operator_traces is {l}: its extent overflows size_t"
            ));
        };
        check_window(o.window_traces, o.overlap_traces, extent, "traces")?;
        check_operator(k, &format!("{l} traces on each side"))
    }

    /// 3D: the two-sided operator, odd extents that fit their windows, not 1 × 1.
    fn check_volume(&self) -> crate::Result<()> {
        let o = self;
        if o.prediction == Prediction::ForwardBackward {
            return Err(crate::error::Error::Unsupported(
                "forward/backward averaging is 2D only; volumes use the two-sided operator".into(),
            ));
        }
        for (axis, name) in [(0, "inline"), (1, "crossline")] {
            let l = o.operator[axis];
            if l == 0 || l % 2 == 0 {
                return Err(crate::invalid!(
                    "options.operator_{name} is {l}; expected an odd extent ≥ 1"
                ));
            }
            check_window(o.window[axis], o.overlap[axis], l, name)?;
        }
        if o.operator == [1, 1] {
            return Err(crate::invalid!(
                "the operator is 1 × 1: it has no coefficients once its centre is excluded"
            ));
        }
        let [lx, ly] = o.operator;
        let k = lx.checked_mul(ly).map(|c| c - 1).ok_or_else(|| {
            crate::invalid!("the operator {lx} × {ly} has more coefficients than size_t can count")
        })?;
        check_operator(k, &format!("{lx} × {ly} traces"))
    }

    /// fmax with its default (0.6 × Nyquist) applied.
    pub fn fmax_hz(&self) -> f64 {
        if self.fmax > 0.0 {
            self.fmax
        } else {
            0.6 / (2.0 * self.sample_interval)
        }
    }
}

/// Offsets of the operator's traces are 32-bit (as on the GPU), and each worker holds the
/// normal equations of its `k` coefficients, k × k complex f64: an operator (`what`) whose
/// equations the host cannot hold is refused before its stencil is built.
fn check_operator(k: usize, what: &str) -> crate::Result<()> {
    if k > i32::MAX as usize {
        return Err(crate::invalid!(
            "the operator of {what} has {k} coefficients; at most {} are supported",
            i32::MAX
        ));
    }
    let what = format!("the normal equations of an operator of {what} ({k} coefficients)²");
    crate::alloc::host_bytes(&[k, k], 16, &what).map(|_| ())
}

fn check_window(
    window: usize,
    overlap: usize,
    operator_extent: usize,
    what: &str,
) -> crate::Result<()> {
    if overlap >= window {
        return Err(crate::invalid!(
            "the spatial window of {window} {what} must be larger than its overlap ({overlap})"
        ));
    }
    if operator_extent > window {
        return Err(crate::invalid!(
            "the operator spans {operator_extent} {what} but the spatial window only {window}: \
             the operator must fit in the window"
        ));
    }
    Ok(())
}
