//! Every status path of the C ABI that a caller can reach on a CPU-only machine.
//!
//! Each failing call is checked for its status, for a last-error message that names the
//! offending argument, and for outputs left exactly as they were (sentinels, poisoned
//! arrays); each successful call for an empty message.
//!
//! Environment variables are process-global: the one test that sets them holds `ENV`
//! for writing, every test that creates a context holds it for reading.

use crate::common;

use common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::last_error::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::version::*;
use std::ffi::{c_char, CStr};
use std::ptr;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static ENV: RwLock<()> = RwLock::new(());

fn env_shared() -> RwLockReadGuard<'static, ()> {
    ENV.read().unwrap_or_else(|e| e.into_inner())
}

fn env_exclusive() -> RwLockWriteGuard<'static, ()> {
    ENV.write().unwrap_or_else(|e| e.into_inner())
}

/// Asserts a failure: the status, and a non-empty message that mentions each of `names`.
#[track_caller]
fn fails(s: sg_status, want: sg_status, names: &[&str]) {
    let msg = last_error();
    assert_eq!(
        status_name(s),
        status_name(want),
        "wrong status; message: {msg:?}"
    );
    assert!(!msg.is_empty(), "{} without a message", status_name(s));
    for name in names {
        assert!(
            msg.contains(name),
            "the message of {} does not mention `{name}`: {msg:?}",
            status_name(s)
        );
    }
}

/// Whether this machine exposes an NVIDIA GPU at all (judged without seisgpu).
fn gpu_present() -> bool {
    std::path::Path::new("/dev/nvidia0").exists() || std::path::Path::new("/dev/nvidiactl").exists()
}

/// A pointer value used as the sentinel of handle outputs; never dereferenced.
fn sentinel_handle<T>() -> *mut T {
    0x5151_usize as *mut T
}

#[test]
fn status_codes_and_names_are_the_abi() {
    let table = [
        (SG_OK, 0, "SG_OK"),
        (SG_ERR_INVALID_ARGUMENT, 1, "SG_ERR_INVALID_ARGUMENT"),
        (SG_ERR_NULL_POINTER, 2, "SG_ERR_NULL_POINTER"),
        (SG_ERR_UNSUPPORTED, 3, "SG_ERR_UNSUPPORTED"),
        (SG_ERR_OUT_OF_MEMORY, 4, "SG_ERR_OUT_OF_MEMORY"),
        (
            SG_ERR_DEVICE_OUT_OF_MEMORY,
            5,
            "SG_ERR_DEVICE_OUT_OF_MEMORY",
        ),
        (SG_ERR_CUDA_UNAVAILABLE, 6, "SG_ERR_CUDA_UNAVAILABLE"),
        (SG_ERR_CUDA_DRIVER, 7, "SG_ERR_CUDA_DRIVER"),
        (SG_ERR_KERNEL_COMPILE, 8, "SG_ERR_KERNEL_COMPILE"),
        (SG_ERR_NON_FINITE, 9, "SG_ERR_NON_FINITE"),
        (SG_ERR_BUFFER_TOO_SMALL, 10, "SG_ERR_BUFFER_TOO_SMALL"),
        (SG_ERR_INTERNAL, 11, "SG_ERR_INTERNAL"),
        (SG_ERR_CANCELLED, 12, "SG_ERR_CANCELLED"),
    ];
    for (code, value, name) in table {
        assert_eq!(code, value, "{name} changed value: the ABI broke");
        assert_eq!(status_name(code), name);
        // The same static string every time.
        assert_eq!(sg_status_string(code), sg_status_string(value));
    }
    for unknown in [-1, 13, 100, i32::MIN, i32::MAX] {
        assert_eq!(status_name(unknown), "unknown status", "code {unknown}");
    }
}

