//! The ABI fuzzer: random, partly wrong calls to every exported `sg_*` function
//! from several threads sharing one context, each batch in a child process so that a crash
//! or a hang is counted with the seed that reproduces it. Each call is checked: a known
//! status; on failure a message that names the planted fault and output buffers byte for
//! byte untouched; on success an empty message. See `tests/abi/fuzz/mod.rs`.
//!
//! Environment (all optional):
//!   SEISGPU_FUZZ_CALLS    calls in all (default 60000: the `make test` run)
//!   SEISGPU_FUZZ_BATCH    calls per child process (default 6000)
//!   SEISGPU_FUZZ_SEED     first batch seed (default 1); batch b uses seed + b
//!   SEISGPU_FUZZ_THREADS  threads per batch (default 4)
//!   SEISGPU_FUZZ_BACKEND  cpu (default), cuda or auto: the shared context's backend
//!   SEISGPU_FUZZ_REPORT   file for the figures (default target/fuzz_abi.txt)
//!   SEISGPU_FUZZ_SECONDS  no batch starts after this many seconds (default: no limit);
//!                         the report says when it stopped the run short of its calls
//! Replaying one batch, printing each call before it is made:
//!   SEISGPU_FUZZ_CHILD_SEED=S SEISGPU_FUZZ_TRACE=1 cargo test --release --test abi \
//!       -- --ignored --exact fuzz_abi::fuzz_child --nocapture

use crate::fuzz;

use seisgpu::ffi::context::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

fn backend() -> i32 {
    match std::env::var("SEISGPU_FUZZ_BACKEND").as_deref() {
        Ok("cuda") => SG_BACKEND_CUDA,
        Ok("auto") => SG_BACKEND_AUTO,
        _ => SG_BACKEND_CPU,
    }
}

extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
    fn raise(signum: i32) -> i32;
}
const SIGSEGV: i32 = 11;
const SIGBUS: i32 = 7;
const SIG_DFL: usize = 0;

/// A crashing batch's last words: the stack of the thread that faulted (the symbols the
/// staged binaries keep), on stderr, whose tail the parent reports with the seed. Not
/// async-signal-safe, which a process that dies anyway can afford.
extern "C" fn on_fault(signum: i32) {
    let thread = std::thread::current();
    eprintln!(
        "FUZZ-FAULT signal {signum} in thread {:?}\n{}",
        thread.name(),
        std::backtrace::Backtrace::force_capture()
    );
    // SAFETY: the default action, then the signal again: the process dies of it as before.
    unsafe {
        signal(signum, SIG_DFL);
        raise(signum);
    }
}

/// One batch, run by the child process; its figures go to stdout, one per line.
#[test]
#[ignore = "run by fuzz_abi_batches in a child process"]
fn fuzz_child() {
    // SAFETY: installs a handler of the signature signal(2) expects, for this process only.
    unsafe {
        signal(SIGSEGV, on_fault as extern "C" fn(i32) as usize);
        signal(SIGBUS, on_fault as extern "C" fn(i32) as usize);
    }
    let seed: u64 = env_or("SEISGPU_FUZZ_CHILD_SEED", 1);
    let calls: u64 = env_or("SEISGPU_FUZZ_BATCH", 6000);
    let threads: usize = env_or("SEISGPU_FUZZ_THREADS", 4);
    let trace = std::env::var_os("SEISGPU_FUZZ_TRACE").is_some();
    let stats = fuzz::run_batch(seed, threads, calls, backend(), trace);
    for ((func, status), n) in &stats.calls {
        println!("FUZZ-CALL {func} {status} {n}");
    }
    for f in &stats.findings {
        println!("FUZZ-FINDING {}", f.replace('\n', " "));
    }
    println!("FUZZ-DONE");
    // Alone (a replay, or under valgrind) the batch fails on a finding; the parent has
    // already read them from the lines above.
    assert!(
        stats.findings.is_empty(),
        "{} findings",
        stats.findings.len()
    );
}

