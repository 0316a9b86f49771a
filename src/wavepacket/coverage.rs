//! The band a layout covers, on the data's DFT grid: a frequency is covered when some box
//! (or its antipode, or a periodic image) holds it, i.e. the windows' normaliser S is
//! positive there. There Σ|ŵ|² = 1; elsewhere C sees nothing, so what data holds outside the
//! band is lost to C and to every inverse (a layout whose cutoff stops the finest level short
//! of the cell's corners, √dim/2, leaves the corners out).

use super::boxfft::BoxFfts;
use super::layout::Layout;
use super::windows::WindowEvaluator;
use crate::sample::Real;
use num_complex::Complex;
use rayon::prelude::*;

/// Per frequency of the data's DFT grid (the data's order, axis 1 fastest; index j of an
/// axis of n is the frequency j/n), whether the layout covers it.
pub fn covered(layout: &Layout) -> Vec<bool> {
    let ev = WindowEvaluator::new(layout);
    let [n1, n2, n3] = layout.shape;
    (0..n1 * n2 * n3)
        .into_par_iter()
        .map(|i| {
            let j = [i % n1, i / n1 % n2, i / (n1 * n2)];
            let xi: [f64; 3] = std::array::from_fn(|a| j[a] as f64 / layout.shape[a] as f64);
            ev.normaliser(&xi) > 0.0
        })
        .collect()
}

/// The data's DFT (unnormalised, axis 1 fastest).
fn spectrum<T: Real>(shape: [usize; 3], data: &[T]) -> (BoxFfts<T>, Vec<Complex<T>>) {
    let ffts = BoxFfts::new(shape.into_iter());
    let mut u: Vec<Complex<T>> = data.iter().map(|&v| Complex::new(v, T::zero())).collect();
    ffts.transform(&mut u, shape, false);
    (ffts, u)
}

/// The fraction of `data`'s energy (n1·n2[·n3] samples, axis 1 fastest) at frequencies
/// `covered` (as `covered` gives it) leaves out: what no box of the layout holds.
pub fn uncovered_energy<T: Real>(layout: &Layout, covered: &[bool], data: &[T]) -> f64 {
    let (_, u) = spectrum(layout.shape, data);
    let (mut out, mut all) = (0.0, 0.0);
    for (z, &c) in u.iter().zip(covered) {
        let e = z.norm_sqr().to_f64().unwrap();
        all += e;
        if !c {
            out += e;
        }
    }
    if all > 0.0 {
        out / all
    } else {
        0.0
    }
}

/// `data` with its frequencies outside the band (`covered`) removed: the part of it the
/// layout holds, which the inverse gives back.
pub fn band_limited<T: Real>(layout: &Layout, covered: &[bool], data: &[T]) -> Vec<T> {
    let (ffts, mut u) = spectrum(layout.shape, data);
    for (z, &c) in u.iter_mut().zip(covered) {
        if !c {
            *z = Complex::new(T::zero(), T::zero());
        }
    }
    ffts.transform(&mut u, layout.shape, true);
    let s = T::from_f64(1.0 / data.len() as f64).unwrap();
    u.iter().map(|z| z.re * s).collect()
}
