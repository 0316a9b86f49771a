//! Soak: the stress jobs (stress.rs) for a long time on one context, with every result
//! checked against a CPU run, bad inputs mixed in, and memory watched for leaks.
//!
//! Off unless SEISGPU_SOAK_SECONDS is set (then it prints "skipped" and returns). The
//! context is SEISGPU_SOAK_BACKEND's (cuda, the default, or cpu); without a CUDA device it
//! skips, unless SEISGPU_REQUIRE_CUDA=1 makes that a failure. SEISGPU_SOAK_THREADS (8)
//! threads each pick a random job and run it on a plan shared by all threads, on a fresh
//! plan or on one of their own, as stress does. They start with a warm-up: each job run by
//! every thread at once, a few times, so that what the library keeps per concurrent call
//! reaches its most before memory is judged.
//!
//! - Results: each is compared with the same job run on a second, CPU context, bit for
//!   bit on a CPU context, and within 1e-5 of the largest value on CUDA (the GPU rounds
//!   differently: atomics, FMA, GEMM tiling); on CUDA each also meets stress's rule against
//!   the first CUDA run (`agree(job.exact(cuda), …)`: the DWT bit for bit).
//! - Bad inputs: about one call in 8 is a wrong one (soak/bad_inputs.rs) on the plan the
//!   other threads share; it must return its status with a message and leave the caller's
//!   outputs untouched.
//! - Memory: a sampler thread records host RSS and, on CUDA, device memory in use every
//!   SEISGPU_SOAK_SAMPLE_SECONDS (10) at a quiet moment (soak/pause.rs): every thread
//!   stopped between calls with the plans it owns dropped, so that each sample sees the
//!   same live objects (the shared plans) and no buffers in flight; RSS after
//!   `malloc_trim` (free heap pages the allocator keeps are no leak). Device memory is the
//!   whole device's in use (total − free), or with SEISGPU_SOAK_DEVICE_MEMORY=process this
//!   process's own (nvidia-smi's per-process figure: scripts/gpu_soak.sh runs the ABI
//!   fuzzers beside the soak on the same device), less the free reserve of the driver's
//!   default pool (trimmed first; what it cannot trim, it keeps in 32 MiB chunks).
//!   (scripts/gpu_soak.sh's SOAK_MALLOC sets the allocator's thresholds, which decide how
//!   much freed memory RSS keeps; SEISGPU_SOAK_SMAPS_DIR writes where the anonymous memory
//!   is.) Samples in the first SEISGPU_SOAK_WARMUP_SECONDS (60) are printed, not judged;
//!   every later one must stay within ±1 % of the first judged sample, or a floor where
//!   1 % of a small figure is below its noise: RSS 16 MiB (fragmentation and thread stacks move it while the heap's
//!   live bytes stay put), the heap's bytes in use (`mallinfo2`) 2 MiB, device memory
//!   64 MiB (cuFFT's and cuBLAS's caches). scripts/gpu_soak.sh judges RSS and device
//!   memory against a strict ±1 % besides.
//!
//! It ends with a Markdown table and fails on any mismatch, wrong bad-input outcome or
//! memory drift.

mod bad_inputs;
mod memory;
mod pause;

use crate::common::{ok, Rng};
use crate::stress::{agree, env_or, jobs, Ctx, Job, Planned};
use memory::{DeviceMemory, Sample};
use pause::Pause;
use seisgpu::ffi::context::memory::sg_context_device_memory;
use seisgpu::ffi::context::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// What the soak was asked to do.
struct Settings {
    seconds: u64,
    cuda: bool,
    threads: usize,
    sample: u64,
    warmup: u64,
    /// How device memory in use is measured.
    device_memory: DeviceMemory,
}

