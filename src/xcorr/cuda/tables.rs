//! A plan's tables as the GPU kernels read them: the day filter's Butterworth sections and
//! the whitening taper (made once with a CUDA plan, and by each host preprocess).

use crate::xcorr::butterworth::Section;
use crate::xcorr::geometry::Geometry;
use crate::xcorr::options::{FreqNorm, Options};
use crate::xcorr::preprocess as pre;

/// The sections (5 values each: b0, b1, b2, a1, a2; one 0 without any) and the whitening
/// taper.
pub fn plan_tables(sections: &[Section], g: &Geometry, o: &Options) -> (Vec<f64>, Vec<f32>) {
    let sos: Vec<f64> = sections
        .iter()
        .flat_map(|s| [s.b[0], s.b[1], s.b[2], s.a[0], s.a[1]])
        .collect();
    let sos = if sos.is_empty() { vec![0.0] } else { sos };
    (sos, whitening_taper(g, o))
}

/// The whitening's cos² factors on the stored band (which starts at ix00); ones without
/// whitening.
fn whitening_taper(g: &Geometry, o: &Options) -> Vec<f32> {
    let mut taper = vec![1.0f32; g.band_len];
    if o.freq_norm != FreqNorm::None {
        let mut full = vec![1.0f64; g.ix11 - g.ix00];
        pre::cos2_tapers(&mut full, g, |v, f| *v *= f);
        for (k, t) in taper.iter_mut().enumerate() {
            *t = full[k] as f32;
        }
    }
    taper
}
