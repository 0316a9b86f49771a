//! DWT denoise benchmark: GSL daubechies 8, f32, default denoise options (universal
//! threshold, soft, σ from the finest level, all levels).
//!
//! Rows per case: the GSL single-threaded reference (through FFI, in f64), the seisgpu
//! CPU context (all cores), and, where a CUDA context can be made, the GPU host-to-host
//! (pageable caller memory), the GPU device-resident kernels (`denoise_device_enqueue`), and two
//! reference rows measured in the same run: a device-to-device copy of the same bytes
//! and a pinned host→device + device→host transfer of the case's bytes.
//!
//! Every output is checked before it is timed (and again after): the CPU against the
//! GSL rule, the GPU against the CPU. Prints a markdown table and a summary against the
//! targets; `--csv PATH` (or `SEISGPU_BENCH_CSV=PATH`) also writes the rows as CSV.
//! `bench/README.md` describes the arguments and every column.

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use rayon::prelude::*;
use seisgpu::backend::cpu::CpuBackend;
use seisgpu::backend::cuda::CudaBackend;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::dwt::cuda as cuda_dwt;
use seisgpu::dwt::denoise::DenoiseOptions;
use seisgpu::dwt::wavelet::{Family, Wavelet};
use seisgpu::dwt::{DwtPlan, Traces};
use seisgpu::layout::TraceBatch;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

const MEMBER: u32 = 8;
/// Bytes counted per sample: one f32 read plus one f32 written.
const BYTES_PER_SAMPLE: f64 = 8.0;
/// Largest accepted max |a − b| / max |b| between two implementations.
const TOLERANCE: f64 = 1e-4;

const USAGE: &str = "\
usage: cargo bench --bench dwt -- [options]

  --quick          small cases only (1 × 2^16, 2^18, 2^20; 1,024 × 1,024); fewer reps
  --full           the full set of cases (the default under `cargo bench`)
  --cases LIST     comma-separated cases: K (one signal of 2^K samples, 1..=30) or
                   TxN (T traces of N samples), e.g. 16,26,65536x1024
  --max-log2 K     skip cases of more than 2^K samples in all
  --modes LIST     comma-separated subset of gsl,cpu,gpu,device,ref (default: all)
  --reps N         timed repetitions per host row (default 21; --quick: 11)
  --gpu-reps N     timed repetitions per GPU row (default 101; --quick: 21)
  --warmup N       untimed calls before timing host rows (default 1; GPU rows ≥ 3)
  --budget S       at most about S seconds of timed calls per row (default 10;
                   --quick: 2); at least 3 repetitions are always timed
  --device N       CUDA device ordinal (default 0)
  --csv PATH       also write the rows as CSV (or set SEISGPU_BENCH_CSV=PATH)
  -h, --help       this text

Without --bench (which `cargo bench` passes), e.g. under `cargo test --benches`,
the --quick set runs unless --full or --cases is given.";

// ---------------------------------------------------------------------------------
// Configuration

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Case {
    traces: usize,
    n: usize,
}

impl Case {
    fn total(&self) -> usize {
        self.traces * self.n
    }

    fn label(&self) -> String {
        if self.traces == 1 {
            format!("1 × 2^{}", self.n.trailing_zeros())
        } else {
            format!("{} × {}", thousands(self.traces), thousands(self.n))
        }
    }