#[test]
fn version_matches_constants_and_header() {
    let s = unsafe { CStr::from_ptr(sg_version()) }.to_str().unwrap();
    assert_eq!(s, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        s,
        format!("{SG_VERSION_MAJOR}.{SG_VERSION_MINOR}.{SG_VERSION_PATCH}")
    );
    assert_eq!(
        sg_version_number(),
        SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH
    );
    // What a C caller compiles against.
    let header = std::fs::read_to_string("include/seisgpu.h").unwrap();
    let define = |name: &str| -> u32 {
        let line = header
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("header lacks {name}"));
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert_eq!(define("SG_VERSION_MAJOR"), SG_VERSION_MAJOR);
    assert_eq!(define("SG_VERSION_MINOR"), SG_VERSION_MINOR);
    assert_eq!(define("SG_VERSION_PATCH"), SG_VERSION_PATCH);
}

#[test]
fn destroy_null_is_a_no_op() {
    sg_context_destroy(ptr::null_mut());
    sg_dwt_plan_destroy(ptr::null_mut());
}

#[test]
fn context_create_errors() {
    let _env = env_shared();
    fails(
        sg_context_create(SG_BACKEND_CPU, 0, ptr::null_mut()),
        SG_ERR_NULL_POINTER,
        &["out"],
    );
    for backend in [-1, 3, 7, i32::MAX] {
        let mut out = sentinel_handle();
        fails(
            sg_context_create(backend, 0, &mut out),
            SG_ERR_INVALID_ARGUMENT,
            &["backend"],
        );
        assert_eq!(out, sentinel_handle(), "*out written on failure");
    }
    // A negative device ordinal, where a device is asked for.
    let mut out = sentinel_handle();
    fails(
        sg_context_create(SG_BACKEND_CUDA, -1, &mut out),
        SG_ERR_INVALID_ARGUMENT,
        &["device_ordinal"],
    );
    assert_eq!(out, sentinel_handle());
    // The CPU ignores it.
    let mut c = ptr::null_mut();
    ok(sg_context_create(SG_BACKEND_CPU, -1, &mut c));
    assert!(!c.is_null());
    sg_context_destroy(c);
}

#[test]
fn forcing_cuda_without_a_gpu_is_cuda_unavailable() {
    let _env = env_shared();
    if gpu_present() {
        eprintln!("an NVIDIA device node exists: skipping the no-GPU assertion");
        return;
    }
    for ordinal in [0, 3] {
        let mut out = sentinel_handle();
        fails(
            sg_context_create(SG_BACKEND_CUDA, ordinal, &mut out),
            SG_ERR_CUDA_UNAVAILABLE,
            &["CUDA"],
        );
        assert_eq!(out, sentinel_handle());
    }
}

#[test]
fn context_queries() {
    let _env = env_shared();
    let ctx = Ctx::cpu();
    // sg_context_backend.
    let mut b = -77;
    fails(
        sg_context_backend(ptr::null(), &mut b),
        SG_ERR_NULL_POINTER,
        &["ctx"],
    );
    assert_eq!(b, -77);
    fails(
        sg_context_backend(ctx.0, ptr::null_mut()),
        SG_ERR_NULL_POINTER,
        &["backend"],
    );
    ok(sg_context_backend(ctx.0, &mut b));
    assert_eq!(b, SG_BACKEND_CPU);

    // sg_context_describe: size query, too small, exact, NULL `needed`.
    let mut needed = 0usize;
    fails(
        sg_context_describe(ptr::null(), ptr::null_mut(), 0, &mut needed),
        SG_ERR_NULL_POINTER,
        &["ctx"],
    );
    assert_eq!(needed, 0);
    fails(
        sg_context_describe(ctx.0, ptr::null_mut(), 0, &mut needed),
        SG_ERR_BUFFER_TOO_SMALL,
        &["buffer", "needed"],
    );
    assert!(needed > 1, "needed = {needed}");
    let mut short = vec![b'#' as c_char; needed - 1];
    let mut needed2 = 0usize;
    fails(
        sg_context_describe(ctx.0, short.as_mut_ptr(), short.len(), &mut needed2),
        SG_ERR_BUFFER_TOO_SMALL,
        &["buffer", "needed"],
    );
    assert_eq!(needed2, needed);
    assert!(
        short.iter().all(|&c| c == b'#' as c_char),
        "a too-small buffer was written to"
    );
    let mut buf = vec![b'#' as c_char; needed + 3];
    let mut needed3 = 0usize;
    ok(sg_context_describe(
        ctx.0,
        buf.as_mut_ptr(),
        needed,
        &mut needed3,
    ));
    assert_eq!(needed3, needed);
    assert_eq!(buf[needed - 1], 0, "not NUL-terminated at needed - 1");
    assert!(buf[needed..].iter().all(|&c| c == b'#' as c_char));
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(text.len() + 1, needed);
    assert!(text.starts_with("backend: CPU"), "{text:?}");
    assert!(text.contains("threads"), "{text:?}");
    // `needed` may be NULL.
    let mut buf2 = vec![0 as c_char; needed];
    ok(sg_context_describe(
        ctx.0,
        buf2.as_mut_ptr(),
        needed,
        ptr::null_mut(),
    ));
    assert_eq!(buf2, buf[..needed]);
    // A NULL buffer with a length that would do.
    fails(
        sg_context_describe(ctx.0, ptr::null_mut(), 4096, ptr::null_mut()),
        SG_ERR_NULL_POINTER,
        &["buf"],
    );
}

