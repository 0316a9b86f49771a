//! The soak's memory samples: host RSS and device memory in use, taken by a sampler
//! thread, and the drift rule they are judged by (see soak.rs).

use super::pause::Pause;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MIB: f64 = (1u64 << 20) as f64;
/// How far a judged sample may move from the first judged one: 1 %, or at least the
/// floor of its measure (MiB) where 1 % of a small figure would be less than its noise.
const FLAT: f64 = 0.01;
/// RSS: the heap's fragmentation and thread stacks move it by a few MiB between quiet
/// moments, though the heap's live bytes stay put (up to 6 MiB of 29 MiB seen on the CPU).
const RSS_FLOOR_MIB: f64 = 16.0;
/// The heap's bytes in use: glibc counts the chunks each thread keeps in its cache (up to
/// 7 freed chunks of each size up to 1 KiB: ~230 KiB a thread) as in use, and those caches
/// fill slowly as rare sizes come by (+1.1 MiB over 10 minutes of 8 threads on CUDA; flat
/// with the caches off). A leak of 1 KiB a call still passes 2 MiB within seconds.
const HEAP_FLOOR_MIB: f64 = 2.0;
/// Device memory: cuFFT and cuBLAS keep caches of their own.
const DEVICE_FLOOR_MIB: f64 = 64.0;

/// Which device memory a sample records.
#[derive(Clone, Copy)]
pub(crate) enum DeviceMemory {
    /// The whole device's in use (total − free): the soak is alone on it.
    Device,
    /// This process's own, as nvidia-smi lists it: other processes share the device.
    Process,
}

/// Memory at one moment of the run.
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    /// Seconds since the start of the run.
    pub(crate) at: f64,
    /// Resident host memory, bytes.
    pub(crate) rss: u64,
    /// Bytes the heap has handed out and not had back (glibc's `mallinfo2`): what lives,
    /// without the allocator's fragmentation; printed to tell a leak from fragmentation.
    pub(crate) heap: Option<u64>,
    /// Device memory in use, bytes (see [`DeviceMemory`]), less the default pool's free
    /// reserve ([`pool_free`]); None on the CPU.
    pub(crate) device: Option<u64>,
    /// Where the memory is, to tell a leak from a cache that fills: not judged.
    pub(crate) parts: Parts,
}

/// The parts of a sample that the library and the driver account for (bytes; None where
/// not measured).
#[derive(Clone, Copy, Default)]
pub(crate) struct Parts {
    /// RSS in anonymous pages (heaps, stacks, pinned memory) and in file-backed pages (the
    /// libraries' code and data as far as it has been touched: grows as code paths first
    /// run, and is no leak), from /proc/self/status.
    pub(crate) rss_anon: u64,
    pub(crate) rss_file: u64,
    /// Page-locked staging buffers the library holds (in RSS, not in the heap).
    pub(crate) pinned: u64,
    /// Device memory the soak's context holds (`sg_context_device_memory`).
    pub(crate) library: Option<u64>,
    /// The driver's default memory pool of device 0 (where `cuMemAllocAsync` allocates):
    /// reserved, and in use.
    pub(crate) pool_reserved: Option<u64>,
    pub(crate) pool_used: Option<u64>,
    /// Memory the driver keeps for CUDA graphs' allocations on device 0.
    pub(crate) graph_reserved: Option<u64>,
}