/// None: SEISGPU_SOAK_SECONDS is not set.
fn settings() -> Option<Settings> {
    let seconds = std::env::var("SEISGPU_SOAK_SECONDS").ok()?;
    let seconds = seconds
        .trim()
        .parse()
        .expect("SEISGPU_SOAK_SECONDS: a number of seconds");
    let cuda = match std::env::var("SEISGPU_SOAK_BACKEND")
        .as_deref()
        .map(str::trim)
    {
        Err(_) | Ok("cuda") => true,
        Ok("cpu") => false,
        Ok(other) => panic!("SEISGPU_SOAK_BACKEND is {other:?}; expected cpu or cuda"),
    };
    Some(Settings {
        seconds,
        cuda,
        threads: env_or("SEISGPU_SOAK_THREADS", 8) as usize,
        sample: env_or("SEISGPU_SOAK_SAMPLE_SECONDS", 10).max(1),
        warmup: env_or("SEISGPU_SOAK_WARMUP_SECONDS", 60),
        device_memory: match std::env::var("SEISGPU_SOAK_DEVICE_MEMORY").as_deref() {
            Err(_) | Ok("device") => DeviceMemory::Device,
            Ok("process") => DeviceMemory::Process,
            Ok(other) => {
                panic!("SEISGPU_SOAK_DEVICE_MEMORY is {other:?}; expected device or process")
            }
        },
    })
}

/// The context to soak; None (skipped) when CUDA is asked for and there is none.
fn context(cuda: bool) -> Option<Ctx> {
    let mut c = ptr::null_mut();
    if !cuda {
        ok(sg_context_create(SG_BACKEND_CPU, 0, &mut c));
        return Some(Ctx(c));
    }
    let s = sg_context_create(SG_BACKEND_CUDA, 0, &mut c);
    if s == 0 {
        return Some(Ctx(c));
    }
    let e = crate::common::last_error();
    let required = std::env::var("SEISGPU_REQUIRE_CUDA").is_ok_and(|v| v.trim() == "1");
    assert!(
        !required,
        "SEISGPU_REQUIRE_CUDA=1 but no CUDA context (status {s}): {e}"
    );
    println!("skipped: no CUDA device ({e})");
    None
}

/// Counts per job, and the first failures.
struct Tally {
    calls: Vec<AtomicU64>,
    bad: Vec<AtomicU64>,
    mismatches: Vec<AtomicU64>,
    /// Bad inputs with a wrong status, no message, or a touched output.
    bad_wrong: AtomicU64,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn new(n: usize) -> Tally {
        let zeros = || (0..n).map(|_| AtomicU64::new(0)).collect();
        Tally {
            calls: zeros(),
            bad: zeros(),
            mismatches: zeros(),
            bad_wrong: AtomicU64::new(0),
            failures: Mutex::new(Vec::new()),
        }
    }
    fn fail(&self, what: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 20 {
            f.push(what);
        }
    }
}

/// What every thread reads.
struct Shared<'a> {
    ctx: &'a Ctx,
    cuda: bool,
    jobs: &'a [Box<dyn Job>],
    plans: &'a [Box<dyn Planned>],
    /// The CPU context's results.
    reference: &'a [Vec<f64>],
    /// The first results of the soaked context.
    first: &'a [Vec<f64>],
    tally: &'a Tally,
    /// The sampler's quiet moments.
    pause: &'a Pause,
    /// The warm-up's lockstep (every thread).
    gate: &'a Barrier,
}

