//! Volumes in tiles (the seed's §3.5) on the CPU: the exact adjoint, the inverse round trip
//! against the one-pass one where both fit, an event across a tile border kept as sparse as
//! inside a tile (the tiles' grids are one common grid), and bad input.

use crate::wavepacket_support;

use num_complex::Complex;
use seisgpu::sample::Real;
use seisgpu::wavepacket::inverse::CorrectionFilter;
use seisgpu::wavepacket::tiles::TiledPlan;
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

fn zeros<T: Real>(n: usize) -> Vec<Complex<T>> {
    vec![Complex::new(T::zero(), T::zero()); n]
}

/// |⟨C f, c⟩ − ⟨f, C* c⟩| / (‖C f‖·‖c‖) for random f and c (real inner product).
fn adjoint_mismatch<T: Real>(volume: &[usize], tile: &[usize], o: &LayoutOptions) -> f64 {
    let plan = TiledPlan::<T>::new(cpu(), volume, tile, o).unwrap();
    let n: usize = volume.iter().product();
    let m = plan.n_coefficients();
    let mut rng = Rng(5);
    let f: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let c: Vec<Complex<f64>> = (0..m).map(|_| rng.complex()).collect();
    let ct: Vec<Complex<T>> = c
        .iter()
        .map(|z| Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()))
        .collect();
    let mut cf = zeros::<T>(m);
    plan.forward(&to_t::<T>(&f), &mut cf).unwrap();
    let mut ac = vec![T::zero(); n];
    plan.adjoint(&ct, &mut ac).unwrap();
    let lhs: f64 = cf
        .iter()
        .zip(&c)
        .map(|(a, b)| a.re.to_f64().unwrap() * b.re + a.im.to_f64().unwrap() * b.im)
        .sum();
    let rhs: f64 = f.iter().zip(to_f64(&ac)).map(|(a, b)| a * b).sum();
    let norm_cf = cf
        .iter()
        .map(|z| z.norm_sqr().to_f64().unwrap())
        .sum::<f64>()
        .sqrt();
    let norm_c = c.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
    let e = (lhs - rhs).abs() / (norm_cf * norm_c);
    let per_tile = plan.layout().n_coefficients * plan.tiles().iter().product::<usize>();
    println!(
        "{volume:?} in {tile:?} tiles ({:?}), {}: {m} coefficients ({per_tile} in the tiles \
         apart), mismatch {e:.2e}",
        plan.tiles(),
        std::any::type_name::<T>()
    );
    e
}

#[test]
fn adjoint_dot_product_2d_and_3d() {
    // Volumes that are not multiples of the tile: the last tiles are padded.
    let cases: [(&[usize], &[usize], usize, usize); 2] = [
        (&[50, 37], &[24, 20], 8, 2),
        (&[15, 13, 11], &[9, 8, 8], 6, 1),
    ];
    for (volume, tile, dirs, levels) in cases {
        assert!(adjoint_mismatch::<f64>(volume, tile, &opts(dirs, levels, 1e-12)) < 1e-11);
        assert!(adjoint_mismatch::<f32>(volume, tile, &opts(dirs, levels, 1e-6)) < 1e-5);
    }
}

/// ‖inverse(C f) − f‖/‖f‖ through the tiled plan and through one plan of the whole volume.
fn round_trips<T: Real>(
    volume: &[usize],
    tile: &[usize],
    o: &LayoutOptions,
    f: &[f64],
    tol: f64,
) -> (Vec<f64>, Vec<f64>) {
    let tiled = TiledPlan::<T>::new(cpu(), volume, tile, o).unwrap();
    let mut c = zeros::<T>(tiled.n_coefficients());
    tiled.forward(&to_t::<T>(f), &mut c).unwrap();
    let mut x = vec![T::zero(); f.len()];
    let rep = tiled.inverse(&c, &mut x, tol, 60).unwrap();
    let one = WavepacketPlan::<T>::new(cpu(), volume, o).unwrap();
    let mut c1 = zeros::<T>(one.layout().n_coefficients);
    one.forward(&to_t::<T>(f), &mut c1).unwrap();
    let filter = CorrectionFilter::new(&one).unwrap();
    let mut x1 = vec![T::zero(); f.len()];
    let rep1 = one.inverse(&filter, &c1, &mut x1, tol, 60).unwrap();
    let (x, x1) = (to_f64(&x), to_f64(&x1));
    println!(
        "{volume:?} {}: tiled {:?} inverse {:.2e} after {} iterations, one pass {:.2e} after {}; \
         tiled vs one pass {:.2e}",
        std::any::type_name::<T>(),
        tiled.tiles(),
        rel_l2(&x, f),
        rep.iterations,
        rel_l2(&x1, f),
        rep1.iterations,
        rel_l2(&x, &x1)
    );
    (x, x1)
}

