//! The ABI fuzzer's engine: a seeded generator, planted faults, and the checks every
//! call gets (a known status; on failure a message naming a planted fault and every
//! output buffer byte for byte as it was; on success an empty message).
//!
//! One module per family of calls (`TARGETS`); each keeps its own live handles and, on
//! each `step`, makes one call with random arguments, some of them deliberately wrong.
//! Adding a plan type is one module with a `Target` and one line in `TARGETS`.

#![allow(dead_code)]

pub mod context;
pub mod device;
pub mod dwt;
pub mod emlog;
pub mod fxdecon;
pub mod usfft;
pub mod wavepacket;
pub mod wavepacket_tiles;
pub mod wavepacket_volume;
pub mod xcorr;

use seisgpu::ffi::context::*;
use seisgpu::ffi::last_error::*;
use seisgpu::ffi::status::*;
use std::collections::BTreeMap;
use std::ffi::CStr;

/// How to start one family of calls on a thread.
pub type StartTarget = fn() -> Box<dyn Target>;

/// Every family of calls the fuzzer exercises: its name and how to start it on a thread.
pub const TARGETS: &[(&str, StartTarget)] = &[
    ("context", context::target),
    ("dwt", dwt::target),
    ("usfft", usfft::target),
    ("fxdecon", fxdecon::target),
    ("xcorr", xcorr::target),
    ("emlog", emlog::target),
    ("wavepacket", wavepacket::target),
    ("wavepacket_volume", wavepacket_volume::target),
    ("device", device::target),
];

/// A family of calls with its live handles (released on drop).
pub trait Target {
    /// Makes one call (rarely a few) through `f`.
    fn step(&mut self, f: &mut Fuzz);
}

/// The tests' generator (`common::Rng`), with the draws a fuzzer needs.
pub struct Rng(crate::common::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(crate::common::Rng::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() - 1)]
    }
    /// Uniform in [-1, 1).
    pub fn symmetric(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    /// Random bytes of any plain-old-data type (garbage option structs).
    pub fn garbage<T: Copy>(&mut self) -> T {
        let mut bytes = vec![0u8; std::mem::size_of::<T>()];
        for b in bytes.iter_mut() {
            *b = self.next() as u8;
        }
        // SAFETY: T is a repr(C) struct of integers and floats: every bit pattern is valid.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
    }
    /// An integer that is not one of `valid` (an invalid enum value).
    pub fn bad_enum(&mut self, valid: &[i32]) -> i32 {
        loop {
            let v = match self.range(0, 4) {
                0 => i32::MIN,
                1 => i32::MAX,
                2 => -1 - self.range(0, 3) as i32,
                3 => self.next() as i32,
                _ => self.range(0, 12) as i32,
            };
            if !valid.contains(&v) {
                return v;
            }
        }
    }
    /// A float that is no valid value of any option: NaN, ±inf.
    pub fn non_finite(&mut self) -> f64 {
        self.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN])
    }
    /// A size so large that no buffer can have it: ≥ 2^61, so that its byte count
    /// wraps size_t (smaller "huge" sizes are a caller's claim the library must trust).
    pub fn huge(&mut self) -> usize {
        match self.range(0, 3) {
            0 => usize::MAX,
            1 => usize::MAX / 2 + 1,
            2 => 1 << self.range(61, 63),
            _ => usize::MAX - self.range(0, 1000),
        }
    }
}

/// The floating-point sample types of the ABI.
pub trait Real: Copy + Send + 'static {
    fn of(x: f64) -> Self;
}
impl Real for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
}
impl Real for f64 {
    fn of(x: f64) -> f64 {
        x
    }
}

/// The faults planted into one call: the words of which the failure message must
/// contain at least one, and whether the call must fail.
#[derive(Default, Clone)]
pub struct Faults {
    names: Vec<&'static str>,
    certain: bool,
}

