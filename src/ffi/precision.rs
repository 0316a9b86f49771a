//! The f32 and f64 halves of the C objects: an object holds its plan in the precision
//! chosen when it was created, and each `_f32`/`_f64` call finds it there, or names the
//! call to make instead.

use crate::error::{Error, Result};
use crate::sample::Real;

/// The plan type a C object holds, generic over the sample type (`UsfftPlan<T>`, …).
pub(crate) trait Generic {
    type Of<T: Real>;
}

/// A C object's plan, in the precision chosen at its creation.
pub(crate) enum ByPrecision<G: Generic> {
    F32(G::Of<f32>),
    F64(G::Of<f64>),
}

/// The sample types of the `_f32` and `_f64` calls.
pub(crate) trait Precision: Real {
    /// The calls' suffix.
    const SUFFIX: &'static str;
    fn of<G: Generic>(p: &ByPrecision<G>) -> Option<&G::Of<Self>>;
    fn of_mut<G: Generic>(p: &mut ByPrecision<G>) -> Option<&mut G::Of<Self>>;
}

/// `Precision` for `$t`, held in `ByPrecision::$mine` (the other variant: `$other`).
macro_rules! precision {
    ($t:ty, $suffix:literal, $mine:ident, $other:ident) => {
        impl Precision for $t {
            const SUFFIX: &'static str = $suffix;
            fn of<G: Generic>(p: &ByPrecision<G>) -> Option<&G::Of<$t>> {
                match p {
                    ByPrecision::$mine(t) => Some(t),
                    ByPrecision::$other(_) => None,
                }
            }
            fn of_mut<G: Generic>(p: &mut ByPrecision<G>) -> Option<&mut G::Of<$t>> {
                match p {
                    ByPrecision::$mine(t) => Some(t),
                    ByPrecision::$other(_) => None,
                }
            }
        }
    };
}

precision!(f32, "f32", F32, F64);
precision!(f64, "f64", F64, F32);

/// The C codes of one family's two precisions (e.g. `SG_USFFT_F32` and `SG_USFFT_F64`).
pub(crate) struct Codes {
    /// The codes' common prefix, `SG_USFFT`.
    pub prefix: &'static str,
    pub f32: i32,
    pub f64: i32,
}

impl<G: Generic> ByPrecision<G> {
    /// The plan made by `f32` or `f64`, as `precision` (one of `codes`) asks.
    pub(crate) fn create(
        precision: i32,
        codes: Codes,
        f32: impl FnOnce() -> Result<G::Of<f32>>,
        f64: impl FnOnce() -> Result<G::Of<f64>>,
    ) -> Result<Self> {
        let Codes { prefix, .. } = codes;
        match precision {
            p if p == codes.f32 => f32().map(ByPrecision::F32),
            p if p == codes.f64 => f64().map(ByPrecision::F64),
            p => Err(crate::invalid!(
                "precision is {p}; expected {prefix}_F32 ({}) or {prefix}_F64 ({})",
                codes.f32,
                codes.f64
            )),
        }
    }

    /// The plan for calls on `T`, or an error naming `call` for the other precision;
    /// `handle` is what the caller calls the object ("plan", "layout").
    pub(crate) fn get<T: Precision>(&self, handle: &str, call: &str) -> Result<&G::Of<T>> {
        T::of(self).ok_or_else(|| other_precision::<T>(handle, call))
    }

    /// `get`, for a call that changes the plan.
    pub(crate) fn get_mut<T: Precision>(
        &mut self,
        handle: &str,
        call: &str,
    ) -> Result<&mut G::Of<T>> {
        T::of_mut(self).ok_or_else(|| other_precision::<T>(handle, call))
    }
}

/// The error of a `call`_`T` on a `handle` made for the other precision.
fn other_precision<T: Precision>(handle: &str, call: &str) -> Error {
    let (made, other) = match T::SUFFIX {
        "f32" => ("double", "f64"),
        _ => ("single", "f32"),
    };
    crate::invalid!("the {handle} was created for {made} precision; call {call}_{other}")
}