#[test]
fn tiled_round_trip_equals_the_one_pass_round_trip_on_penobscot() {
    let (volume, tile) = ([96, 120], [96, 64]);
    let f = penobscot(400, 96, 250, 120);
    let o = opts(16, 2, 1e-12);
    let (x, x1) = round_trips::<f64>(&volume, &tile, &o, &f, 1e-11);
    assert!(rel_l2(&x, &f) <= 1e-9 && rel_l2(&x1, &f) <= 1e-9);
    assert!(rel_l2(&x, &x1) <= 2e-9);
    let o = opts(16, 2, 1e-6);
    let (x, x1) = round_trips::<f32>(&volume, &tile, &o, &f, 2e-6);
    assert!(rel_l2(&x, &f) <= 1e-5 && rel_l2(&x1, &f) <= 1e-5);
    assert!(rel_l2(&x, &x1) <= 2e-5);
}

/// How many of the largest coefficients hold `share` of the energy.
fn count_for_energy(c: &[Complex<f64>], share: f64) -> usize {
    let mut e: Vec<f64> = c.iter().map(|z| z.norm_sqr()).collect();
    e.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let total: f64 = e.iter().sum();
    let mut acc = 0.0;
    e.iter()
        .position(|v| {
            acc += v;
            acc >= share * total
        })
        .unwrap()
        + 1
}

/// A dipping wavelet in a Gaussian envelope centred at (c1, c2) of an n1 × n2 section.
fn event(n1: usize, n2: usize, c1: f64, c2: f64) -> Vec<f64> {
    let mut v = vec![0.0; n1 * n2];
    for x2 in 0..n2 {
        for x1 in 0..n1 {
            let (d1, d2) = (x1 as f64 - c1, x2 as f64 - c2);
            let phase = std::f64::consts::TAU * (0.11 * d1 + 0.05 * d2);
            v[x2 * n1 + x1] = phase.cos() * (-(d1 * d1 + d2 * d2) / (2.0 * 8.0 * 8.0)).exp();
        }
    }
    v
}

#[test]
fn an_event_across_a_tile_border_is_as_sparse_as_inside_a_tile() {
    let (n1, n2, t1) = (128usize, 64usize, 64usize);
    let o = opts(16, 2, 1e-10);
    let tiled = TiledPlan::<f64>::new(cpu(), &[n1, n2], &[t1, n2], &o).unwrap();
    let m = tiled.n_coefficients();
    let sparsity = |f: &[f64]| {
        let mut c = zeros::<f64>(m);
        tiled.forward(f, &mut c).unwrap();
        count_for_energy(&c, 0.99)
    };
    let across = event(n1, n2, 64.0, 32.0);
    let inside = event(n1, n2, 32.0, 32.0);
    let (n_across, n_inside) = (sparsity(&across), sparsity(&inside));
    // The same event decomposed as two cut pieces, one per tile, on grids of their own.
    let plan = WavepacketPlan::<f64>::new(cpu(), &[t1, n2], &o).unwrap();
    let mut pieces = Vec::new();
    for t in 0..2 {
        let piece: Vec<f64> = (0..t1 * n2)
            .map(|i| across[(i / t1) * n1 + t * t1 + i % t1])
            .collect();
        let mut c = zeros::<f64>(plan.layout().n_coefficients);
        plan.forward(&piece, &mut c).unwrap();
        pieces.extend(c);
    }
    let n_cut = count_for_energy(&pieces, 0.99);
    // And by one plan of the whole section.
    let whole = WavepacketPlan::<f64>::new(cpu(), &[n1, n2], &o).unwrap();
    let mut c = zeros::<f64>(whole.layout().n_coefficients);
    whole.forward(&across, &mut c).unwrap();
    let n_whole = count_for_energy(&c, 0.99);
    println!(
        "coefficients holding 99 % of the energy: inside a tile {n_inside}, across the border \
         {n_across} (common grid), {n_cut} (two cut pieces), {n_whole} (one plan of the whole)"
    );
    assert!((n_across as f64) < 1.2 * n_inside as f64);
    assert!((n_across as f64) < 1.2 * n_whole as f64);
    assert!((n_cut as f64) > 1.4 * n_across as f64);
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let o = opts(8, 1, 1e-6);
    let e = TiledPlan::<f64>::new(cpu(), &[40, 30], &[20, 20, 20], &o)
        .err()
        .unwrap();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = TiledPlan::<f64>::new(cpu(), &[40, 30], &[20, 4], &o)
        .err()
        .unwrap();
    assert!(e.to_string().contains("at least 8"), "{e}");
    let e = TiledPlan::<f64>::new(cpu(), &[40, 0], &[20, 20], &o)
        .err()
        .unwrap();
    assert!(e.to_string().contains("volume shape[1] is 0"), "{e}");
    let plan = TiledPlan::<f64>::new(cpu(), &[40, 30], &[20, 20], &o).unwrap();
    assert_eq!(plan.tiles(), [2, 2, 1]);
    let m = plan.n_coefficients();
    let sentinel = Complex::new(-7.0, 3.0);
    let mut c = vec![sentinel; m];
    let mut f = vec![1.0; 1200];
    let e = plan.forward(&f[..1199], &mut c).unwrap_err();
    assert!(e.to_string().contains("1199 samples"), "{e}");
    f[77] = f64::NAN;
    let e = plan.forward(&f, &mut c).unwrap_err();
    assert!(
        matches!(e, Error::NonFinite(_)) && e.to_string().contains("77"),
        "{e}"
    );
    assert!(c.iter().all(|&z| z == sentinel));
    let mut c_short = vec![sentinel; m - 1];
    f[77] = 0.5;
    let e = plan.forward(&f, &mut c_short).unwrap_err();
    assert!(e.to_string().contains("coefficient array"), "{e}");
    c[m / 2] = Complex::new(f64::INFINITY, 0.0);
    let mut out = vec![-7.0; 1200];
    let e = plan.adjoint(&c, &mut out).unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)), "{e}");
    let e = plan.inverse(&c, &mut out, 1e-6, 10).unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)), "{e}");
    assert!(out.iter().all(|&v| v == -7.0));
}

