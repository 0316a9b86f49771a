//! The direction of a transform and the caller's arrays, as both backends take them.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Inverse,
}

/// The caller's arrays: one array transformed in place, or an input and an output.
pub enum Traces<'a, T> {
    InPlace(&'a mut [T]),
    Separate { input: &'a [T], output: &'a mut [T] },
}

impl<T> Traces<'_, T> {
    pub fn input(&self) -> &[T] {
        match self {
            Traces::InPlace(d) => d,
            Traces::Separate { input, .. } => input,
        }
    }
}
