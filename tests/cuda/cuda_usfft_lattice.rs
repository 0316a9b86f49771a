//! USFFT plans set from lattices (`set_points_on_lattices`; the wave packets' points): on the
//! GPU the kernels compute each lattice point where they use it. Checked against a GPU plan
//! set from the same points' coordinates (made on the host: type 2 equal bit for bit, type 1
//! to rounding, its sums being atomic), against direct sums on the small grids (≤ tol) and
//! against the CPU backend's plan on the same lattices (≤ 2·tol): 2D and 3D, f32 and f64, every spreading
//! and interpolation method (small and large grids of bins, the widest Gaussian's
//! fallbacks), and no points at all. SEISGPU_SANITIZE_SMALL=1 (the sanitizer's reduced mode)
//! takes fewer points on the large grids (the same methods). Without a CUDA device the test
//! reports "skipped", unless SEISGPU_REQUIRE_CUDA=1 makes that a failure.

use crate::cuda_common::{gpu_context, sanitize_small};
use crate::usfft_support::*;
use cudarc::driver::CudaSlice;
use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::usfft::lattice::{coordinates, PointLattice};
use seisgpu::usfft::{KernelShape, ModeOrder, TransformType, UsfftOptions, UsfftPlan};
use std::sync::Arc;

/// Three rotated lattices of about `per` points each, spread over the period (2D: in the
/// (1, 2) plane; 3D: tilted out of it too).
fn lattices(dim: usize, per: usize) -> Vec<PointLattice> {
    let side = (per as f64).powf(1.0 / dim as f64).ceil() as usize;
    (0..3)
        .map(|i| {
            let a = 0.3 + 0.9 * i as f64;
            let (c, s) = (a.cos(), a.sin());
            let axes = if dim == 2 {
                [[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]
            } else {
                let (cb, sb) = ((0.4 * a).cos(), (0.4 * a).sin());
                [[c * cb, s * cb, sb], [-s, c, 0.0], [-c * sb, -s * sb, cb]]
            };
            // Periods below the side, so that the points wrap the 2π period once or more.
            let p = side as f64 * (0.7 + 0.2 * i as f64);
            PointLattice {
                axes,
                period: [p, 1.1 * p, if dim == 3 { 0.9 * p } else { 1.0 }],
                lo: [-(side as i64) / 2, 1 - side as i64 / 3, 0],
                len: [side, side + i, if dim == 3 { side } else { 1 }],
            }
        })
        .collect()
}

struct Check {
    dim: usize,
    modes: [usize; 3],
    per: usize,
    kind: TransformType,
    shape: KernelShape,
    tol: f64,
}

/// `v` in the plan's precision.
fn to_t<T: Real>(v: &[Complex<f64>]) -> Vec<Complex<T>> {
    v.iter()
        .map(|z| Complex::new(T::from_f64(z.re).unwrap(), T::from_f64(z.im).unwrap()))
        .collect()
}

/// The plan's output on `input` (type 1: strengths at the lattice points; type 2: modes).
fn execute<T: Real>(
    plan: &UsfftPlan<T>,
    kind: TransformType,
    m: usize,
    nm: usize,
    input: &[Complex<f64>],
) -> Vec<Complex<f64>> {
    let nan = Complex::new(T::nan(), T::nan());
    let (mut c, mut f) = match kind {
        TransformType::Type1 => (to_t(input), vec![nan; nm]),
        _ => (vec![nan; m], to_t(input)),
    };
    plan.execute(&mut c, &mut f).unwrap();
    let out = if kind == TransformType::Type1 { f } else { c };
    out.iter()
        .map(|z| Complex::new(z.re.to_f64().unwrap(), z.im.to_f64().unwrap()))
        .collect()
}

/// `execute` of transform `kind` as the adjoint of `plan` (the other type, opposite sign),
/// on device arrays.
fn execute_adjoint<T: Real>(
    plan: &UsfftPlan<T>,
    kind: TransformType,
    m: usize,
    nm: usize,
    input: &[Complex<f64>],
) -> Vec<Complex<f64>> {
    let s = plan.device_points().unwrap().stream().clone();
    let reals: Vec<T> = to_t::<T>(input).iter().flat_map(|z| [z.re, z.im]).collect();
    let nan = vec![T::nan(); 2 * m.max(nm)];
    let (mut c, mut f): (CudaSlice<T>, CudaSlice<T>) = match kind {
        TransformType::Type1 => (
            s.clone_htod(&reals).unwrap(),
            s.clone_htod(&nan[..2 * nm]).unwrap(),
        ),
        _ => (
            s.clone_htod(&nan[..2 * m.max(1)]).unwrap(),
            s.clone_htod(&reals).unwrap(),
        ),
    };
    plan.execute_adjoint_device(&mut c, &mut f).unwrap();
    let out = match kind {
        TransformType::Type1 => s.clone_dtoh(&f),
        _ => s.clone_dtoh(&c),
    }
    .unwrap();
    s.synchronize().unwrap();
    out.chunks(2)
        .take(if kind == TransformType::Type1 { nm } else { m })
        .map(|z| Complex::new(z[0].to_f64().unwrap(), z[1].to_f64().unwrap()))
        .collect()
}

fn check<T: Real>(gpu: &Arc<Context>, cpu: &Arc<Context>, k: &Check) {
    let case = Case {
        kind: k.kind,
        dim: k.dim,
        modes: k.modes,
        m: 0,
        sign: -1,
        tol: k.tol,
        nvec: 1,
        options: UsfftOptions {
            kernel: k.shape,
            upsampling: 2.0,
            mode_order: ModeOrder::Centred,
        },
    };
    let lat = if k.per == 0 {
        Vec::new()
    } else {
        lattices(k.dim, k.per)
    };
    let coords = coordinates::<T>(&lat, k.dim).unwrap();
    let m = lat.iter().map(|l| l.n_points()).sum::<usize>();
    let case = Case { m, ..case };
    let nm: usize = k.modes[..k.dim].iter().product();
    let mut rng = Rng(7 + m as u64);
    let n_in = if k.kind == TransformType::Type1 {
        m
    } else {
        nm
    };
    let input: Vec<Complex<f64>> = (0..n_in).map(|_| rng.complex()).collect();
    let label = format!(
        "{}D {:?} {:?} tol {:e} {} M = {m}",
        k.dim,
        k.kind,
        k.shape,
        k.tol,
        std::any::type_name::<T>()
    );

    let mut on_lattices = plan_for::<T>(gpu, &case).unwrap();
    on_lattices.set_points_on_lattices(&lat).unwrap();
    let got = execute(&on_lattices, k.kind, m, nm, &input);
    let mut stored = plan_for::<T>(gpu, &case).unwrap();
    let opt = |d: usize| (d < k.dim).then(|| coords[d].as_slice());
    stored.set_points(m, &coords[0], opt(1), opt(2)).unwrap();
    let want = execute(&stored, k.kind, m, nm, &input);
    let mut host = plan_for::<T>(cpu, &case).unwrap();
    host.set_points_on_lattices(&lat).unwrap();
    let on_cpu = execute(&host, k.kind, m, nm, &input);

    if k.kind == TransformType::Type2 {
        let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "{label}: {differ} values differ from the stored points'"
        );
    } else {
        let e = rel_l2(&got, &want);
        let limit = if std::mem::size_of::<T>() == 4 {
            1e-5
        } else {
            1e-12
        };
        assert!(within(e, limit), "{label}: {e:e} from the stored points'");
    }
    // The other type's plan with the opposite sign, run as its adjoint on its own points
    // (device arrays): the same transform as `got`, on one plan's memory.
    let other = Case {
        kind: match k.kind {
            TransformType::Type1 => TransformType::Type2,
            _ => TransformType::Type1,
        },
        sign: 1,
        ..case.clone()
    };
    let mut adjoint_plan = plan_for::<T>(gpu, &other).unwrap();
    adjoint_plan.set_points_on_lattices(&lat).unwrap();
    let by_adjoint = execute_adjoint(&adjoint_plan, k.kind, m, nm, &input);
    let e_adjoint = rel_l2(&by_adjoint, &got);
    let same = if std::mem::size_of::<T>() == 4 {
        1e-5
    } else {
        1e-12
    };
    assert!(
        within(e_adjoint, same),
        "{label}: {e_adjoint:e} between the transform and the other type's adjoint"
    );
    let seen: [Vec<f64>; 3] =
        std::array::from_fn(|d| coords[d].iter().map(|x| x.to_f64().unwrap()).collect());
    // Direct sums where they take a moment (the large grids are checked against the CPU).
    let e_direct = if m > 0 && m * nm <= 20_000_000 {
        rel_l2(&got, &direct(&case, &seen, &input))
    } else {
        0.0
    };
    let e_cpu = rel_l2(&got, &on_cpu);
    let floor = if std::mem::size_of::<T>() == 4 {
        2e-6
    } else {
        0.0
    };
    assert!(
        within(e_direct, k.tol.max(floor)),
        "{label}: {e_direct:e} from direct sums"
    );
    assert!(
        within(e_cpu, 2.0 * k.tol.max(floor)),
        "{label}: {e_cpu:e} from the CPU"
    );
    if m == 0 {
        assert!(
            got.iter().all(|z| z.norm() == 0.0),
            "{label}: no points, yet not zero"
        );
    }
    println!("{label}: direct {e_direct:.1e}, CPU {e_cpu:.1e}");
}