#[test]
fn last_error_copy() {
    let _env = env_shared();
    let ctx = Ctx::cpu();
    let mut p = ptr::null_mut();
    fails(
        sg_dwt_plan_create(ctx.0, SG_WAVELET_HAAR, 2, 3, &mut p),
        SG_ERR_UNSUPPORTED,
        &["n_samples"],
    );
    let message = last_error();

    // Size query: NULL buffer, length 0.
    let mut needed = 0usize;
    assert_eq!(
        sg_last_error_copy(ptr::null_mut(), 0, &mut needed),
        SG_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(needed, message.len() + 1);
    assert_eq!(
        last_error(),
        message,
        "sg_last_error_copy changed the message"
    );

    // Too small by one: nothing written.
    let mut short = vec![b'#' as c_char; needed - 1];
    let mut needed2 = 0;
    assert_eq!(
        sg_last_error_copy(short.as_mut_ptr(), short.len(), &mut needed2),
        SG_ERR_BUFFER_TOO_SMALL
    );
    assert_eq!(needed2, needed);
    assert!(short.iter().all(|&c| c == b'#' as c_char));
    assert_eq!(last_error(), message);

    // NULL buffer with a non-zero length.
    assert_eq!(
        sg_last_error_copy(ptr::null_mut(), 1000, ptr::null_mut()),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(last_error(), message);

    // Exactly the size needed; `needed` may be NULL.
    let mut buf = vec![b'#' as c_char; needed];
    assert_eq!(
        sg_last_error_copy(buf.as_mut_ptr(), needed, ptr::null_mut()),
        SG_OK
    );
    let copy = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(copy, message);
    assert_eq!(
        last_error(),
        message,
        "a successful copy cleared the message"
    );

    // After a successful call the message is empty, and copies as "".
    ok(sg_dwt_plan_create(ctx.0, SG_WAVELET_HAAR, 2, 4, &mut p));
    sg_dwt_plan_destroy(p);
    let mut one = [b'#' as c_char; 1];
    let mut needed = 0;
    assert_eq!(sg_last_error_copy(one.as_mut_ptr(), 1, &mut needed), SG_OK);
    assert_eq!((one[0], needed), (0, 1));

    // The message is per thread: another thread's failure does not show here.
    std::thread::spawn(|| {
        fails(
            sg_context_create(99, 0, &mut ptr::null_mut()),
            SG_ERR_INVALID_ARGUMENT,
            &["backend"],
        );
    })
    .join()
    .unwrap();
    assert_eq!(last_error(), "");
}

#[test]
fn plan_create_errors() {
    let _env = env_shared();
    let ctx = Ctx::cpu();
    let create = |ctx: *const sg_context, fam: i32, member: i32, n: usize| {
        let mut out = sentinel_handle();
        let s = sg_dwt_plan_create(ctx, fam, member, n, &mut out);
        if s != SG_OK {
            assert_eq!(out, sentinel_handle(), "*out written on failure");
        } else {
            sg_dwt_plan_destroy(out);
        }
        s
    };
    fails(
        create(ptr::null(), SG_WAVELET_HAAR, 2, 8),
        SG_ERR_NULL_POINTER,
        &["ctx"],
    );
    fails(
        sg_dwt_plan_create(ctx.0, SG_WAVELET_HAAR, 2, 8, ptr::null_mut()),
        SG_ERR_NULL_POINTER,
        &["out"],
    );
    for fam in [0, 7, -1, i32::MIN] {
        fails(
            create(ctx.0, fam, 2, 8),
            SG_ERR_INVALID_ARGUMENT,
            &["family"],
        );
    }
    // Members: negative, or not in the family (GSL's numbering, centered alike).
    let wrong: &[(i32, &[i32])] = &[
        (SG_WAVELET_HAAR, &[0, 1, 3, 4, -2]),
        (SG_WAVELET_HAAR_CENTERED, &[4, 8]),
        (
            SG_WAVELET_DAUBECHIES,
            &[0, 2, 3, 5, 7, 22, 103, -4, i32::MIN],
        ),
        (SG_WAVELET_DAUBECHIES_CENTERED, &[2, 21, 22]),
        (
            SG_WAVELET_BSPLINE,
            &[0, 8, 101, 104, 201, 210, 302, 311, -103],
        ),
        (SG_WAVELET_BSPLINE_CENTERED, &[4, 102, 309 + 1000]),
    ];
    for &(fam, members) in wrong {
        for &m in members {
            fails(create(ctx.0, fam, m, 8), SG_ERR_UNSUPPORTED, &["member"]);
        }
    }
    // Lengths: not a power of two, or < 2.
    for n in [0usize, 1, 3, 6, 12, 1000, 1023, 1025, usize::MAX] {
        fails(
            create(ctx.0, SG_WAVELET_DAUBECHIES, 4, n),
            SG_ERR_UNSUPPORTED,
            &["n_samples"],
        );
    }
    // And every valid member at the shortest length, for contrast.
    for (fam, m) in all_wavelets() {
        ok(create(ctx.0, fam, m, 2));
    }
}

const N: usize = 16;

fn poisoned<T: Real>(len: usize) -> Vec<T> {
    vec![T::from_f64(-3.5e28); len]
}

fn same_bits<T: Real>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits64() == y.to_bits64())
}