/// What became of one child: its output, or how it died.
struct Outcome {
    stdout: String,
    stderr: String,
    died: Option<String>,
}

fn run_child(seed: u64, batch: u64, limit: Duration) -> Outcome {
    let exe = std::env::current_exe().expect("the test executable");
    let mut child = Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "fuzz_abi::fuzz_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SEISGPU_FUZZ_CHILD_SEED", seed.to_string())
        .env("SEISGPU_FUZZ_BATCH", batch.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning a fuzzing batch");
    // Drain both pipes on their own threads so that a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let died = loop {
        match child.try_wait().expect("waiting for a batch") {
            Some(status) if status.success() => break None,
            Some(status) => {
                break Some(match status.signal() {
                    Some(sig) => format!("killed by signal {sig}"),
                    None => format!("exit status {}", status.code().unwrap_or(-1)),
                })
            }
            None if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break Some(format!("hung: killed after {} s", limit.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    Outcome {
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
        died,
    }
}

#[test]
fn fuzz_abi_batches() {
    let total: u64 = env_or("SEISGPU_FUZZ_CALLS", 60_000);
    let batch: u64 = env_or("SEISGPU_FUZZ_BATCH", 6000);
    let first: u64 = env_or("SEISGPU_FUZZ_SEED", 1);
    let limit = Duration::from_secs(env_or("SEISGPU_FUZZ_BATCH_TIMEOUT_S", 300));
    let seconds: u64 = env_or("SEISGPU_FUZZ_SECONDS", u64::MAX);
    let started = Instant::now();
    let in_time = || started.elapsed().as_secs() < seconds;
    let mut per_func: BTreeMap<String, BTreeMap<i32, u64>> = BTreeMap::new();
    let mut findings = Vec::new();
    let mut crashes = Vec::new();
    let mut calls = 0u64;
    let mut batches = 0u64;
    // Crashed batches report nothing: bound the batches too.
    let max_batches = 2 * total.div_ceil(batch);
    while calls < total && batches < max_batches && in_time() {
        let seed = first + batches;
        batches += 1;
        let o = run_child(seed, batch, limit);
        let mut done = false;
        for line in o.stdout.lines() {
            // libtest prints "test fuzz_child ... " before the first line, unterminated.
            let Some(at) = line.find("FUZZ-") else {
                continue;
            };
            let line = &line[at..];
            let mut w = line.split_whitespace();
            match w.next() {
                Some("FUZZ-CALL") => {
                    let func = w.next().unwrap().to_string();
                    let status: i32 = w.next().unwrap().parse().unwrap();
                    let n: u64 = w.next().unwrap().parse().unwrap();
                    *per_func.entry(func).or_default().entry(status).or_default() += n;
                    calls += n;
                }
                Some("FUZZ-FINDING") => findings.push(line["FUZZ-FINDING ".len()..].to_string()),
                Some("FUZZ-DONE") => done = true,
                _ => {}
            }
        }
        // A batch that printed FUZZ-DONE and then failed did so on its findings.
        if !done {
            let tail: Vec<&str> = o.stderr.lines().rev().take(100).collect();
            crashes.push(format!(
                "seed {seed}: {} (replay: SEISGPU_FUZZ_CHILD_SEED={seed} SEISGPU_FUZZ_BATCH={batch} SEISGPU_FUZZ_TRACE=1 cargo test --release --test abi -- --ignored --exact fuzz_abi::fuzz_child --nocapture)\n    {}",
                o.died.as_deref().unwrap_or("no FUZZ-DONE line"),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
            ));
        }
    }
    let mut report = report(
        &per_func,
        calls,
        batches,
        started.elapsed(),
        &findings,
        &crashes,
    );
    if calls < total && !in_time() {
        report.push_str(&format!(
            "TIME LIMIT {seconds} s reached after {calls} of {total} calls\n"
        ));
    }
    let path = std::env::var("SEISGPU_FUZZ_REPORT")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/target/fuzz_abi.txt").into());
    let _ = std::fs::write(&path, &report);
    eprintln!("{report}");
    assert!(
        crashes.is_empty() && findings.is_empty(),
        "{} crashed or hung batches, {} findings (figures in {path})",
        crashes.len(),
        findings.len()
    );
    // Every exported function was reached.
    for f in EXPORTS {
        assert!(per_func.contains_key(*f), "the fuzzer never called {f}");
    }
}

/// The exported functions with a status (the others are called but not counted here).
const EXPORTS: &[&str] = &[
    "sg_context_create",
    "sg_context_backend",
    "sg_context_describe",
    "sg_last_error_copy",
    "sg_status_string",
    "sg_dwt_plan_create",
    "sg_dwt_execute_f32",
    "sg_dwt_execute_f64",
    "sg_dwt_denoise_f32",
    "sg_dwt_denoise_f64",
    "sg_usfft_plan_create",
    "sg_usfft_set_points_f32",
    "sg_usfft_set_points_f64",
    "sg_usfft_execute_f32",
    "sg_usfft_execute_f64",
    "sg_fxdecon_plan_create_2d",
    "sg_fxdecon_plan_create_3d",
    "sg_fxdecon_execute_2d_f32",
    "sg_fxdecon_execute_2d_f64",
    "sg_fxdecon_execute_3d_f32",
    "sg_fxdecon_execute_3d_f64",
    "sg_xcorr_plan_create",
    "sg_xcorr_plan_sizes",
    "sg_xcorr_preprocess_f32",
    "sg_xcorr_spectra_sizes",
    "sg_xcorr_spectra_copy",
    "sg_xcorr_pair_count",
    "sg_xcorr_pair_stations",
    "sg_xcorr_correlate_f32",
    "sg_xcorr_spectra_import",
    "sg_xcorr_substack_groups",
    "sg_xcorr_correlate_substacks_f32",
    "sg_emlog_plan_create",
    "sg_emlog_analytic",
    "sg_emlog_search",
    "sg_emlog_result_summary",
    "sg_emlog_result_marginal",
    "sg_emlog_result_pair",
    "sg_emlog_result_models",
    "sg_wavepacket_layout_create",
    "sg_wavepacket_layout_sizes",
    "sg_wavepacket_box_info",
    "sg_wavepacket_forward_f32",
    "sg_wavepacket_forward_f64",
    "sg_wavepacket_adjoint_f32",
    "sg_wavepacket_adjoint_f64",
    "sg_wavepacket_inverse_f32",
    "sg_wavepacket_inverse_f64",
    "sg_wavepacket_keep_largest_f32",
    "sg_wavepacket_keep_largest_f64",
    "sg_wavepacket_threshold_f32",
    "sg_wavepacket_threshold_f64",
    "sg_wavepacket_pocs_f32",
    "sg_wavepacket_pocs_f64",
    "sg_wavepacket_layout_create_with_options",
    "sg_wavepacket_layout_create_capped",
    "sg_wavepacket_device_bytes",
    "sg_wavepacket_packet_norms",
    "sg_wavepacket_threshold_noise_f32",
    "sg_wavepacket_threshold_noise_f64",
    "sg_wavepacket_estimate_noise_f32",
    "sg_wavepacket_estimate_noise_f64",
    "sg_wavepacket_sparse_approximation_f32",
    "sg_wavepacket_sparse_approximation_f64",
    "sg_wavepacket_volume_create",
    "sg_wavepacket_volume_create_on_contexts",
    "sg_wavepacket_volume_create_capped",
    "sg_wavepacket_volume_sizes",
    "sg_wavepacket_volume_box_info",
    "sg_wavepacket_volume_forward_f32",
    "sg_wavepacket_volume_forward_f64",
    "sg_wavepacket_volume_adjoint_f32",
    "sg_wavepacket_volume_adjoint_f64",
    "sg_wavepacket_volume_inverse_f32",
    "sg_wavepacket_volume_inverse_f64",
    "sg_wavepacket_volume_tile_info",
    "sg_wavepacket_volume_tile_data_f32",
    "sg_wavepacket_volume_tile_data_f64",
    "sg_wavepacket_volume_forward_tile_f32",
    "sg_wavepacket_volume_forward_tile_f64",
    "sg_wavepacket_volume_add_tile_f32",
    "sg_wavepacket_volume_add_tile_f64",
    "sg_wavepacket_volume_adjoint_tile_f32",
    "sg_wavepacket_volume_adjoint_tile_f64",
    "sg_context_set_stream",
    "sg_context_set_device_checks",
    "sg_context_synchronize",
    "sg_dwt_execute_device_f32",
    "sg_dwt_execute_device_f64",
    "sg_dwt_denoise_device_f32",
    "sg_dwt_denoise_device_f64",
    "sg_usfft_set_points_device_f32",
    "sg_usfft_set_points_device_f64",
    "sg_usfft_execute_device_f32",
    "sg_usfft_execute_device_f64",
    "sg_fxdecon_execute_2d_device_f32",
    "sg_fxdecon_execute_2d_device_f64",
    "sg_fxdecon_execute_3d_device_f32",
    "sg_fxdecon_execute_3d_device_f64",
    "sg_xcorr_preprocess_device_f32",
    "sg_xcorr_correlate_device_f32",
    "sg_xcorr_correlate_substacks_device_f32",
    "sg_emlog_plan_create_device",
    "sg_emlog_search_device",
    "sg_emlog_result_marginal_device",
    "sg_emlog_result_pair_device",
    "sg_emlog_result_models_device",
    "sg_wavepacket_forward_device_f32",
    "sg_wavepacket_forward_device_f64",
    "sg_wavepacket_adjoint_device_f32",
    "sg_wavepacket_adjoint_device_f64",
    "sg_wavepacket_inverse_device_f32",
    "sg_wavepacket_inverse_device_f64",
    "sg_wavepacket_threshold_device_f32",
    "sg_wavepacket_threshold_device_f64",
];

fn report(
    per_func: &BTreeMap<String, BTreeMap<i32, u64>>,
    calls: u64,
    batches: u64,
    elapsed: Duration,
    findings: &[String],
    crashes: &[String],
) -> String {
    use std::fmt::Write;
    let mut r = String::new();
    let _ = writeln!(
        r,
        "ABI fuzzer: {calls} calls in {batches} batches ({} s), {} crashed/hung batches, {} findings",
        elapsed.as_secs(),
        crashes.len(),
        findings.len()
    );
    // The longest name sets the column (the device calls' names are long).
    let w = per_func.keys().map(String::len).max().unwrap_or(0).max(28);
    let _ = writeln!(r, "{:<w$} {:>8}  statuses", "function", "calls");
    let mut all: BTreeMap<i32, u64> = BTreeMap::new();
    for (func, statuses) in per_func {
        let n: u64 = statuses.values().sum();
        let list: Vec<String> = statuses
            .iter()
            .map(|(s, n)| {
                *all.entry(*s).or_default() += n;
                format!("{}={n}", fuzz::status_label(*s))
            })
            .collect();
        let _ = writeln!(r, "{func:<w$} {n:>8}  {}", list.join(" "));
    }
    let list: Vec<String> = all
        .iter()
        .map(|(s, n)| format!("{}={n}", fuzz::status_label(*s)))
        .collect();
    let _ = writeln!(r, "{:<w$} {calls:>8}  {}", "all", list.join(" "));
    for c in crashes {
        let _ = writeln!(r, "CRASH {c}");
    }
    for f in findings {
        let _ = writeln!(r, "FINDING {f}");
    }
    r
}
