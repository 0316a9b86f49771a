//! The first guess of POCS interpolation: each dead trace linearly interpolated between its
//! nearest live neighbours along axis 2 (the nearest live trace's copy beyond the outermost
//! one). In 3D, lines of axis 2 with no live trace are then interpolated the same way along
//! axis 3 from the lines that have one.

use crate::sample::Real;

/// Fills the dead traces of `data` (n1 × n2 × n3, axis 1 fastest; `live[t]` for trace
/// t = i2 + n2·i3) in place; with no live trace at all they become zero.
pub fn fill_linear<T: Real>(shape: [usize; 3], data: &mut [T], live: &[bool]) {
    let [n1, n2, n3] = shape;
    let trace = |t: usize| t * n1..(t + 1) * n1;
    let mut line_live = vec![false; n3];
    for (i3, line) in line_live.iter_mut().enumerate() {
        let known: Vec<usize> = (0..n2).filter(|&i2| live[i2 + n2 * i3]).collect();
        *line = !known.is_empty();
        let tr = |i2: usize| trace(i2 + n2 * i3);
        fill_along(n2, &known, |dst, a, b, w| {
            for (k, (ia, ib)) in tr(dst).zip(tr(a).zip(tr(b))) {
                data[k] = blend(data[ia], data[ib], w);
            }
        });
    }
    let lines: Vec<usize> = (0..n3).filter(|&i3| line_live[i3]).collect();
    if lines.is_empty() {
        for t in 0..n2 * n3 {
            data[trace(t)].fill(T::zero());
        }
        return;
    }
    // Lines of no live trace: whole lines of axis 2 at once.
    let line = |i3: usize| i3 * n1 * n2..(i3 + 1) * n1 * n2;
    fill_along(n3, &lines, |dst, a, b, w| {
        for (k, (ia, ib)) in line(dst).zip(line(a).zip(line(b))) {
            data[k] = blend(data[ia], data[ib], w);
        }
    });
}

fn blend<T: Real>(a: T, b: T, w: f64) -> T {
    let w = T::from_f64(w).unwrap();
    (T::one() - w) * a + w * b
}

/// For each of `n` positions not in `known` (ascending, non-empty unless nothing is to be
/// done), calls `set(position, a, b, w)`: the value is (1 − w)·value(a) + w·value(b).
fn fill_along(n: usize, known: &[usize], mut set: impl FnMut(usize, usize, usize, f64)) {
    let (Some(&first), Some(&last)) = (known.first(), known.last()) else {
        return;
    };
    let mut next = 0; // index in `known` of the first known position ≥ i
    for i in 0..n {
        while next < known.len() && known[next] < i {
            next += 1;
        }
        if next < known.len() && known[next] == i {
            continue;
        }
        if i < first {
            set(i, first, first, 0.0);
        } else if i > last {
            set(i, last, last, 0.0);
        } else {
            let (a, b) = (known[next - 1], known[next]);
            set(i, a, b, (i - a) as f64 / (b - a) as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2D: interior gaps linear, edges copied; 3D: a dead line from its neighbouring lines.
    #[test]
    fn gaps_are_filled_linearly() {
        // Two samples per trace; trace t of a live line holds (t, 10t).
        let live2 = [false, true, false, false, true, false];
        let mut d: Vec<f64> = (0..6)
            .flat_map(|t| {
                if live2[t] {
                    [t as f64, 10.0 * t as f64]
                } else {
                    [f64::NAN; 2]
                }
            })
            .collect();
        fill_linear([2, 6, 1], &mut d, &live2);
        let want: Vec<f64> = [1.0, 1.0, 2.0, 3.0, 4.0, 4.0]
            .iter()
            .flat_map(|&v| [v, 10.0 * v])
            .collect();
        for (a, b) in d.iter().zip(&want) {
            assert!((a - b).abs() < 1e-12, "{d:?}");
        }
        // 3D, 1 sample, 2 × 3 traces: line 1 (i3 = 1) all dead, between lines 0 and 2.
        let live3 = [true, true, false, false, true, true];
        let mut d = vec![1.0, 3.0, f64::NAN, f64::NAN, 5.0, 9.0];
        fill_linear([1, 2, 3], &mut d, &live3);
        assert_eq!(d, vec![1.0, 3.0, 3.0, 6.0, 5.0, 9.0]);
        let mut d = vec![f64::NAN; 4];
        fill_linear([2, 2, 1], &mut d, &[false, false]);
        assert_eq!(d, vec![0.0; 4]);
    }
}
