//! A plan's tables as the GPU kernels read them: the day filter's Butterworth sections and
//! the whitening taper (made once with a CUDA plan, and by each host preprocess).

use crate::xcorr::butterworth::{cascade_step, Section};
use crate::xcorr::geometry::Geometry;
use crate::xcorr::options::{FreqNorm, Options};
use crate::xcorr::preprocess as pre;

/// Samples per segment of the GPU's day filter: a day's segments are filtered by threads
/// of their own, each from the state the segments before it leave (`segment_transition`).
pub(crate) const FILTER_SEGMENT: usize = 1024;

/// The filter table and the whitening taper. The table holds the sections (5 values each:
/// b0, b1, b2, a1, a2), then their `segment_transition`; one 0 without any section.
pub fn plan_tables(sections: &[Section], g: &Geometry, o: &Options) -> (Vec<f64>, Vec<f32>) {
    let mut sos: Vec<f64> = sections
        .iter()
        .flat_map(|s| [s.b[0], s.b[1], s.b[2], s.a[0], s.a[1]])
        .collect();
    sos.extend(segment_transition(sections));
    let sos = if sos.is_empty() { vec![0.0] } else { sos };
    (sos, whitening_taper(g, o))
}

/// The cascade's state after `FILTER_SEGMENT` samples of zero input, as a matrix acting on
/// the state before them: row-major, 2·sections square, the state being (z0, z1) of each
/// section in turn. A segment's state at its end is this matrix times its state at the
/// start, plus what its own samples leave from a zero state (the filter is linear).
fn segment_transition(sections: &[Section]) -> Vec<f64> {
    let w = 2 * sections.len();
    let mut m = vec![0.0; w * w];
    for j in 0..w {
        let mut state = vec![[0.0f64; 2]; sections.len()];
        state[j / 2][j % 2] = 1.0;
        for _ in 0..FILTER_SEGMENT {
            cascade_step(sections, &mut state, 0.0);
        }
        for (i, v) in state.iter().flatten().enumerate() {
            m[i * w + j] = *v;
        }
    }
    m
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

#[cfg(test)]
mod tests {
    use super::{segment_transition, FILTER_SEGMENT};
    use crate::xcorr::butterworth::{bandpass, cascade_step};

    /// The GPU's day filter in segments, on the CPU: each segment's end state from a zero
    /// state, the true start states carried with the transition, each segment filtered from
    /// its start: the same as one pass over the day.
    #[test]
    fn segments_carried_by_the_transition_filter_as_one_pass() {
        // Poles near the unit circle (0.045 Hz at 20 Hz): a segment's state lasts long.
        let sections = bandpass(4, 0.045, 2.2, 20.0);
        let (s, w) = (sections.len(), 2 * sections.len());
        let n = 3 * FILTER_SEGMENT + 517;
        let x: Vec<f64> = (0..n)
            .map(|t| ((t * 7919) % 1009) as f64 / 1009.0 - 0.5)
            .collect();
        let mut state = vec![[0.0; 2]; s];
        let whole: Vec<f64> = x
            .iter()
            .map(|&v| cascade_step(&sections, &mut state, v))
            .collect();

        let m = segment_transition(&sections);
        let mut start = vec![0.0; w];
        let mut pieces = Vec::new();
        for seg in x.chunks(FILTER_SEGMENT) {
            let mut zero = vec![[0.0; 2]; s];
            seg.iter().for_each(|&v| {
                cascade_step(&sections, &mut zero, v);
            });
            let mut from: Vec<[f64; 2]> = start.chunks(2).map(|c| [c[0], c[1]]).collect();
            pieces.extend(seg.iter().map(|&v| cascade_step(&sections, &mut from, v)));
            let end: Vec<f64> = (0..w)
                .map(|i| zero[i / 2][i % 2] + (0..w).map(|j| m[i * w + j] * start[j]).sum::<f64>())
                .collect();
            start = end;
        }
        let scale = whole.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let err = whole
            .iter()
            .zip(&pieces)
            .fold(0.0f64, |a, (p, q)| a.max((p - q).abs()));
        assert!(
            scale > 1e-3 && err <= 1e-10 * scale,
            "error {err:.2e} of {scale:.2e}"
        );
    }
}
