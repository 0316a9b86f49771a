//! The GPU DWT against the CPU reference: every GSL family and member, lengths 2..2^16 and
//! long signals (2^20, 2^26, and short ones forced through the long-signal path), several
//! depths, strided and in-place batches, f32 (max error ≤ 1e-5 of max |cpu|) and f64 (≤ 1e-12),
//! forward, inverse and denoise with every option; device-resident timings; device memory
//! exhaustion. Without a CUDA device the test reports "skipped", unless
//! SEISGPU_REQUIRE_CUDA=1 makes that a failure.
//!
//! Prints one row per case (section, case, max relative error, GPU wall time) and a summary;
//! SEISGPU_DWT_SECTIONS=A,B,… runs only some sections (A wavelets, B lengths, C denoise options,
//! D layouts, E long signals, F the 2^26 seed, G device-resident timings, H device memory,
//! I awkward traces' medians: sparse, a spike, constants, zeros, two values, J host batches
//! in chunks and non-finite host samples).
//! SEISGPU_DWT_G_FIRST=1 stops section G after its first case (for profiling runs).
//! SEISGPU_SANITIZING=1 (scripts/gpu_sanitize.sh) thins sections B and G to a few small
//! cases that still reach every kernel, and skips H.
//! All in one test function: sections change process-wide settings (the whole-trace limit)
//! and the last one fills the device's memory.

use crate::cuda_common;

use cuda_common::{gpu_context, sanitizing};
use seisgpu::backend::cuda::{kernels, CudaBackend};
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::dwt::cuda as gpu_dwt;
use seisgpu::dwt::cuda::DeviceTraces;
use seisgpu::dwt::denoise::{DenoiseOptions, NoiseEstimate, ThresholdMode, ThresholdRule};

use seisgpu::dwt::wavelet::{self, Family, Wavelet};
use seisgpu::dwt::{Direction, DwtPlan, Traces};
use seisgpu::layout::TraceBatch;
use seisgpu::sample::Sample;
use seisgpu::Error;
use std::sync::Arc;
use std::time::Instant;

/// Written into stride padding; must survive every call.
const SENTINEL: f64 = 12345.5;

// ---------------------------------------------------------------------------------------------
// Inputs.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A batch in caller layout: each trace a few sinusoids plus noise, padding = SENTINEL.
fn batch_input<T: Sample>(rng: &mut Rng, batch: &TraceBatch) -> Vec<T> {
    let mut v = vec![T::from_f64(SENTINEL).unwrap(); batch.span()];
    let n = batch.n_samples;
    for t in 0..batch.n_traces {
        let (f, a) = (1.0 + rng.below(40) as f64, 0.5 + rng.uniform());
        let noise = 0.05 + 0.3 * rng.uniform().abs();
        for i in 0..n {
            let x = i as f64 / n as f64;
            let s = a * (std::f64::consts::TAU * f * x).sin() + noise * rng.uniform();
            v[t * batch.trace_stride + i] = T::from_f64(s).unwrap();
        }
    }
    v
}

/// Traces whose detail magnitudes are not noise-like, in turn: noise, sparse (one sample in
/// twenty), faint noise under one spike, a constant, zeros, and two values. A trace's median
/// takes its one-pass path on the first and falls back to bit digits on the others (most
/// values in one bin, or all equal).
fn awkward_input<T: Sample>(rng: &mut Rng, batch: &TraceBatch) -> Vec<T> {
    let mut v = vec![T::from_f64(SENTINEL).unwrap(); batch.span()];
    let n = batch.n_samples;
    for t in 0..batch.n_traces {
        let spike = rng.below(n as u64) as usize;
        for i in 0..n {
            let u = rng.uniform();
            let s = match t % 6 {
                0 => u,
                1 if rng.below(20) == 0 => u,
                1 => 0.0,
                2 if i == spike => 1e3,
                2 => 1e-3 * u,
                3 => 1.0,
                4 => 0.0,
                _ if rng.below(3) == 0 => -0.5,
                _ => 0.25,
            };
            v[t * batch.trace_stride + i] = T::from_f64(s).unwrap();
        }
    }
    v
}

fn dense<T: Sample>(v: &[T], batch: &TraceBatch) -> Vec<T> {
    let n = batch.n_samples;
    (0..batch.n_traces)
        .flat_map(|t| v[t * batch.trace_stride..][..n].iter().copied())
        .collect()
}

