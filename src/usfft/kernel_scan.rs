//! The scans behind the kernel tables (ignored tests; they print them): `ES_TABLE` in
//! `kernel.rs` (`es_beta_scan`) and `PROLATE_TABLE` in `prolate.rs` (`prolate_scan`).
//!
//!     cargo test --release --lib usfft::kernel_scan -- --ignored --nocapture
//!
//! ES: for each width w = 2…16 and β/w = 1.70…2.60 (step 0.01), the CPU path's relative ℓ2
//! error against direct O(N·M) sums in f64, types 1 and 2, 1D/2D/3D, with mode counts whose
//! fine grids are exactly 2N (the worst case: `fine_size` rounds up to smooth sizes, which
//! only adds upsampling). It keeps, per width, the β/w with the smallest worst-case error.

use super::cpu;
use super::kernel::{KernelShape, SpreadKernel};
use super::prolate::ProlateFit;
use super::spec::{frequency, ModeOrder, TransformType, UsfftOptions, UsfftSpec};
use crate::backend::cpu::CpuBackend;
use num_complex::Complex;

type C64 = Complex<f64>;

/// One random problem of one dimension count, with its exact answers for both types.
struct Problem {
    dim: usize,
    modes: [usize; 3],
    coords: [Vec<f64>; 3],
    /// Strengths (type 1 input) and modes (type 2 input).
    c: Vec<C64>,
    f: Vec<C64>,
    /// Exact type 1 modes and type 2 values.
    want1: Vec<C64>,
    want2: Vec<C64>,
}

/// xorshift in [0, 1).
fn uniform(s: &mut u64) -> f64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
}

fn problem(dim: usize, modes: [usize; 3], m: usize, seed: u64) -> Problem {
    let mut s = seed | 1;
    let coords: [Vec<f64>; 3] = std::array::from_fn(|d| {
        (0..if d < dim { m } else { 0 })
            .map(|_| (2.0 * uniform(&mut s) - 1.0) * std::f64::consts::PI)
            .collect()
    });
    let nm: usize = modes.iter().product();
    let mut cplx = |n: usize| -> Vec<C64> {
        (0..n)
            .map(|_| C64::new(2.0 * uniform(&mut s) - 1.0, 2.0 * uniform(&mut s) - 1.0))
            .collect()
    };
    let c = cplx(m);
    let f = cplx(nm);
    // e^{i k·x_j} for mode index `idx` (centred order, sign +1).
    let phase = |j: usize, idx: usize| -> C64 {
        let mm = [
            idx % modes[0],
            (idx / modes[0]) % modes[1],
            idx / (modes[0] * modes[1]),
        ];
        let t: f64 = (0..dim)
            .map(|d| frequency(mm[d], modes[d], ModeOrder::Centred) as f64 * coords[d][j])
            .sum();
        C64::from_polar(1.0, t)
    };
    let want1 = (0..nm)
        .map(|k| (0..m).map(|j| c[j] * phase(j, k)).sum())
        .collect();
    let want2 = (0..m)
        .map(|j| (0..nm).map(|k| f[k] * phase(j, k)).sum())
        .collect();
    Problem {
        dim,
        modes,
        coords,
        c,
        f,
        want1,
        want2,
    }
}

