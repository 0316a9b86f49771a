//! The EM-logging search on the CPU against independent answers: a NumPy brute-force
//! evaluation of every model (tests/data/emlog_reference.txt), the analytic ellipsoid,
//! brute force in this file (the misfit straight from its definition, model by model), and
//! the two evaluation modes against each other. Also bad input through the C ABI.

use crate::emlog_support;

use emlog_support::*;
use seisgpu::emlog::criterion::{Criterion, Mode, Norm, SearchOptions};
use seisgpu::emlog::grid::{Axis, Grid};
use seisgpu::emlog::EmlogPlan;

fn opts(mode: Mode) -> SearchOptions {
    SearchOptions {
        mode,
        ..Default::default()
    }
}

struct RefCase {
    owned: Owned,
    axes: Vec<Axis>,
    count: u64,
    best: u64,
    best_f: f64,
    first: Vec<u64>,
    marginals: Vec<Vec<u64>>,
}

fn reference_cases() -> Vec<RefCase> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/emlog_reference.txt"
    ))
    .unwrap();
    let mut cases = Vec::new();
    let mut cur: Option<RefCase> = None;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let key = w.next().unwrap();
        let rest: Vec<&str> = w.collect();
        let f = |v: &[&str]| {
            v.iter()
                .map(|x| x.parse::<f64>().unwrap())
                .collect::<Vec<f64>>()
        };
        let u = |v: &[&str]| {
            v.iter()
                .map(|x| x.parse::<u64>().unwrap())
                .collect::<Vec<u64>>()
        };
        if key == "case" {
            cur = Some(RefCase {
                owned: Owned {
                    n: 0,
                    m: 0,
                    a: vec![],
                    sigma0: vec![],
                    f0: vec![],
                    f_exp: vec![],
                    delta: vec![],
                    searched: vec![],
                },
                axes: vec![],
                count: 0,
                best: 0,
                best_f: 0.0,
                first: vec![],
                marginals: vec![],
            });
            continue;
        }
        let c = cur.as_mut().unwrap();
        let o = &mut c.owned;
        match key {
            "n" => o.n = rest[0].parse().unwrap(),
            "m" => o.m = rest[0].parse().unwrap(),
            "a" => o.a = f(&rest),
            "sigma0" => o.sigma0 = f(&rest),
            "f0" => o.f0 = f(&rest),
            "f_exp" => o.f_exp = f(&rest),
            "delta" => o.delta = f(&rest),
            "searched" => o.searched = u(&rest).iter().map(|&x| x as usize).collect(),
            "axis" => {
                let (lo, hi, count) = (
                    rest[1].parse().unwrap(),
                    rest[2].parse().unwrap(),
                    rest[3].parse().unwrap(),
                );
                c.axes.push(match rest[0] {
                    "linear" => Axis::Linear {
                        min: lo,
                        max: hi,
                        count,
                    },
                    "log" => Axis::Log {
                        min: lo,
                        max: hi,
                        count,
                    },
                    _ => Axis::List(f(&rest[4..])),
                });
            }
            "count" => c.count = rest[0].parse().unwrap(),
            "best" => {
                c.best = rest[0].parse().unwrap();
                c.best_f = rest[1].parse().unwrap();
            }
            "first" => c.first = u(&rest),
            "marginal" => c.marginals.push(u(&rest)),
            "near" => {}
            "end" => cases.push(cur.take().unwrap()),
            k => panic!("unknown key {k}"),
        }
    }
    assert_eq!(cases.len(), 2);
    cases
}

#[test]
fn counts_marginals_and_best_match_numpy_brute_force() {
    let ctx = cpu();
    for c in reference_cases() {
        let plan = c.owned.plan(&ctx);
        for mode in [Mode::Fast, Mode::Direct] {
            let r = plan
                .search(
                    &c.axes,
                    &SearchOptions {
                        max_models: 20,
                        ..opts(mode)
                    },
                )
                .unwrap();
            assert_eq!(r.count, c.count, "{mode:?}");
            assert_eq!(r.marginals, c.marginals, "{mode:?}");
            assert_eq!(r.best_index, c.best, "{mode:?}");
            assert!(
                (r.best_misfit - c.best_f).abs() <= 1e-9 * c.best_f,
                "{mode:?}: F {} vs {}",
                r.best_misfit,
                c.best_f
            );
            assert_eq!(r.models, c.first, "{mode:?}");
            assert_eq!(r.more_models, c.count > 20);
            let g = Grid::new(&c.axes, plan.p()).unwrap();
            assert_eq!(&r.model_values[..plan.p()], &g.model(c.first[0])[..]);
        }
    }
}

