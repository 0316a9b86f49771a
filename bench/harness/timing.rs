//! Timing: warm-up calls, then timed repetitions (as many as a time budget allows,
//! between `MIN_REPS` and a maximum); the median is the figure reported. The first
//! warm-up call and the last timed call may check their output, outside the interval
//! they time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Fewest timed repetitions when a budget cuts them (unless the maximum is lower).
pub const MIN_REPS: usize = 3;

/// One timed call.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The time the row reports: host wall time, or GPU event time on the stream.
    pub ms: f64,
    /// Host wall time of the call (equal to `ms` for host rows).
    pub wall_ms: f64,
    /// Sub-intervals of `ms` (e.g. H→D and D→H), the same number for every call.
    pub parts: Vec<f64>,
}

impl Sample {
    /// Host wall time since `t0`.
    pub fn since(t0: Instant) -> Sample {
        let ms = ms_since(t0);
        Sample {
            ms,
            wall_ms: ms,
            parts: Vec::new(),
        }
    }
}

pub fn ms_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// How many calls: `warmup` untimed, then at most `max` timed ones and about
/// `budget_s` seconds of them (infinite: always `max`).
#[derive(Clone, Copy, Debug)]
pub struct Reps {
    pub warmup: usize,
    pub max: usize,
    pub budget_s: f64,
}

impl Reps {
    /// `warmup` untimed calls, then exactly `max` timed ones.
    pub fn fixed(warmup: usize, max: usize) -> Reps {
        Reps {
            warmup,
            max,
            budget_s: f64::INFINITY,
        }
    }
}

/// What an output check found; of two, `worse` keeps the one to report.
pub trait Verdict: Copy {
    fn worse(self, other: Self) -> Self;
}

/// No check.
impl Verdict for () {
    fn worse(self, _: ()) {}
}

#[derive(Clone, Debug)]
pub struct Measured<C> {
    pub median_ms: f64,
    pub min_ms: f64,
    /// The first call's time (kernel compilation, plans): the first warm-up call, or the
    /// first timed one without warm-up.
    pub first_ms: f64,
    pub wall_median_ms: f64,
    /// The median of each part of the samples (empty without parts).
    pub parts_median: Vec<f64>,
    pub reps: usize,
    pub warmup: usize,
    /// The worse of the checks of the first and the last call.
    pub check: Option<C>,
}

/// Runs `call(check)` as `reps` says; `check` asks the call to verify its output.
pub fn measure<C: Verdict>(
    reps: Reps,
    mut call: impl FnMut(bool) -> Result<(Sample, Option<C>), String>,
) -> Result<Measured<C>, String> {
    let (mut first, mut check, mut estimate) = (None, None, None);
    for i in 0..reps.warmup {
        let (s, c) = call(i == 0)?;
        if i == 0 {
            first = Some(s.ms);
            check = c;
        }
        estimate = Some(s.wall_ms);
    }
    let n = match estimate {
        Some(ms) if reps.budget_s.is_finite() => {
            let by_budget = (reps.budget_s * 1e3 / ms.max(1e-4)) as usize;
            by_budget.max(MIN_REPS).min(reps.max)
        }
        _ => reps.max,
    }
    .max(1);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let (s, c) = call(i + 1 == n)?;
        samples.push(s);
        check = match (check, c) {
            (Some(a), Some(b)) => Some(a.worse(b)),
            (a, b) => a.or(b),
        };
    }
    let column = |f: &dyn Fn(&Sample) -> f64| median(&samples.iter().map(f).collect::<Vec<_>>());
    let n_parts = samples[0].parts.len();
    let parts_median = if samples.iter().all(|s| s.parts.len() == n_parts) {
        (0..n_parts).map(|p| column(&|s| s.parts[p])).collect()
    } else {
        Vec::new()
    };
    Ok(Measured {
        median_ms: column(&|s| s.ms),
        min_ms: samples.iter().map(|s| s.ms).fold(f64::INFINITY, f64::min),
        first_ms: first.unwrap_or(samples[0].ms),
        wall_median_ms: column(&|s| s.wall_ms),
        parts_median,
        reps: n,
        warmup: reps.warmup,
        check,
    })
}

/// The median (the mean of the middle pair for an even count); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len();
    match m {
        0 => f64::NAN,
        _ if m % 2 == 1 => s[m / 2],
        _ => 0.5 * (s[m / 2 - 1] + s[m / 2]),
    }
}

/// Runs `f`, turning a panic into an error so that one broken path leaves a row, not
/// a crash.
pub fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
        )),
    }
}