#[test]
fn usfft_on_lattices_equals_the_same_points_stored() {
    let Some(gpu) = gpu_context() else { return };
    let cpu = Context::new(BackendRequest::Cpu, 0).unwrap();
    use KernelShape::{ExpSemicircle as Es, Gaussian};
    use TransformType::{Type1, Type2};
    for kind in [Type1, Type2] {
        let small = |dim, shape, tol| Check {
            dim,
            modes: if dim == 2 { [24, 17, 1] } else { [10, 7, 12] },
            per: 150,
            kind,
            shape,
            tol,
        };
        // Small grids: shared tiles; the widest Gaussian: global atomics and a thread a point.
        check::<f32>(&gpu, &cpu, &small(2, Es, 1e-5));
        check::<f64>(&gpu, &cpu, &small(3, Es, 1e-10));
        check::<f64>(&gpu, &cpu, &small(3, Gaussian, 1e-12));
        check::<f32>(
            &gpu,
            &cpu,
            &Check {
                per: 0,
                ..small(3, Es, 1e-4)
            },
        );
        // Larger grids: register rows and staged tiles (fewer points under a sanitizer).
        let large = |dim, tol| Check {
            dim,
            modes: if dim == 2 {
                [200, 180, 1]
            } else {
                [40, 36, 32]
            },
            per: match (dim, sanitize_small()) {
                (_, true) => 3_000,
                (2, false) => 20_000,
                _ => 30_000,
            },
            kind,
            shape: Es,
            tol,
        };
        check::<f32>(&gpu, &cpu, &large(2, 1e-6));
        check::<f32>(&gpu, &cpu, &large(3, 1e-6));
        check::<f64>(&gpu, &cpu, &large(3, 1e-9));
    }
}
