//! Wave packets on a CUDA context (the USFFTs on the GPU) against the same plan on the CPU,
//! on the device machine: forward coefficients and adjoint data agree to a few USFFT
//! tolerances, the GPU's own dot-product test holds, and the inverse of the GPU's forward
//! reconstructs real data (Penobscot 2D, F3 3D) as closely as the CPU's. Without a CUDA
//! device the test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.
//! SEISGPU_SANITIZING=1 (scripts/gpu_sanitize.sh) runs one small 2D and one small 3D f32
//! case.

mod wavepacket_support;

mod cuda_common;

use cuda_common::{gpu_context, sanitizing};
use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::usfft::Real;
use seisgpu::wavepacket::inverse::CorrectionFilter;
use seisgpu::wavepacket::{LayoutOptions, WavepacketPlan};
use std::sync::Arc;
use std::time::Instant;
use wavepacket_support::*;

fn rel_c<T: Real>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm_sqr().to_f64().unwrap())
        .sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr().to_f64().unwrap()).sum();
    (num / den).sqrt()
}

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x).unwrap()).collect()
}

fn to_f64<T: Real>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64().unwrap()).collect()
}

/// One shape and precision: forward, adjoint, dot product and inverse on both backends.
/// `agree` bounds the GPU–CPU differences, `dot` the GPU's dot-product mismatch, `inv`
/// the inverse's relative error.
#[allow(clippy::too_many_arguments)]
fn case<T: Real>(
    gpu: &Arc<Context>,
    what: &str,
    shape: &[usize],
    data: &[f64],
    opts: &LayoutOptions,
    agree: f64,
    dot: f64,
    inv: f64,
) {
    let pc = WavepacketPlan::<T>::new(cpu(), shape, opts).unwrap();
    let pg = WavepacketPlan::<T>::new(gpu.clone(), shape, opts).unwrap();
    let m = pc.layout().n_coefficients;
    let f: Vec<T> = to_t(data);
    let zero = Complex::new(T::zero(), T::zero());
    let (mut cc, mut cg) = (vec![zero; m], vec![zero; m]);
    pc.forward(&f, &mut cc).unwrap();
    let t = Instant::now();
    pg.forward(&f, &mut cg).unwrap();
    let t_fwd = t.elapsed().as_secs_f64();
    let e_fwd = rel_c(&cg, &cc);

    // Random coefficients for the adjoint and the dot-product test ⟨Cf, c⟩ = ⟨f, C*c⟩.
    let mut rng = Rng(0x5eed ^ m as u64);
    let c: Vec<Complex<T>> = (0..m)
        .map(|_| {
            let z = rng.complex();
            Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap())
        })
        .collect();
    let n = data.len();
    let (mut ac, mut ag) = (vec![T::zero(); n], vec![T::zero(); n]);
    pc.adjoint(&c, &mut ac).unwrap();
    let t = Instant::now();
    pg.adjoint(&c, &mut ag).unwrap();
    let t_adj = t.elapsed().as_secs_f64();
    let e_adj = rel_l2(&to_f64(&ag), &to_f64(&ac));
    let lhs: f64 = cg
        .iter()
        .zip(&c)
        .map(|(a, b)| (a.conj() * b).re.to_f64().unwrap())
        .sum();
    let rhs: f64 = f
        .iter()
        .zip(&ag)
        .map(|(a, b)| (*a * *b).to_f64().unwrap())
        .sum();
    let e_dot = (lhs - rhs).abs() / lhs.abs().max(rhs.abs());

    let filter = CorrectionFilter::new(&pg).unwrap();
    let mut back = vec![T::zero(); n];
    let r = pg.inverse(&filter, &cg, &mut back, inv / 4.0, 60).unwrap();
    let e_inv = rel_l2(&to_f64(&back), data);
    println!(
        "{what:<34} m/n {:5.1}  fwd {e_fwd:.1e} ({:.0} ms)  adj {e_adj:.1e} ({:.0} ms)  \
         dot {e_dot:.1e}  inverse {e_inv:.1e} ({} it)",
        m as f64 / n as f64,
        t_fwd * 1e3,
        t_adj * 1e3,
        r.iterations
    );
    assert!(
        e_fwd <= agree,
        "{what}: forward GPU vs CPU {e_fwd:e} > {agree:e}"
    );
    assert!(
        e_adj <= agree,
        "{what}: adjoint GPU vs CPU {e_adj:e} > {agree:e}"
    );
    assert!(
        e_dot <= dot,
        "{what}: dot-product mismatch {e_dot:e} > {dot:e}"
    );
    assert!(e_inv <= inv, "{what}: inverse error {e_inv:e} > {inv:e}");
}

#[test]
fn gpu_wavepackets_match_the_cpu() {
    let Some(gpu) = gpu_context() else { return };
    println!("{}", gpu.describe());
    let o2 = |tolerance| LayoutOptions {
        directions: 16,
        levels: 2,
        tolerance,
        ..Default::default()
    };
    let o3 = LayoutOptions {
        directions: 26,
        levels: 1,
        tolerance: 1e-6,
        ..Default::default()
    };
    if sanitizing() {
        println!("thinned for the sanitizer: 2D 32×24 f32 and 3D 16×12×10 f32");
        let section = penobscot(350, 32, 200, 24);
        let (a, d, i) = (2e-5, 1e-5, 1e-5);
        case::<f32>(
            &gpu,
            "2D Penobscot 32×24 f32",
            &[32, 24],
            &section,
            &o2(1e-6),
            a,
            d,
            i,
        );
        let cube = f3(10, 16, 12, 10);
        case::<f32>(
            &gpu,
            "3D F3 16×12×10 f32",
            &[16, 12, 10],
            &cube,
            &o3,
            a,
            d,
            i,
        );
        return;
    }
    let section = penobscot(350, 96, 200, 64);
    case::<f32>(
        &gpu,
        "2D Penobscot 96×64 f32",
        &[96, 64],
        &section,
        &o2(1e-6),
        2e-5,
        1e-5,
        1e-5,
    );
    case::<f64>(
        &gpu,
        "2D Penobscot 96×64 f64",
        &[96, 64],
        &section,
        &o2(1e-9),
        2e-8,
        1e-11,
        1e-8,
    );
    let odd = penobscot(400, 75, 100, 41);
    case::<f32>(
        &gpu,
        "2D Penobscot 75×41 f32",
        &[75, 41],
        &odd,
        &o2(1e-6),
        2e-5,
        1e-5,
        1e-5,
    );
    let cube = f3(10, 32, 18, 23);
    case::<f32>(
        &gpu,
        "3D F3 32×18×23 f32",
        &[32, 18, 23],
        &cube,
        &o3,
        2e-5,
        1e-5,
        1e-5,
    );
    let o3d = LayoutOptions {
        tolerance: 1e-9,
        ..o3
    };
    case::<f64>(
        &gpu,
        "3D F3 32×18×23 f64",
        &[32, 18, 23],
        &cube,
        &o3d,
        2e-8,
        1e-11,
        1e-8,
    );
}