/// A random n × m problem (LCG); `corr` mixes column 0 into the others (ill-conditioning).
fn random_problem(seed: u64, n: usize, m: usize, corr: f64) -> Owned {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut a: Vec<f64> = (0..n * m).map(|_| next() + 0.05).collect();
    for i in 0..n {
        for j in 1..m {
            a[i * m + j] = (1.0 - corr) * a[i * m + j] + corr * a[i * m];
        }
    }
    let sigma0: Vec<f64> = (0..m).map(|_| 0.5 + next()).collect();
    let f0: Vec<f64> = (0..n)
        .map(|i| (0..m).map(|j| a[i * m + j] * sigma0[j]).sum::<f64>() + 0.1)
        .collect();
    let delta: Vec<f64> = (0..n).map(|_| 0.02 + 0.02 * next()).collect();
    let f_exp = (0..n)
        .map(|i| f0[i] * (1.0 + delta[i] * (next() - 0.5)))
        .collect();
    Owned {
        n,
        m,
        a,
        sigma0,
        f0,
        f_exp,
        delta,
        searched: (0..m).collect(),
    }
}

#[test]
fn grid_region_agrees_with_the_analytic_ellipsoid() {
    let ctx = cpu();
    for (seed, corr) in [(1, 0.0), (2, 0.0), (3, 0.9), (4, 0.97)] {
        let o = random_problem(seed, 50, 3, corr);
        let plan = o.plan(&ctx);
        let crit = Criterion::DeltaChiSquare(0.2);
        let an = plan.analytic(crit);
        assert!(!an.empty);
        // σ* is where the direct misfit is least: a small step anywhere raises it.
        let f_star = o.f2(&an.sigma_star);
        assert!((f_star.sqrt() - an.f_min).abs() <= 1e-9 * an.f_min);
        for k in 0..3 {
            for s in [-1e-4, 1e-4] {
                let mut x = an.sigma_star.clone();
                x[k] += s;
                assert!(o.f2(&x) > f_star);
            }
        }
        // A box around the ellipsoid (and one cutting it along axis 0).
        for cut in [false, true] {
            let axes: Vec<Axis> = (0..3)
                .map(|k| {
                    let h = (an.upper[k] - an.lower[k]) / 2.0;
                    let lo = if cut && k == 0 {
                        an.sigma_star[k] - 0.4 * h
                    } else {
                        an.sigma_star[k] - 1.3 * h
                    };
                    Axis::Linear {
                        min: lo,
                        max: an.sigma_star[k] + 1.3 * h,
                        count: 101,
                    }
                })
                .collect();
            let g = Grid::new(&axes, 3).unwrap();
            let r = plan
                .search(
                    &axes,
                    &SearchOptions {
                        criterion: crit,
                        ..Default::default()
                    },
                )
                .unwrap();
            assert!(r.count > 100, "seed {seed}: {} models", r.count);
            let lo: Vec<f64> = g.values.iter().map(|v| v[0]).collect();
            let hi: Vec<f64> = g.values.iter().map(|v| *v.last().unwrap()).collect();
            let clip = an.clipped(&lo, &hi);
            // Cutting axis 0 also narrows the others' extent: there, only inside is checked.
            for (k, extent) in clip.iter().enumerate() {
                let step = g.values[k][1] - g.values[k][0];
                let (a, b) = extent.unwrap();
                let tol = 1e-9 * step;
                if cut && k > 0 {
                    assert!(r.value_min[k] >= a - tol && r.value_max[k] <= b + tol);
                    continue;
                }
                assert!(
                    r.value_min[k] >= a - tol && r.value_min[k] <= a + step + tol,
                    "seed {seed} cut {cut} k {k}: grid min {} ellipsoid {a} step {step}",
                    r.value_min[k]
                );
                assert!(
                    r.value_max[k] <= b + tol && r.value_max[k] >= b - step - tol,
                    "seed {seed} cut {cut} k {k}: grid max {} ellipsoid {b} step {step}",
                    r.value_max[k]
                );
            }
        }
        // The SVD: Ã v_c = s_c u_c with orthonormal v, and Σ s² = ‖Ã‖²_F.
        let pb = plan.problem();
        let frob: f64 = pb.a_w.iter().map(|v| v * v).sum();
        let ss: f64 = an.singular_values.iter().map(|s| s * s).sum();
        assert!((frob - ss).abs() <= 1e-10 * frob);
        for c in 0..3 {
            let v: Vec<f64> = (0..3).map(|k| an.right_vectors[k * 3 + c]).collect();
            let av2: f64 = (0..pb.n)
                .map(|i| (0..3).map(|k| pb.column(k)[i] * v[k]).sum::<f64>().powi(2))
                .sum();
            assert!((av2.sqrt() - an.singular_values[c]).abs() <= 1e-9 * an.singular_values[0]);
        }
        if corr > 0.9 {
            assert!(
                an.singular_values[0] / an.singular_values[2] > 20.0,
                "ill-conditioned case is ill-conditioned"
            );
        }
    }
}