fn execute_errors<T: Real>() {
    let ctx = Ctx::cpu();
    let plan = ctx.plan(SG_WAVELET_DAUBECHIES, 4, N);
    let mut rng = Rng::new(3);
    let n_traces = 3;
    let stride = N + 2;
    let len = (n_traces - 1) * stride + N;
    let input: Vec<T> = (0..len).map(|_| T::from_f64(rng.symmetric())).collect();
    let mut output = poisoned::<T>(len);
    let poison = output.clone();
    let (i, o) = (input.as_ptr(), output.as_mut_ptr());
    // Dropping it calls sg_dwt_plan_destroy(NULL): a no-op.
    let null_plan = Plan(ptr::null_mut());

    // Each failing call: status, message, output untouched.
    macro_rules! check {
        ($call:expr, $want:expr, $names:expr) => {{
            fails($call, $want, $names);
            assert!(same_bits(&output, &poison), "output written on failure");
        }};
    }
    check!(
        T::execute(&null_plan, SG_DWT_FORWARD, 0, i, o, n_traces, stride),
        SG_ERR_NULL_POINTER,
        &["plan"]
    );
    check!(
        T::execute(&plan, SG_DWT_FORWARD, 0, ptr::null(), o, n_traces, stride),
        SG_ERR_NULL_POINTER,
        &["input"]
    );
    check!(
        T::execute(
            &plan,
            SG_DWT_INVERSE,
            0,
            i,
            ptr::null_mut(),
            n_traces,
            stride
        ),
        SG_ERR_NULL_POINTER,
        &["output"]
    );
    check!(
        T::execute(&plan, SG_DWT_FORWARD, 0, i, o, 0, stride),
        SG_ERR_INVALID_ARGUMENT,
        &["n_traces"]
    );
    check!(
        T::execute(&plan, SG_DWT_FORWARD, 0, i, o, n_traces, N - 1),
        SG_ERR_INVALID_ARGUMENT,
        &["trace_stride"]
    );
    check!(
        T::execute(&plan, SG_DWT_FORWARD, 0, i, o, 1, 0),
        SG_ERR_INVALID_ARGUMENT,
        &["trace_stride"]
    );
    check!(
        T::execute(&plan, SG_DWT_FORWARD, 0, i, o, usize::MAX / 4, stride),
        SG_ERR_INVALID_ARGUMENT,
        &["stride", "overflow"]
    );
    for levels in [5, 6, 64, u32::MAX] {
        check!(
            T::execute(&plan, SG_DWT_FORWARD, levels, i, o, n_traces, stride),
            SG_ERR_INVALID_ARGUMENT,
            &["n_levels", &levels.to_string()]
        );
    }
    for dir in [0, 2, -2, i32::MAX] {
        check!(
            T::execute(&plan, dir, 0, i, o, n_traces, stride),
            SG_ERR_INVALID_ARGUMENT,
            &["direction", &dir.to_string()]
        );
    }

    // Non-finite input: refused, out of place and in place, nothing written.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for (t, s) in [(0, 0), (1, 7), (n_traces - 1, N - 1)] {
            let mut x = input.clone();
            x[t * stride + s] = T::from_f64(bad);
            for dir in [SG_DWT_FORWARD, SG_DWT_INVERSE] {
                check!(
                    T::execute(&plan, dir, 0, x.as_ptr(), o, n_traces, stride),
                    SG_ERR_NON_FINITE,
                    &["input", &format!("trace {t}"), &format!("sample {s}")]
                );
                let before = x.clone();
                let p = x.as_mut_ptr();
                fails(
                    T::execute(&plan, dir, 0, p, p, n_traces, stride),
                    SG_ERR_NON_FINITE,
                    &["input"],
                );
                assert!(same_bits(&x, &before), "in-place data changed on failure");
            }
        }
    }
    // A NaN in the gap between traces is not part of the input.
    let mut x = input.clone();
    x[N] = T::from_f64(f64::NAN);
    ok(T::execute(
        &plan,
        SG_DWT_FORWARD,
        0,
        x.as_ptr(),
        o,
        n_traces,
        stride,
    ));
    assert!(
        output[N].to_bits64() == poison[N].to_bits64(),
        "gap written"
    );
    output.copy_from_slice(&poison);

    // Overlapping input and output that are not the same array.
    let mut big: Vec<T> = (0..len + 8).map(|_| T::from_f64(rng.symmetric())).collect();
    let base = big.as_mut_ptr();
    for (in_off, out_off) in [(0usize, 1usize), (1, 0), (0, len - 1), (len - 1, 0), (3, 8)] {
        let before = big.clone();
        let (ip, op) = unsafe { (base.add(in_off) as *const T, base.add(out_off)) };
        fails(
            T::execute(&plan, SG_DWT_FORWARD, 0, ip, op, n_traces, stride),
            SG_ERR_INVALID_ARGUMENT,
            &["input", "output", "overlap"],
        );
        assert!(same_bits(&big, &before), "overlap refused but data changed");
    }
    // Adjacent but disjoint spans are fine (the check is not off by one).
    let mut adj: Vec<T> = (0..2 * len).map(|_| T::from_f64(rng.symmetric())).collect();
    let a = adj.as_mut_ptr();
    ok(T::execute(
        &plan,
        SG_DWT_FORWARD,
        0,
        a as *const T,
        unsafe { a.add(len) },
        n_traces,
        stride,
    ));
}

