//! Which transform a call runs: C (data → coefficients) or C* (coefficients → data).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Forward,
    Adjoint,
}

impl Pass {
    /// The transform's name in calls and messages: `forward` or `adjoint`.
    pub fn verb(self) -> &'static str {
        match self {
            Pass::Forward => "forward",
            Pass::Adjoint => "adjoint",
        }
    }
}