/// Tiles dealt out over two contexts (one thread each) give what one context gives, bit for
/// bit (the calling thread adds the tiles in the same order), forward, adjoint and inverse.
#[test]
fn tiles_dealt_over_two_contexts_equal_one_context() {
    let (volume, tile) = ([96, 150], [96, 64]);
    let f = penobscot(400, 96, 250, 150);
    let o = opts(16, 2, 1e-12);
    let one = TiledPlan::<f64>::new(cpu(), &volume, &tile, &o).unwrap();
    let two = TiledPlan::<f64>::on_contexts(&[cpu(), cpu()], &volume, &tile, &o).unwrap();
    assert_eq!((one.n_contexts(), two.n_contexts()), (1, 2));
    let m = one.n_coefficients();
    let (mut c1, mut c2) = (zeros::<f64>(m), zeros::<f64>(m));
    one.forward(&f, &mut c1).unwrap();
    two.forward(&f, &mut c2).unwrap();
    assert_eq!(c1, c2, "forward over two contexts differs");
    let (mut a1, mut a2) = (vec![0.0; f.len()], vec![0.0; f.len()]);
    one.adjoint(&c1, &mut a1).unwrap();
    two.adjoint(&c1, &mut a2).unwrap();
    assert_eq!(a1, a2, "adjoint over two contexts differs");
    let (mut x1, mut x2) = (vec![0.0; f.len()], vec![0.0; f.len()]);
    let r1 = one.inverse(&c1, &mut x1, 1e-10, 30).unwrap();
    let r2 = two.inverse(&c1, &mut x2, 1e-10, 30).unwrap();
    assert_eq!((x1.clone(), r1.iterations), (x2, r2.iterations));
    println!(
        "{volume:?} in {:?} tiles over 2 contexts: forward, adjoint, inverse equal to one \
         context's ({} iterations, error {:.1e})",
        two.tiles(),
        r1.iterations,
        rel_l2(&x1, &f)
    );
    // A stop at the first tile's report: the other context's thread ends after its tile,
    // the output is untouched, and the next call is right.
    let first = two.context().clone();
    first.set_progress(Some(std::sync::Arc::new(|_: &str, _: f64| true)));
    let mut c3 = vec![Complex::new(-3.0, 0.0); m];
    let e = two.forward(&f, &mut c3).unwrap_err();
    assert!(e.to_string().contains("cancelled"), "{e}");
    assert!(c3.iter().all(|z| z.re == -3.0));
    first.set_progress(None);
    two.forward(&f, &mut c3).unwrap();
    assert_eq!(c3, c1);
    let e = TiledPlan::<f64>::on_contexts(&[], &volume, &tile, &o)
        .err()
        .unwrap();
    assert!(e.to_string().contains("no context"), "{e}");
}
