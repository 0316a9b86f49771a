//! The GPU search against the CPU's on the device machine: identical counts, 1D and 2D
//! marginals, best model and listed models, in the fast mode (the same f64 decision, bit
//! for bit) and the direct mode (grids checked to hold no model in the tie band), with the
//! histograms in shared memory and, for a large pair, in global memory; p = 3, 4, 9 and
//! 10. Without a CUDA device the test reports "skipped", unless SEISGPU_REQUIRE_CUDA=1
//! makes that a failure.

use crate::emlog_support;

use emlog_support::*;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::emlog::criterion::{Criterion, Mode, Norm, SearchOptions};
use seisgpu::emlog::grid::{Axis, Grid};
use std::time::Instant;

fn axes_around(o: &Owned, count: &[usize], widen: f64) -> Vec<Axis> {
    let an = o.plan(&cpu()).analytic(Criterion::FitWithinErrors);
    assert!(!an.empty, "F_min {}", an.f_min);
    (0..count.len())
        .map(|k| {
            around(
                an.sigma_star[k],
                widen * (an.upper[k] - an.sigma_star[k]),
                count[k],
            )
        })
        .collect()
}

fn no_ties(o: &Owned, axes: &[Axis]) {
    let g = Grid::new(axes, axes.len()).unwrap();
    for_each_model(&g.values, |_, x| {
        let f2 = o.f2(x);
        assert!((f2 - 1.0).abs() > 1e-9, "tie band: F² = {f2}");
    });
}

fn compare(
    gpu: &std::sync::Arc<Context>,
    o: &Owned,
    axes: &[Axis],
    opts: &SearchOptions,
    what: &str,
) {
    let t = Instant::now();
    let c = o.plan(&cpu()).search(axes, opts).unwrap();
    let tc = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let g = o.plan(gpu).search(axes, opts).unwrap();
    let tg = t.elapsed().as_secs_f64();
    println!(
        "{what:<40} {} models, {} equivalent; CPU {tc:.3} s, GPU {tg:.3} s",
        c.total, c.count
    );
    assert!(c.count > 0, "{what}: the region is empty");
    assert_eq!(g.count, c.count, "{what}");
    assert_eq!(g.marginals, c.marginals, "{what}");
    assert_eq!(g.pairs, c.pairs, "{what}");
    assert_eq!(g.best_index, c.best_index, "{what}");
    assert_eq!(g.models, c.models, "{what}");
    assert_eq!(g.more_models, c.more_models, "{what}");
    if opts.mode == Mode::Fast {
        assert_eq!(
            g.best_misfit, c.best_misfit,
            "{what}: the same f64 bit for bit"
        );
    } else {
        assert!(
            (g.best_misfit - c.best_misfit).abs() <= 1e-9 * c.best_misfit,
            "{what}"
        );
    }
}

#[test]
fn gpu_search_matches_cpu() {
    let gpu = match Context::new(BackendRequest::Cuda, 0) {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var("SEISGPU_REQUIRE_CUDA").map_or(true, |v| v.trim() != "1"),
                "SEISGPU_REQUIRE_CUDA=1 but no CUDA context: {e}"
            );
            println!("skipped: no CUDA device ({e})");
            return;
        }
    };
    let o4 = vikiz(2, 40, 0.01, 1.0, vec![1, 2, 3, 6]);
    let axes4 = axes_around(&o4, &[23, 17, 11, 9], 1.2);
    no_ties(&o4, &axes4);
    for mode in [Mode::Fast, Mode::Direct] {
        let opts = SearchOptions {
            mode,
            pairs: vec![(0, 1), (2, 3), (3, 0)],
            max_models: 100,
            ..Default::default()
        };
        compare(&gpu, &o4, &axes4, &opts, &format!("p = 4, {mode:?}"));
    }
    // A pair too large for shared memory (global atomics).
    let big = axes_around(&o4, &[101, 97, 3, 3], 1.2);
    no_ties(&o4, &big);
    let opts = SearchOptions {
        pairs: vec![(0, 1)],
        ..Default::default()
    };
    compare(&gpu, &o4, &big, &opts, "p = 4, 9,797-bin pair (global)");
    // L1 and max norms, direct.
    for (norm, level) in [(Norm::L1, 0.6), (Norm::Max, 1.6)] {
        let opts = SearchOptions {
            mode: Mode::Direct,
            norm,
            criterion: Criterion::MaxMisfit(level),
            ..Default::default()
        };
        compare(&gpu, &o4, &axes4, &opts, &format!("p = 4, direct {norm:?}"));
    }
    // p = 9 (3 layers × 3 zones), 8⁹ = 1.3·10⁸ models, fast; and p = 10.
    let o9 = vikiz(3, 30, 0.02, 1.0, (1..10).collect());
    let axes9 = axes_around(&o9, &[8; 9], 1.1);
    let opts = SearchOptions {
        pairs: vec![(0, 8), (4, 5)],
        max_models: 1000,
        ..Default::default()
    };
    compare(&gpu, &o9, &axes9, &opts, "p = 9, fast");
    let o10 = vikiz(3, 30, 0.02, 1.0, (0..10).collect());
    let axes10 = axes_around(&o10, &[5; 10], 1.1);
    compare(
        &gpu,
        &o10,
        &axes10,
        &SearchOptions::default(),
        "p = 10, fast",
    );
}