impl Faults {
    /// A fault that makes the call invalid; its message must mention `name`.
    pub fn plant(&mut self, name: &'static str) {
        self.names.push(name);
        self.certain = true;
    }
    /// A change that may or may not be invalid (garbage, huge sizes); if the call
    /// fails, `names` are acceptable words for its message.
    pub fn maybe(&mut self, names: &[&'static str]) {
        self.names.extend_from_slice(names);
    }
    pub fn any(&self) -> bool {
        !self.names.is_empty()
    }
}

/// A copy of a caller buffer taken before a call, to prove a failing call left it alone.
pub struct Snapshot {
    ptr: *const u8,
    bytes: Vec<u8>,
    name: &'static str,
}

impl Snapshot {
    pub fn of<T>(name: &'static str, p: *const T, len: usize) -> Snapshot {
        let n = len * std::mem::size_of::<T>();
        // SAFETY: `p` holds `len` elements (the fuzzer's own buffers).
        let bytes = if p.is_null() {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec()
        };
        Snapshot {
            ptr: p.cast(),
            bytes,
            name,
        }
    }
    pub fn of_slice<T>(name: &'static str, s: &[T]) -> Snapshot {
        Snapshot::of(name, s.as_ptr(), s.len())
    }
    fn intact(&self) -> bool {
        self.ptr.is_null()
            // SAFETY: as in `of`.
            || unsafe { std::slice::from_raw_parts(self.ptr, self.bytes.len()) } == self.bytes
    }
}

/// Counts per function and status, and the findings (broken contracts), of one thread.
#[derive(Default)]
pub struct Stats {
    pub calls: BTreeMap<(&'static str, i32), u64>,
    pub findings: Vec<String>,
}

impl Stats {
    pub fn merge(&mut self, other: Stats) {
        for (k, v) in other.calls {
            *self.calls.entry(k).or_default() += v;
        }
        self.findings.extend(other.findings);
    }
    pub fn total(&self) -> u64 {
        self.calls.values().sum()
    }
}

/// One fuzzing thread: its generator, the shared context, and its counts.
pub struct Fuzz {
    pub rng: Rng,
    pub ctx: *mut sg_context,
    pub stats: Stats,
    /// "seed S thread T": where a finding comes from.
    pub origin: String,
    /// Print each call before it is made (to find the call behind a crash).
    pub trace: bool,
    n: u64,
}

/// The message of the last call on this thread.
pub fn last_error() -> String {
    // SAFETY: documented as a valid NUL-terminated string, never NULL.
    unsafe { CStr::from_ptr(sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

impl Fuzz {
    pub fn new(seed: u64, thread: usize, ctx: *mut sg_context, trace: bool) -> Fuzz {
        Fuzz {
            rng: Rng::new(seed.wrapping_mul(1000).wrapping_add(thread as u64)),
            ctx,
            stats: Stats::default(),
            origin: format!("seed {seed} thread {thread}"),
            trace,
            n: 0,
        }
    }

    /// The context, or (a planted fault) NULL.
    pub fn ctx_or_null(&mut self, k: &mut Faults) -> *const sg_context {
        if self.rng.chance(0.03) {
            k.plant("ctx");
            std::ptr::null()
        } else {
            self.ctx
        }
    }

    /// Announces a call (with `trace`, before it is made: the last line before a crash).
    pub fn announce(&mut self, func: &str, args: impl FnOnce() -> String) {
        self.n += 1;
        if self.trace {
            eprintln!("[{} call {}] {func}({})", self.origin, self.n, args());
        }
    }

    /// Checks the outcome of a call against the contract and counts it.
    pub fn check(&mut self, func: &'static str, s: sg_status, k: &Faults, outputs: &[Snapshot]) {
        *self.stats.calls.entry((func, s)).or_default() += 1;
        let msg = last_error();
        let mut finding = |what: String| {
            if self.stats.findings.len() < 50 {
                self.stats
                    .findings
                    .push(format!("{} call {}: {func}: {what}", self.origin, self.n));
            }
        };
        if s == SG_OK {
            if !msg.is_empty() {
                finding(format!("succeeded but left the message {msg:?}"));
            }
            if k.certain {
                finding(format!(
                    "accepted a call with a planted fault ({:?})",
                    k.names
                ));
            }
            return;
        }
        if !(SG_ERR_INVALID_ARGUMENT..=SG_ERR_INTERNAL).contains(&s) {
            finding(format!("returned the unknown status {s}"));
        }
        if s == SG_ERR_INTERNAL {
            finding(format!("SG_ERR_INTERNAL (a caught panic): {msg}"));
        }
        if msg.is_empty() {
            finding(format!("failed with status {s} and no message"));
        }
        // Exhaustion names the sizes instead of an argument.
        let sized = (s == SG_ERR_OUT_OF_MEMORY || s == SG_ERR_DEVICE_OUT_OF_MEMORY)
            && msg.contains("bytes");
        if !k.any() {
            finding(format!(
                "refused a call without a planted fault: {s} {msg:?}"
            ));
        } else if !sized && !k.names.iter().any(|n| msg.contains(n)) {
            finding(format!(
                "message names none of the faults {:?}: {msg:?}",
                k.names
            ));
        }
        for o in outputs {
            if !o.intact() {
                finding(format!("failed (status {s}) but wrote to `{}`", o.name));
            }
        }
    }
}

/// A status's name without the `SG_ERR_` prefix, for the report.
/// Where a create call writes its handle: `out` (pre-set to a sentinel address, so that a
/// failing call that wrote it is seen), or NULL with probability `p_null` (a planted fault).
pub fn handle_slot<H>(f: &mut Fuzz, k: &mut Faults, out: &mut *mut H, p_null: f64) -> *mut *mut H {
    *out = 0x5151 as *mut H;
    if f.rng.chance(p_null) {
        k.plant("out");
        std::ptr::null_mut()
    } else {
        out
    }
}

pub fn status_label(s: sg_status) -> String {
    // SAFETY: documented as a static NUL-terminated string, never NULL.
    let name = unsafe { CStr::from_ptr(sg_status_string(s)) }.to_string_lossy();
    match name.strip_prefix("SG_ERR_") {
        Some(short) => short.to_string(),
        None if s == SG_OK => "OK".into(),
        None => format!("status{s}"),
    }
}

/// Random samples in [-1, 1); with `faults`, sometimes one NaN or infinity planted.
pub fn data<T: Real>(f: &mut Fuzz, len: usize, k: Option<&mut Faults>) -> Vec<T> {
    let mut v: Vec<T> = (0..len).map(|_| T::of(f.rng.symmetric())).collect();
    if let Some(k) = k {
        if len > 0 && f.rng.chance(0.05) {
            let i = f.rng.range(0, len - 1);
            v[i] = T::of(f.rng.non_finite());
            k.maybe(&["non-finite"]);
        }
    }
    v
}

/// A buffer of `len` elements filled with a sentinel byte pattern.
pub fn sentinel<T: Copy>(len: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    // SAFETY: filled byte by byte before use; T is plain old data.
    unsafe {
        std::ptr::write_bytes(v.as_mut_ptr(), 0xA5, len);
        v.set_len(len);
    }
    v
}

/// Runs one batch: `threads` threads sharing one context, `calls` calls in all.
pub fn run_batch(seed: u64, threads: usize, calls: u64, backend: i32, trace: bool) -> Stats {
    let mut ctx = std::ptr::null_mut();
    let s = sg_context_create(backend, 0, &mut ctx);
    assert_eq!(s, SG_OK, "context: {}", last_error());
    struct Shared(*mut sg_context);
    unsafe impl Sync for Shared {}
    let shared = Shared(ctx);
    let per_thread = calls.div_ceil(threads as u64);
    let mut total = Stats::default();
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let shared = &shared;
                sc.spawn(move || {
                    let mut f = Fuzz::new(seed, t, shared.0, trace);
                    let mut targets: Vec<Box<dyn Target>> =
                        TARGETS.iter().map(|(_, make)| make()).collect();
                    while f.n < per_thread {
                        let i = f.rng.range(0, targets.len() - 1);
                        targets[i].step(&mut f);
                    }
                    drop(targets);
                    f.stats
                })
            })
            .collect();
        for h in handles {
            total.merge(h.join().expect("a fuzzing thread panicked"));
        }
    });
    sg_context_destroy(ctx);
    total
}