    fn parse(s: &str) -> Result<Case, String> {
        let bad = || format!("--cases: {s:?} is neither K (2^K samples) nor TxN");
        let case = match s.split_once(['x', 'X', '*']) {
            Some((t, n)) => Case {
                traces: t.trim().replace('_', "").parse().map_err(|_| bad())?,
                n: n.trim().replace('_', "").parse().map_err(|_| bad())?,
            },
            None => {
                let k: u32 = s
                    .trim()
                    .trim_start_matches("2^")
                    .parse()
                    .map_err(|_| bad())?;
                if !(1..=30).contains(&k) {
                    return Err(format!("--cases: 2^{k} is outside 2^1..2^30"));
                }
                Case {
                    traces: 1,
                    n: 1 << k,
                }
            }
        };
        if case.traces == 0 || case.n < 2 || !case.n.is_power_of_two() {
            return Err(format!(
                "--cases: {s:?} needs ≥ 1 trace of a power-of-two length ≥ 2"
            ));
        }
        Ok(case)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Gsl,
    Cpu,
    GpuHost,
    GpuDevice,
    RefPinned,
    RefD2d,
}

struct Config {
    cases: Vec<Case>,
    gsl: bool,
    cpu: bool,
    gpu: bool,
    device: bool,
    refs: bool,
    reps: usize,
    gpu_reps: usize,
    warmup: usize,
    budget_s: f64,
    ordinal: i32,
    csv: Option<String>,
    quick: bool,
}

const MIN_REPS: usize = 3;

fn parse_args() -> Result<Config, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    let (mut quick, mut full) = (false, false);
    let mut under_cargo_bench = false;
    let mut cases: Option<Vec<Case>> = None;
    let mut max_log2: Option<u32> = None;
    let mut modes: Option<String> = None;
    let (mut reps, mut gpu_reps, mut warmup, mut budget) = (None, None, None, None);
    let mut ordinal = 0i32;
    let mut csv = std::env::var("SEISGPU_BENCH_CSV")
        .ok()
        .filter(|s| !s.is_empty());
    fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<String, String> {
        it.next()
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    }
    fn number<T: std::str::FromStr>(s: String, flag: &str) -> Result<T, String> {
        s.trim()
            .parse()
            .map_err(|_| format!("{flag}: {s:?} is not a valid number"))
    }
    while let Some(a) = it.next() {
        // Accept `--flag=value` as well as `--flag value`.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let val = |it: &mut std::slice::Iter<String>| match &inline {
            Some(v) => Ok(v.clone()),
            None => value(it, &flag),
        };
        match flag.as_str() {
            "--bench" => under_cargo_bench = true,
            "--quick" => quick = true,
            "--full" => full = true,
            "--cases" => {
                let list = val(&mut it)?;
                cases = Some(
                    list.split(',')
                        .filter(|s| !s.trim().is_empty())
                        .map(Case::parse)
                        .collect::<Result<_, _>>()?,
                );
            }
            "--max-log2" => max_log2 = Some(number(val(&mut it)?, "--max-log2")?),
            "--modes" => modes = Some(val(&mut it)?),
            "--reps" => reps = Some(number(val(&mut it)?, "--reps")?),
            "--gpu-reps" => gpu_reps = Some(number(val(&mut it)?, "--gpu-reps")?),
            "--warmup" => warmup = Some(number(val(&mut it)?, "--warmup")?),
            "--budget" => budget = Some(number::<f64>(val(&mut it)?, "--budget")?),
            "--device" => ordinal = number(val(&mut it)?, "--device")?,
            "--csv" => csv = Some(val(&mut it)?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            // `cargo bench NAME` passes NAME to every bench target: not ours to filter by.
            other => eprintln!("note: ignoring the argument {other:?}"),
        }
    }
    if quick && full {
        return Err("--quick and --full exclude each other".into());
    }
    if !under_cargo_bench && !full && cases.is_none() && !quick {
        eprintln!("note: run without --bench (not by `cargo bench`): running the --quick set; pass --full for all cases");
        quick = true;
    }
    let mut cases = cases.unwrap_or_else(|| {
        let singles: &[u32] = if quick {
            &[16, 18, 20]
        } else {
            &[16, 18, 20, 22, 24, 26]
        };
        let mut v: Vec<Case> = singles
            .iter()
            .map(|&k| Case {
                traces: 1,
                n: 1 << k,
            })
            .collect();
        v.push(Case {
            traces: if quick { 1024 } else { 65536 },
            n: 1024,
        });
        v
    });
    if let Some(k) = max_log2 {
        cases.retain(|c| c.total() <= 1usize << k.min(62));
    }
    let (mut gsl, mut cpu, mut gpu, mut device, mut refs) = (true, true, true, true, true);
    if let Some(m) = modes {
        (gsl, cpu, gpu, device, refs) = (false, false, false, false, false);
        for name in m.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "gsl" => gsl = true,
                "cpu" => cpu = true,
                "gpu" => gpu = true,
                "device" => device = true,
                "ref" => refs = true,
                "all" => (gsl, cpu, gpu, device, refs) = (true, true, true, true, true),
                other => return Err(format!("--modes: unknown mode {other:?}")),
            }
        }
    }
    let reps = reps.unwrap_or(if quick { 11 } else { 21 });
    let gpu_reps = gpu_reps.unwrap_or(if quick { 21 } else { 101 });
    if reps == 0 || gpu_reps == 0 {
        return Err("--reps and --gpu-reps must be ≥ 1".into());
    }
    let budget_s = budget.unwrap_or(if quick { 2.0 } else { 10.0 });
    if !(budget_s.is_finite() && budget_s >= 0.0) {
        return Err("--budget must be a number of seconds ≥ 0".into());
    }
    Ok(Config {
        cases,
        gsl,
        cpu,
        gpu,
        device,
        refs,
        reps,
        gpu_reps,
        warmup: warmup.unwrap_or(1).max(1),
        budget_s,
        ordinal,
        csv,
        quick,
    })
}

// ---------------------------------------------------------------------------------
// GSL reference, through FFI (GSL is double precision only)

#[allow(non_upper_case_globals)]
mod gsl {
    use std::os::raw::{c_int, c_void};

    #[repr(C)]
    pub struct WaveletType {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct Wavelet {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct Workspace {
        _opaque: [u8; 0],
    }

    #[link(name = "gsl")]
    #[link(name = "gslcblas")]
    extern "C" {
        pub static gsl_wavelet_daubechies: *const WaveletType;
        pub fn gsl_wavelet_alloc(t: *const WaveletType, k: usize) -> *mut Wavelet;
        pub fn gsl_wavelet_free(w: *mut Wavelet);
        pub fn gsl_wavelet_workspace_alloc(n: usize) -> *mut Workspace;
        pub fn gsl_wavelet_workspace_free(work: *mut Workspace);
        pub fn gsl_wavelet_transform_forward(
            w: *const Wavelet,
            data: *mut f64,
            stride: usize,
            n: usize,
            work: *mut Workspace,
        ) -> c_int;
        pub fn gsl_wavelet_transform_inverse(
            w: *const Wavelet,
            data: *mut f64,
            stride: usize,
            n: usize,
            work: *mut Workspace,
        ) -> c_int;
        pub fn gsl_set_error_handler_off() -> *mut c_void;
    }
}

/// One trace at a time: f32 → f64, GSL forward (all levels), the threshold rule in
/// plain Rust, GSL inverse, f64 → f32.
struct GslDenoiser {
    w: *mut gsl::Wavelet,
    work: *mut gsl::Workspace,
    n: usize,
    data: Vec<f64>,
    scratch: Vec<f64>,
}

impl GslDenoiser {
    fn new(n: usize) -> Result<GslDenoiser, String> {
        // SAFETY: plain GSL calls; results checked for NULL, freed in Drop.
        unsafe {
            gsl::gsl_set_error_handler_off();
            let w = gsl::gsl_wavelet_alloc(gsl::gsl_wavelet_daubechies, MEMBER as usize);
            if w.is_null() {
                return Err(format!("gsl_wavelet_alloc(daubechies, {MEMBER}) failed"));
            }
            let work = gsl::gsl_wavelet_workspace_alloc(n);
            if work.is_null() {
                gsl::gsl_wavelet_free(w);
                return Err(format!("gsl_wavelet_workspace_alloc({n}) failed"));
            }
            Ok(GslDenoiser {
                w,
                work,
                n,
                data: vec![0.0; n],
                scratch: Vec::with_capacity(n / 2),
            })
        }
    }

