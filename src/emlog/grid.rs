//! The search grid: one axis of values per searched parameter; axis 0 varies fastest.
//! Model `index = i₀ + n₀·(i₁ + n₁·(i₂ + …))`, a u64.

use crate::error::Result;

/// Most values on one axis (their values and histograms are held in memory).
pub const MAX_AXIS_VALUES: usize = 1 << 24;

/// How an axis's values are given.
#[derive(Clone, Debug, PartialEq)]
pub enum Axis {
    /// `count` values evenly spaced from `min` to `max` (both included; one value: `min`).
    Linear { min: f64, max: f64, count: usize },
    /// `count` values evenly spaced in log10 from `min` to `max` (> 0; one value: `min`).
    Log { min: f64, max: f64, count: usize },
    /// The values themselves, strictly increasing.
    List(Vec<f64>),
}

impl Axis {
    /// How many values the axis has, known before any of them is built.
    pub fn count(&self) -> usize {
        match self {
            Axis::Linear { count, .. } | Axis::Log { count, .. } => *count,
            Axis::List(v) => v.len(),
        }
    }

    /// `Ok` when the axis has a count it may have: 1 to `MAX_AXIS_VALUES` evenly spaced
    /// values, or a list of at least one.
    fn check_count(&self, k: usize) -> Result<()> {
        let count = self.count();
        match self {
            Axis::List(_) if count == 0 => Err(crate::invalid!("axis {k} has 0 values")),
            Axis::List(_) => Ok(()),
            _ if count == 0 || count > MAX_AXIS_VALUES => Err(crate::invalid!(
                "axis {k} has {count} values; expected 1 to {MAX_AXIS_VALUES}"
            )),
            _ => Ok(()),
        }
    }

    /// The axis's values, checked: finite, strictly increasing, at least one. A one-value
    /// axis is its `min`, whatever its kind.
    pub fn values(&self, k: usize) -> Result<Vec<f64>> {
        self.check_count(k)?;
        let v = match self {
            Axis::Linear { min, max, count } => {
                let mut v = spaced(k, *min, *max, *count, |x| x)?;
                *v.last_mut().unwrap() = if *count > 1 { *max } else { *min };
                v
            }
            Axis::Log { min, max, count } => {
                if !(*min > 0.0 && *max > 0.0) {
                    return Err(crate::invalid!(
                        "logarithmic axis {k} runs from {min} to {max}; expected bounds > 0"
                    ));
                }
                let mut v = spaced(k, min.log10(), max.log10(), *count, |x| 10f64.powf(x))?;
                // The bounds exactly as given (one value: min, as a linear axis).
                v[0] = *min;
                if *count > 1 {
                    *v.last_mut().unwrap() = *max;
                }
                v
            }
            Axis::List(v) => v.clone(),
        };
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(crate::invalid!(
                "axis {k}, value {i} is {}; expected a finite value",
                v[i]
            ));
        }
        if let Some(i) = v.windows(2).position(|w| w[0] >= w[1]) {
            return Err(crate::invalid!(
                "axis {k}: value {} ({}) is not above value {i} ({}); values must increase strictly",
                i + 1,
                v[i + 1],
                v[i]
            ));
        }
        Ok(v)
    }
}

/// `count` values evenly spaced from `min` to `max` (axis `k`), each mapped by `map`.
fn spaced(k: usize, min: f64, max: f64, count: usize, map: fn(f64) -> f64) -> Result<Vec<f64>> {
    if !(min.is_finite() && max.is_finite()) || (count > 1 && min >= max) {
        return Err(crate::invalid!(
            "axis {k} runs from {min} to {max}; expected finite bounds with min < max (min alone for one value)"
        ));
    }
    let step = if count > 1 {
        (max - min) / (count - 1) as f64
    } else {
        0.0
    };
    Ok((0..count).map(|i| map(min + step * i as f64)).collect())
}

/// The checked grid.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Values of each axis.
    pub values: Vec<Vec<f64>>,
    /// Number of models (≤ 2⁶³).
    pub total: u64,
}

impl Grid {
    pub fn new(axes: &[Axis], p: usize) -> Result<Grid> {
        if axes.len() != p {
            return Err(crate::invalid!(
                "{} grid axes for {p} searched parameters",
                axes.len()
            ));
        }
        // The model count comes from the axis counts alone: a grid too large to search is
        // refused before any axis's values are built.
        for (k, a) in axes.iter().enumerate() {
            a.check_count(k)?;
        }
        let total = axes
            .iter()
            .try_fold(1u64, |t, a| t.checked_mul(a.count() as u64))
            .filter(|&t| t <= 1 << 63)
            .ok_or_else(|| {
                let counts: Vec<usize> = axes.iter().map(Axis::count).collect();
                crate::invalid!("the grid has more than 2^63 models (axis counts {counts:?})")
            })?;
        let values = axes
            .iter()
            .enumerate()
            .map(|(k, a)| a.values(k))
            .collect::<Result<Vec<_>>>()?;
        Ok(Grid { values, total })
    }

    pub fn p(&self) -> usize {
        self.values.len()
    }

    pub fn len(&self, k: usize) -> usize {
        self.values[k].len()
    }

    /// Models per row (axis 0) and rows (the other axes).
    pub fn rows(&self) -> u64 {
        self.total / self.len(0) as u64
    }

    /// Grid indices of a row, axes 1…p−1 (entry 0 is left 0).
    pub fn row_digits(&self, mut row: u64, digits: &mut [usize]) {
        digits[0] = 0;
        for (k, d) in digits.iter_mut().enumerate().skip(1) {
            let n = self.len(k) as u64;
            *d = (row % n) as usize;
            row /= n;
        }
    }

    /// The parameter values of model `index`.
    pub fn model(&self, mut index: u64) -> Vec<f64> {
        self.values
            .iter()
            .map(|v| {
                let n = v.len() as u64;
                let i = (index % n) as usize;
                index /= n;
                v[i]
            })
            .collect()
    }
}