/// Checks that no model lies within the tie band, then that both modes agree exactly.
fn modes_agree(o: &Owned, axes: &[Axis], pairs: Vec<(usize, usize)>, expect_models: bool) -> u64 {
    let plan = o.plan(&cpu());
    let g = Grid::new(axes, plan.p()).unwrap();
    let mut brute = 0u64;
    for_each_model(&g.values, |_, x| {
        let f2 = o.f2(x);
        assert!(
            (f2 - 1.0).abs() > 1e-9,
            "a model lies in the tie band: F² = {f2}"
        );
        brute += (f2 <= 1.0) as u64;
    });
    let run = |mode| {
        plan.search(
            axes,
            &SearchOptions {
                mode,
                pairs: pairs.clone(),
                max_models: 50,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let (f, d) = (run(Mode::Fast), run(Mode::Direct));
    assert_eq!(f.count, brute);
    assert_eq!(d.count, brute);
    assert_eq!(f.marginals, d.marginals);
    assert_eq!(f.pairs, d.pairs);
    assert_eq!(f.models, d.models);
    assert_eq!(f.best_index, d.best_index);
    assert!((f.best_misfit - d.best_misfit).abs() <= 1e-9 * d.best_misfit);
    for (q, ((a, b), bins)) in f.pairs.iter().enumerate() {
        assert_eq!(
            bins.iter().sum::<u64>(),
            brute,
            "pair {q} ({a}, {b}) sums to the count"
        );
    }
    assert_eq!(expect_models, brute > 0);
    brute
}

#[test]
fn fast_and_direct_modes_agree_on_the_vikiz_like_log() {
    let o = vikiz(2, 40, 0.01, 1.0, vec![1, 2, 3, 6]);
    let an = o.plan(&cpu()).analytic(Criterion::FitWithinErrors);
    let axes: Vec<Axis> = (0..4)
        .map(|k| around(an.sigma_star[k], 1.2 * (an.upper[k] - an.sigma_star[k]), 12))
        .collect();
    let n = modes_agree(&o, &axes, vec![(0, 1), (2, 3), (3, 0)], true);
    assert!(n > 50, "{n}");
}

#[test]
fn ten_parameters_one_value_axes_and_log_axes() {
    let o = vikiz(3, 30, 0.02, 1.0, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let an = o.plan(&cpu()).analytic(Criterion::FitWithinErrors);
    let axes: Vec<Axis> = (0..10)
        .map(|k| {
            let (c, h) = (an.sigma_star[k], 0.9 * (an.upper[k] - an.sigma_star[k]));
            match k % 3 {
                0 => around(c, h, 3),
                1 => Axis::Log {
                    min: c / (1.0 + 0.5 * h / c),
                    max: c * (1.0 + 0.5 * h / c),
                    count: 3,
                },
                _ => Axis::List(vec![c - 0.5 * h, c, c + 0.6 * h]),
            }
        })
        .collect();
    modes_agree(&o, &axes, vec![(9, 0)], true);
    // One value on some axes: the region's slice through σ*.
    let axes1: Vec<Axis> = (0..10)
        .map(|k| {
            if k % 2 == 1 {
                Axis::Linear {
                    min: an.sigma_star[k],
                    max: an.sigma_star[k],
                    count: 1,
                }
            } else {
                axes[k].clone()
            }
        })
        .collect();
    modes_agree(&o, &axes1, vec![], true);
    let one: Vec<Axis> = (0..10)
        .map(|k| Axis::List(vec![an.sigma_star[k]]))
        .collect();
    let r = o
        .plan(&cpu())
        .search(&one, &SearchOptions::default())
        .unwrap();
    assert_eq!((r.total, r.count, r.best_index), (1, 1, 0));
    assert!((r.best_misfit - an.f_min).abs() <= 1e-9);
}

#[test]
fn l1_and_max_norms_match_brute_force() {
    let o = vikiz(1, 60, 0.02, 1.0, vec![1, 2, 3]);
    let plan = o.plan(&cpu());
    let an = plan.analytic(Criterion::FitWithinErrors);
    let axes: Vec<Axis> = (0..3)
        .map(|k| around(an.sigma_star[k], 1.5 * (an.upper[k] - an.sigma_star[k]), 15))
        .collect();
    let g = Grid::new(&axes, 3).unwrap();
    for (norm, level) in [(Norm::L1, 0.6), (Norm::Max, 1.6)] {
        let mut brute = 0u64;
        let mut best = (f64::INFINITY, 0u64);
        for_each_model(&g.values, |i, x| {
            let r = o.residuals(x);
            let f = match norm {
                Norm::L1 => r.iter().map(|v| v.abs()).sum::<f64>() / o.n as f64,
                _ => r.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            };
            assert!((f - level).abs() > 1e-9 * level);
            brute += (f <= level) as u64;
            if f < best.0 {
                best = (f, i);
            }
        });
        let r = plan
            .search(
                &axes,
                &SearchOptions {
                    mode: Mode::Direct,
                    norm,
                    criterion: Criterion::MaxMisfit(level),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(r.count, brute, "{norm:?}");
        assert!(brute > 0, "{norm:?}");
        assert_eq!(r.best_index, best.1, "{norm:?}");
        assert!((r.best_misfit - best.0).abs() <= 1e-9 * best.0);
    }
    // The fast mode is least squares only.
    let e = plan
        .search(
            &axes,
            &SearchOptions {
                norm: Norm::L1,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.status(), seisgpu::ffi::status::SG_ERR_UNSUPPORTED);
}

#[test]
fn empty_region_is_reported_with_f_min() {
    // Errors of 0.1 % but 5 % noise: nothing fits.
    let o = vikiz(1, 40, 0.001, 50.0, vec![1, 2, 3]);
    let plan = o.plan(&cpu());
    let an = plan.analytic(Criterion::FitWithinErrors);
    assert!(an.empty && an.f_min > 1.0, "F_min {}", an.f_min);
    assert!(an.lower.iter().all(|v| v.is_nan()));
    let axes: Vec<Axis> = (0..3).map(|k| around(an.sigma_star[k], 0.05, 9)).collect();
    for mode in [Mode::Fast, Mode::Direct] {
        let r = plan
            .search(
                &axes,
                &SearchOptions {
                    mode,
                    max_models: 5,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(r.count, 0);
        assert!(r.value_min.iter().chain(&r.value_max).all(|v| v.is_nan()));
        assert!(r.best_misfit >= an.f_min * (1.0 - 1e-12));
        assert!(r.marginals.iter().flatten().all(|&c| c == 0));
        assert!(r.models.is_empty() && !r.more_models);
    }
    // The χ² criterion is never empty; F ≤ F_max is when F_max < F_min.
    assert!(!plan.analytic(Criterion::DeltaChiSquare(0.0)).empty);
    assert!(plan.analytic(Criterion::MaxMisfit(an.f_min * 0.99)).empty);
}

fn last_error() -> String {
    // SAFETY: the library returns a valid NUL-terminated string for this thread.
    unsafe { std::ffi::CStr::from_ptr(seisgpu::ffi::last_error::sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn bad_input_gets_a_status_and_writes_nothing() {
    use seisgpu::ffi::context::*;
    use seisgpu::ffi::emlog::*;
    use seisgpu::ffi::status::*;
    let o = random_problem(9, 20, 4, 0.0);
    let mut ctx = std::ptr::null_mut();
    assert_eq!(sg_context_create(SG_BACKEND_CPU, 0, &mut ctx), SG_OK);
    let create = |o: &Owned, searched: &[i32]| {
        let mut plan = std::ptr::dangling_mut::<sg_emlog_plan>();
        let s = sg_emlog_plan_create(
            ctx,
            o.n,
            o.m,
            o.a.as_ptr(),
            o.m,
            1,
            o.sigma0.as_ptr(),
            o.f0.as_ptr(),
            o.f_exp.as_ptr(),
            o.delta.as_ptr(),
            searched.len(),
            searched.as_ptr(),
            &mut plan,
        );
        (s, plan)
    };
    type Spoil = Box<dyn Fn(&mut Owned)>;
    let cases: Vec<(Spoil, &[i32], sg_status)> = vec![
        (Box::new(|o| o.a[5] = f64::NAN), &[0, 1], SG_ERR_NON_FINITE),
        (
            Box::new(|o| o.f_exp[3] = f64::INFINITY),
            &[0, 1],
            SG_ERR_NON_FINITE,
        ),
        (
            Box::new(|o| o.delta[2] = 0.0),
            &[0, 1],
            SG_ERR_INVALID_ARGUMENT,
        ),
        (
            Box::new(|o| o.delta[2] = -0.01),
            &[0, 1],
            SG_ERR_INVALID_ARGUMENT,
        ),
        (
            Box::new(|o| o.f_exp[0] = 0.0),
            &[0, 1],
            SG_ERR_INVALID_ARGUMENT,
        ),
        (
            Box::new(|o| (0..o.n).for_each(|i| o.a[i * o.m + 2] = 0.0)),
            &[0, 2],
            SG_ERR_INVALID_ARGUMENT,
        ),
        (
            Box::new(|o| (0..o.n).for_each(|i| o.a[i * o.m + 1] = 2.0 * o.a[i * o.m])),
            &[0, 1],
            SG_ERR_INVALID_ARGUMENT,
        ),
        (Box::new(|_| {}), &[0, 4], SG_ERR_INVALID_ARGUMENT),
        (Box::new(|_| {}), &[1, 1], SG_ERR_INVALID_ARGUMENT),
        (Box::new(|_| {}), &[], SG_ERR_INVALID_ARGUMENT),
    ];
    for (k, (spoil, searched, want)) in cases.iter().enumerate() {
        let mut bad = o.clone();
        spoil(&mut bad);
        let (s, plan) = create(&bad, searched);
        assert_eq!(s, *want, "case {k}: {}", last_error());
        assert_eq!(plan, std::ptr::dangling_mut(), "case {k}: nothing written");
        assert!(!last_error().is_empty());
    }
    // A good plan; bad searches.
    let (s, plan) = create(&o, &[0, 1]);
    assert_eq!(s, SG_OK);
    let kinds = [SG_EMLOG_AXIS_LINEAR, SG_EMLOG_AXIS_LOG];
    let counts = [5usize, 4];
    let (lo, hi) = ([0.5, 0.5], [1.5, 1.5]);
    let search =
        |kinds: &[i32], counts: &[usize], lo: &[f64], hi: &[f64], opts: &sg_emlog_options| {
            let mut r = std::ptr::dangling_mut::<sg_emlog_result>();
            let s = sg_emlog_search(
                plan,
                kinds.as_ptr(),
                counts.as_ptr(),
                lo.as_ptr(),
                hi.as_ptr(),
                std::ptr::null(),
                0,
                0,
                std::ptr::null(),
                opts,
                &mut r,
            );
            (s, r)
        };
    let d = sg_emlog_options_default();
    for (k, (kinds, counts, lo, hi, opts)) in [
        (kinds, [0, 4], lo, hi, d),
        (kinds, counts, [0.5, -1.0], hi, d),
        (kinds, counts, [1.5, 0.5], hi, d),
        (kinds, counts, [f64::NAN, 0.5], hi, d),
        ([SG_EMLOG_AXIS_LIST, SG_EMLOG_AXIS_LOG], counts, lo, hi, d),
        ([7, 0], counts, lo, hi, d),
        (kinds, counts, lo, hi, sg_emlog_options { mode: 5, ..d }),
        (
            kinds,
            counts,
            lo,
            hi,
            sg_emlog_options {
                criterion: SG_EMLOG_MAX_MISFIT,
                level: -1.0,
                ..d
            },
        ),
        (
            kinds,
            counts,
            lo,
            hi,
            sg_emlog_options {
                criterion: SG_EMLOG_DELTA_CHI_SQUARE,
                norm: SG_EMLOG_NORM_MAX,
                mode: SG_EMLOG_DIRECT,
                ..d
            },
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (s, r) = search(&kinds, &counts, &lo, &hi, &opts);
        assert_ne!(s, SG_OK, "search case {k}");
        assert_eq!(
            r,
            std::ptr::dangling_mut(),
            "search case {k}: nothing written"
        );
    }
    let (s, r) = search(&kinds, &counts, &lo, &hi, &d);
    assert_eq!(s, SG_OK, "{}", last_error());
    let mut small = [7u64; 4];
    assert_eq!(
        sg_emlog_result_marginal(r, 0, small.as_mut_ptr(), 4),
        SG_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(small, [7; 4]);
    assert_eq!(
        sg_emlog_result_marginal(r, 2, small.as_mut_ptr(), 4),
        SG_ERR_INVALID_ARGUMENT
    );
    sg_emlog_result_destroy(r);
    sg_emlog_result_destroy(std::ptr::null_mut());
    sg_emlog_plan_destroy(plan);
    sg_emlog_plan_destroy(std::ptr::null_mut());
    sg_context_destroy(ctx);
}

#[test]
fn synthetic_matrix_is_a_set_of_geometric_factors() {
    use seisgpu::emlog::synthetic::{reservoir, vikiz_like, with_noise, PROBE_LENGTHS};
    let depths = 25;
    let log = vikiz_like(&reservoir(2), (0.25, 0.3), depths, -1.0, 3.4);
    assert_eq!((log.n, log.m), (5 * depths, 8));
    for i in 0..log.n {
        let row = &log.a[i * log.m..(i + 1) * log.m];
        assert!(row.iter().all(|&g| g >= 0.0));
        assert!(
            (row.iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "row {i} sums to 1"
        );
        let f: f64 = row.iter().zip(&log.sigma).map(|(a, s)| a * s).sum();
        assert!((f - log.f[i]).abs() < 1e-15);
    }
    // In the middle of layer 0: the longer the probe, the larger the share of the undisturbed formation (column 3)
    // against the invasion zone (column 1).
    let d = 9; // z = -1 + 4.4·9/24 = 0.65 m
    let share: Vec<f64> = (0..PROBE_LENGTHS.len())
        .map(|p| {
            let row = &log.a[(p * depths + d) * log.m..];
            row[3] / row[1]
        })
        .collect();
    assert!(share.windows(2).all(|w| w[1] > w[0]), "{share:?}");
    // Noise within ±δ, reproducible.
    let noisy = with_noise(&log.f, 0.02, 3);
    assert_eq!(noisy, with_noise(&log.f, 0.02, 3));
    assert!(noisy
        .iter()
        .zip(&log.f)
        .all(|(a, b)| ((a - b) / b).abs() <= 0.02));
    assert!(noisy
        .iter()
        .zip(&log.f)
        .any(|(a, b)| ((a - b) / b).abs() > 0.01));
}

#[test]
fn the_rank_test_does_not_depend_on_how_a_column_is_scaled() {
    let ctx = cpu();
    let o = random_problem(5, 40, 3, 0.0);
    // Column 1 in units 10^13 times larger: A_i1·σ_1 = (10^-13·A_i1)·(10^13·σ_1).
    let s = 1e-13;
    let mut scaled = o.clone();
    for i in 0..o.n {
        scaled.a[i * o.m + 1] *= s;
    }
    scaled.sigma0[1] /= s;
    let plan = o.plan(&ctx);
    let an = plan.analytic(Criterion::FitWithinErrors);
    let axes: Vec<Axis> = (0..3)
        .map(|k| around(an.sigma_star[k], 1.2 * (an.upper[k] - an.sigma_star[k]), 15))
        .collect();
    let mut axes_scaled = axes.clone();
    if let Axis::Linear { min, max, count } = axes[1] {
        axes_scaled[1] = Axis::Linear {
            min: min / s,
            max: max / s,
            count,
        };
    }
    // No model lies within rounding of the threshold, so both grids decide alike.
    let g = Grid::new(&axes, 3).unwrap();
    for_each_model(&g.values, |_, x| {
        assert!((o.f2(x) - 1.0).abs() > 1e-9, "a model lies in the tie band");
    });
    let scaled_plan = EmlogPlan::new(ctx.clone(), &scaled.spec())
        .unwrap_or_else(|e| panic!("a column 10^-13 times the others is refused: {e}"));
    for mode in [Mode::Fast, Mode::Direct] {
        let options = SearchOptions {
            mode,
            pairs: vec![(0, 1), (1, 2)],
            max_models: 20,
            ..Default::default()
        };
        let (r, q) = (
            plan.search(&axes, &options).unwrap(),
            scaled_plan.search(&axes_scaled, &options).unwrap(),
        );
        assert!(r.count > 50, "{mode:?}: {} models", r.count);
        assert_eq!(
            (r.count, r.best_index, &r.models),
            (q.count, q.best_index, &q.models)
        );
        assert_eq!((&r.marginals, &r.pairs), (&q.marginals, &q.pairs));
        assert!((r.best_misfit - q.best_misfit).abs() <= 1e-9 * r.best_misfit);
        let unscale = |v: &[f64]| vec![v[0], v[1] * s, v[2]];
        for (a, b) in [
            (&r.value_min, unscale(&q.value_min)),
            (&r.value_max, unscale(&q.value_max)),
            (&r.best_model, unscale(&q.best_model)),
        ] {
            for k in 0..3 {
                assert!(
                    (a[k] - b[k]).abs() <= 1e-12 * a[k].abs(),
                    "{mode:?} {a:?} {b:?}"
                );
            }
        }
    }
    // A column that is a combination of the ones before it is still refused, at any scale.
    for scale in [1.0, 1e-13] {
        let mut dependent = o.clone();
        for i in 0..o.n {
            dependent.a[i * o.m + 2] = scale * (3.0 * o.a[i * o.m] - 0.5 * o.a[i * o.m + 1]);
        }
        match EmlogPlan::new(ctx.clone(), &dependent.spec()) {
            Ok(_) => panic!("a dependent column (scale {scale}) is accepted"),
            Err(e) => assert!(e.to_string().contains("combination"), "{e}"),
        }
    }
}

#[test]
fn one_value_axes_are_their_min_whatever_their_kind() {
    for axis in [
        Axis::Linear {
            min: 2.0,
            max: 3.0,
            count: 1,
        },
        Axis::Log {
            min: 2.0,
            max: 3.0,
            count: 1,
        },
    ] {
        assert_eq!(axis.values(0).unwrap(), vec![2.0], "{axis:?}");
    }
    // A search of one model: the mins of a linear and a logarithmic axis.
    let o = random_problem(6, 20, 2, 0.0);
    let plan = o.plan(&cpu());
    let axes = [
        Axis::Linear {
            min: 0.8,
            max: 1.2,
            count: 1,
        },
        Axis::Log {
            min: 0.7,
            max: 1.4,
            count: 1,
        },
    ];
    let r = plan.search(&axes, &SearchOptions::default()).unwrap();
    assert_eq!((r.total, r.best_index), (1, 0));
    assert_eq!(r.best_model, vec![0.8, 0.7]);
    let direct = (o.f2(&[0.8, 0.7])).sqrt();
    assert!((r.best_misfit - direct).abs() <= 1e-9 * direct);
}
