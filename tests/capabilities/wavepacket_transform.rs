//! The wave-packet transform on the CPU: exact adjoint (dot-product test), partition of unity
//! of the windows on the discrete layout, inverse round trips on real data (Penobscot 2D,
//! F3 3D), the localisation of one packet, and bad input.

use crate::wavepacket_support;
use crate::wavepacket_support::partition_sum;

use num_complex::Complex;
use seisgpu::sample::Real;
use seisgpu::wavepacket::inverse::CorrectionFilter;
use seisgpu::wavepacket::layout::Layout;
use seisgpu::wavepacket::windows::WindowEvaluator;
use seisgpu::wavepacket::{LayoutOptions, WavepacketPlan};
use seisgpu::Error;
use wavepacket_support::*;

fn opts(directions: usize, levels: usize, tolerance: f64) -> LayoutOptions {
    LayoutOptions {
        directions,
        levels,
        tolerance,
        ..Default::default()
    }
}

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x).unwrap()).collect()
}

fn to_f64<T: Real>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64().unwrap()).collect()
}

/// |⟨C f, c⟩ − ⟨f, C* c⟩| / (‖C f‖·‖c‖) for random f and c (real inner product).
fn adjoint_mismatch<T: Real>(shape: &[usize], o: &LayoutOptions, seed: u64) -> f64 {
    let plan = WavepacketPlan::<T>::new(cpu(), shape, o).unwrap();
    let l = plan.layout();
    let mut rng = Rng(seed);
    let f: Vec<f64> = (0..l.n_samples()).map(|_| rng.uniform()).collect();
    let c: Vec<Complex<f64>> = (0..l.n_coefficients).map(|_| rng.complex()).collect();
    let ct: Vec<Complex<T>> = c
        .iter()
        .map(|z| Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()))
        .collect();
    let mut cf = vec![Complex::new(T::zero(), T::zero()); l.n_coefficients];
    plan.forward(&to_t::<T>(&f), &mut cf).unwrap();
    let mut ac = vec![T::zero(); l.n_samples()];
    plan.adjoint(&ct, &mut ac).unwrap();
    let cf: Vec<Complex<f64>> = cf
        .iter()
        .map(|z| Complex::new(z.re.to_f64().unwrap(), z.im.to_f64().unwrap()))
        .collect();
    let lhs: f64 = cf.iter().zip(&c).map(|(a, b)| (a.conj() * b).re).sum();
    let rhs: f64 = f.iter().zip(to_f64(&ac)).map(|(a, b)| a * b).sum();
    let scale = cf.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
        * c.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
    let e = (lhs - rhs).abs() / scale;
    println!(
        "{shape:?} {} dirs {} levels, {} coefficients (redundancy {:.1}): <Cf,c> {lhs:.9e} \
         <f,C*c> {rhs:.9e} mismatch {e:.2e}",
        l.n_directions_full,
        l.levels,
        l.n_coefficients,
        l.redundancy()
    );
    e
}

#[test]
fn adjoint_dot_product_2d_and_3d() {
    // Odd and non-cubic shapes.
    let cases: [(&[usize], usize, usize); 3] =
        [(&[37, 29], 8, 2), (&[24, 33], 6, 1), (&[13, 10, 9], 6, 1)];
    for (shape, dirs, levels) in cases {
        assert!(adjoint_mismatch::<f64>(shape, &opts(dirs, levels, 1e-12), 3) < 1e-11);
        assert!(adjoint_mismatch::<f32>(shape, &opts(dirs, levels, 1e-6), 4) < 1e-5);
    }
}

/// Σ over boxes and periodic images of ½(ŵ_b(ξ)² + ŵ_b(−ξ)²) at random frequencies of the
/// cell (the boxes' rectangles as they are, nothing cut off added back).
fn partition_error(layout: &Layout, points: usize) -> f64 {
    let ev = WindowEvaluator::new(layout);
    let mut rng = Rng(17);
    let mut worst: f64 = 0.0;
    for _ in 0..points {
        let xi: [f64; 3] = std::array::from_fn(|d| {
            if d < layout.dim {
                rng.uniform() / 2.0
            } else {
                0.0
            }
        });
        let sum = partition_sum(layout, &ev, xi);
        worst = worst.max((sum - 1.0).abs());
    }
    worst
}