#[test]
fn execute_errors_f64() {
    let _env = env_shared();
    execute_errors::<f64>();
}

#[test]
fn execute_errors_f32() {
    let _env = env_shared();
    execute_errors::<f32>();
}

fn denoise_errors<T: Real>() {
    let ctx = Ctx::cpu();
    let plan = ctx.plan(SG_WAVELET_DAUBECHIES, 8, N);
    let levels = 4usize;
    let mut rng = Rng::new(11);
    let n_traces = 3;
    let stride = N + 1;
    let len = (n_traces - 1) * stride + N;
    let input: Vec<T> = (0..len).map(|_| T::from_f64(rng.symmetric())).collect();
    let mut output = poisoned::<T>(len);
    let poison = output.clone();
    let mut thr = vec![-1.25f64; n_traces * levels];
    let (i, o, th) = (input.as_ptr(), output.as_mut_ptr(), thr.as_mut_ptr());
    let def = sg_dwt_denoise_options_default();
    // Dropping it calls sg_dwt_plan_destroy(NULL): a no-op.
    let null_plan = Plan(ptr::null_mut());

    macro_rules! check {
        ($call:expr, $want:expr, $names:expr) => {{
            fails($call, $want, $names);
            assert!(same_bits(&output, &poison), "output written on failure");
            assert!(
                thr.iter().all(|&t| t == -1.25),
                "thresholds written on failure"
            );
        }};
    }
    check!(
        T::denoise(&null_plan, &def, i, o, n_traces, stride, th),
        SG_ERR_NULL_POINTER,
        &["plan"]
    );
    check!(
        T::denoise(&plan, &def, ptr::null(), o, n_traces, stride, th),
        SG_ERR_NULL_POINTER,
        &["input"]
    );
    check!(
        T::denoise(&plan, &def, i, ptr::null_mut(), n_traces, stride, th),
        SG_ERR_NULL_POINTER,
        &["output"]
    );
    check!(
        T::denoise(&plan, &def, i, o, 0, stride, th),
        SG_ERR_INVALID_ARGUMENT,
        &["n_traces"]
    );
    check!(
        T::denoise(&plan, &def, i, o, n_traces, N / 2, th),
        SG_ERR_INVALID_ARGUMENT,
        &["trace_stride"]
    );
    // Option codes.
    let with = |f: &dyn Fn(&mut sg_dwt_denoise_options)| {
        let mut o = sg_dwt_denoise_options_default();
        f(&mut o);
        o
    };
    for v in [-1, 2, 99] {
        let bad = with(&|o| o.threshold_rule = v);
        check!(
            T::denoise(&plan, &bad, i, o, n_traces, stride, th),
            SG_ERR_INVALID_ARGUMENT,
            &["threshold_rule"]
        );
        let bad = with(&|o| o.threshold_mode = v);
        check!(
            T::denoise(&plan, &bad, i, o, n_traces, stride, th),
            SG_ERR_INVALID_ARGUMENT,
            &["threshold_mode"]
        );
        let bad = with(&|o| o.noise_estimate = v);
        check!(
            T::denoise(&plan, &bad, i, o, n_traces, stride, th),
            SG_ERR_INVALID_ARGUMENT,
            &["noise_estimate"]
        );
    }
    for l in [5u32, 33, u32::MAX] {
        let bad = with(&|o| o.n_levels = l);
        check!(
            T::denoise(&plan, &bad, i, o, n_traces, stride, th),
            SG_ERR_INVALID_ARGUMENT,
            &["n_levels"]
        );
    }
    for t in [-1.0, -1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let bad = with(&|o| {
            o.threshold_rule = SG_THRESHOLD_FIXED;
            o.fixed_threshold = t;
        });
        check!(
            T::denoise(&plan, &bad, i, o, n_traces, stride, th),
            SG_ERR_INVALID_ARGUMENT,
            &["fixed_threshold"]
        );
    }
    // Non-finite input.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut x = input.clone();
        x[2 * stride + 5] = T::from_f64(bad);
        check!(
            T::denoise(&plan, &def, x.as_ptr(), o, n_traces, stride, th),
            SG_ERR_NON_FINITE,
            &["input", "trace 2", "sample 5"]
        );
        let before = x.clone();
        let p = x.as_mut_ptr();
        check!(
            T::denoise(&plan, ptr::null(), p, p, n_traces, stride, th),
            SG_ERR_NON_FINITE,
            &["input"]
        );
        assert!(same_bits(&x, &before));
    }
    // Partial overlap.
    let mut big: Vec<T> = (0..len + 4).map(|_| T::from_f64(rng.symmetric())).collect();
    let base = big.as_mut_ptr();
    let before = big.clone();
    check!(
        T::denoise(
            &plan,
            &def,
            base as *const T,
            unsafe { base.add(2) },
            n_traces,
            stride,
            th
        ),
        SG_ERR_INVALID_ARGUMENT,
        &["input", "output", "overlap"]
    );
    assert!(same_bits(&big, &before));

    // Successes, for contrast: a fixed threshold with a non-fixed rule is ignored;
    // -0.0 is a valid fixed threshold; NULL options are the defaults; NULL thresholds.
    let ignored = with(&|o| o.fixed_threshold = f64::NAN);
    ok(T::denoise(&plan, &ignored, i, o, n_traces, stride, th));
    let by_default = output.clone();
    let thr_default = thr.clone();
    assert!(thr_default.iter().all(|&t| t > 0.0), "{thr_default:?}");
    let mut out2 = poisoned::<T>(len);
    let mut thr2 = vec![0.0; n_traces * levels];
    ok(T::denoise(
        &plan,
        ptr::null(),
        i,
        out2.as_mut_ptr(),
        n_traces,
        stride,
        thr2.as_mut_ptr(),
    ));
    assert!(same_bits(&out2, &by_default), "NULL options ≠ defaults");
    assert_eq!(thr2, thr_default);
    let mut out3 = poisoned::<T>(len);
    ok(T::denoise(
        &plan,
        &def,
        i,
        out3.as_mut_ptr(),
        n_traces,
        stride,
        ptr::null_mut(),
    ));
    assert!(
        same_bits(&out3, &by_default),
        "NULL thresholds changed the result"
    );
    let zero = with(&|o| {
        o.threshold_rule = SG_THRESHOLD_FIXED;
        o.fixed_threshold = -0.0;
    });
    ok(T::denoise(
        &plan,
        &zero,
        i,
        out3.as_mut_ptr(),
        n_traces,
        stride,
        th,
    ));
}