/// The driver's own accounting of device 0 (`cuMemPoolGetAttribute` on the default pool,
/// `cuDeviceGetGraphMemAttribute`): (pool reserved, pool used, graph reserved).
fn driver_parts() -> (Option<u64>, Option<u64>, Option<u64>) {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain queries on device 0 (a context of it is current: the sampler made one),
    // each writing one value of the documented type (a cuuint64_t) into a local.
    unsafe {
        let (mut reserved, mut used) = (None, None);
        if sys::cuDeviceGetDefaultMemPool(&mut pool, 0) == sys::CUresult::CUDA_SUCCESS {
            let attr = |a: sys::CUmemPool_attribute| {
                let mut v: u64 = 0;
                let r = sys::cuMemPoolGetAttribute(pool, a, (&mut v as *mut u64).cast());
                (r == sys::CUresult::CUDA_SUCCESS).then_some(v)
            };
            reserved = attr(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            used = attr(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
        }
        let mut graph: u64 = 0;
        let g = sys::cuDeviceGetGraphMemAttribute(
            0,
            sys::CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
            (&mut graph as *mut u64).cast(),
        );
        (
            reserved,
            used,
            (g == sys::CUresult::CUDA_SUCCESS).then_some(graph),
        )
    }
}

/// The library's and the driver's parts of this moment; `library` reads the soak context's
/// device memory (None on the CPU).
fn parts(library: Option<&dyn Fn() -> u64>) -> Parts {
    let (pool_reserved, pool_used, graph_reserved) = match library {
        Some(_) => driver_parts(),
        None => (None, None, None),
    };
    Parts {
        rss_anon: status_kib("RssAnon:").unwrap_or(0) * 1024,
        rss_file: status_kib("RssFile:").unwrap_or(0) * 1024,
        pinned: seisgpu::backend::cuda::staging::pinned_bytes() as u64,
        library: library.map(|f| f()),
        pool_reserved,
        pool_used,
        graph_reserved,
    }
}

/// A field of /proc/self/status in kB (None where absent).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// With SEISGPU_SOAK_SMAPS_DIR set, writes the anonymous memory of each mapping of this
/// moment (/proc/self/smaps: "start-end size_kB anonymous_kB name") to
/// `smaps_<seconds>.txt` there: which mappings a growing RSS lives in (the heap's arenas,
/// thread stacks, the driver's own mappings) is read from two such files.
fn dump_anonymous_mappings(at: f64) {
    let Ok(dir) = std::env::var("SEISGPU_SOAK_SMAPS_DIR") else {
        return;
    };
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let (mut out, mut head, mut size) = (String::new(), String::new(), 0u64);
    let kib = |l: &str| {
        l.split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u64>().ok())
    };
    for line in smaps.lines() {
        if line.starts_with("Size:") {
            size = kib(line).unwrap_or(0);
        } else if line.starts_with("Anonymous:") {
            let anon = kib(line).unwrap_or(0);
            if anon > 0 {
                out += &format!("{head} {size} {anon}\n");
            }
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|w| w.contains('-') && !w.ends_with(':'))
        {
            let mut f = line.split_whitespace();
            let range = f.next().unwrap_or("");
            let name = f.nth(4).unwrap_or("-");
            head = format!("{range} {name}");
        }
    }
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(format!("{dir}/smaps_{at:06.0}.txt"), out);
}

/// MiB with one decimal, "-" where not measured.
fn mib(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}", v as f64 / MIB))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn malloc_trim(pad: usize) -> i32;
    fn mallinfo2() -> MallInfo2;
}

/// glibc's `struct mallinfo2` (every field a size_t; two of them are read).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(dead_code)]
#[repr(C)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

/// The heap's live bytes: allocated chunks of every arena plus mmapped blocks.
fn heap_bytes() -> Option<u64> {
    // SAFETY: mallinfo2 (glibc ≥ 2.33) takes no argument and returns a plain struct.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let m = unsafe { mallinfo2() };
        Some((m.uordblks + m.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
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
    status_kib("VmRSS:").expect("VmRSS in /proc/self/status") * 1024
}

/// Gives the free memory that device 0's default pool keeps (where `cuMemAllocAsync`
/// allocates) back to the device, as `malloc_trim` does for the heap: what the pool keeps
/// reserved after frees is the driver's to release at its own moments (it did, 32 MiB at
/// once, several minutes into a run), not memory that lives.
fn trim_device_pool() {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a query of device 0's default pool into a local, then a trim of that pool
    // (a context of device 0 is current: the sampler made one); no pointer is kept.
    unsafe {
        if sys::cuDeviceGetDefaultMemPool(&mut pool, 0) == sys::CUresult::CUDA_SUCCESS {
            sys::cuMemPoolTrimTo(pool, 0);
        }
    }
}

/// What device 0's default pool holds reserved beyond its allocations, bytes: memory
/// the driver keeps for later `cuMemAllocAsync` calls and gives back at its own moments,
/// in chunks of 32 MiB that a trim cannot release while a small allocation lives in them.
/// The judged device memory leaves it out, as RSS leaves out the heap's free pages.
fn pool_free(p: &Parts) -> u64 {
    match (p.pool_reserved, p.pool_used) {
        (Some(r), Some(u)) => r.saturating_sub(u),
        _ => 0,
    }
}

/// Device memory in use on device 0, bytes, after its default pool has been trimmed.
fn device_used(cu: &std::sync::Arc<cudarc::driver::CudaContext>, which: DeviceMemory) -> u64 {
    trim_device_pool();
    match which {
        DeviceMemory::Device => {
            let (free, total) = cu.mem_get_info().expect("cuMemGetInfo");
            (total - free) as u64
        }
        DeviceMemory::Process => process_used(),
    }
}

/// This process's device memory, from nvidia-smi's list of compute processes (MiB there).
fn process_used() -> u64 {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-compute-apps=pid,used_memory",
            "--format=csv,noheader,nounits",
        ])
        .output()
        .expect("nvidia-smi (SEISGPU_SOAK_DEVICE_MEMORY=process)");
    let me = std::process::id().to_string();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(','))
        .find(|(pid, _)| pid.trim() == me)
        .and_then(|(_, mib)| mib.trim().parse::<u64>().ok())
        .map(|mib| mib << 20)
        .expect("this process in nvidia-smi's compute processes")
}