/// Output array: NaN in the traces, SENTINEL in the padding.
fn poisoned<T: Sample>(batch: &TraceBatch) -> Vec<T> {
    let mut v = vec![T::from_f64(SENTINEL).unwrap(); batch.span()];
    for t in 0..batch.n_traces {
        v[t * batch.trace_stride..][..batch.n_samples].fill(T::nan());
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Comparison and the report.

fn tolerance<T: Sample>() -> f64 {
    if std::mem::size_of::<T>() == 4 {
        1e-5
    } else {
        1e-12
    }
}

/// Max |gpu − cpu| over max |cpu| (NaN where the GPU left NaN or wrote padding).
fn compare<T: Sample>(gpu: &[T], cpu_dense: &[T], batch: &TraceBatch) -> (f64, Option<String>) {
    let n = batch.n_samples;
    let scale = cpu_dense
        .iter()
        .fold(0.0f64, |m, x| m.max(x.to_f64().unwrap().abs()))
        .max(1e-30);
    let mut worst = 0.0f64;
    for t in 0..batch.n_traces {
        for i in 0..n {
            let g = gpu[t * batch.trace_stride + i].to_f64().unwrap();
            let c = cpu_dense[t * n + i].to_f64().unwrap();
            if !g.is_finite() {
                return (
                    f64::NAN,
                    Some(format!("trace {t} sample {i} not written (got {g})")),
                );
            }
            worst = worst.max((g - c).abs() / scale);
        }
        if t + 1 < batch.n_traces {
            for (j, p) in gpu[t * batch.trace_stride + n..(t + 1) * batch.trace_stride]
                .iter()
                .enumerate()
            {
                if p.to_f64().unwrap() != SENTINEL {
                    return (
                        f64::NAN,
                        Some(format!("padding after trace {t} (+{j}) overwritten")),
                    );
                }
            }
        }
    }
    (worst, None)
}

/// How a threshold's difference is measured: against the largest CPU threshold of the call,
/// or against its own size (a median from the wrong rank then shows even in a trace whose
/// thresholds are small beside another's).
#[derive(Clone, Copy)]
enum ThresholdScale {
    Largest,
    Each,
}

/// The largest relative difference; NaN where a GPU threshold is not finite.
fn compare_thresholds(gpu: &[f64], cpu: &[f64], scale: ThresholdScale) -> f64 {
    let largest = cpu.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-30);
    let mut worst = 0.0f64;
    for (g, c) in gpu.iter().zip(cpu) {
        if !g.is_finite() {
            return f64::NAN;
        }
        let size = match scale {
            ThresholdScale::Largest => largest,
            ThresholdScale::Each => c.abs().max(1e-30),
        };
        worst = worst.max((g - c).abs() / size);
    }
    worst
}

struct Row {
    section: char,
    case: String,
    err: f64,
    tol: f64,
    ms: f64,
    note: Option<String>,
}

impl Row {
    fn ok(&self) -> bool {
        self.note.is_none() && self.err <= self.tol
    }
}

#[derive(Default)]
struct Report {
    rows: Vec<Row>,
}

impl Report {
    fn add(
        &mut self,
        section: char,
        case: String,
        err: f64,
        tol: f64,
        ms: f64,
        note: Option<String>,
    ) {
        let row = Row {
            section,
            case,
            err,
            tol,
            ms,
            note,
        };
        println!(
            "{} | {:<78} | {:>9.2e} | {:>7.1e} | {:>9.3} ms | {}{}",
            row.section,
            row.case,
            row.err,
            row.tol,
            row.ms,
            if row.ok() { "ok" } else { "FAIL" },
            row.note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
        self.rows.push(row);
    }

    fn summary(&self) -> Vec<String> {
        println!("\n==== summary ====");
        println!("section | cases | failed | worst err/tol");
        let mut sections: Vec<char> = self.rows.iter().map(|r| r.section).collect();
        sections.dedup();
        for s in sections {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.section == s).collect();
            let failed = rows.iter().filter(|r| !r.ok()).count();
            let worst = rows
                .iter()
                .map(|r| {
                    if r.err.is_nan() {
                        f64::INFINITY
                    } else {
                        r.err / r.tol
                    }
                })
                .fold(0.0, f64::max);
            println!("{s:>7} | {:>5} | {failed:>6} | {worst:.3}", rows.len());
        }
        let failures: Vec<String> = self
            .rows
            .iter()
            .filter(|r| !r.ok())
            .map(|r| {
                format!(
                    "{} {}: err {:.3e} (tol {:.1e}){}",
                    r.section,
                    r.case,
                    r.err,
                    r.tol,
                    r.note
                        .as_deref()
                        .map(|n| format!(" — {n}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        for f in &failures {
            println!("FAILED {f}");
        }
        failures
    }
}

// ---------------------------------------------------------------------------------------------
// Cases.

struct Env {
    gpu: Arc<Context>,
    cpu: Arc<Context>,
    rng: Rng,
    report: Report,
    awkward: bool,
}

#[derive(Clone, Copy)]
enum Mode {
    Separate,
    InPlace,
}

#[derive(Clone, Copy)]
enum Op {
    Forward,
    Inverse,
    Denoise(DenoiseOptions),
}

fn op_name(op: &Op) -> String {
    match op {
        Op::Forward => "forward".into(),
        Op::Inverse => "inverse".into(),
        Op::Denoise(o) => format!(
            "denoise {}{}{} mask {:x}",
            match o.rule {
                ThresholdRule::Universal => "univ",
                ThresholdRule::Fixed => "fixed",
            },
            match o.mode {
                ThresholdMode::Soft => "/soft",
                ThresholdMode::Hard => "/hard",
            },
            match o.noise {
                NoiseEstimate::FinestLevel => "/finest",
                NoiseEstimate::PerLevel => "/perlevel",
            },
            o.level_mask
        ),
    }
}

fn type_name<T: Sample>() -> &'static str {
    if std::mem::size_of::<T>() == 4 {
        "f32"
    } else {
        "f64"
    }
}

impl Env {
    #[allow(clippy::too_many_arguments)]
    fn case<T: Sample>(
        &mut self,
        section: char,
        family: Family,
        member: u32,
        n: usize,
        traces: usize,
        stride: usize,
        levels: u32,
        op: Op,
        mode: Mode,
    ) {
        let label = format!(
            "{} {member} {} n={n} x{traces} s={stride} L={levels} {}{}",
            family.name(),
            type_name::<T>(),
            op_name(&op),
            match mode {
                Mode::Separate => "",
                Mode::InPlace => " inplace",
            }
        );
        let tol = tolerance::<T>();
        match self.run::<T>(family, member, n, traces, stride, levels, op, mode) {
            Ok((err, ms, note)) => self.report.add(section, label, err, tol, ms, note),
            Err(e) => self.report.add(
                section,
                label,
                f64::NAN,
                tol,
                0.0,
                Some(format!("error: {e}")),
            ),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run<T: Sample>(
        &mut self,
        family: Family,
        member: u32,
        n: usize,
        traces: usize,
        stride: usize,
        levels: u32,
        op: Op,
        mode: Mode,
    ) -> seisgpu::Result<(f64, f64, Option<String>)> {
        let batch = TraceBatch::new(n, traces, stride)?;
        let input = if self.awkward {
            awkward_input::<T>(&mut self.rng, &batch)
        } else {
            batch_input::<T>(&mut self.rng, &batch)
        };
        let dense_batch = TraceBatch::new(n, traces, n)?;
        let cpu_in = dense(&input, &batch);
        let mut cpu_out = vec![T::nan(); cpu_in.len()];
        let cpu_plan = DwtPlan::new(self.cpu.clone(), family, member, n)?;
        let gpu_plan = DwtPlan::new(self.gpu.clone(), family, member, n)?;
        // Denoising takes its depth from the options.
        let op = match op {
            Op::Denoise(o) => Op::Denoise(DenoiseOptions { levels, ..o }),
            other => other,
        };
        let wanted = traces * cpu_plan.resolve_levels(levels)? as usize;
        let mut cpu_thr = vec![f64::NAN; wanted];
        let mut gpu_thr = vec![f64::NAN; wanted];
        let cpu_traces = Traces::Separate {
            input: &cpu_in,
            output: &mut cpu_out,
        };
        match op {
            Op::Forward => {
                cpu_plan.transform(Direction::Forward, levels, cpu_traces, dense_batch)?
            }
            Op::Inverse => {
                cpu_plan.transform(Direction::Inverse, levels, cpu_traces, dense_batch)?
            }
            Op::Denoise(o) => cpu_plan.denoise(&o, cpu_traces, dense_batch, Some(&mut cpu_thr))?,
        }
        let mut gpu_out = match mode {
            Mode::Separate => poisoned::<T>(&batch),
            Mode::InPlace => input.clone(),
        };
        let started = Instant::now();
        {
            let traces = match mode {
                Mode::Separate => Traces::Separate {
                    input: &input,
                    output: &mut gpu_out,
                },
                Mode::InPlace => Traces::InPlace(&mut gpu_out),
            };
            match op {
                Op::Forward => gpu_plan.transform(Direction::Forward, levels, traces, batch)?,
                Op::Inverse => gpu_plan.transform(Direction::Inverse, levels, traces, batch)?,
                Op::Denoise(o) => gpu_plan.denoise(&o, traces, batch, Some(&mut gpu_thr))?,
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let (mut err, mut note) = compare(&gpu_out, &cpu_out, &batch);
        if let Op::Denoise(_) = op {
            let scale = if self.awkward {
                ThresholdScale::Each
            } else {
                ThresholdScale::Largest
            };
            let terr = compare_thresholds(&gpu_thr, &cpu_thr, scale);
            if terr.is_nan() || terr > tolerance::<T>() {
                note = note.or(Some(format!("thresholds differ by {terr:.3e}")));
            }
            err = err.max(terr);
        }
        if let Mode::Separate = mode {
            let again = batch_input_check(&input, &batch);
            note = note.or(again);
        }
        Ok((err, ms, note))
    }
}

/// The input of a separate call must be left as it was (padding included).
fn batch_input_check<T: Sample>(input: &[T], batch: &TraceBatch) -> Option<String> {
    for t in 0..batch.n_traces.saturating_sub(1) {
        let pad = &input[t * batch.trace_stride + batch.n_samples..(t + 1) * batch.trace_stride];
        if pad.iter().any(|p| p.to_f64().unwrap() != SENTINEL) {
            return Some(format!("input padding after trace {t} changed"));
        }
    }
    None
}

fn wavelets() -> Vec<(Family, u32)> {
    wavelet::all().map(|w| (w.family, w.member)).collect()
}

fn default_denoise() -> Op {
    Op::Denoise(DenoiseOptions::default())
}

fn all_denoise_options(levels_mask_max: u32) -> Vec<DenoiseOptions> {
    let top = if levels_mask_max >= 2 {
        1u64 << (levels_mask_max - 1)
    } else {
        1
    };
    let mut out = Vec::new();
    for rule in [ThresholdRule::Universal, ThresholdRule::Fixed] {
        for mode in [ThresholdMode::Soft, ThresholdMode::Hard] {
            for noise in [NoiseEstimate::FinestLevel, NoiseEstimate::PerLevel] {
                for mask in [u64::MAX, 0b1, 0b1010, 0, top] {
                    out.push(DenoiseOptions {
                        rule,
                        mode,
                        noise,
                        fixed_threshold: 0.1,
                        levels: 0,
                        level_mask: mask,
                    });
                }
            }
        }
    }
    out
}

fn sections() -> String {
    std::env::var("SEISGPU_DWT_SECTIONS").unwrap_or_else(|_| "ABCDEFGIJH".into())
}

fn wants(section: char) -> bool {
    sections().contains(section)
}

// ---------------------------------------------------------------------------------------------

/// Compiles every wavelet's module on several threads at once (NVRTC and the driver's JIT
/// take about a second each).
fn warm_up(gpu: &Arc<Context>) {
    let started = Instant::now();
    let all = wavelets();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(family, member)) = all.get(i) else {
                    break;
                };
                let plan = DwtPlan::new(gpu.clone(), family, member, 8).unwrap();
                let batch = TraceBatch::new(8, 1, 8).unwrap();
                let mut a = vec![0.5f32; 8];
                let mut b = vec![0.5f64; 8];
                plan.transform(Direction::Forward, 0, Traces::InPlace(&mut a), batch)
                    .unwrap();
                plan.transform(Direction::Forward, 0, Traces::InPlace(&mut b), batch)
                    .unwrap();
            });
        }
    });
    println!(
        "compiled {} modules in {:.1} s",
        2 * all.len(),
        started.elapsed().as_secs_f64()
    );
}

fn print_kernel_resources() {
    let Ok(backend) = CudaBackend::new(0) else {
        return;
    };
    println!("{}", backend.describe());
    for t in ["f32", "f64"] {
        let w = Wavelet::new(Family::Daubechies, 8).unwrap();
        let prelude = if t == "f32" {
            gpu_dwt::prelude::<f32>(&w)
        } else {
            gpu_dwt::prelude::<f64>(&w)
        };
        let Ok(module) = backend
            .modules
            .get(&backend.ctx, &backend.arch, &kernels::DWT, &prelude)
        else {
            println!("could not compile the daubechies 8 {t} module");
            continue;
        };
        for name in [
            "dwt_forward",
            "dwt_inverse",
            "dwt_denoise",
            "dwt_forward_tiles",
            "dwt_inverse_tiles",
            "dwt_select_count",
            "dwt_select_digit",
        ] {
            let f = module.load_function(name).unwrap();
            use cudarc::driver::sys::CUfunction_attribute as A;
            let regs = f.get_attribute(A::CU_FUNC_ATTRIBUTE_NUM_REGS).unwrap_or(-1);
            let local = f
                .get_attribute(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .unwrap_or(-1);
            println!("kernel daubechies 8 {t} {name:<20} {regs:>3} registers, {local:>4} B local");
        }
    }
}

#[test]
fn gpu_dwt_matches_cpu() {
    let Some(gpu) = gpu_context() else { return };
    println!("{}", gpu.describe());
    print_kernel_resources();
    if wants('A') || wants('B') {
        warm_up(&gpu);
    }
    let mut env = Env {
        gpu,
        cpu: Context::new(BackendRequest::Cpu, 0).unwrap(),
        rng: Rng(0x5EED_0FD3_C0DE ^ std::process::id() as u64),
        report: Report::default(),
        awkward: false,
    };
    println!("section | case | max rel err | tol | GPU wall | status");

    if wants('A') {
        // Every family and member, both sample types.
        for (family, member) in wavelets() {
            for n in [2usize, 16, 1024] {
                for op in [Op::Forward, Op::Inverse, default_denoise()] {
                    env.case::<f32>('A', family, member, n, 7, n, 0, op, Mode::Separate);
                    env.case::<f64>('A', family, member, n, 7, n, 0, op, Mode::Separate);
                }
            }
            env.case::<f32>(
                'A',
                family,
                member,
                64,
                5,
                64,
                3,
                default_denoise(),
                Mode::Separate,
            );
        }
    }

    if wants('B') {
        // Every length, several depths. Under the sanitizer: a short and a long filter, and
        // lengths for one warp per trace (2, 16, 1024), a block per trace (8192) and the
        // long-signal tiles (2^16 is past the whole-trace limit), 3 traces (a partly
        // filled block of warp teams).
        let mut some = vec![(Family::Daubechies, 4), (Family::Bspline, 309)];
        let mut log2ns: Vec<u32> = vec![1, 4, 10, 13, 16];
        if sanitizing() {
            println!("section B thinned for the sanitizer: 2 wavelets, 5 lengths, 3 traces");
        } else {
            some.splice(
                1..1,
                [
                    (Family::DaubechiesCentered, 20),
                    (Family::Haar, 2),
                    (Family::BsplineCentered, 103),
                ],
            );
            log2ns = (1..=16).collect();
        }
        for (family, member) in some {
            for &log2n in &log2ns {
                let n = 1usize << log2n;
                let traces = if sanitizing() {
                    3
                } else {
                    ((1usize << 18) / n).clamp(1, 33)
                };
                for levels in [0, 1, log2n.div_ceil(2)] {
                    for op in [Op::Forward, Op::Inverse, default_denoise()] {
                        env.case::<f32>(
                            'B',
                            family,
                            member,
                            n,
                            traces,
                            n,
                            levels,
                            op,
                            Mode::Separate,
                        );
                        env.case::<f64>(
                            'B',
                            family,
                            member,
                            n,
                            traces,
                            n,
                            levels,
                            op,
                            Mode::Separate,
                        );
                    }
                }
            }
        }
    }

    if wants('C') {
        // Every denoising option.
        for (family, member) in [(Family::Daubechies, 8), (Family::BsplineCentered, 208)] {
            for n in [1024usize, 4096] {
                for o in all_denoise_options(n.trailing_zeros()) {
                    env.case::<f32>(
                        'C',
                        family,
                        member,
                        n,
                        37,
                        n,
                        0,
                        Op::Denoise(o),
                        Mode::Separate,
                    );
                    env.case::<f64>(
                        'C',
                        family,
                        member,
                        n,
                        37,
                        n,
                        0,
                        Op::Denoise(o),
                        Mode::Separate,
                    );
                }
                let o = DenoiseOptions {
                    noise: NoiseEstimate::PerLevel,
                    ..DenoiseOptions::default()
                };
                env.case::<f32>(
                    'C',
                    family,
                    member,
                    n,
                    9,
                    n,
                    4,
                    Op::Denoise(o),
                    Mode::Separate,
                );
            }
        }
    }

    if wants('D') {
        // Strides, in place.
        for n in [2usize, 8, 1024, 4096, 16384] {
            for (stride, mode) in [
                (n + 3, Mode::Separate),
                (n + 16, Mode::InPlace),
                (n, Mode::InPlace),
                (n + 1, Mode::InPlace),
            ] {
                for op in [Op::Forward, Op::Inverse, default_denoise()] {
                    env.case::<f32>(
                        'D',
                        Family::DaubechiesCentered,
                        6,
                        n,
                        11,
                        stride,
                        0,
                        op,
                        mode,
                    );
                    env.case::<f64>('D', Family::Bspline, 105, n, 11, stride, 0, op, mode);
                }
            }
        }
        // Many chunks (more than one staging buffer's worth).
        env.case::<f32>(
            'D',
            Family::Daubechies,
            8,
            1024,
            40000,
            1030,
            0,
            default_denoise(),
            Mode::Separate,
        );
        env.case::<f64>(
            'D',
            Family::Daubechies,
            8,
            1024,
            20000,
            1024,
            0,
            default_denoise(),
            Mode::InPlace,
        );
    }

    if wants('E') {
        // Long signals: naturally long, then short ones forced through the long path.
        let n = 1 << 20;
        for op in [Op::Forward, Op::Inverse, default_denoise()] {
            env.case::<f32>('E', Family::Daubechies, 8, n, 1, n, 0, op, Mode::Separate);
            env.case::<f64>(
                'E',
                Family::DaubechiesCentered,
                20,
                n,
                1,
                n,
                0,
                op,
                Mode::Separate,
            );
            env.case::<f32>(
                'E',
                Family::BsplineCentered,
                309,
                n,
                3,
                n + 5,
                7,
                op,
                Mode::InPlace,
            );
        }
        let per_level = DenoiseOptions {
            noise: NoiseEstimate::PerLevel,
            mode: ThresholdMode::Hard,
            ..DenoiseOptions::default()
        };
        env.case::<f32>(
            'E',
            Family::Haar,
            2,
            n,
            2,
            n,
            0,
            Op::Denoise(per_level),
            Mode::Separate,
        );
        gpu_dwt::set_single_kernel_limit(Some(256));
        for (family, member) in [
            (Family::Daubechies, 4),
            (Family::DaubechiesCentered, 20),
            (Family::HaarCentered, 2),
            (Family::BsplineCentered, 103),
            (Family::Bspline, 208),
        ] {
            for n in [512usize, 1024, 4096, 16384] {
                let max = n.trailing_zeros();
                for levels in [0, 3, 7.min(max)] {
                    for op in [Op::Forward, Op::Inverse, default_denoise()] {
                        env.case::<f32>('E', family, member, n, 5, n, levels, op, Mode::Separate);
                        env.case::<f64>(
                            'E',
                            family,
                            member,
                            n,
                            3,
                            n + 2,
                            levels,
                            op,
                            Mode::InPlace,
                        );
                    }
                }
                for o in all_denoise_options(max).into_iter().step_by(3) {
                    env.case::<f32>(
                        'E',
                        family,
                        member,
                        n,
                        4,
                        n,
                        0,
                        Op::Denoise(o),
                        Mode::Separate,
                    );
                }
            }
        }
        gpu_dwt::set_single_kernel_limit(None);
    }

    if wants('F') {
        // The seed's case: one signal of 2^26 samples.
        let n = 1 << 26;
        env.case::<f32>(
            'F',
            Family::Daubechies,
            8,
            n,
            1,
            n,
            0,
            default_denoise(),
            Mode::Separate,
        );
        env.case::<f32>(
            'F',
            Family::Daubechies,
            8,
            n,
            1,
            n,
            0,
            Op::Forward,
            Mode::InPlace,
        );
    }

    if wants('G') {
        device_resident(&mut env);
    }

    if wants('I') {
        // Medians of awkward traces, lengths a warp transforms and lengths a block does
        // (f32 2,048 and 4,096; f64 1,024 and 4,096), every noise estimate and threshold mode.
        env.awkward = true;
        for o in all_denoise_options(1)
            .into_iter()
            .filter(|o| o.rule == ThresholdRule::Universal && o.level_mask == u64::MAX)
        {
            for n in [64usize, 1024, 2048, 4096] {
                let op = Op::Denoise(o);
                env.case::<f32>('I', Family::Daubechies, 8, n, 36, n, 0, op, Mode::Separate);
            }
            for n in [64usize, 512, 1024, 4096] {
                let op = Op::Denoise(o);
                env.case::<f64>('I', Family::Daubechies, 8, n, 36, n, 0, op, Mode::Separate);
            }
        }
        env.awkward = false;
    }

    if wants('J') {
        host_staging(&mut env);
    }

    if wants('H') {
        device_memory_exhaustion(&mut env);
    }

    let failures = env.report.summary();
    assert!(
        failures.is_empty(),
        "{} GPU DWT cases failed (see FAILED lines)",
        failures.len()
    );
}

/// Host batches through the chunked path (a few traces a chunk) against the CPU, and
/// non-finite samples refused with their first position and nothing written: a batch of one
/// chunk (checked as it is staged), several chunks (checked first), one long trace spanning
/// several staged pieces; in place and apart.
fn host_staging(env: &mut Env) {
    gpu_dwt::set_host_chunk_limit(Some(7));
    for mode in [Mode::Separate, Mode::InPlace] {
        let op = default_denoise();
        env.case::<f32>('J', Family::Daubechies, 8, 1024, 33, 1030, 0, op, mode);
        env.case::<f64>('J', Family::Daubechies, 8, 1024, 33, 1024, 0, op, mode);
        env.case::<f32>('J', Family::Haar, 2, 1 << 16, 3, (1 << 16) + 3, 0, op, mode);
    }
    for limit in [None, Some(7)] {
        gpu_dwt::set_host_chunk_limit(limit);
        let batch = TraceBatch::new(1024, 33, 1030).unwrap();
        let mut input = batch_input::<f32>(&mut env.rng, &batch);
        input[20 * 1030 + 17] = f32::NAN;
        input[25 * 1030 + 3] = f32::INFINITY;
        // In the padding between traces: not a sample.
        input[5 * 1030 + 1027] = f32::NAN;
        refuses_non_finite(env, &input, batch, "trace 20, sample 17");
    }
    gpu_dwt::set_host_chunk_limit(None);
    // 2^22 f32 samples: two staged pieces of 8 MB.
    let batch = TraceBatch::new(1 << 22, 1, 1 << 22).unwrap();
    let mut input = batch_input::<f32>(&mut env.rng, &batch);
    input[3_500_000] = f32::NEG_INFINITY;
    input[3_000_001] = f32::NAN;
    refuses_non_finite(env, &input, batch, "trace 0, sample 3000001");
}

/// A GPU denoise of `input` fails with NonFinite naming `first`, leaving its output (apart
/// or in place) as it was.
fn refuses_non_finite(env: &Env, input: &[f32], batch: TraceBatch, first: &str) {
    let plan = DwtPlan::new(env.gpu.clone(), Family::Daubechies, 8, batch.n_samples).unwrap();
    let o = DenoiseOptions::default();
    let mut out = poisoned::<f32>(&batch);
    let before = out.clone();
    let traces = Traces::Separate {
        input,
        output: &mut out,
    };
    let apart = plan.denoise(&o, traces, batch, None);
    let mut data = input.to_vec();
    let in_place = plan.denoise(&o, Traces::InPlace(&mut data), batch, None);
    for (what, r) in [("apart", apart), ("in place", in_place)] {
        match r {
            Err(Error::NonFinite(m)) if m.contains(first) => {}
            other => panic!("{what}: expected NonFinite at {first}, got {other:?}"),
        }
    }
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    assert!(same(&out, &before), "a refused call wrote its output");
    assert!(same(&data, input), "a refused call wrote its data in place");
    println!(
        "J | non-finite at {first}, n={} x{} | refused, nothing written",
        batch.n_samples, batch.n_traces
    );
}

/// Device-resident denoise timed with events, and checked against the CPU.
fn device_resident(env: &mut Env) {
    let backend = match CudaBackend::new(0) {
        Ok(b) => b,
        Err(e) => {
            env.report.add(
                'G',
                "CudaBackend::new".into(),
                f64::NAN,
                0.0,
                0.0,
                Some(e.to_string()),
            );
            return;
        }
    };
    if sanitizing() {
        // The same paths (whole trace in both types, the long-signal tiles, a block per
        // trace) on small batches, once each.
        println!("section G thinned for the sanitizer: 4 small cases, 1 repetition");
        timed_device_case::<f32>(env, &backend, 1024, 64, 8, 1);
        timed_device_case::<f32>(env, &backend, 1 << 18, 1, 8, 1);
        timed_device_case::<f64>(env, &backend, 1024, 16, 8, 1);
        timed_device_case::<f32>(env, &backend, 4096, 8, 20, 1);
        return;
    }
    timed_device_case::<f32>(env, &backend, 1024, 65536, 8, 20);
    if std::env::var("SEISGPU_DWT_G_FIRST").is_ok() {
        return; // profiling runs
    }
    timed_device_case::<f32>(env, &backend, 1 << 26, 1, 8, 20);
    timed_device_case::<f64>(env, &backend, 1024, 16384, 8, 20);
    timed_device_case::<f32>(env, &backend, 4096, 8192, 20, 20);
}

fn timed_device_case<T: Sample>(
    env: &mut Env,
    backend: &CudaBackend,
    n: usize,
    traces: usize,
    member: u32,
    reps: usize,
) {
    let label = format!(
        "device-resident denoise daubechies {member} {} {traces} x {n}",
        type_name::<T>()
    );
    let result = (|| -> seisgpu::Result<(f64, f64, Option<String>)> {
        let wavelet = Wavelet::new(Family::Daubechies, member)?;
        let batch = TraceBatch::new(n, traces, n)?;
        let input = batch_input::<T>(&mut env.rng, &batch);
        let stream = backend
            .ctx
            .new_stream()
            .map_err(|e| Error::CudaDriver(format!("{e:?}")))?;
        let cuda = |e: cudarc::driver::DriverError| Error::CudaDriver(format!("{e:?}"));
        let d_in = stream.clone_htod(&input).map_err(cuda)?;
        let mut d_out = stream.clone_htod(&input).map_err(cuda)?;
        let options = DenoiseOptions::default();
        // Warm up (module, pools), then time with events.
        let arrays = DeviceTraces::new(&d_in, &mut d_out, batch);
        let thresholds =
            gpu_dwt::denoise_device_enqueue(backend, &wavelet, &options, 0, arrays, &stream)?
                .thresholds(backend, &stream)?;
        let start = stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda)?;
        let mut pending = Vec::new();
        for _ in 0..reps {
            let arrays = DeviceTraces::new(&d_in, &mut d_out, batch);
            pending.push(gpu_dwt::denoise_device_enqueue(
                backend, &wavelet, &options, 0, arrays, &stream,
            )?);
        }
        let end = stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda)?;
        let ms = start.elapsed_ms(&end).map_err(cuda)? as f64 / reps as f64;
        let wall = Instant::now();
        let arrays = DeviceTraces::new(&d_in, &mut d_out, batch);
        let again =
            gpu_dwt::denoise_device_enqueue(backend, &wavelet, &options, 0, arrays, &stream)?
                .thresholds(backend, &stream)?;
        let wall_ms = wall.elapsed().as_secs_f64() * 1e3;
        drop(pending);
        let out = stream.clone_dtoh(&d_out).map_err(cuda)?;
        let gbs = 2.0 * (n * traces * std::mem::size_of::<T>()) as f64 / (ms * 1e-3) / 1e9;
        println!("G | {label}: {ms:.4} ms per call (events, {reps} queued), {gbs:.0} GB/s of trace I/O; one synchronous call with thresholds: {wall_ms:.3} ms");
        // The transforms alone, for the breakdown (output discarded).
        let mut scratch = stream.clone_htod(&input).map_err(cuda)?;
        for direction in [Direction::Forward, Direction::Inverse] {
            gpu_dwt::transform_device(
                backend,
                &wavelet,
                direction,
                0,
                DeviceTraces::new(&d_in, &mut scratch, batch),
                &stream,
            )?;
            let start = stream
                .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(cuda)?;
            for _ in 0..reps {
                gpu_dwt::transform_device(
                    backend,
                    &wavelet,
                    direction,
                    0,
                    DeviceTraces::new(&d_in, &mut scratch, batch),
                    &stream,
                )?;
            }
            let end = stream
                .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(cuda)?;
            let t = start.elapsed_ms(&end).map_err(cuda)? as f64 / reps as f64;
            println!("G | {label}: {direction:?} transform alone {t:.4} ms");
        }
        // CPU reference.
        let mut cpu_out = vec![T::nan(); input.len()];
        let mut cpu_thr = vec![f64::NAN; thresholds.len()];
        let plan = DwtPlan::new(env.cpu.clone(), Family::Daubechies, member, n)?;
        plan.denoise(
            &options,
            Traces::Separate {
                input: &input,
                output: &mut cpu_out,
            },
            batch,
            Some(&mut cpu_thr),
        )?;
        let (err, note) = compare(&out, &cpu_out, &batch);
        let terr = [&thresholds, &again]
            .map(|gpu| compare_thresholds(gpu, &cpu_thr, ThresholdScale::Largest))
            .into_iter()
            .fold(0.0f64, |m, e| {
                if m.is_nan() || e.is_nan() {
                    f64::NAN
                } else {
                    m.max(e)
                }
            });
        let note = note.or_else(|| {
            (terr.is_nan() || terr > tolerance::<T>())
                .then(|| format!("thresholds differ by {terr:.3e}"))
        });
        Ok((err.max(terr), ms, note))
    })();
    match result {
        Ok((err, ms, note)) => env.report.add('G', label, err, tolerance::<T>(), ms, note),
        Err(e) => env.report.add(
            'G',
            label,
            f64::NAN,
            tolerance::<T>(),
            0.0,
            Some(format!("error: {e}")),
        ),
    }
}

/// Fills the device's memory, expects DeviceOutOfMemory (or another clean error) from a long
/// denoise, then frees it and expects the same call to work.
///
/// Skipped when SEISGPU_SANITIZING=1 (scripts/gpu_sanitize.sh): memcheck counts each refused
/// allocation of the fill as an API error; the plain GPU run covers this case.
fn device_memory_exhaustion(env: &mut Env) {
    if sanitizing() {
        println!("device memory exhaustion: skipped under the sanitizer");
        return;
    }
    let n = 1 << 22;
    // Warm up: the module and the pools exist before memory runs out.
    env.case::<f32>(
        'H',
        Family::Daubechies,
        8,
        n,
        1,
        n,
        0,
        default_denoise(),
        Mode::Separate,
    );
    let ctx = match cudarc::driver::CudaContext::new(0) {
        Ok(c) => c,
        Err(e) => {
            env.report.add(
                'H',
                "filling device memory".into(),
                f64::NAN,
                0.0,
                0.0,
                Some(format!("{e:?}")),
            );
            return;
        }
    };
    let stream = ctx.default_stream();
    let mut hog = Vec::new();
    for size in [1usize << 30, 1 << 26, 1 << 22] {
        // SAFETY: never read.
        while let Ok(b) = unsafe { stream.alloc::<u8>(size) } {
            hog.push(b);
        }
    }
    let _ = stream.synchronize();
    let held: usize = hog.iter().map(|b| b.len()).sum();
    let (free, total) = ctx.mem_get_info().unwrap_or((0, 0));
    println!(
        "H | holding {:.1} GiB of {:.1} GiB; {:.1} MiB free",
        held as f64 / (1u64 << 30) as f64,
        total as f64 / (1u64 << 30) as f64,
        free as f64 / (1u64 << 20) as f64
    );
    let plan = DwtPlan::new(env.gpu.clone(), Family::Daubechies, 8, n).unwrap();
    let batch = TraceBatch::new(n, 1, n).unwrap();
    let input = batch_input::<f32>(&mut env.rng, &batch);
    let mut out = poisoned::<f32>(&batch);
    let started = Instant::now();
    let r = plan.denoise(
        &DenoiseOptions::default(),
        Traces::Separate {
            input: &input,
            output: &mut out,
        },
        batch,
        None,
    );
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let (label, note) = match &r {
        Err(Error::DeviceOutOfMemory(m)) => {
            (format!("exhausted device: DeviceOutOfMemory ({m})"), None)
        }
        Err(e) => (format!("exhausted device: other error ({e})"), None),
        Ok(()) => (
            "exhausted device".to_string(),
            Some("succeeded though the device memory was full".to_string()),
        ),
    };
    env.report.add('H', label, 0.0, 0.0, ms, note);
    drop(hog);
    let _ = stream.synchronize();
    // The context must still work.
    env.case::<f32>(
        'H',
        Family::Daubechies,
        8,
        n,
        1,
        n,
        0,
        default_denoise(),
        Mode::Separate,
    );
    env.case::<f64>(
        'H',
        Family::Haar,
        2,
        1024,
        100,
        1024,
        0,
        default_denoise(),
        Mode::InPlace,
    );
}