    fn denoise(&mut self, input: &[f32], output: &mut [f32]) -> Result<(), String> {
        let n = self.n;
        for (src, dst) in input.chunks_exact(n).zip(output.chunks_exact_mut(n)) {
            for (d, &x) in self.data.iter_mut().zip(src) {
                *d = x as f64;
            }
            // SAFETY: data holds n doubles, the workspace was made for n.
            let rc = unsafe {
                gsl::gsl_wavelet_transform_forward(self.w, self.data.as_mut_ptr(), 1, n, self.work)
            };
            if rc != 0 {
                return Err(format!("gsl_wavelet_transform_forward returned {rc}"));
            }
            universal_soft_finest(&mut self.data, &mut self.scratch);
            // SAFETY: as above.
            let rc = unsafe {
                gsl::gsl_wavelet_transform_inverse(self.w, self.data.as_mut_ptr(), 1, n, self.work)
            };
            if rc != 0 {
                return Err(format!("gsl_wavelet_transform_inverse returned {rc}"));
            }
            for (o, &d) in dst.iter_mut().zip(&self.data) {
                *o = d as f32;
            }
        }
        Ok(())
    }
}

impl Drop for GslDenoiser {
    fn drop(&mut self) {
        // SAFETY: allocated in new, freed once.
        unsafe {
            gsl::gsl_wavelet_workspace_free(self.work);
            gsl::gsl_wavelet_free(self.w);
        }
    }
}

/// The default denoise rule on a full GSL-layout transform [a_L | d_L | … | d_1]:
/// σ = median(|d_1|)/0.6745 (d_1 = the upper half; the median of an even count is
/// the mean of the middle pair), λ = σ·√(2 ln n), soft shrinkage of every detail
/// coefficient (all but element 0). Written independently of the library's code.
fn universal_soft_finest(c: &mut [f64], scratch: &mut Vec<f64>) {
    let n = c.len();
    scratch.clear();
    scratch.extend(c[n / 2..].iter().map(|x| x.abs()));
    let m = scratch.len();
    let (lower, &mut upper, _) = scratch.select_nth_unstable_by(m / 2, f64::total_cmp);
    let median = if m % 2 == 1 {
        upper
    } else {
        let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (below + upper)
    };
    let lambda = median / 0.6745 * (2.0 * (n as f64).ln()).sqrt();
    for x in &mut c[1..] {
        let m = x.abs() - lambda;
        *x = if m > 0.0 { x.signum() * m } else { 0.0 };
    }
}

// ---------------------------------------------------------------------------------
// Input: deterministic noisy signal (sines, a chirp, blocks, Gaussian noise σ = 0.3)

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn make_input(case: Case) -> Vec<f32> {
    const CHUNK: usize = 1 << 14;
    let n = case.n;
    let mut v = vec![0.0f32; case.total()];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
        let mut state = 0x5EED_0000_0000_0000u64 ^ c as u64;
        let mut spare: Option<f64> = None;
        let mut normal = || {
            if let Some(z) = spare.take() {
                return z;
            }
            let u1 = ((splitmix64(&mut state) >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
            let u2 = (splitmix64(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
            let r = (-2.0 * u1.ln()).sqrt();
            let (s, co) = (std::f64::consts::TAU * u2).sin_cos();
            spare = Some(r * s);
            r * co
        };
        for (i, o) in out.iter_mut().enumerate() {
            let g = c * CHUNK + i;
            let (t, s) = ((g / n) as f64, (g % n) as f64);
            let phase = 0.37 * t;
            let u = s / n as f64;
            let clean = 0.8 * (std::f64::consts::TAU * s / 97.3 + phase).sin()
                + 0.5 * (std::f64::consts::TAU * s / 23.1).sin()
                + 0.6 * (std::f64::consts::TAU * (8.0 + 40.0 * u) * u + phase).sin()
                + if ((g % n) / 4096 + g / n) % 3 == 0 {
                    1.0
                } else {
                    0.0
                };
            *o = (clean + 0.3 * normal()) as f32;
        }
    });
    v
}

// ---------------------------------------------------------------------------------
// Measurement

#[derive(Clone, Copy, Debug)]
struct Sample {
    /// The time the row reports: host wall time, or CUDA event time on the stream.
    ms: f64,
    /// Host wall time of the call (equal to `ms` for host rows).
    wall_ms: f64,
    /// Two sub-intervals (pinned row: host→device, device→host).
    parts: Option<(f64, f64)>,
}

impl Sample {
    fn host(t0: Instant) -> Sample {
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        Sample {
            ms,
            wall_ms: ms,
            parts: None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Check {
    /// max |out − ref| / max |ref|
    err: f64,
    vs: &'static str,
    /// The same measure on the thresholds the call returned.
    thr_err: Option<f64>,
}

impl Check {
    fn ok(&self) -> bool {
        self.err <= TOLERANCE && self.thr_err.is_none_or(|e| e <= TOLERANCE)
    }
    fn worse(a: Option<Check>, b: Option<Check>) -> Option<Check> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.err > a.err || !b.ok() { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

#[derive(Clone, Debug)]
struct Measured {
    median_ms: f64,
    min_ms: f64,
    first_ms: f64,
    wall_median_ms: f64,
    parts_median: Option<(f64, f64)>,
    reps: usize,
    warmup: usize,
    check: Option<Check>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len();
    if m % 2 == 1 {
        v[m / 2]
    } else {
        0.5 * (v[m / 2 - 1] + v[m / 2])
    }
}

/// Warm-up (the first call's output is checked), then timed repetitions (the last
/// one's output is checked too). `call(check)` runs once and, when `check` is set,
/// verifies what it produced, outside the interval it times.
fn measure(
    budget_s: f64,
    warmup: usize,
    max_reps: usize,
    mut call: impl FnMut(bool) -> Result<(Sample, Option<Check>), String>,
) -> Result<Measured, String> {
    let (first, c1) = call(true)?;
    let mut estimate = first.wall_ms;
    for _ in 1..warmup {
        estimate = call(false)?.0.wall_ms;
    }
    let by_budget = (budget_s * 1e3 / estimate.max(1e-4)) as usize;
    let reps = by_budget.max(MIN_REPS).min(max_reps);
    let mut samples = Vec::with_capacity(reps);
    let mut c2 = None;
    for i in 0..reps {
        let (s, c) = call(i + 1 == reps)?;
        samples.push(s);
        if c.is_some() {
            c2 = c;
        }
    }
    let mut ms: Vec<f64> = samples.iter().map(|s| s.ms).collect();
    let mut wall: Vec<f64> = samples.iter().map(|s| s.wall_ms).collect();
    let parts_median = if samples.iter().all(|s| s.parts.is_some()) {
        let mut a: Vec<f64> = samples.iter().map(|s| s.parts.unwrap().0).collect();
        let mut b: Vec<f64> = samples.iter().map(|s| s.parts.unwrap().1).collect();
        Some((median(&mut a), median(&mut b)))
    } else {
        None
    };
    let min_ms = ms.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(Measured {
        median_ms: median(&mut ms),
        min_ms,
        first_ms: first.ms,
        wall_median_ms: median(&mut wall),
        parts_median,
        reps,
        warmup,
        check: Check::worse(c1, c2),
    })
}

/// Runs `f`, turning a panic into an error so that one broken path leaves a row, not
/// a crash.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
        )),
    }
}

/// max |a − b| / max |b|, ∞ where `a` holds a non-finite value.
fn max_rel_err(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (num, den) = a
        .par_iter()
        .zip(b.par_iter())
        .map(|(&x, &y)| {
            let d = if x.is_finite() {
                (x as f64 - y as f64).abs()
            } else {
                f64::INFINITY
            };
            (d, (y as f64).abs())
        })
        .reduce(|| (0.0, 0.0), |p, q| (p.0.max(q.0), p.1.max(q.1)));
    if den > 0.0 {
        num / den
    } else {
        num
    }
}

fn max_rel_err_f64(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        num = num.max(if x.is_finite() {
            (x - y).abs()
        } else {
            f64::INFINITY
        });
        den = den.max(y.abs());
    }
    if den > 0.0 {
        num / den
    } else {
        num
    }
}

fn lib_err(e: seisgpu::Error) -> String {
    e.to_string()
}

fn drv_err(doing: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("CUDA driver error while {doing}: {e:?}")
}

/// Timing events on one stream, created once per row.
struct Events {
    e: Vec<CudaEvent>,
}

impl Events {
    fn new(ctx: &Arc<CudaContext>, count: usize) -> Result<Events, String> {
        let e = (0..count)
            .map(|_| ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(drv_err("creating timing events"))?;
        Ok(Events { e })
    }
    fn record(&self, i: usize, stream: &CudaStream) -> Result<(), String> {
        self.e[i]
            .record(stream)
            .map_err(drv_err("recording an event"))
    }
    fn ms(&self, from: usize, to: usize) -> Result<f64, String> {
        self.e[from]
            .elapsed_ms(&self.e[to])
            .map(|x| x as f64)
            .map_err(drv_err("reading an event interval"))
    }
}

// ---------------------------------------------------------------------------------
// Rows

struct Row {
    case: Case,
    mode: Mode,
    label: String,
    result: Result<Measured, String>,
}

struct CaseRefs {
    gsl_out: Option<Vec<f32>>,
    cpu_out: Option<Vec<f32>>,
    cpu_thr: Option<Vec<f64>>,
}

impl CaseRefs {
    /// The output GPU rows are checked against: the CPU's, else GSL's.
    fn for_gpu(&self) -> Option<(&[f32], &'static str)> {
        match (&self.cpu_out, &self.gsl_out) {
            (Some(c), _) => Some((c, "CPU")),
            (None, Some(g)) => Some((g, "GSL")),
            _ => None,
        }
    }
}

struct Gpu {
    ctx: Arc<Context>,
    backend: Result<CudaBackend, String>,
}

fn run_case(cfg: &Config, case: Case, cpu_ctx: &Arc<Context>, gpu: Option<&Gpu>) -> Vec<Row> {
    let mut rows = Vec::new();
    let n = case.n;
    let len = case.total();
    let batch = TraceBatch::new(n, case.traces, n).expect("valid batch");
    let opts = DenoiseOptions::default();
    let progress = |what: &str| eprintln!("[{}] {what}", case.label());
    progress("generating input");
    let input = make_input(case);
    let mut refs = CaseRefs {
        gsl_out: None,
        cpu_out: None,
        cpu_thr: None,
    };
    let push = |rows: &mut Vec<Row>, mode, label: String, result: Result<Measured, String>| {
        if let Err(e) = &result {
            eprintln!("[{}] {label}: error: {e}", case.label());
        }
        rows.push(Row {
            case,
            mode,
            label,
            result,
        });
    };

    // (1) GSL, one thread, f64.
    if cfg.gsl {
        progress("GSL reference");
        let mut out = vec![0.0f32; len];
        let r = guarded(|| {
            let mut g = GslDenoiser::new(n)?;
            measure(cfg.budget_s, cfg.warmup, cfg.reps, |_| {
                let t0 = Instant::now();
                g.denoise(&input, &mut out)?;
                Ok((Sample::host(t0), None))
            })
        });
        if r.is_ok() {
            refs.gsl_out = Some(out);
        }
        push(&mut rows, Mode::Gsl, "GSL, 1 thread, f64".into(), r);
    }

    // (2) seisgpu CPU context, host to host.
    if cfg.cpu {
        progress("seisgpu CPU");
        let mut out = vec![0.0f32; len];
        let levels = n.trailing_zeros() as usize;
        let mut thr = vec![0.0f64; case.traces * levels];
        let gsl_out = refs.gsl_out.as_deref();
        let r = guarded(|| {
            let plan =
                DwtPlan::new(cpu_ctx.clone(), Family::Daubechies, MEMBER, n).map_err(lib_err)?;
            measure(cfg.budget_s, cfg.warmup, cfg.reps, |check| {
                let traces = Traces::Separate {
                    input: &input,
                    output: &mut out,
                };
                let t0 = Instant::now();
                plan.denoise(&opts, traces, batch, check.then_some(&mut thr[..]))
                    .map_err(lib_err)?;
                let s = Sample::host(t0);
                let c = match (check, gsl_out) {
                    (true, Some(g)) => Some(Check {
                        err: max_rel_err(&out, g),
                        vs: "GSL",
                        thr_err: None,
                    }),
                    _ => None,
                };
                Ok((s, c))
            })
        });
        if r.is_ok() {
            refs.cpu_out = Some(out);
            refs.cpu_thr = Some(thr);
        }
        let threads = cpu_threads(cpu_ctx);
        push(
            &mut rows,
            Mode::Cpu,
            format!("seisgpu CPU, {threads} threads"),
            r,
        );
    }

    let Some(gpu) = gpu else { return rows };
    let reference = refs.for_gpu();
    let gpu_warmup = cfg.warmup.max(3);

    // (3) seisgpu GPU, host to host, pageable caller memory.
    if cfg.gpu {
        progress("seisgpu GPU host-to-host");
        let r = guarded(|| {
            let plan =
                DwtPlan::new(gpu.ctx.clone(), Family::Daubechies, MEMBER, n).map_err(lib_err)?;
            let mut out = vec![0.0f32; len];
            let mut thr = vec![0.0f64; case.traces * n.trailing_zeros() as usize];
            measure(cfg.budget_s, gpu_warmup, cfg.gpu_reps, |check| {
                let traces = Traces::Separate {
                    input: &input,
                    output: &mut out,
                };
                let t0 = Instant::now();
                plan.denoise(&opts, traces, batch, check.then_some(&mut thr[..]))
                    .map_err(lib_err)?;
                let s = Sample::host(t0);
                let c = match (check, reference) {
                    (true, Some((r, vs))) => Some(Check {
                        err: max_rel_err(&out, r),
                        vs,
                        thr_err: refs.cpu_thr.as_ref().map(|t| max_rel_err_f64(&thr, t)),
                    }),
                    _ => None,
                };
                Ok((s, c))
            })
        });
        push(
            &mut rows,
            Mode::GpuHost,
            "seisgpu GPU host→host (pageable)".into(),
            r,
        );
    }

    if !(cfg.device || cfg.refs) {
        return rows;
    }
    let backend = match &gpu.backend {
        Ok(b) => b,
        Err(e) => {
            for (on, mode, label) in [
                (cfg.refs, Mode::RefPinned, "ref: pinned H→D + D→H"),
                (cfg.device, Mode::GpuDevice, "seisgpu GPU device-resident"),
                (cfg.refs, Mode::RefD2d, "ref: D2D copy"),
            ] {
                if on {
                    push(&mut rows, mode, label.into(), Err(e.clone()));
                }
            }
            return rows;
        }
    };
    let setup = guarded(|| {
        let stream = backend.stream().map_err(lib_err)?;
        let d_in = stream
            .clone_htod(&input)
            .map_err(drv_err("copying the input to the device"))?;
        let d_out = stream
            .alloc_zeros::<f32>(len)
            .map_err(drv_err("allocating the device output"))?;
        stream
            .synchronize()
            .map_err(drv_err("synchronizing the stream"))?;
        Ok((stream, d_in, d_out))
    });
    let (stream, d_in, mut d_out) = match setup {
        Ok(s) => s,
        Err(e) => {
            for (on, mode, label) in [
                (cfg.refs, Mode::RefPinned, "ref: pinned H→D + D→H"),
                (cfg.device, Mode::GpuDevice, "seisgpu GPU device-resident"),
                (cfg.refs, Mode::RefD2d, "ref: D2D copy"),
            ] {
                if on {
                    push(&mut rows, mode, label.into(), Err(e.clone()));
                }
            }
            return rows;
        }
    };

    // (5a) Pinned host→device then device→host of the case's bytes.
    if cfg.refs {
        progress("pinned transfer reference");
        let r = guarded(|| {
            let ctx = &backend.ctx;
            // SAFETY: filled before use (a) or only written by the device (b).
            let mut h_a = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }
                .map_err(drv_err("allocating pinned host memory"))?;
            let mut h_b = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }
                .map_err(drv_err("allocating pinned host memory"))?;
            h_a.as_mut_slice()
                .map_err(drv_err("mapping pinned memory"))?
                .copy_from_slice(&input);
            // SAFETY: written by the copy before it is read.
            let mut d_tmp =
                unsafe { stream.alloc::<f32>(len) }.map_err(drv_err("allocating device memory"))?;
            let ev = Events::new(ctx, 3)?;
            measure(cfg.budget_s, gpu_warmup, cfg.gpu_reps, |check| {
                let t0 = Instant::now();
                ev.record(0, &stream)?;
                stream
                    .memcpy_htod(&h_a, &mut d_tmp)
                    .map_err(drv_err("copying host to device"))?;
                ev.record(1, &stream)?;
                stream
                    .memcpy_dtoh(&d_tmp, &mut h_b)
                    .map_err(drv_err("copying device to host"))?;
                ev.record(2, &stream)?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
                let (h2d, d2h) = (ev.ms(0, 1)?, ev.ms(1, 2)?);
                let s = Sample {
                    ms: ev.ms(0, 2)?,
                    wall_ms,
                    parts: Some((h2d, d2h)),
                };
                let c = if check {
                    let b = h_b.as_slice().map_err(drv_err("mapping pinned memory"))?;
                    Some(Check {
                        err: max_rel_err(b, &input),
                        vs: "input",
                        thr_err: None,
                    })
                } else {
                    None
                };
                Ok((s, c))
            })
        });
        push(
            &mut rows,
            Mode::RefPinned,
            "ref: pinned H→D + D→H".into(),
            r,
        );
    }

    // (4) Device-resident denoise: input and output already on the GPU.
    if cfg.device {
        progress("seisgpu GPU device-resident");
        let r = guarded(|| {
            let wavelet = Wavelet::new(Family::Daubechies, MEMBER).map_err(lib_err)?;
            let levels = n.trailing_zeros();
            let ev = Events::new(&backend.ctx, 2)?;
            // Start from zeros, so that a call that writes nothing cannot pass the check.
            stream
                .memset_zeros(&mut d_out)
                .map_err(drv_err("clearing the output"))?;
            measure(cfg.budget_s, gpu_warmup, cfg.gpu_reps, |check| {
                let t0 = Instant::now();
                ev.record(0, &stream)?;
                // The kernels alone: turning the medians into per-trace thresholds on the
                // host is left out of the timing (it is only done for the checked calls).
                let medians = cuda_dwt::denoise_device_enqueue(
                    backend, &wavelet, &opts, levels, &d_in, &mut d_out, batch, &stream,
                )
                .map_err(lib_err)?;
                ev.record(1, &stream)?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
                let s = Sample {
                    ms: ev.ms(0, 1)?,
                    wall_ms,
                    parts: None,
                };
                let c = match (check, reference) {
                    (true, Some((r, vs))) => {
                        let host = stream
                            .clone_dtoh(&d_out)
                            .map_err(drv_err("copying the output back"))?;
                        stream
                            .synchronize()
                            .map_err(drv_err("synchronizing the stream"))?;
                        Some(Check {
                            err: max_rel_err(&host, r),
                            vs,
                            thr_err: match &refs.cpu_thr {
                                Some(t) => Some(max_rel_err_f64(
                                    &medians.thresholds(backend, &stream).map_err(lib_err)?,
                                    t,
                                )),
                                None => None,
                            },
                        })
                    }
                    _ => None,
                };
                Ok((s, c))
            })
        });
        push(
            &mut rows,
            Mode::GpuDevice,
            "seisgpu GPU device-resident".into(),
            r,
        );
    }

    // (5b) Device-to-device copy of the same bytes.
    if cfg.refs {
        progress("device-to-device copy reference");
        let r = guarded(|| {
            let ev = Events::new(&backend.ctx, 2)?;
            measure(cfg.budget_s, gpu_warmup, cfg.gpu_reps, |check| {
                let t0 = Instant::now();
                ev.record(0, &stream)?;
                stream
                    .memcpy_dtod(&d_in, &mut d_out)
                    .map_err(drv_err("copying device to device"))?;
                ev.record(1, &stream)?;
                stream
                    .synchronize()
                    .map_err(drv_err("synchronizing the stream"))?;
                let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
                let s = Sample {
                    ms: ev.ms(0, 1)?,
                    wall_ms,
                    parts: None,
                };
                let c = if check {
                    let host = stream
                        .clone_dtoh(&d_out)
                        .map_err(drv_err("copying the output back"))?;
                    stream
                        .synchronize()
                        .map_err(drv_err("synchronizing the stream"))?;
                    Some(Check {
                        err: max_rel_err(&host, &input),
                        vs: "input",
                        thr_err: None,
                    })
                } else {
                    None
                };
                Ok((s, c))
            })
        });
        push(&mut rows, Mode::RefD2d, "ref: D2D copy".into(), r);
    }
    rows
}

fn cpu_threads(ctx: &Context) -> String {
    // "CPU: N threads" is the context's own line; a fresh backend reads the same setting.
    ctx.describe()
        .lines()
        .find_map(|l| {
            l.strip_prefix("CPU: ")
                .and_then(|r| r.split_whitespace().next())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            CpuBackend::new()
                .map(|b| b.threads().to_string())
                .unwrap_or_else(|_| "?".into())
        })
}

// ---------------------------------------------------------------------------------
// Derived columns and output

struct Derived {
    gbps: Option<f64>,
    d2d_frac: Option<f64>,
    x_pinned: Option<f64>,
    x_gsl: Option<f64>,
}

fn median_of(rows: &[Row], case: Case, mode: Mode) -> Option<f64> {
    rows.iter()
        .find(|r| r.case == case && r.mode == mode)
        .and_then(|r| r.result.as_ref().ok())
        .map(|m| m.median_ms)
}

fn derive(rows: &[Row], r: &Row) -> Derived {
    let Ok(m) = &r.result else {
        return Derived {
            gbps: None,
            d2d_frac: None,
            x_pinned: None,
            x_gsl: None,
        };
    };
    let t = m.median_ms;
    let gbps = (t > 0.0).then(|| r.case.total() as f64 * BYTES_PER_SAMPLE / (t * 1e6));
    let d2d = median_of(rows, r.case, Mode::RefD2d);
    let pinned = median_of(rows, r.case, Mode::RefPinned);
    let gsl = median_of(rows, r.case, Mode::Gsl);
    Derived {
        gbps,
        d2d_frac: match r.mode {
            Mode::GpuDevice | Mode::RefD2d => d2d.map(|d| d / t),
            _ => None,
        },
        x_pinned: match r.mode {
            Mode::GpuHost | Mode::RefPinned => pinned.map(|p| t / p),
            _ => None,
        },
        x_gsl: match r.mode {
            Mode::Cpu | Mode::GpuHost | Mode::GpuDevice => gsl.map(|g| g / t),
            _ => None,
        },
    }
}

fn thousands(x: usize) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn fmt_ms(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.4}")
    } else if ms < 100.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

fn fmt_err(e: f64) -> String {
    if e == 0.0 {
        "0".into()
    } else {
        format!("{e:.1e}")
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "/").replace('\n', " ")
}

fn notes(r: &Row) -> String {
    match &r.result {
        Err(e) => {
            let e = cell(e);
            let short: String = e.chars().take(140).collect();
            format!(
                "error: {short}{}",
                if short.len() < e.len() { "…" } else { "" }
            )
        }
        Ok(m) => {
            let mut v = Vec::new();
            if let Some((a, b)) = m.parts_median {
                v.push(format!("H→D {} + D→H {} ms", fmt_ms(a), fmt_ms(b)));
            }
            if matches!(r.mode, Mode::GpuDevice | Mode::RefD2d | Mode::RefPinned) {
                v.push(format!("wall {} ms", fmt_ms(m.wall_median_ms)));
            }
            if matches!(r.mode, Mode::GpuHost | Mode::GpuDevice) {
                v.push(format!("1st call {} ms", fmt_ms(m.first_ms)));
            }
            if let Some(t) = m.check.and_then(|c| c.thr_err) {
                v.push(format!("thresholds err {}", fmt_err(t)));
            }
            if let Some(c) = m.check {
                if !c.ok() {
                    v.push(format!("WRONG OUTPUT (tolerance {TOLERANCE:.0e})"));
                }
            }
            v.push(format!("min {} ms", fmt_ms(m.min_ms)));
            v.join("; ")
        }
    }
}

fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str("| case | mode | reps | median ms | GB/s | % of D2D BW | × pinned xfer | speed-up vs GSL | max rel err (vs) | notes |\n");
    s.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    for r in rows {
        let d = derive(rows, r);
        let (reps, med, err) = match &r.result {
            Ok(m) => (
                m.reps.to_string(),
                fmt_ms(m.median_ms),
                m.check
                    .map(|c| {
                        format!(
                            "{} ({}){}",
                            fmt_err(c.err),
                            c.vs,
                            if c.ok() { "" } else { " FAIL" }
                        )
                    })
                    .unwrap_or_else(|| "—".into()),
            ),
            Err(_) => ("—".into(), "—".into(), "—".into()),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.case.label(),
            r.label,
            reps,
            med,
            fmt_opt(d.gbps, |g| format!("{g:.1}")),
            fmt_opt(d.d2d_frac, |f| format!("{:.0}%", f * 100.0)),
            fmt_opt(d.x_pinned, |x| format!("{x:.2}×")),
            fmt_opt(d.x_gsl, |x| format!("{x:.2}×")),
            err,
            notes(r)
        );
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "case,n_traces,n_samples,mode,warmup,reps,median_ms,min_ms,first_ms,wall_median_ms,\
         gb_per_s,d2d_fraction,x_pinned,x_gsl,max_rel_err,err_vs,threshold_err,ok,note\n",
    );
    let num = |v: Option<f64>| v.map(|x| format!("{x:.6e}")).unwrap_or_default();
    for r in rows {
        let d = derive(rows, r);
        let m = r.result.as_ref().ok();
        let c = m.and_then(|m| m.check);
        let fields = [
            r.case.label(),
            r.case.traces.to_string(),
            r.case.n.to_string(),
            r.label.clone(),
            m.map(|m| m.warmup.to_string()).unwrap_or_default(),
            m.map(|m| m.reps.to_string()).unwrap_or_default(),
            num(m.map(|m| m.median_ms)),
            num(m.map(|m| m.min_ms)),
            num(m.map(|m| m.first_ms)),
            num(m.map(|m| m.wall_median_ms)),
            num(d.gbps),
            num(d.d2d_frac),
            num(d.x_pinned),
            num(d.x_gsl),
            num(c.map(|c| c.err)),
            c.map(|c| c.vs.to_string()).unwrap_or_default(),
            num(c.and_then(|c| c.thr_err)),
            match (&r.result, c) {
                (Err(_), _) => "error".into(),
                (Ok(_), Some(c)) => c.ok().to_string(),
                (Ok(_), None) => "unchecked".into(),
            },
            match &r.result {
                Err(e) => format!("error: {e}"),
                Ok(_) => notes(r),
            },
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

/// One line per target: what was measured and whether it meets the target. A target
/// is met only where the row's output also passed its check.
fn summary(rows: &[Row], cfg: &Config) -> String {
    let mut s = String::from(
        "## Targets\n\n| target | case | measured | verdict |\n| --- | --- | --- | --- |\n",
    );
    let verdict = |r: &Row, ok: bool| -> &'static str {
        match r.result.as_ref().ok().and_then(|m| m.check) {
            Some(c) if !c.ok() => "FAIL (wrong output)",
            None => {
                if ok {
                    "PASS (unchecked)"
                } else {
                    "FAIL"
                }
            }
            _ => {
                if ok {
                    "PASS"
                } else {
                    "FAIL"
                }
            }
        }
    };
    let find = |case: Case, mode: Mode| rows.iter().find(|r| r.case == case && r.mode == mode);
    // Device-resident absolute targets.
    for (case, limit, name) in [
        (
            Case {
                traces: 65536,
                n: 1024,
            },
            0.35,
            "65,536 × 1,024 device-resident ≤ 0.35 ms",
        ),
        (
            Case {
                traces: 1,
                n: 1 << 26,
            },
            1.0,
            "1 × 2^26 device-resident ≤ 1 ms",
        ),
    ] {
        let (mut measured, v) = match find(case, Mode::GpuDevice) {
            None if !cfg.cases.contains(&case) => ("—".into(), "not run (case not selected)"),
            None => (
                "—".into(),
                "not run (no CUDA context, or mode not selected)",
            ),
            Some(r) => match &r.result {
                Err(e) => (format!("error: {}", cell(e)), "FAIL (error)"),
                Ok(m) => (
                    format!("{} ms", fmt_ms(m.median_ms)),
                    verdict(r, m.median_ms <= limit),
                ),
            },
        };
        // What the target asks of the memory system on this GPU.
        if let Some(d) = median_of(rows, case, Mode::RefD2d) {
            let _ = write!(
                measured,
                " (D2D copy {} ms: the target needs ≥ {:.0}% of D2D BW)",
                fmt_ms(d),
                100.0 * d / limit
            );
        }
        let _ = writeln!(s, "| {name} | {} | {measured} | {v} |", case.label());
    }
    // Per-case relative targets.
    for case in &cfg.cases {
        if let Some(r) = find(*case, Mode::GpuHost) {
            let (measured, v) = match (&r.result, median_of(rows, *case, Mode::RefPinned)) {
                (Err(e), _) => (format!("error: {}", cell(e)), "FAIL (error)"),
                (Ok(_), None) => ("—".into(), "not run (no pinned reference)"),
                (Ok(m), Some(p)) => (
                    format!(
                        "{} ms = {:.2}× pinned {} ms",
                        fmt_ms(m.median_ms),
                        m.median_ms / p,
                        fmt_ms(p)
                    ),
                    verdict(r, m.median_ms <= 1.5 * p),
                ),
            };
            let _ = writeln!(
                s,
                "| host-to-host ≤ 1.5× pinned H→D + D→H | {} | {measured} | {v} |",
                case.label()
            );
        }
    }
    for case in &cfg.cases {
        if let Some(r) = find(*case, Mode::Cpu) {
            let (measured, v) = match (&r.result, median_of(rows, *case, Mode::Gsl)) {
                (Err(e), _) => (format!("error: {}", cell(e)), "FAIL (error)"),
                (Ok(_), None) => ("—".into(), "not run (no GSL reference)"),
                (Ok(m), Some(g)) => (
                    format!(
                        "{:.2}× ({} ms vs GSL {} ms)",
                        g / m.median_ms,
                        fmt_ms(m.median_ms),
                        fmt_ms(g)
                    ),
                    verdict(r, g / m.median_ms >= 2.0),
                ),
            };
            let _ = writeln!(
                s,
                "| CPU ≥ 2× faster than GSL | {} | {measured} | {v} |",
                case.label()
            );
        }
    }
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| {
            r.result
                .as_ref()
                .ok()
                .and_then(|m| m.check)
                .is_some_and(|c| !c.ok())
        })
        .map(|r| format!("{} / {}", r.case.label(), r.label))
        .collect();
    let errors = rows.iter().filter(|r| r.result.is_err()).count();
    let _ = writeln!(
        s,
        "\nOutput checks: {}; rows with errors: {errors}.",
        if wrong.is_empty() {
            "every checked row within tolerance".to_string()
        } else {
            format!("WRONG OUTPUT in {}", wrong.join(", "))
        }
    );
    s
}

// ---------------------------------------------------------------------------------

fn main() {
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let cpu_ctx = match Context::new(BackendRequest::Cpu, 0) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: could not create the CPU context: {e}");
            std::process::exit(1);
        }
    };
    let want_gpu = cfg.gpu || cfg.device || cfg.refs;
    let mut gpu_note = String::new();
    let gpu = if !want_gpu {
        gpu_note = "GPU rows not selected (--modes)".into();
        None
    } else {
        match Context::new(BackendRequest::Cuda, cfg.ordinal) {
            Err(e) => {
                gpu_note = format!("GPU rows skipped: no CUDA context could be created: {e}");
                None
            }
            Ok(ctx) => {
                let backend = if cfg.device || cfg.refs {
                    CudaBackend::new(cfg.ordinal.max(0) as usize).map_err(lib_err)
                } else {
                    Err("not needed".into())
                };
                Some(Gpu { ctx, backend })
            }
        }
    };