/// Samples every `every` until `stop` or `until` (when the soak threads stop and drop their
/// plans), the first at once; prints each as it is taken. Each is taken at a quiet moment
/// of `pause`: it measures the memory that stays, not the buffers of calls in flight or
/// the plans a thread happens to own (which make RSS swing by 10 % between moments).
/// `device`: which device memory to record (None on the CPU).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample_until(
    pause: &Pause,
    stop: &AtomicBool,
    start: Instant,
    until: Duration,
    every: Duration,
    device: Option<DeviceMemory>,
    library: Option<&dyn Fn() -> u64>,
) -> Vec<Sample> {
    let cu = device.map(|which| {
        let cu = cudarc::driver::CudaContext::new(0).expect("CUDA context for mem_get_info");
        (cu, which)
    });
    let mut samples = Vec::new();
    let mut next = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) && start.elapsed() < until {
        if start.elapsed() >= next {
            let s = pause.quietly(|| {
                let s = Sample {
                    at: start.elapsed().as_secs_f64(),
                    rss: rss_bytes(),
                    heap: heap_bytes(),
                    device: cu.as_ref().map(|(cu, which)| device_used(cu, *which)),
                    parts: parts(library),
                };
                let s = Sample {
                    device: s.device.map(|d| d.saturating_sub(pool_free(&s.parts))),
                    ..s
                };
                dump_anonymous_mappings(s.at);
                s
            });
            let p = &s.parts;
            eprintln!(
                "soak: {:7.1} s  RSS {:8.1} MiB  device used {} MiB  heap {} MiB  \
                 anon/file {}/{} MiB  pinned {} MiB  library device {} MiB  pool reserved/used {}/{} MiB  graphs {} MiB",
                s.at,
                s.rss as f64 / MIB,
                mib(s.device),
                mib(s.heap),
                mib(Some(p.rss_anon)),
                mib(Some(p.rss_file)),
                mib(Some(p.pinned)),
                mib(p.library),
                mib(p.pool_reserved),
                mib(p.pool_used),
                mib(p.graph_reserved),
            );
            samples.push(s);
            next += every;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    samples
}

/// A judged measure: its name, its floor (MiB) and how a sample gives it.
type Measure = (&'static str, f64, fn(&Sample) -> Option<u64>);

/// The samples taken after `warmup` seconds that drift from the first of them by more than
/// 1 % (or their measure's floor): RSS, the heap's live bytes, device memory in use.
/// (scripts/gpu_soak.sh also prints each curve against a strict ±1 %.)
pub(crate) fn drift(samples: &[Sample], warmup: f64) -> Vec<String> {
    let judged: Vec<&Sample> = samples.iter().filter(|s| s.at >= warmup).collect();
    let Some(first) = judged.first() else {
        return vec![format!("no memory sample after the {warmup} s warm-up")];
    };
    let measures: [Measure; 3] = [
        ("RSS", RSS_FLOOR_MIB, |s| Some(s.rss)),
        ("heap in use", HEAP_FLOOR_MIB, |s| s.heap),
        ("device used", DEVICE_FLOOR_MIB, |s| s.device),
    ];
    let mut problems = Vec::new();
    for s in &judged {
        for (what, floor, of) in &measures {
            let (Some(v), Some(base)) = (of(s), of(first)) else {
                continue;
            };
            let (v, base) = (v as f64, base as f64);
            if (v - base).abs() > (FLAT * base).max(floor * MIB) {
                problems.push(format!(
                    "{what} {:.1} MiB at {:.0} s, {:.1} MiB at {:.0} s: more than max(1 %, {floor} MiB)",
                    v / MIB,
                    s.at,
                    base / MIB,
                    first.at
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