/// One good call of job `k`, checked against the references.
fn good_call(
    s: &Shared,
    rng: &mut Rng,
    own: &mut [Option<Box<dyn Planned>>],
    k: usize,
) -> Result<(), String> {
    let job = &s.jobs[k];
    let got = catch_unwind(AssertUnwindSafe(|| match rng.next_u64() % 3 {
        // Shared plans, executed by many threads at once.
        0 => s.plans[k].run(),
        // A fresh plan, made and destroyed while others run.
        1 => job.plan(s.ctx).run(),
        // A plan of this thread, kept or replaced.
        _ => {
            if own[k].is_none() || rng.next_u64() % 4 == 0 {
                own[k] = Some(job.plan(s.ctx));
            }
            own[k].as_ref().unwrap().run()
        }
    }))
    .map_err(|p| format!("panicked: {}", panic_text(&p)))?;
    // Bit for bit on the CPU (fixed summation order); the GPU rounds differently.
    agree(!s.cuda, &got, &s.reference[k]).map_err(|e| format!("against the CPU: {e}"))?;
    if s.cuda {
        agree(job.exact(true), &got, &s.first[k])
            .map_err(|e| format!("against the first CUDA run: {e}"))?;
    }
    Ok(())
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Rounds of the warm-up: each job run by every thread at once this many times.
const WARM_UP_ROUNDS: usize = 3;

/// One soak thread: the warm-up, then random calls until `stop_at`.
fn worker(s: &Shared, t: usize, start: Instant, stop_at: Duration) {
    let mut rng = Rng::new(500 + t as u64);
    let mut own: Vec<Option<Box<dyn Planned>>> = s.jobs.iter().map(|_| None).collect();
    let _leave = Leave(s.pause);
    warm_up(s, t, &mut rng, &mut own);
    while start.elapsed() < stop_at {
        s.pause
            .between_calls(|| own.iter_mut().for_each(|p| *p = None));
        let k = (rng.next_u64() % s.jobs.len() as u64) as usize;
        if rng.next_u64() % 8 == 0 {
            let o = bad_inputs::bad_call(s.plans[k].as_ref(), s.ctx, rng.next_u64());
            if let Err(e) = o.check() {
                s.tally.bad_wrong.fetch_add(1, Ordering::Relaxed);
                s.tally.fail(format!("thread {t}, bad input {e}"));
            }
            s.tally.bad[k].fetch_add(1, Ordering::Relaxed);
            continue;
        }
        tallied_call(s, t, &mut rng, &mut own, k);
    }
}

/// Every job run by all threads at once, a few times, before the first judged sample: what
/// the library keeps per concurrent call (the context's cuBLAS handles, staging buffers,
/// each thread's events and allocator caches) then reaches its most within the warm-up,
/// not at the first rare moment of that much concurrency later in the run.
fn warm_up(s: &Shared, t: usize, rng: &mut Rng, own: &mut [Option<Box<dyn Planned>>]) {
    for k in 0..s.jobs.len() {
        for _ in 0..WARM_UP_ROUNDS {
            s.gate.wait();
            tallied_call(s, t, rng, own, k);
        }
    }
}

/// One good call of job `k`, counted, a mismatch recorded.
fn tallied_call(
    s: &Shared,
    t: usize,
    rng: &mut Rng,
    own: &mut [Option<Box<dyn Planned>>],
    k: usize,
) {
    if let Err(e) = good_call(s, rng, own, k) {
        s.tally.mismatches[k].fetch_add(1, Ordering::Relaxed);
        s.tally
            .fail(format!("thread {t}, {}: {e}", s.jobs[k].name()));
    }
    s.tally.calls[k].fetch_add(1, Ordering::Relaxed);
}

/// Takes a thread out of the quiet moments when it ends, however it ends.
struct Leave<'a>(&'a Pause);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[test]
fn soak_matches_cpu_and_holds_memory() {
    let Some(set) = settings() else {
        println!("skipped: set SEISGPU_SOAK_SECONDS");
        return;
    };
    let Some(ctx) = context(set.cuda) else { return };
    let mut c = ptr::null_mut();
    ok(sg_context_create(SG_BACKEND_CPU, 0, &mut c));
    let cpu = Ctx(c);
    let jobs = jobs();
    let reference: Vec<Vec<f64>> = jobs.iter().map(|j| j.plan(&cpu).run()).collect();
    let plans: Vec<Box<dyn Planned>> = jobs.iter().map(|j| j.plan(&ctx)).collect();
    let first: Vec<Vec<f64>> = plans.iter().map(|p| p.run()).collect();
    let tally = Tally::new(jobs.len());
    let pause = Pause::new(set.threads);
    let gate = Barrier::new(set.threads);
    let shared = Shared {
        ctx: &ctx,
        cuda: set.cuda,
        jobs: &jobs,
        plans: &plans,
        reference: &reference,
        first: &first,
        tally: &tally,
        pause: &pause,
        gate: &gate,
    };
    let (start, budget) = (Instant::now(), Duration::from_secs(set.seconds));
    let stop = AtomicBool::new(false);
    let library_device = || device_in_use(&ctx);
    let samples = std::thread::scope(|sc| {
        let sampler = sc.spawn(|| {
            memory::sample_until(
                &pause,
                &stop,
                start,
                budget,
                Duration::from_secs(set.sample),
                set.cuda.then_some(set.device_memory),
                set.cuda.then_some(&library_device as &dyn Fn() -> u64),
            )
        });
        let workers: Vec<_> = (0..set.threads)
            .map(|t| {
                let shared = &shared;
                sc.spawn(move || worker(shared, t, start, budget))
            })
            .collect();
        for w in workers {
            w.join().expect("a soak thread panicked");
        }
        stop.store(true, Ordering::Relaxed);
        sampler.join().expect("the memory sampler panicked")
    });
    let elapsed = start.elapsed().as_secs_f64();
    drop(plans);
    sg_context_destroy(ctx.0);
    sg_context_destroy(cpu.0);
    let drift = memory::drift(&samples, set.warmup as f64);
    let failures = std::mem::take(&mut *tally.failures.lock().unwrap());
    let pass = failures.is_empty() && drift.is_empty();
    report(&set, elapsed, &jobs, &tally, &samples, pass);
    for f in failures.iter().chain(&drift) {
        eprintln!("soak failure: {f}");
    }
    assert!(
        pass,
        "soak failed: {} call failures, {} memory drifts",
        failures.len(),
        drift.len()
    );
}