#[test]
fn denoise_errors_f64() {
    let _env = env_shared();
    denoise_errors::<f64>();
}

#[test]
fn denoise_errors_f32() {
    let _env = env_shared();
    denoise_errors::<f32>();
}

#[test]
fn default_options() {
    let d = sg_dwt_denoise_options_default();
    assert_eq!(d.threshold_rule, SG_THRESHOLD_UNIVERSAL);
    assert_eq!(d.threshold_mode, SG_THRESHOLD_SOFT);
    assert_eq!(d.noise_estimate, SG_NOISE_FINEST_LEVEL);
    assert_eq!(d.n_levels, 0);
    assert_eq!(d.fixed_threshold, 0.0);
    assert_eq!(d.level_mask, u64::MAX);
}

#[test]
fn plans_outlive_their_context() {
    let _env = env_shared();
    let mut c = ptr::null_mut();
    ok(sg_context_create(SG_BACKEND_CPU, 0, &mut c));
    let mut p = ptr::null_mut();
    ok(sg_dwt_plan_create(c, SG_WAVELET_HAAR, 2, 4, &mut p));
    sg_context_destroy(c);
    let x = [1.0f64, 2.0, 3.0, 4.0];
    let mut y = [0.0f64; 4];
    ok(sg_dwt_execute_f64(
        p,
        SG_DWT_FORWARD,
        0,
        x.as_ptr(),
        y.as_mut_ptr(),
        1,
        4,
    ));
    assert!(
        (y[0] - 5.0).abs() < 1e-15 && (y[1] + 2.0).abs() < 1e-15,
        "{y:?}"
    );
    sg_dwt_plan_destroy(p);
}

