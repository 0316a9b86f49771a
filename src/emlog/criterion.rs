//! What makes a model equivalent, and how the search evaluates the misfit.

/// The equivalence criterion on the misfit F (Φ = n·F² below).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Criterion {
    /// F ≤ 1: the model fits within the measurement errors (the seed's).
    FitWithinErrors,
    /// F ≤ level.
    MaxMisfit(f64),
    /// F² ≤ F²_min + Δ, F_min the least-squares minimum over all real models (not only
    /// the grid's). With δ the standard deviations, Φ_min + nΔ is a χ² level: Δ =
    /// χ²_p(α)/n gives the joint confidence region of probability α (e.g. 3.53/n for
    /// p = 3 at 68.3 %). Least squares (L2) only.
    DeltaChiSquare(f64),
}

/// The misfit norm (direct mode; the fast mode is L2 by construction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// F = √(Σ r²/n), the seed's.
    L2,
    /// F = Σ|r|/n.
    L1,
    /// F = max |r|.
    Max,
}

/// How each model's misfit is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The centred quadratic form Φ = Φ_min + ‖R(x − x*)‖² (O(1) per model along axis 0).
    Fast,
    /// The full n-row residual of every model, as the seed does.
    Direct,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    pub criterion: Criterion,
    pub mode: Mode,
    pub norm: Norm,
    /// 2D marginals wanted: pairs of parameters (a, b), a ≠ b.
    pub pairs: Vec<(usize, usize)>,
    /// List the first this many equivalent models (in index order).
    pub max_models: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            criterion: Criterion::FitWithinErrors,
            mode: Mode::Fast,
            norm: Norm::L2,
            pairs: Vec::new(),
            max_models: 0,
        }
    }
}

impl SearchOptions {
    pub fn validate(&self, p: usize) -> crate::Result<()> {
        match self.criterion {
            Criterion::MaxMisfit(l) if !(l.is_finite() && l > 0.0) => {
                return Err(crate::invalid!(
                    "the misfit level is {l}; expected a finite value > 0"
                ))
            }
            Criterion::DeltaChiSquare(d) if !(d.is_finite() && d >= 0.0) => {
                return Err(crate::invalid!("Δ is {d}; expected a finite value ≥ 0"))
            }
            Criterion::DeltaChiSquare(_) if self.norm != Norm::L2 => {
                return Err(crate::error::Error::Unsupported(
                    "the F²_min + Δ criterion is defined for the least-squares (L2) misfit only"
                        .into(),
                ))
            }
            _ => {}
        }
        if self.mode == Mode::Fast && self.norm != Norm::L2 {
            return Err(crate::error::Error::Unsupported(
                "the fast mode is least squares (L2); use the direct mode for L1 or max-norm misfits".into(),
            ));
        }
        for (k, &(a, b)) in self.pairs.iter().enumerate() {
            if a >= p || b >= p || a == b {
                return Err(crate::invalid!(
                    "pair {k} is ({a}, {b}); expected two different parameters below {p}"
                ));
            }
        }
        Ok(())
    }
}