/// How a sample gives one of its parts.
type Of = fn(&Sample) -> Option<u64>;

/// The device memory `ctx` holds now (`sg_context_device_memory`).
fn device_in_use(ctx: &Ctx) -> u64 {
    let (mut in_use, mut peak) = (0usize, 0usize);
    ok(sg_context_device_memory(ctx.0, &mut in_use, &mut peak));
    in_use as u64
}

/// The Markdown table of the run.
fn report(
    set: &Settings,
    elapsed: f64,
    jobs: &[Box<dyn Job>],
    tally: &Tally,
    samples: &[Sample],
    pass: bool,
) {
    let n = |v: &AtomicU64| v.load(Ordering::Relaxed);
    let per_job = |of: &[AtomicU64]| -> String {
        jobs.iter()
            .zip(of)
            .map(|(j, v)| format!("{} {}", j.name(), n(v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let w = set.warmup as f64;
    let backend = if set.cuda { "cuda" } else { "cpu" };
    println!("\n| soak ({backend}, {} threads) | |", set.threads);
    println!("|---|---|");
    println!("| elapsed | {elapsed:.1} s |");
    println!("| calls per job | {} |", per_job(&tally.calls));
    println!("| bad-input calls per job | {} |", per_job(&tally.bad));
    println!(
        "| mismatches | {} |",
        tally.mismatches.iter().map(n).sum::<u64>()
    );
    println!("| wrong bad-input outcomes | {} |", n(&tally.bad_wrong));
    println!(
        "| RSS first / last / max after {w:.0} s (MiB) | {} |",
        memory::first_last_max(samples, w, |s| Some(s.rss))
    );
    println!(
        "| heap in use first / last / max after {w:.0} s (MiB) | {} |",
        memory::first_last_max(samples, w, |s| s.heap)
    );
    println!(
        "| device used first / last / max after {w:.0} s (MiB) | {} |",
        memory::first_last_max(samples, w, |s| s.device)
    );
    let parts: [(&str, Of); 7] = [
        ("RSS anonymous", |s| Some(s.parts.rss_anon)),
        ("RSS file-backed", |s| Some(s.parts.rss_file)),
        ("pinned staging", |s| Some(s.parts.pinned)),
        ("library device", |s| s.parts.library),
        ("driver pool reserved", |s| s.parts.pool_reserved),
        ("driver pool used", |s| s.parts.pool_used),
        ("graph memory reserved", |s| s.parts.graph_reserved),
    ];
    for (what, of) in parts {
        println!(
            "| {what} first / last / max after {w:.0} s (MiB) | {} |",
            memory::first_last_max(samples, w, of)
        );
    }
    println!(
        "| memory samples (every {} s) | {} |",
        set.sample,
        samples.len()
    );
    println!("| result | {} |", if pass { "pass" } else { "FAIL" });
}
