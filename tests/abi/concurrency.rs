//! Eight threads using one context at once — through one shared plan, and through plans
//! of their own — get bit for bit what serial calls give, in f32 and f64, for denoising
//! (output and thresholds) and transforms; and each thread keeps its own last-error
//! message while the others succeed and fail around it.

use crate::common;

use common::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::status::*;
use std::sync::Barrier;

const THREADS: usize = 8;
const ROUNDS: usize = 20;

/// One unit of work: a batch of traces to denoise and to transform.
struct Job {
    n: usize,
    n_traces: usize,
    stride: usize,
    data: Vec<f64>,
    options: sg_dwt_denoise_options,
    levels: usize,
}

/// The expected results of a job, as raw bits.
#[derive(PartialEq, Debug, Clone)]
struct Bits {
    denoised: Vec<u64>,
    thresholds: Vec<u64>,
    forward: Vec<u64>,
}

fn job(seed: u64, n: usize, n_traces: usize) -> Job {
    let mut rng = Rng::new(seed);
    let stride = n + (seed as usize % 3);
    let len = (n_traces - 1) * stride + n;
    // A random walk plus noise, different per seed.
    let mut walk = 0.0;
    let data = (0..len)
        .map(|_| {
            walk += 0.1 * rng.symmetric();
            walk + 0.3 * rng.gauss()
        })
        .collect();
    let mut options = sg_dwt_denoise_options_default();
    options.threshold_mode = (seed % 2) as i32;
    options.noise_estimate = ((seed / 2) % 2) as i32;
    options.n_levels = (seed % 4) as u32; // 0 = all levels
    let levels = if options.n_levels == 0 {
        n.trailing_zeros() as usize
    } else {
        options.n_levels as usize
    };
    Job {
        n,
        n_traces,
        stride,
        data,
        options,
        levels,
    }
}

/// Denoises and transforms `job` in precision `T` through `plan`.
fn compute<T: Real>(plan: &Plan, job: &Job) -> Bits {
    let input: Vec<T> = job.data.iter().map(|&x| T::from_f64(x)).collect();
    let mut out = vec![T::from_f64(0.0); input.len()];
    let mut thr = vec![0.0f64; job.n_traces * job.levels];
    ok(T::denoise(
        plan,
        &job.options,
        input.as_ptr(),
        out.as_mut_ptr(),
        job.n_traces,
        job.stride,
        thr.as_mut_ptr(),
    ));
    let mut fwd = input.clone();
    let p = fwd.as_mut_ptr();
    ok(T::execute(
        plan,
        SG_DWT_FORWARD,
        job.options.n_levels,
        p,
        p,
        job.n_traces,
        job.stride,
    ));
    Bits {
        denoised: out.iter().map(|v| v.to_bits64()).collect(),
        thresholds: thr.iter().map(|v| v.to_bits()).collect(),
        forward: fwd.iter().map(|v| v.to_bits64()).collect(),
    }
}

/// A failing call whose message is unique to this thread, then a successful one.
fn check_own_message(plan: &Plan, k: usize) {
    let x = [0.0f64; 2];
    let mut y = [0.0f64; 2];
    let dir = 100 + k as i32;
    let s = sg_dwt_execute_f64(plan.0, dir, 0, x.as_ptr(), y.as_mut_ptr(), 1, 2);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT);
    std::thread::yield_now();
    let msg = last_error();
    assert!(
        msg.contains(&format!("direction is {dir};")),
        "thread {k} sees another thread's message: {msg:?}"
    );
}

struct Workload {
    jobs: Vec<Job>,
    expected64: Vec<Bits>,
    expected32: Vec<Bits>,
}

/// Per thread: two short-trace batches and, every other thread, one long trace (which
/// the CPU backend splits across the pool when it has more threads than traces).
fn workload(ctx: &Ctx, family: i32, member: i32) -> Workload {
    let jobs: Vec<Job> = (0..THREADS)
        .map(|k| {
            let n = if k % 2 == 0 { 1 << 16 } else { 1024 };
            let n_traces = if n == 1024 { 6 } else { 1 };
            job(100 + k as u64, n, n_traces)
        })
        .collect();
    // Serial results, one call at a time, on this thread.
    let mut expected64 = Vec::new();
    let mut expected32 = Vec::new();
    for j in &jobs {
        let plan = ctx.plan(family, member, j.n);
        expected64.push(compute::<f64>(&plan, j));
        expected32.push(compute::<f32>(&plan, j));
    }
    // The seeds do give different data and results.
    for k in 1..THREADS {
        assert_ne!(expected64[k].denoised, expected64[k - 1].denoised);
    }
    Workload {
        jobs,
        expected64,
        expected32,
    }
}

#[test]
fn one_shared_plan_per_length() {
    let ctx = Ctx::cpu();
    let (family, member) = (SG_WAVELET_DAUBECHIES, 8);
    let w = workload(&ctx, family, member);
    let short = ctx.plan(family, member, 1024);
    let long = ctx.plan(family, member, 1 << 16);
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for k in 0..THREADS {
            let (w, short, long, barrier) = (&w, &short, &long, &barrier);
            s.spawn(move || {
                let job = &w.jobs[k];
                let plan = if job.n == 1024 { short } else { long };
                barrier.wait();
                for round in 0..ROUNDS {
                    // Alternate the precision so both kinds of call overlap.
                    if (round + k) % 2 == 0 {
                        assert_eq!(compute::<f64>(plan, job), w.expected64[k], "thread {k} f64");
                        assert_eq!(compute::<f32>(plan, job), w.expected32[k], "thread {k} f32");
                    } else {
                        assert_eq!(compute::<f32>(plan, job), w.expected32[k], "thread {k} f32");
                        assert_eq!(compute::<f64>(plan, job), w.expected64[k], "thread {k} f64");
                    }
                    check_own_message(short, k);
                }
            });
        }
    });
}

#[test]
fn a_plan_per_thread() {
    let ctx = Ctx::cpu();
    let (family, member) = (SG_WAVELET_BSPLINE_CENTERED, 309);
    let w = workload(&ctx, family, member);
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for k in 0..THREADS {
            let (w, ctx, barrier) = (&w, &ctx, &barrier);
            s.spawn(move || {
                let job = &w.jobs[k];
                barrier.wait();
                for round in 0..ROUNDS {
                    // Plans made and destroyed while other threads run theirs.
                    let plan = ctx.plan(family, member, job.n);
                    if (round + k) % 2 == 0 {
                        assert_eq!(
                            compute::<f64>(&plan, job),
                            w.expected64[k],
                            "thread {k} f64"
                        );
                        assert_eq!(
                            compute::<f32>(&plan, job),
                            w.expected32[k],
                            "thread {k} f32"
                        );
                    } else {
                        assert_eq!(
                            compute::<f32>(&plan, job),
                            w.expected32[k],
                            "thread {k} f32"
                        );
                        assert_eq!(
                            compute::<f64>(&plan, job),
                            w.expected64[k],
                            "thread {k} f64"
                        );
                    }
                    check_own_message(&plan, k);
                }
            });
        }
    });
}
