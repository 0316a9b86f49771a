//! Contexts, the last-error copy, status names and versions.

use super::{handle_slot, sentinel, Faults, Fuzz, Snapshot, Target};
use seisgpu::ffi::context::*;
use seisgpu::ffi::last_error::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::version::*;
use std::ffi::{c_char, CStr};
use std::ptr;

struct Contexts;

pub fn target() -> Box<dyn Target> {
    Box::new(Contexts)
}

/// A string buffer length around `needed`: too short, exact, longer, or 0.
fn length(f: &mut Fuzz, needed: usize) -> usize {
    match f.rng.range(0, 3) {
        0 => 0,
        1 => f.rng.range(0, needed.saturating_sub(1)),
        2 => needed,
        _ => needed + f.rng.range(1, 64),
    }
}

impl Target for Contexts {
    fn step(&mut self, f: &mut Fuzz) {
        match f.rng.range(0, 5) {
            0 => create(f),
            1 => backend(f),
            2 => describe(f),
            3 => last_error_copy(f),
            _ => names(f),
        }
    }
}

fn create(f: &mut Fuzz) {
    let mut k = Faults::default();
    // CPU contexts only: a CUDA one per call would spend the fuzzer's time on NVRTC.
    let backend = if f.rng.chance(0.5) {
        k.plant("backend");
        f.rng
            .bad_enum(&[SG_BACKEND_AUTO, SG_BACKEND_CPU, SG_BACKEND_CUDA])
    } else {
        SG_BACKEND_CPU
    };
    let device = if f.rng.chance(0.2) {
        f.rng.next() as i32
    } else {
        0
    };
    let mut out: *mut sg_context = std::ptr::null_mut();
    let out_p = handle_slot(f, &mut k, &mut out, 0.2);
    let snap = Snapshot::of("out", &out, 1);
    f.announce("sg_context_create", || format!("{backend}, {device}"));
    let s = sg_context_create(backend, device, out_p);
    f.check("sg_context_create", s, &k, &[snap]);
    if s == SG_OK {
        sg_context_destroy(out);
    }
}

fn backend(f: &mut Fuzz) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let mut b = -7i32;
    let bp: *mut i32 = if f.rng.chance(0.1) {
        k.plant("backend");
        ptr::null_mut()
    } else {
        &mut b
    };
    let snap = Snapshot::of("backend", &b, 1);
    f.announce("sg_context_backend", String::new);
    let s = sg_context_backend(ctx, bp);
    f.check("sg_context_backend", s, &k, &[snap]);
    if s == SG_OK && b != SG_BACKEND_CPU && b != SG_BACKEND_CUDA {
        f.stats.findings.push(format!("{}: backend {b}", f.origin));
    }
}

fn describe(f: &mut Fuzz) {
    let mut k = Faults::default();
    let ctx = f.ctx_or_null(&mut k);
    let mut needed = 0usize;
    // SAFETY (both): the fuzzer's context, alive for the whole batch.
    sg_context_describe(f.ctx, ptr::null_mut(), 0, &mut needed);
    let len = length(f, needed);
    let mut buf: Vec<c_char> = sentinel(len.max(1));
    let bp = if len == 0 || f.rng.chance(0.1) {
        ptr::null_mut()
    } else {
        buf.as_mut_ptr()
    };
    if len < needed {
        k.plant("buffer");
    }
    if bp.is_null() && len > 0 {
        k.plant("`buf`");
    }
    let snap = Snapshot::of_slice("buf", &buf);
    f.announce("sg_context_describe", || format!("len {len}"));
    let s = sg_context_describe(ctx, bp, len, &mut needed);
    f.check("sg_context_describe", s, &k, &[snap]);
}

fn last_error_copy(f: &mut Fuzz) {
    // A failure first, so that there is a message to copy.
    let code = f.rng.bad_enum(&[0, 1, 2]);
    let mut unused = ptr::null_mut();
    sg_context_create(code, 0, &mut unused);
    let want = super::last_error();
    let needed = want.len() + 1;
    let len = length(f, needed);
    let mut buf: Vec<c_char> = sentinel(len.max(1));
    let bp = if len == 0 {
        ptr::null_mut()
    } else {
        buf.as_mut_ptr()
    };
    let snap = Snapshot::of_slice("buf", &buf);
    let mut got_needed = 0usize;
    f.announce("sg_last_error_copy", || format!("len {len}"));
    let s = sg_last_error_copy(bp, len, &mut got_needed);
    // This call keeps the message it copies: check it by hand, not with `check`.
    *f.stats.calls.entry(("sg_last_error_copy", s)).or_default() += 1;
    let mut finding = |w: String| f.stats.findings.push(format!("sg_last_error_copy: {w}"));
    if got_needed != needed {
        finding(format!("needed {got_needed}, expected {needed}"));
    }
    if super::last_error() != want {
        finding("changed the message".into());
    }
    match (len >= needed, s) {
        (true, SG_OK) => {
            // SAFETY: NUL-terminated on success.
            let copied = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
            if copied != want {
                finding(format!("copied {copied:?}, expected {want:?}"));
            }
        }
        (false, SG_ERR_BUFFER_TOO_SMALL) if snap.intact() => {}
        _ => finding(format!("len {len}, needed {needed}: status {s}")),
    }
}

fn names(f: &mut Fuzz) {
    let code = if f.rng.chance(0.5) {
        f.rng.range(0, 11) as i32
    } else {
        f.rng.next() as i32
    };
    f.announce("sg_status_string", || format!("{code}"));
    // SAFETY: documented as static NUL-terminated strings, never NULL.
    let name = unsafe { CStr::from_ptr(sg_status_string(code)) };
    let version = unsafe { CStr::from_ptr(sg_version()) };
    *f.stats.calls.entry(("sg_status_string", 0)).or_default() += 1;
    let known = (0..=11).contains(&code);
    if known == (name.to_bytes() == b"unknown status") || version.to_bytes().is_empty() {
        f.stats
            .findings
            .push(format!("sg_status_string({code}) = {name:?}"));
    }
    if sg_version_number() != SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH {
        f.stats.findings.push("sg_version_number".into());
    }
}