    let mut head = String::new();
    let _ = writeln!(head, "# seisgpu DWT denoise benchmark\n");
    let _ = writeln!(
        head,
        "- wavelet: GSL daubechies {MEMBER} (Family::Daubechies, member {MEMBER}), periodic, all levels; samples f32"
    );
    let _ = writeln!(
        head,
        "- denoise: default options: universal threshold σ·√(2 ln n), σ = median(|d₁|)/0.6745 from the finest level, soft, every detail level"
    );
    let _ = writeln!(
        head,
        "- GSL row: libgsl through FFI, one thread, in f64 (GSL is double only): per trace f32→f64, gsl_wavelet_transform_forward, the same threshold rule in plain Rust, gsl_wavelet_transform_inverse, f64→f32"
    );
    let _ = writeln!(
        head,
        "- input: deterministic sines + chirp + blocks + Gaussian noise (σ 0.3); GB/s counts {BYTES_PER_SAMPLE} bytes per sample (f32 read once + written once)"
    );
    let _ = writeln!(
        head,
        "- timing: median of the timed reps after warm-up (host rows: wall clock, warm-up {}; GPU device and reference rows: CUDA events on the stream, warm-up {}); at most ~{} s of timed calls per row, at least {MIN_REPS} reps",
        cfg.warmup,
        cfg.warmup.max(3),
        cfg.budget_s
    );
    let _ = writeln!(
        head,
        "- checks: max |out − ref| / max |ref| on the first warm-up call and the last timed call; tolerance {TOLERANCE:.0e}{}",
        if cfg.quick { "; --quick set" } else { "" }
    );
    let _ = writeln!(
        head,
        "- CPU threads (seisgpu CPU context): {}",
        cpu_threads(&cpu_ctx)
    );
    let _ = writeln!(head, "\nCPU context:\n\n```\n{}\n```", cpu_ctx.describe());
    match &gpu {
        Some(g) => {
            let _ = writeln!(head, "\nGPU context:\n\n```\n{}\n```", g.ctx.describe());
            if let Err(e) = &g.backend {
                if cfg.device || cfg.refs {
                    let _ = writeln!(
                        head,
                        "\nnote: no CUDA backend for the device-resident rows: {e}"
                    );
                }
            }
        }
        None => {
            let _ = writeln!(head, "\nnote: {}", gpu_note.replace('\n', " "));
        }
    }
    print!("{head}");
    let _ = std::io::Write::flush(&mut std::io::stdout());

    let t_all = Instant::now();
    let mut rows = Vec::new();
    for &case in &cfg.cases {
        rows.extend(run_case(&cfg, case, &cpu_ctx, gpu.as_ref()));
    }
    println!("\n{}", table(&rows));
    println!("{}", summary(&rows, &cfg));
    println!("(total {:.1} s)", t_all.elapsed().as_secs_f64());
    if let Some(path) = &cfg.csv {
        match std::fs::write(path, csv(&rows)) {
            Ok(()) => eprintln!("wrote {path}"),
            Err(e) => eprintln!("error: could not write {path}: {e}"),
        }
    }
}