fn rel_l2(a: &[C64], b: &[C64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

/// The CPU path's error on `p` with `kernel`, type 1 and type 2 (a plan of tolerance 1e-6:
/// its tap polynomials are fitted to 1e-8).
fn errors(cpu: &CpuBackend, p: &Problem, kernel: SpreadKernel) -> [f64; 2] {
    errors_at(cpu, p, kernel, 1e-6)
}

/// `errors` with the tap polynomials of a plan of tolerance `tol`.
fn errors_at(cpu: &CpuBackend, p: &Problem, kernel: SpreadKernel, tol: f64) -> [f64; 2] {
    let m = p.c.len();
    let coords = [&p.coords[0][..], &p.coords[1][..], &p.coords[2][..]];
    [TransformType::Type1, TransformType::Type2].map(|kind| {
        let spec = UsfftSpec::new::<f64>(kind, p.dim, p.modes, 1, tol, 1, UsfftOptions::default())
            .unwrap()
            .with_kernel(kernel);
        let pts = cpu::set_points(cpu, &spec, coords, m).unwrap();
        let (mut c, mut f) = (p.c.clone(), p.f.clone());
        cpu::execute(
            cpu,
            &spec,
            &pts,
            &mut c,
            &mut f,
            &mut crate::progress::Reporter::new(None),
        )
        .unwrap();
        match kind {
            TransformType::Type1 => rel_l2(&f, &p.want1),
            TransformType::Type2 => rel_l2(&c, &p.want2),
            TransformType::Type3 => unreachable!("the scan measures types 1 and 2"),
        }
    })
}

/// The CPU backend and the 1D, 2D and 3D problems of a scan (seeds seed + 1, + 2, + 3).
fn scan_setup(seed: u64) -> (CpuBackend, [Problem; 3]) {
    let problems = [
        problem(1, [400, 1, 1], 3000, seed + 1),
        problem(2, [40, 36, 1], 3000, seed + 2),
        problem(3, [16, 16, 12], 2000, seed + 3),
    ];
    (CpuBackend::new().unwrap(), problems)
}

#[test]
#[ignore = "the kernel-tuning scan: minutes; prints the table kept in kernel.rs"]
fn es_beta_scan() {
    let (cpu, problems) = scan_setup(10);
    println!("| w | β/w | worst rel ℓ2 | 1D | 2D | 3D | old β/w: worst |");
    for width in 2..=16 {
        let worst_at = |per_cell: f64| -> (f64, [f64; 3]) {
            let kernel =
                SpreadKernel::new(KernelShape::ExpSemicircle, width, per_cell * width as f64);
            let per_dim = problems.each_ref().map(|p| {
                let [e1, e2] = errors(&cpu, p, kernel);
                e1.max(e2)
            });
            (per_dim.iter().cloned().fold(0.0, f64::max), per_dim)
        };
        let (best, (worst, per_dim)) = (170..=260)
            .map(|i| i as f64 / 100.0)
            .map(|b| (b, worst_at(b)))
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .unwrap();
        let old = old_per_cell(width);
        println!(
            "| {width} | {best:.2} | {worst:.2e} | {:.2e} | {:.2e} | {:.2e} | {old:.2}: {:.2e} |",
            per_dim[0],
            per_dim[1],
            per_dim[2],
            worst_at(old).0
        );
    }
}

/// The old rule: w = ceil(log10(1/tol)) + 2, β/w = 2.30 (2.20, 2.26, 2.38 for w = 2, 3, 4).
fn old_kernel(tol: f64) -> SpreadKernel {
    let width = ((1.0 / tol).log10().ceil().max(1.0) as usize + 2).clamp(2, 16);
    SpreadKernel::new(
        KernelShape::ExpSemicircle,
        width,
        old_per_cell(width) * width as f64,
    )
}

fn old_per_cell(width: usize) -> f64 {
    match width {
        2 => 2.20,
        3 => 2.26,
        4 => 2.38,
        _ => 2.30,
    }
}

#[test]
#[ignore = "prints the (tol, dim) → width and error table of the old and the measured rule"]
fn width_rule_before_and_after() {
    let (cpu, problems) = scan_setup(20);
    println!("| tol | dim | old w | old error | new w | new error |");
    for tol in [1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-9, 1e-10, 1e-12] {
        for p in &problems {
            let old = old_kernel(tol);
            let new = SpreadKernel::for_tolerance(KernelShape::ExpSemicircle, tol);
            let worst = |k| {
                let [e1, e2] = errors(&cpu, p, k);
                e1.max(e2)
            };
            println!(
                "| {tol:e} | {}D | {} | {:.2e} | {} | {:.2e} |",
                p.dim,
                old.width,
                worst(old),
                new.width,
                worst(new)
            );
        }
    }
}

/// The scan behind `PROLATE_TABLE`, per width of the table (SCAN_WIDTHS=4,7,… for some):
/// - by default, the errors it keeps: the table's fit's worst error (tap polynomials to 1e-14,
///   so the kernel's own error shows at every width) per dimension count, beside ES's;
/// - with SCAN_FITS set, what its (β/c, degree) were chosen from: at the table's c/w, the
///   fit's error per β/c and degree beside a near-exact ψ0 (β/c = 0.5, degree 14);
/// - with SCAN_CW=2.30,2.31,…, ψ0's error alone at each of those c/w (the table's c/w is
///   the best of 2.00…2.60).
#[test]
#[ignore = "prints the errors kept in PROLATE_TABLE, or with SCAN_FITS the fits' errors"]
fn prolate_scan() {
    use super::prolate::{fit_degree, prolate_fit, PROLATE_TABLE};
    let (cpu, problems) = scan_setup(10);
    let list = |name: &str| -> Option<Vec<String>> {
        std::env::var(name)
            .ok()
            .map(|v| v.split(',').map(|w| w.trim().to_string()).collect())
    };
    let widths: Vec<usize> = list("SCAN_WIDTHS")
        .map(|v| v.iter().map(|w| w.parse().unwrap()).collect())
        .unwrap_or_else(|| PROLATE_TABLE.iter().map(|e| e.width).collect());
    let per_cells: Option<Vec<f64>> =
        list("SCAN_CW").map(|v| v.iter().map(|c| c.parse().unwrap()).collect());
    let fits = std::env::var_os("SCAN_FITS").is_some() || per_cells.is_some();
    // The worst error per dimension count of a prolate kernel of `width` with `fit`.
    let per_dim = |width: usize, fit: &'static ProlateFit| -> [f64; 3] {
        let kernel = SpreadKernel::prolate_with_fit(width, fit);
        problems.each_ref().map(|p| {
            let [e1, e2] = errors_at(&cpu, p, kernel, 1e-14);
            e1.max(e2)
        })
    };
    let worst = |e: [f64; 3]| e.iter().cloned().fold(0.0, f64::max);
    if !fits {
        println!("| w | c/w | degree | worst rel ℓ2 | 1D | 2D | 3D | ES_TABLE | ES/prolate |");
    }
    for e in PROLATE_TABLE.iter().filter(|e| widths.contains(&e.width)) {
        let (width, table_per_cell) = (e.width, e.c_per_cell);
        if !fits {
            let fit = prolate_fit(width);
            let e = per_dim(width, fit);
            let es = super::kernel::ES_TABLE
                .iter()
                .find(|e| e.0 == width)
                .unwrap()
                .2;
            println!(
                "| {width} | {table_per_cell:.3} | {} | {:.2e} | {:.2e} | {:.2e} | {:.2e} | {es:.2e} | {:.2} |",
                fit.factor.len() - 1,
                worst(e),
                e[0],
                e[1],
                e[2],
                es / worst(e)
            );
            continue;
        }
        for per_cell in per_cells.clone().unwrap_or(vec![table_per_cell]) {
            let c = per_cell * width as f64;
            let at = |r: f64, degree: usize| -> f64 {
                worst(per_dim(
                    width,
                    Box::leak(Box::new(fit_degree(c, r * c, degree))),
                ))
            };
            println!("w {width} c/w {per_cell}: exact {:.2e}", at(0.5, 14));
            if per_cells.is_some() {
                continue;
            }
            for r in [0.7, 0.8] {
                let row: Vec<String> = (2..=12).map(|d| format!("{:.2e}", at(r, d))).collect();
                println!("w {width} r {r}: {}", row.join(" "));
            }
        }
    }
}