#[test]
fn windows_are_a_partition_of_unity() {
    let l2 = Layout::new(2, &[70, 51], &opts(16, 3, 1e-6)).unwrap();
    let e2 = partition_error(&l2, 3000);
    let l3 = Layout::new(3, &[20, 17, 14], &opts(26, 2, 1e-6)).unwrap();
    let e3 = partition_error(&l3, 300);
    // 350 directions: narrow cones, so the normaliser's direction cells skip most lattices;
    // the sum here runs over every box.
    let l350 = Layout::new(3, &[12, 12, 12], &opts(350, 1, 1e-6)).unwrap();
    let e350 = partition_error(&l350, 60);
    println!("max |Σ w² − 1|: 2D {e2:.2e}, 3D {e3:.2e}, 3D 350 directions {e350:.2e}");
    assert!(e2 < 1e-6 && e3 < 1e-6 && e350 < 1e-6);
    // The plan stores exactly these windows (times the lattice cell factor).
    let plan = WavepacketPlan::<f64>::new(cpu(), &[70, 51], &opts(16, 3, 1e-6)).unwrap();
    let l = plan.layout();
    let ev = WindowEvaluator::new(l);
    let mut worst: f64 = 0.0;
    for b in [0, 1, 5, l.boxes.len() - 1] {
        let bx = &l.boxes[b];
        let lat = &l.lattices[bx.lattice];
        let w = plan.window(b).unwrap();
        for (k, &stored) in w.iter().enumerate().step_by(7) {
            let t = [
                bx.lo[0] + (k % bx.shape[0]) as i64,
                bx.lo[1] + (k / bx.shape[0]) as i64,
                0,
            ];
            let want = ev.cell_factor(bx.lattice) * ev.window(b, &lat.point(t));
            worst = worst.max((stored - want).abs() * lat.period[0]);
        }
    }
    assert!(worst < 1e-9, "stored windows differ by {worst:e}");
    // On the discrete lattices the frame is tight to about 2 % on Penobscot data.
    let f = penobscot(300, 70, 200, 51);
    let mut c = vec![Complex::new(0.0, 0.0); l.n_coefficients];
    plan.forward(&f, &mut c).unwrap();
    let ratio = c.iter().map(|z| z.norm_sqr()).sum::<f64>() / f.iter().map(|v| v * v).sum::<f64>();
    println!("‖Cf‖²/‖f‖² = {ratio:.5}");
    assert!((ratio - 1.0).abs() < 0.02);
}

fn round_trip<T: Real>(shape: &[usize], o: &LayoutOptions, f: &[f64], tol: f64) -> (f64, usize) {
    let plan = WavepacketPlan::<T>::new(cpu(), shape, o).unwrap();
    let l = plan.layout();
    let mut c = vec![Complex::new(T::zero(), T::zero()); l.n_coefficients];
    plan.forward(&to_t::<T>(f), &mut c).unwrap();
    let filter = CorrectionFilter::new(&plan).unwrap();
    let mut x = vec![T::zero(); l.n_samples()];
    let rep = plan.inverse(&filter, &c, &mut x, tol, 60).unwrap();
    let mut adj = vec![T::zero(); l.n_samples()];
    plan.adjoint(&c, &mut adj).unwrap();
    let e = rel_l2(&to_f64(&x), f);
    println!(
        "{shape:?} {}: C* alone {:.2e}, inverse {:.2e} after {} CG iterations (residual {:.1e})",
        std::any::type_name::<T>(),
        rel_l2(&to_f64(&adj), f),
        e,
        rep.iterations,
        rep.residual
    );
    (e, rep.iterations)
}

#[test]
fn inverse_round_trip_on_penobscot_2d() {
    let shape = [96, 64];
    let f = penobscot(400, 96, 250, 64);
    let (e64, _) = round_trip::<f64>(&shape, &opts(16, 2, 1e-12), &f, 1e-11);
    assert!(e64 <= 1e-9);
    let (e32, _) = round_trip::<f32>(&shape, &opts(16, 2, 1e-6), &f, 2e-6);
    assert!(e32 <= 1e-5);
}

#[test]
fn inverse_round_trip_on_f3_3d() {
    let shape = [32, 18, 23];
    let f = f3(30, 32, 18, 23);
    let (e32, _) = round_trip::<f32>(&shape, &opts(6, 1, 1e-6), &f, 2e-6);
    assert!(e32 <= 1e-5);
    let shape = [16, 12, 10];
    let f = f3(40, 16, 12, 10);
    let (e64, _) = round_trip::<f64>(&shape, &opts(6, 1, 1e-10), &f, 1e-10);
    assert!(e64 <= 1e-9);
}

/// 2D DFT power of a real n1 × n2 array at integer frequencies, by direct sums.
fn power_spectrum(p: &[f64], n1: usize, n2: usize) -> Vec<f64> {
    let mut out = vec![0.0; n1 * n2];
    for k2 in 0..n2 {
        for k1 in 0..n1 {
            let mut z = Complex::new(0.0, 0.0);
            for x2 in 0..n2 {
                for x1 in 0..n1 {
                    let ph = -std::f64::consts::TAU
                        * ((k1 * x1) as f64 / n1 as f64 + (k2 * x2) as f64 / n2 as f64);
                    z += Complex::from_polar(p[x2 * n1 + x1], ph);
                }
            }
            out[k2 * n1 + k1] = z.norm_sqr();
        }
    }
    out
}