/// All tests that set environment variables, in one test holding `ENV` exclusively.
#[test]
fn environment_overrides() {
    let _env = env_exclusive();
    let saved: Vec<(&str, Option<std::ffi::OsString>)> = ["SEISGPU_BACKEND", "SEISGPU_NUM_THREADS"]
        .iter()
        .map(|&k| (k, std::env::var_os(k)))
        .collect();
    let result = std::panic::catch_unwind(|| {
        std::env::remove_var("SEISGPU_NUM_THREADS");
        let create = |backend: i32| -> (sg_status, *mut sg_context) {
            let mut out = sentinel_handle();
            let s = sg_context_create(backend, 0, &mut out);
            (s, out)
        };
        let describe = |c: *mut sg_context| -> String {
            let mut buf = vec![0 as c_char; 4096];
            ok(sg_context_describe(
                c,
                buf.as_mut_ptr(),
                buf.len(),
                ptr::null_mut(),
            ));
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        };
        let backend_of = |c: *mut sg_context| {
            let mut b = -1;
            ok(sg_context_backend(c, &mut b));
            b
        };

        // SEISGPU_BACKEND=cpu forces the CPU under AUTO (any case, spaces trimmed).
        for v in ["cpu", " CPU "] {
            std::env::set_var("SEISGPU_BACKEND", v);
            let (s, c) = create(SG_BACKEND_AUTO);
            ok(s);
            assert_eq!(backend_of(c), SG_BACKEND_CPU);
            let d = describe(c);
            assert!(d.contains("SEISGPU_BACKEND"), "{d:?}");
            sg_context_destroy(c);
        }
        // An invalid value is an error under AUTO…
        for v in ["bogus", "cpux", "1"] {
            std::env::set_var("SEISGPU_BACKEND", v);
            let (s, c) = create(SG_BACKEND_AUTO);
            fails(s, SG_ERR_INVALID_ARGUMENT, &["SEISGPU_BACKEND", v]);
            assert_eq!(c, sentinel_handle());
            // …but an explicit choice is not second-guessed.
            let (s, c) = create(SG_BACKEND_CPU);
            ok(s);
            sg_context_destroy(c);
        }
        if !gpu_present() {
            // SEISGPU_BACKEND=cuda without a GPU: unavailable, and the message says who asked.
            std::env::set_var("SEISGPU_BACKEND", "cuda");
            let (s, c) = create(SG_BACKEND_AUTO);
            fails(s, SG_ERR_CUDA_UNAVAILABLE, &["SEISGPU_BACKEND"]);
            assert_eq!(c, sentinel_handle());
            // SEISGPU_BACKEND=cpu does not override an explicit CUDA request.
            std::env::set_var("SEISGPU_BACKEND", "cpu");
            let (s, c) = create(SG_BACKEND_CUDA);
            fails(s, SG_ERR_CUDA_UNAVAILABLE, &["CUDA"]);
            assert_eq!(c, sentinel_handle());
            // AUTO with nothing set falls back to the CPU and says why.
            std::env::remove_var("SEISGPU_BACKEND");
            let (s, c) = create(SG_BACKEND_AUTO);
            ok(s);
            assert_eq!(backend_of(c), SG_BACKEND_CPU);
            let d = describe(c);
            assert!(d.contains("automatically"), "{d:?}");
            sg_context_destroy(c);
        } else {
            eprintln!("an NVIDIA device node exists: skipping the no-GPU assertions");
        }
        std::env::remove_var("SEISGPU_BACKEND");

        // SEISGPU_NUM_THREADS sets the pool size; garbage is an error.
        std::env::set_var("SEISGPU_NUM_THREADS", "3");
        let (s, c) = create(SG_BACKEND_CPU);
        ok(s);
        let d = describe(c);
        assert!(d.contains("3 threads"), "{d:?}");
        sg_context_destroy(c);
        for v in ["abc", "-1", "2.5"] {
            std::env::set_var("SEISGPU_NUM_THREADS", v);
            let (s, c) = create(SG_BACKEND_CPU);
            fails(s, SG_ERR_INVALID_ARGUMENT, &["SEISGPU_NUM_THREADS"]);
            assert_eq!(c, sentinel_handle());
        }
    });
    for (k, v) in saved {
        match v {
            Some(v) => std::env::set_var(k, v),
            None => std::env::remove_var(k),
        }
    }
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
