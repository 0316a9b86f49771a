//! Wave packets on a CUDA context (the USFFTs and the box stage on the GPU) against the same
//! plan on the CPU, on the device machine: forward coefficients and adjoint data agree to a
//! few USFFT tolerances, the GPU's own dot-product test holds, and the inverse of the GPU's
//! forward reconstructs real data (Penobscot 2D, F3 3D) as closely as the CPU's; tiled
//! volumes (each box's grid shifted on the device) agree with the CPU's; device-resident
//! calls give the host-to-host results; POCS (its thresholds applied on the device) gives
//! the CPU's result. Without a CUDA
//! device the test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.
//! SEISGPU_SANITIZING=1 (scripts/gpu_sanitize.sh) runs one small 2D and one small 3D f32
//! case. SEISGPU_SANITIZE_SMALL=1 (the sanitizer's reduced mode) runs 2D 16×12 in f32 and
//! f64 and 3D 8×8×8 in f32, and tiles a 12×10×9 volume in 8³ tiles over several contexts
//! instead of 20×18×23 in 12×10×12 tiles.

use crate::wavepacket_support;

use crate::cuda_common;

use cuda_common::{gpu_context, sanitize_small, sanitizing};
use num_complex::Complex;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::wavepacket::inverse::CorrectionFilter;
use seisgpu::wavepacket::tiles::TiledPlan;
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
    // The dot-product test on g = f + s·C*c (s: equal energies) instead of f: ⟨Cf, c⟩ alone
    // is a sum of m terms of random sign whose cancellation made the f32 3D figure a draw
    // around 1e-5 (the GPU's atomics vary its rounding run to run); with C*c in g both sides
    // are dominated by ‖C*c‖², so the figure measures the adjoint, not the cancellation.
    let norm = |v: &[T]| {
        v.iter()
            .map(|x| x.to_f64().unwrap().powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let s = T::from_f64(norm(&f) / norm(&ac)).unwrap();
    let g: Vec<T> = f.iter().zip(&ac).map(|(&a, &b)| a + s * b).collect();
    let mut cgg = vec![zero; m];
    pg.forward(&g, &mut cgg).unwrap();
    let lhs: f64 = cgg
        .iter()
        .zip(&c)
        .map(|(a, b)| (a.conj() * b).re.to_f64().unwrap())
        .sum();
    let rhs: f64 = g
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
    if sanitize_small() {
        reduced_cases(&gpu, &o2(1e-6), &o2(1e-9), &o3);
        return;
    }
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

fn random_coefficients<T: Real>(m: usize, seed: u64) -> Vec<Complex<T>> {
    let mut rng = Rng(seed);
    (0..m)
        .map(|_| {
            let z = rng.complex();
            Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap())
        })
        .collect()
}

/// A tiled volume on both backends: forward and adjoint agree within `agree`, and the GPU's
/// dot-product mismatch (relative to ‖Cf‖·‖c‖) is within `dot`.
#[allow(clippy::too_many_arguments)]
fn tiled_case<T: Real>(
    gpu: &Arc<Context>,
    what: &str,
    volume: &[usize],
    tile: &[usize],
    data: &[f64],
    opts: &LayoutOptions,
    agree: f64,
    dot: f64,
) {
    let pc = TiledPlan::<T>::new(cpu(), volume, tile, opts).unwrap();
    let pg = TiledPlan::<T>::new(gpu.clone(), volume, tile, opts).unwrap();
    let m = pc.n_coefficients();
    let zero = Complex::new(T::zero(), T::zero());
    let f: Vec<T> = to_t(data);
    let (mut cc, mut cg) = (vec![zero; m], vec![zero; m]);
    pc.forward(&f, &mut cc).unwrap();
    pg.forward(&f, &mut cg).unwrap();
    let e_fwd = rel_c(&cg, &cc);
    let c = random_coefficients::<T>(m, 0x711e);
    let n = data.len();
    let (mut ac, mut ag) = (vec![T::zero(); n], vec![T::zero(); n]);
    pc.adjoint(&c, &mut ac).unwrap();
    pg.adjoint(&c, &mut ag).unwrap();
    let e_adj = rel_l2(&to_f64(&ag), &to_f64(&ac));
    // The dot-product test on g = f + s·C*c (s: equal energies) instead of f: ⟨Cf, c⟩ alone
    // is a sum of m terms of random sign whose cancellation made the f32 3D figure a draw
    // around 1e-5 (the GPU's atomics vary its rounding run to run); with C*c in g both sides
    // are dominated by ‖C*c‖², so the figure measures the adjoint, not the cancellation.
    let norm = |v: &[T]| {
        v.iter()
            .map(|x| x.to_f64().unwrap().powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let s = T::from_f64(norm(&f) / norm(&ac)).unwrap();
    let g: Vec<T> = f.iter().zip(&ac).map(|(&a, &b)| a + s * b).collect();
    let mut cgg = vec![zero; m];
    pg.forward(&g, &mut cgg).unwrap();
    let lhs: f64 = cgg
        .iter()
        .zip(&c)
        .map(|(a, b)| (a.conj() * b).re.to_f64().unwrap())
        .sum();
    let rhs: f64 = g
        .iter()
        .zip(&ag)
        .map(|(a, b)| (*a * *b).to_f64().unwrap())
        .sum();
    let norm = |v: &[Complex<T>]| {
        v.iter()
            .map(|z| z.norm_sqr().to_f64().unwrap())
            .sum::<f64>()
            .sqrt()
    };
    let e_dot = (lhs - rhs).abs() / (norm(&cg) * norm(&c));
    println!(
        "{what:<40} tiles {:?}, {m} coefficients: fwd {e_fwd:.1e}  adj {e_adj:.1e}  dot {e_dot:.1e}",
        pg.tiles()
    );
    assert!(e_fwd <= agree, "{what}: forward GPU vs CPU {e_fwd:e}");
    assert!(e_adj <= agree, "{what}: adjoint GPU vs CPU {e_adj:e}");
    assert!(e_dot <= dot, "{what}: dot-product mismatch {e_dot:e}");
}

/// The reduced mode's cases (SEISGPU_SANITIZE_SMALL=1): each dimension and precision of the
/// full test, on the smallest sections the layouts take.
fn reduced_cases(gpu: &Arc<Context>, o2f: &LayoutOptions, o2d: &LayoutOptions, o3: &LayoutOptions) {
    // The inverse converges in 5–8 iterations at these sizes too (2e-6 or less in f32
    // on the CPU); the 3D case holds a quarter of the coefficients of 16×12×10.
    println!("reduced mode: 2D 16×12 f32 and f64, 3D 8×8×8 f32");
    let section = penobscot(350, 16, 200, 12);
    let (a, d, i) = (2e-5, 1e-5, 1e-5);
    case::<f32>(
        gpu,
        "2D Penobscot 16×12 f32",
        &[16, 12],
        &section,
        o2f,
        a,
        d,
        i,
    );
    let (a, d, i) = (2e-8, 1e-11, 1e-8);
    case::<f64>(
        gpu,
        "2D Penobscot 16×12 f64",
        &[16, 12],
        &section,
        o2d,
        a,
        d,
        i,
    );
    let cube = f3(10, 8, 8, 8);
    let (a, d, i) = (2e-5, 1e-5, 1e-5);
    case::<f32>(gpu, "3D F3 8×8×8 f32", &[8, 8, 8], &cube, o3, a, d, i);
}

#[test]
fn gpu_tiled_volumes_match_the_cpu() {
    let Some(gpu) = gpu_context() else { return };
    let o2 = |tolerance| LayoutOptions {
        directions: 16,
        levels: 2,
        tolerance,
        ..Default::default()
    };
    let section = penobscot(350, 96, 200, 120);
    let (v2, t2) = ([96, 120], [96, 64]);
    tiled_case::<f64>(
        &gpu,
        "2D Penobscot 96×120 f64",
        &v2,
        &t2,
        &section,
        &o2(1e-9),
        2e-8,
        1e-12,
    );
    tiled_case::<f32>(
        &gpu,
        "2D Penobscot 96×120 f32",
        &v2,
        &t2,
        &section,
        &o2(1e-6),
        2e-5,
        1e-6,
    );
    if sanitizing() {
        return;
    }
    let o3 = LayoutOptions {
        directions: 26,
        levels: 1,
        tolerance: 1e-6,
        ..Default::default()
    };
    let cube = f3(10, 20, 18, 23);
    let (v3, t3) = ([20, 18, 23], [12, 10, 12]);
    tiled_case::<f32>(&gpu, "3D F3 20×18×23 f32", &v3, &t3, &cube, &o3, 2e-5, 1e-6);
}

/// Device-resident forward and adjoint run the kernels of the host-to-host calls: the same
/// forward bit for bit; the adjoint to rounding (its type-1 USFFT spreads with atomics, in
/// an order that varies from run to run).
#[test]
fn gpu_device_resident_calls_equal_host_to_host() {
    let Some(gpu) = gpu_context() else { return };
    let o = LayoutOptions {
        directions: 26,
        levels: 1,
        tolerance: 1e-6,
        ..Default::default()
    };
    let shape = [16, 12, 10];
    let f: Vec<f32> = to_t(&f3(10, 16, 12, 10));
    let plan = WavepacketPlan::<f32>::new(gpu.clone(), &shape, &o).unwrap();
    let m = plan.layout().n_coefficients;
    let mut c = vec![Complex::new(0f32, 0.0); m];
    plan.forward(&f, &mut c).unwrap();
    let mut back = vec![0f32; f.len()];
    plan.adjoint(&c, &mut back).unwrap();

    let s = plan.device_stage().unwrap().stream().clone();
    let data_dev = s.clone_htod(&f).unwrap();
    let mut c_dev = s.alloc_zeros::<f32>(2 * m).unwrap();
    plan.forward_device(&data_dev, &mut c_dev).unwrap();
    let mut back_dev = s.alloc_zeros::<f32>(f.len()).unwrap();
    plan.adjoint_device(&c_dev, &mut back_dev).unwrap();
    let c_host: Vec<f32> = s.clone_dtoh(&c_dev).unwrap();
    let back_host: Vec<f32> = s.clone_dtoh(&back_dev).unwrap();
    let reals: Vec<f32> = c.iter().flat_map(|z| [z.re, z.im]).collect();
    assert_eq!(c_host, reals, "device-resident forward differs");
    let e_adj = rel_l2(&to_f64(&back_host), &to_f64(&back));
    assert!(e_adj < 1e-6, "device-resident adjoint differs by {e_adj:e}");
    // Non-finite coefficients are found on the device after their upload: refused, the
    // output untouched.
    let mut bad = c.clone();
    bad[m / 2].im = f32::NAN;
    let mut out = vec![-3f32; f.len()];
    let e = plan.adjoint(&bad, &mut out).unwrap_err();
    assert!(matches!(e, seisgpu::Error::NonFinite(_)), "{e}");
    assert!(
        e.to_string().contains(&format!("coefficient {}", m / 2)),
        "{e}"
    );
    assert!(out.iter().all(|&v| v == -3.0));
    // Buffers too short are refused before anything is queued.
    let short = s.alloc_zeros::<f32>(2 * m - 1).unwrap();
    let e = plan.adjoint_device(&short, &mut back_dev).unwrap_err();
    assert!(e.to_string().contains("device buffers"), "{e}");
    println!(
        "device-resident forward equals host-to-host ({m} coefficients), adjoint within {e_adj:.1e}"
    );
}

/// POCS on the GPU (each step's threshold applied to the coefficients on the device, which
/// never leave it) against the CPU on a Penobscot window with every other trace dead at
/// random: the same result to a few rounding units, and better than linear interpolation.
fn pocs_case<T: Real>(gpu: &Arc<Context>, agree: f64) {
    use seisgpu::wavepacket::coeffs::PocsOptions;
    use seisgpu::wavepacket::gaps::fill_linear;
    let (nt, nx) = (96, 80);
    let truth = penobscot(400, nt, 300, nx);
    let mut rng = Rng(0xdead);
    let live: Vec<bool> = (0..nx)
        .map(|i| i < 8 || i >= nx - 8 || rng.uniform() > 0.0)
        .collect();
    let mut data: Vec<T> = to_t(&truth);
    for (t, &ok) in live.iter().enumerate() {
        if !ok {
            data[t * nt..(t + 1) * nt].fill(T::zero());
        }
    }
    let o = LayoutOptions {
        directions: 12,
        levels: 3,
        cutoff: 0.2,
        tolerance: 1e-6,
        ..Default::default()
    };
    let opts = PocsOptions {
        iterations: 20,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut seconds = Vec::new();
    for ctx in [cpu(), gpu.clone()] {
        let plan = WavepacketPlan::<T>::new(ctx, &[nt, nx], &o).unwrap();
        let filter = CorrectionFilter::new(&plan).unwrap();
        let mut x = data.clone();
        let t = Instant::now();
        plan.pocs_interpolate(&filter, &mut x, &live, &opts)
            .unwrap();
        seconds.push(t.elapsed().as_secs_f64());
        out.push(to_f64(&x));
    }
    let e = rel_l2(&out[1], &out[0]);
    let mut linear = to_f64(&data);
    fill_linear([nt, nx, 1], &mut linear, &live);
    let (gpu_snr, linear_snr) = (snr_db(&out[1], &truth), snr_db(&linear, &truth));
    println!(
        "POCS {} of {nx} traces dead, {}: GPU vs CPU {e:.1e}, SNR {gpu_snr:.2} dB (linear \
         {linear_snr:.2}), CPU {:.3} s, GPU {:.3} s",
        live.iter().filter(|&&ok| !ok).count(),
        std::any::type_name::<T>(),
        seconds[0],
        seconds[1]
    );
    assert!(e <= agree, "POCS GPU vs CPU {e:e} > {agree:e}");
    assert!(gpu_snr > linear_snr, "{gpu_snr} ≤ {linear_snr}");
}

#[test]
fn gpu_pocs_matches_the_cpu() {
    let Some(gpu) = gpu_context() else { return };
    pocs_case::<f64>(&gpu, 1e-9);
    pocs_case::<f32>(&gpu, 1e-4);
}

/// Tiles dealt out over every GPU present (two contexts on one device where there is only
/// one): the forward equals one context's bit for bit, the adjoint to rounding.
#[test]
fn gpu_tiles_over_several_devices_equal_one() {
    let Some(gpu) = gpu_context() else { return };
    let count = cudarc::driver::CudaContext::device_count()
        .unwrap_or(1)
        .max(1) as usize;
    let mut contexts = vec![gpu.clone()];
    for ordinal in 1..count.max(2) {
        let o = if count > 1 { ordinal as i32 } else { 0 };
        contexts.push(Context::new(seisgpu::backend::BackendRequest::Cuda, o).unwrap());
    }
    let o = LayoutOptions {
        directions: 26,
        levels: 1,
        tolerance: 1e-6,
        ..Default::default()
    };
    // Reduced mode: still 2×2×2 tiles, the last ones partial, at a third of the samples.
    let (volume, tile) = if sanitize_small() {
        ([12, 10, 9], [8, 8, 8])
    } else {
        ([20, 18, 23], [12, 10, 12])
    };
    let f: Vec<f32> = to_t(&f3(10, volume[0], volume[1], volume[2]));
    let one = TiledPlan::<f32>::new(gpu.clone(), &volume, &tile, &o).unwrap();
    let many = TiledPlan::<f32>::on_contexts(&contexts, &volume, &tile, &o).unwrap();
    let m = one.n_coefficients();
    let zero = Complex::new(0f32, 0.0);
    let (mut c1, mut c2) = (vec![zero; m], vec![zero; m]);
    one.forward(&f, &mut c1).unwrap();
    many.forward(&f, &mut c2).unwrap();
    assert_eq!(c1, c2, "forward over {} contexts differs", contexts.len());
    let (mut a1, mut a2) = (vec![0f32; f.len()], vec![0f32; f.len()]);
    one.adjoint(&c1, &mut a1).unwrap();
    many.adjoint(&c1, &mut a2).unwrap();
    let e = rel_l2(&to_f64(&a2), &to_f64(&a1));
    assert!(
        e < 1e-6,
        "adjoint over {} contexts differs by {e:e}",
        contexts.len()
    );
    println!(
        "{:?} tiles over {} contexts on {count} device(s): forward equal, adjoint within {e:.1e}",
        many.tiles(),
        contexts.len()
    );
}

/// The footprint a plan's creation checks against its cap, part by part as the made plan
/// holds them (cuFFT's work areas asked of cuFFT), and the cap itself: with no cap, and
/// with one that needs the lattice values in groups of directions, the plan is made as the
/// footprint says and its host calls run without the context ever holding more, the grouped
/// plan giving the ungrouped one's results; below the least footprint, the plan is refused
/// before anything is allocated.
fn footprint_case<T: Real>(gpu: &Arc<Context>, shape: &[usize], opts: &LayoutOptions) {
    use seisgpu::wavepacket::footprint::{device_areas, footprint};
    use seisgpu::wavepacket::lattice_groups::split;
    let label = format!("{shape:?} {}", std::any::type_name::<T>());
    let memory = &gpu.cuda().unwrap().memory;
    let layout = seisgpu::wavepacket::Layout::new(shape.len(), shape, opts).unwrap();
    let areas = device_areas::<T>(gpu.cuda().unwrap()).unwrap();
    let cpu = seisgpu::backend::cpu::CpuBackend::new().unwrap();
    let tables = seisgpu::wavepacket::cuda::window_table_bytes(&layout, &cpu);
    let three = footprint::<T>(&layout, &split(&layout, 3), &areas, tables).unwrap();
    let least = (1..=layout.lattices.len())
        .map(|k| footprint::<T>(&layout, &split(&layout, k), &areas, tables).unwrap())
        .map(|f| f.peak())
        .min()
        .unwrap();
    let (before, _) = memory.usage();
    let short = WavepacketPlan::<T>::with_cap(gpu.clone(), shape, opts, least - 1);
    match short {
        Err(seisgpu::Error::DeviceOutOfMemory(m)) => assert!(m.contains("max_device_bytes"), "{m}"),
        Err(e) => panic!("{label}: a cap below the least footprint: {e}"),
        Ok(_) => panic!("{label}: a cap below the least footprint was accepted"),
    }
    assert_eq!(memory.usage().0, before, "{label}: the refusal allocated");
    let n: usize = shape.iter().product();
    let data: Vec<T> = (0..n)
        .map(|i| T::from_f64((i as f64 * 0.37).sin()).unwrap())
        .collect();
    let one = footprint::<T>(&layout, &split(&layout, 1), &areas, tables).unwrap();
    // Where the lattice values matter to the peak, a cap that needs them in groups.
    let grouped = three.peak() < one.peak();
    let mut runs = Vec::new();
    for cap in [0, if grouped { three.peak() } else { one.peak() }] {
        let want = WavepacketPlan::<T>::footprint(gpu, shape, opts, cap).unwrap();
        let (before, most_before) = memory.usage();
        let plan = WavepacketPlan::<T>::with_cap(gpu.clone(), shape, opts, cap).unwrap();
        // Each part as the footprint gives it, to the byte.
        assert_eq!(plan.device_parts(), want.parts, "{label} cap {cap}: parts");
        let mut c = vec![Complex::new(T::zero(), T::zero()); plan.layout().n_coefficients];
        plan.forward(&data, &mut c).unwrap();
        let mut back = vec![T::zero(); n];
        plan.adjoint(&c, &mut back).unwrap();
        let (_, most) = memory.usage();
        let held = plan.device_bytes();
        println!(
            "{label} cap {cap}: {} group(s), footprint {} bytes, held {held}, the context at most {} more",
            want.groups,
            want.peak(),
            most.saturating_sub(before)
        );
        assert!(
            held >= want.held() && held <= want.peak(),
            "{label}: held {held}"
        );
        // The context's most grew, if at all, by no more than the footprint.
        assert!(
            most <= most_before.max(before + want.peak()),
            "{label}: {most} at most"
        );
        if cap > 0 {
            assert!(
                want.groups >= 2 || !grouped,
                "{label}: {} groups",
                want.groups
            );
            assert!(want.peak() <= cap, "{label}: {} over {cap}", want.peak());
        }
        runs.push((c, back));
        drop(plan);
    }
    let same = if std::mem::size_of::<T>() == 4 {
        1e-6
    } else {
        1e-12
    };
    let e_fwd = rel_c(&runs[1].0, &runs[0].0);
    let e_adj = rel_l2(&to_f64(&runs[1].1), &to_f64(&runs[0].1));
    println!("{label}: grouped vs whole: forward {e_fwd:.1e}, adjoint {e_adj:.1e}");
    assert!(
        e_fwd <= same && e_adj <= 10.0 * same,
        "{label}: {e_fwd:e} {e_adj:e}"
    );
}

#[test]
fn gpu_wavepacket_footprint_and_cap() {
    let Some(gpu) = gpu_context() else { return };
    let o2 = LayoutOptions {
        directions: 16,
        levels: 2,
        ..Default::default()
    };
    let o3 = LayoutOptions {
        directions: 26,
        levels: 2,
        cutoff: 0.05,
        ..Default::default()
    };
    footprint_case::<f32>(&gpu, &[200, 180], &o2);
    footprint_case::<f64>(&gpu, &[257, 300], &o2);
    footprint_case::<f32>(&gpu, &[40, 36, 30], &o3);
    footprint_case::<f64>(&gpu, &[36, 40, 33], &o3);
}