#[test]
fn one_packet_is_localised() {
    let (n1, n2) = (48usize, 40usize);
    let o = opts(16, 2, 1e-10);
    let plan = WavepacketPlan::<f64>::new(cpu(), &[n1, n2], &o).unwrap();
    let l = plan.layout();
    // The finest box of direction 2 (45°); coefficient y = 0 sits at the data's centre.
    let b = l
        .boxes
        .iter()
        .position(|b| b.level == 2 && b.direction == Some(2))
        .unwrap();
    let bx = &l.boxes[b];
    assert_eq!(l.position(b, [0, 0, 0]), [0.0, 0.0, 0.0]);
    let mut c = vec![Complex::new(0.0, 0.0); l.n_coefficients];
    c[bx.offset] = Complex::new(1.0, 0.0);
    let mut p = vec![0.0; n1 * n2];
    plan.adjoint(&c, &mut p).unwrap();
    let total: f64 = p.iter().map(|v| v * v).sum();
    let (c1, c2) = ((n1 / 2) as f64, (n2 / 2) as f64);
    let near: f64 = (0..n1 * n2)
        .filter(|i| {
            let (x1, x2) = ((i % n1) as f64 - c1, (i / n1) as f64 - c2);
            x1 * x1 + x2 * x2 <= 36.0
        })
        .map(|i| p[i] * p[i])
        .sum();
    let peak = (0..n1 * n2)
        .max_by(|&a, &b| p[a].abs().partial_cmp(&p[b].abs()).unwrap())
        .unwrap();
    let (pk1, pk2) = (peak % n1, peak / n1);
    // Spectrum: energy within the box's direction cell (±45° ± the window's angular reach) and
    // the level's band (its radial reach either side of the centre).
    let spec = power_spectrum(&p, n1, n2);
    let nu = l.directions[2];
    let s = l.angular_std;
    let radial = l.radial();
    let rho = radial.centre(2);
    let (theta, band) = (radial.reach * s, (radial.reach / l.alpha).exp());
    let (mut inside, mut all) = (0.0, 0.0);
    for k2 in 0..n2 {
        for k1 in 0..n1 {
            let f1 = if k1 > n1 / 2 {
                k1 as f64 - n1 as f64
            } else {
                k1 as f64
            } / n1 as f64;
            let f2 = if k2 > n2 / 2 {
                k2 as f64 - n2 as f64
            } else {
                k2 as f64
            } / n2 as f64;
            let e = spec[k2 * n1 + k1];
            all += e;
            // The spectrum is periodic: a box near the cell's corner continues in the images.
            let mut hit = false;
            for m1 in -1..=1 {
                for m2 in -1..=1 {
                    let (g1, g2) = (f1 + m1 as f64, f2 + m2 as f64);
                    let r = (g1 * g1 + g2 * g2).sqrt();
                    let cos = ((g1 * nu[0] + g2 * nu[1]) / r).abs().min(1.0);
                    hit |= r > 0.0 && cos.acos() <= theta && r >= rho / band && r <= rho * band;
                }
            }
            if hit {
                inside += e;
            }
        }
    }
    println!(
        "packet: energy {total:.4}, within 6 samples of the centre {:.5}, peak at ({pk1}, {pk2}), \
         spectral energy in the direction cell and band {:.5}",
        near / total,
        inside / all
    );
    assert!(near / total > 0.98);
    assert!((pk1 as i64 - 24).abs() <= 1 && (pk2 as i64 - 20).abs() <= 1);
    assert!(inside / all > 0.999);
}

#[test]
fn bad_input_is_refused() {
    let ctx = cpu();
    let err = |r: Result<WavepacketPlan<f64>, Error>| r.err().expect("should fail");
    let e = err(WavepacketPlan::new(
        ctx.clone(),
        &[7, 40],
        &opts(8, 1, 1e-6),
    ));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = err(WavepacketPlan::new(
        ctx.clone(),
        &[16, 16, 16],
        &opts(351, 1, 1e-6),
    ));
    assert!(matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("Lebedev"));
    let e = err(WavepacketPlan::new(
        ctx.clone(),
        &[16, 16],
        &opts(7, 1, 1e-6),
    ));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = err(WavepacketPlan::new(
        ctx.clone(),
        &[16, 16, 16, 16],
        &opts(6, 1, 1e-6),
    ));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let plan = WavepacketPlan::<f64>::new(ctx, &[16, 20], &opts(8, 1, 1e-8)).unwrap();
    let nc = plan.layout().n_coefficients;
    let sentinel = Complex::new(7.0, 7.0);
    let mut c = vec![sentinel; nc];
    let e = plan.forward(&[0.0; 319], &mut c).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    let mut f = vec![1.0; 320];
    f[33] = f64::NAN;
    let e = plan.forward(&f, &mut c).unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)), "{e}");
    assert!(
        c.iter().all(|z| *z == sentinel),
        "nothing written on failure"
    );
    let mut out = vec![5.0; 320];
    let e = plan.adjoint(&c[1..], &mut out).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    assert!(out.iter().all(|&v| v == 5.0));
}
