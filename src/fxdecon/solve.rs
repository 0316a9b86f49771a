//! Exact solution of the small Hermitian positive semidefinite systems of the normal
//! equations, by Cholesky factorisation.
//!
//! Robust to singular systems: a pivot that falls to `tol` or below (zero data, data
//! that one trace less already predicts exactly) drops its unknown, which is set to 0,
//! instead of dividing by zero. All-zero data therefore give a zero operator.

use num_complex::Complex64 as C64;

/// Solves `A x = b` in place (`b` becomes x). `a` is K × K, row-major, Hermitian; only
/// its lower triangle is read, and it is overwritten by the factor.
pub fn solve_hermitian(a: &mut [C64], b: &mut [C64], k: usize, tol: f64) {
    for j in 0..k {
        // Row j, and the rows below it whose column j is computed from row j.
        let (row_j, below) = a[j * k..].split_at_mut(k);
        let d = row_j[j].re - row_j[..j].iter().map(|v| v.norm_sqr()).sum::<f64>();
        let pivot = if d > tol { d.sqrt() } else { 0.0 };
        row_j[j] = C64::new(pivot, 0.0);
        let inv = if pivot > 0.0 { 1.0 / pivot } else { 0.0 };
        let lj = &row_j[..j];
        for row_i in below.chunks_exact_mut(k) {
            let s = row_i[j] - dot_conj_first(&row_i[..j], lj).conj();
            row_i[j] = s * inv;
        }
    }
    // L y = b
    for i in 0..k {
        let (done, rest) = b.split_at_mut(i);
        let s = rest[0] - dot(&a[i * k..i * k + i], done);
        let l = a[i * k + i].re;
        rest[0] = if l > 0.0 { s / l } else { C64::new(0.0, 0.0) };
    }
    // Lᴴ x = y
    for i in (0..k).rev() {
        let mut s = b[i];
        for p in i + 1..k {
            s -= a[p * k + i].conj() * b[p];
        }
        let l = a[i * k + i].re;
        b[i] = if l > 0.0 { s / l } else { C64::new(0.0, 0.0) };
    }
}

/// Σ conj(x)·y, in two interleaved partial sums (independent chains run in parallel).
/// Its conjugate is Σ x·conj(y), exactly: the imaginary parts differ only in sign.
pub(super) fn dot_conj_first(x: &[C64], y: &[C64]) -> C64 {
    let (mut re, mut im) = ([0.0; 2], [0.0; 2]);
    let (xc, yc) = (x.chunks_exact(2), y.chunks_exact(2));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..2 {
            re[k] += a[k].re * b[k].re + a[k].im * b[k].im;
            im[k] += a[k].re * b[k].im - a[k].im * b[k].re;
        }
    }
    for (a, b) in xr.iter().zip(yr) {
        re[0] += a.re * b.re + a.im * b.im;
        im[0] += a.re * b.im - a.im * b.re;
    }
    C64::new(re[0] + re[1], im[0] + im[1])
}

/// Σ x·y.
fn dot(x: &[C64], y: &[C64]) -> C64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_hermitian_system_and_survives_a_singular_one() {
        // A = M Mᴴ + I for a fixed complex M: Hermitian positive definite.
        let k = 5;
        let m: Vec<C64> = (0..k * k)
            .map(|i| C64::new(((i * 7 % 11) as f64) - 5.0, ((i * 3 % 7) as f64) - 3.0))
            .collect();
        let mut a = vec![C64::new(0.0, 0.0); k * k];
        for i in 0..k {
            for j in 0..k {
                let mut s = if i == j {
                    C64::new(1.0, 0.0)
                } else {
                    C64::new(0.0, 0.0)
                };
                for p in 0..k {
                    s += m[i * k + p] * m[j * k + p].conj();
                }
                a[i * k + j] = s;
            }
        }
        let x: Vec<C64> = (0..k)
            .map(|i| C64::new(i as f64 + 1.0, -(i as f64)))
            .collect();
        let mut b: Vec<C64> = (0..k)
            .map(|i| (0..k).map(|j| a[i * k + j] * x[j]).sum())
            .collect();
        let mut f = a.clone();
        solve_hermitian(&mut f, &mut b, k, 1e-12);
        for i in 0..k {
            assert!((b[i] - x[i]).norm() < 1e-9, "{:?} vs {:?}", b[i], x[i]);
        }
        let mut zero = vec![C64::new(0.0, 0.0); k * k];
        let mut rhs = vec![C64::new(0.0, 0.0); k];
        solve_hermitian(&mut zero, &mut rhs, k, 0.0);
        assert!(rhs.iter().all(|v| v.re == 0.0 && v.im == 0.0));
    }
}
