//! The soak's memory samples: host RSS and device memory in use, taken by a sampler
//! thread, and the drift rule they are judged by (see soak.rs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

const MIB: f64 = (1u64 << 20) as f64;
/// What RSS may move by at least, MiB: the heap's fragmentation moves it by a few MiB
/// between calls even after `malloc_trim` (up to 6.4 MiB of 34 MiB seen on the CPU); a
/// leak of 1 KiB a call passes 16 MiB within a minute on the CPU.
const RSS_SLACK_MIB: f64 = 16.0;
/// What device memory in use may move by at least, MiB: cuFFT and cuBLAS caches.
const DEVICE_SLACK_MIB: f64 = 64.0;

/// Memory at one moment of the run.
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    /// Seconds since the start of the run.
    pub(crate) at: f64,
    /// Resident host memory, bytes.
    pub(crate) rss: u64,
    /// Device memory in use (total − free), bytes; None on the CPU.
    pub(crate) device: Option<u64>,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn malloc_trim(pad: usize) -> i32;
}

/// Resident set size of this process, from /proc/self/status (VmRSS, in kB), after glibc
/// has given the free pages of its heaps back: what live allocations hold, not what the
/// allocator happens to keep (which swings by several % with 8 threads' arenas).
fn rss_bytes() -> u64 {
    // SAFETY: malloc_trim only releases free memory; it is thread-safe and takes no pointer.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        malloc_trim(0);
    }
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    kb * 1024
}

/// Device memory in use on device 0, bytes.
fn device_used(cu: &std::sync::Arc<cudarc::driver::CudaContext>) -> u64 {
    let (free, total) = cu.mem_get_info().expect("cuMemGetInfo");
    (total - free) as u64
}

/// Samples every `every` until `stop` or `until` (when the soak threads stop and drop their
/// plans), the first at once; prints each as it is taken.
/// Each is taken holding `gate` for writing, which the soak threads hold for reading over
/// each call: between calls, so that it measures the memory that stays, not the buffers
/// of the calls in flight (which make RSS swing by 10 % from one moment to the next).
pub(crate) fn sample_until(
    gate: &RwLock<()>,
    stop: &AtomicBool,
    start: Instant,
    until: Duration,
    every: Duration,
    cuda: bool,
) -> Vec<Sample> {
    let cu =
        cuda.then(|| cudarc::driver::CudaContext::new(0).expect("CUDA context for mem_get_info"));
    let mut samples = Vec::new();
    let mut next = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) && start.elapsed() < until {
        if start.elapsed() >= next {
            let between_calls = gate.write().unwrap();
            let s = Sample {
                at: start.elapsed().as_secs_f64(),
                rss: rss_bytes(),
                device: cu.as_ref().map(device_used),
            };
            drop(between_calls);
            let device = s
                .device
                .map_or("-".into(), |d| format!("{:.1}", d as f64 / MIB));
            eprintln!(
                "soak: {:7.1} s  RSS {:8.1} MiB  device used {device} MiB",
                s.at,
                s.rss as f64 / MIB
            );
            samples.push(s);
            next += every;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    samples
}

/// The samples taken after `warmup` seconds that drift from the first of them: RSS by
/// more than 1 % or 16 MiB, device memory in use by more than 1 % or 64 MiB, whichever is
/// larger; device memory only when `judge_device` (not when other processes share the device).
pub(crate) fn drift(samples: &[Sample], warmup: f64, judge_device: bool) -> Vec<String> {
    let judged: Vec<&Sample> = samples.iter().filter(|s| s.at >= warmup).collect();
    let Some(first) = judged.first() else {
        return vec![format!("no memory sample after the {warmup} s warm-up")];
    };
    let mut problems = Vec::new();
    for s in &judged {
        let (rss, base) = (s.rss as f64, first.rss as f64);
        if (rss - base).abs() > (0.01 * base).max(RSS_SLACK_MIB * MIB) {
            problems.push(format!(
                "RSS {:.1} MiB at {:.0} s, {:.1} MiB at {:.0} s: more than max(1 %, 16 MiB)",
                rss / MIB,
                s.at,
                base / MIB,
                first.at
            ));
        }
        if let (Some(d), Some(b), true) = (s.device, first.device, judge_device) {
            let (d, b) = (d as f64, b as f64);
            if (d - b).abs() > (0.01 * b).max(DEVICE_SLACK_MIB * MIB) {
                problems.push(format!(
                    "device used {:.1} MiB at {:.0} s, {:.1} MiB at {:.0} s: more than max(1 %, 64 MiB)",
                    d / MIB, s.at, b / MIB, first.at
                ));
            }
        }
    }
    problems
}

/// First, last and largest value of one measure after the warm-up, in MiB ("-" when not measured).
pub(crate) fn first_last_max(
    samples: &[Sample],
    warmup: f64,
    of: impl Fn(&Sample) -> Option<u64>,
) -> String {
    let judged: Vec<u64> = samples
        .iter()
        .filter(|s| s.at >= warmup)
        .filter_map(&of)
        .collect();
    match (judged.first(), judged.last(), judged.iter().max()) {
        (Some(f), Some(l), Some(m)) => {
            format!(
                "{:.1} / {:.1} / {:.1}",
                *f as f64 / MIB,
                *l as f64 / MIB,
                *m as f64 / MIB
            )
        }
        _ => "-".into(),
    }
}
