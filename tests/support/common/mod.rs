//! Helpers shared by the integration tests: owning wrappers around the C handles, the
//! last-error message as a `String`, and a small deterministic random generator.
//!
//! Everything goes through the C ABI (`seisgpu::ffi::*`), exactly as a C caller would.

#![allow(dead_code)]

use seisgpu::ffi::context::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::last_error::*;
use seisgpu::ffi::status::*;
use std::ffi::CStr;
use std::ptr;

/// The message of the last `sg_*` call on this thread.
pub fn last_error() -> String {
    let p = sg_last_error_message();
    assert!(!p.is_null(), "sg_last_error_message returned NULL");
    // SAFETY: documented as a valid NUL-terminated string until the next sg_* call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The static name of a status code.
pub fn status_name(s: sg_status) -> String {
    // SAFETY: documented as a static NUL-terminated string, never NULL.
    unsafe { CStr::from_ptr(sg_status_string(s)) }
        .to_string_lossy()
        .into_owned()
}

/// Panics, with the library's message, unless `s` is `SG_OK`; also checks that a
/// successful call leaves the last-error message empty.
#[track_caller]
pub fn ok(s: sg_status) {
    if s != SG_OK {
        panic!(
            "expected SG_OK, got {} ({s}): {}",
            status_name(s),
            last_error()
        );
    }
    assert_eq!(last_error(), "", "a successful call left a message");
}

/// A context, destroyed on drop. The C ABI documents contexts as usable from several
/// threads at once.
pub struct Ctx(pub *mut sg_context);
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

impl Ctx {
    pub fn cpu() -> Ctx {
        let mut c = ptr::null_mut();
        ok(sg_context_create(SG_BACKEND_CPU, 0, &mut c));
        assert!(!c.is_null());
        Ctx(c)
    }

    pub fn plan(&self, family: i32, member: i32, n: usize) -> Plan {
        let mut p = ptr::null_mut();
        let s = sg_dwt_plan_create(self.0, family, member, n, &mut p);
        if s != SG_OK {
            panic!(
                "sg_dwt_plan_create(family {family}, member {member}, n {n}): {} {}",
                status_name(s),
                last_error()
            );
        }
        assert_eq!(last_error(), "");
        assert!(!p.is_null());
        Plan(p)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        sg_context_destroy(self.0);
    }
}

/// A DWT plan, destroyed on drop. Plans are documented as executable by several
/// threads at once.
pub struct Plan(pub *mut sg_dwt_plan);
unsafe impl Send for Plan {}
unsafe impl Sync for Plan {}

impl Drop for Plan {
    fn drop(&mut self) {
        sg_dwt_plan_destroy(self.0);
    }
}

/// The sample types of the C ABI, so that tests can be written once.
pub trait Real: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const NAME: &'static str;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn to_bits64(self) -> u64;
    fn execute(
        plan: &Plan,
        direction: i32,
        levels: u32,
        input: *const Self,
        output: *mut Self,
        n_traces: usize,
        stride: usize,
    ) -> sg_status;
    fn denoise(
        plan: &Plan,
        opts: *const sg_dwt_denoise_options,
        input: *const Self,
        output: *mut Self,
        n_traces: usize,
        stride: usize,
        thresholds: *mut f64,
    ) -> sg_status;
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    fn execute(
        plan: &Plan,
        direction: i32,
        levels: u32,
        input: *const f64,
        output: *mut f64,
        n_traces: usize,
        stride: usize,
    ) -> sg_status {
        sg_dwt_execute_f64(plan.0, direction, levels, input, output, n_traces, stride)
    }
    fn denoise(
        plan: &Plan,
        opts: *const sg_dwt_denoise_options,
        input: *const f64,
        output: *mut f64,
        n_traces: usize,
        stride: usize,
        thresholds: *mut f64,
    ) -> sg_status {
        sg_dwt_denoise_f64(plan.0, opts, input, output, n_traces, stride, thresholds)
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    fn execute(
        plan: &Plan,
        direction: i32,
        levels: u32,
        input: *const f32,
        output: *mut f32,
        n_traces: usize,
        stride: usize,
    ) -> sg_status {
        sg_dwt_execute_f32(plan.0, direction, levels, input, output, n_traces, stride)
    }
    fn denoise(
        plan: &Plan,
        opts: *const sg_dwt_denoise_options,
        input: *const f32,
        output: *mut f32,
        n_traces: usize,
        stride: usize,
        thresholds: *mut f64,
    ) -> sg_status {
        sg_dwt_denoise_f32(plan.0, opts, input, output, n_traces, stride, thresholds)
    }
}

/// SplitMix64: small, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c909)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [-1, 1).
    pub fn symmetric(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }

    /// Standard normal (Box–Muller).
    pub fn gauss(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    pub fn vec_symmetric(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.symmetric()).collect()
    }
}

/// max |a − b| / max |b| (max |a − b| when b is all zeros).
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let err = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    if scale > 0.0 {
        err / scale
    } else {
        err
    }
}

/// The wavelets GSL 2.7 provides, as (family, centered family, members).
pub const FAMILIES: &[(i32, i32, &[i32])] = &[
    (SG_WAVELET_HAAR, SG_WAVELET_HAAR_CENTERED, &[2]),
    (
        SG_WAVELET_DAUBECHIES,
        SG_WAVELET_DAUBECHIES_CENTERED,
        &[4, 6, 8, 10, 12, 14, 16, 18, 20],
    ),
    (
        SG_WAVELET_BSPLINE,
        SG_WAVELET_BSPLINE_CENTERED,
        &[103, 105, 202, 204, 206, 208, 301, 303, 305, 307, 309],
    ),
];

/// Every (family, member) pair, centered variants included.
pub fn all_wavelets() -> Vec<(i32, i32)> {
    let mut v = Vec::new();
    for &(fam, centered, members) in FAMILIES {
        for &m in members {
            v.push((fam, m));
            v.push((centered, m));
        }
    }
    v
}

pub fn family_name(f: i32) -> &'static str {
    match f {
        SG_WAVELET_DAUBECHIES => "daubechies",
        SG_WAVELET_DAUBECHIES_CENTERED => "daubechies_centered",
        SG_WAVELET_HAAR => "haar",
        SG_WAVELET_HAAR_CENTERED => "haar_centered",
        SG_WAVELET_BSPLINE => "bspline",
        SG_WAVELET_BSPLINE_CENTERED => "bspline_centered",
        _ => "?",
    }
}
