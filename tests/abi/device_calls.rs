//! The device calls on a CPU context: each returns SG_ERR_UNSUPPORTED with a message naming
//! it, writes nothing, and refuses a NULL plan; every `_device_` function of the header is
//! exercised by one of the `device_*` modules (this one and its siblings).

use seisgpu::ffi::context::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::last_error::sg_last_error_message;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;
use std::ffi::CStr;
use std::ptr;

pub fn message() -> String {
    // SAFETY: documented as a valid NUL-terminated string.
    unsafe { CStr::from_ptr(sg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// A CPU context, destroyed on drop.
pub struct Cpu(pub *mut sg_context);
impl Drop for Cpu {
    fn drop(&mut self) {
        sg_context_destroy(self.0);
    }
}

pub fn cpu() -> Cpu {
    let mut c = ptr::null_mut();
    assert_eq!(sg_context_create(SG_BACKEND_CPU, 0, &mut c), SG_OK);
    Cpu(c)
}

/// `status` is SG_ERR_UNSUPPORTED and the message names `call` and the CPU.
pub fn unsupported(call: &str, status: sg_status) {
    assert_eq!(status, SG_ERR_UNSUPPORTED, "{call}: {}", message());
    let m = message();
    assert!(m.contains(call) && m.contains("CPU"), "{call}: {m}");
}

/// Device addresses that would fault if anything touched them.
const A: u64 = 0xdead_0000;
const B: u64 = 0xbeef_0000;

#[test]
fn context_stream_calls_on_the_cpu() {
    let c = cpu();
    unsupported("sg_context_set_stream", sg_context_set_stream(c.0, 0));
    assert_eq!(sg_context_synchronize(c.0), SG_OK, "nothing to wait for");
    assert_eq!(
        sg_context_set_stream(ptr::null_mut(), 0),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(sg_context_synchronize(ptr::null()), SG_ERR_NULL_POINTER);
    let checks = "sg_context_set_device_checks";
    unsupported(
        checks,
        sg_context_set_device_checks(c.0, SG_DEVICE_CHECKS_FINITE),
    );
    let s = sg_context_set_device_checks(c.0, 7);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "an unknown value");
    assert!(message().contains("checks is 7"), "{}", message());
    let s = sg_context_set_device_checks(ptr::null_mut(), SG_DEVICE_CHECKS_OFF);
    assert_eq!(s, SG_ERR_NULL_POINTER);
}

/// A library context on an application's CUDA context: 0 and a NULL `out` refused, `out`
/// untouched; without CUDA (the library's own choice on this machine is the CPU), any
/// handle is refused as unavailable before the driver is asked about it.
#[test]
fn a_context_on_the_application_cuda_context_checks_its_arguments() {
    let sentinel = 0x5eed as *mut sg_context;
    let mut out = sentinel;
    let s = sg_context_create_on_cuda_context(0, &mut out);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT);
    assert!(message().contains("cu_context is 0"), "{}", message());
    assert_eq!(out, sentinel, "out written on failure");
    let s = sg_context_create_on_cuda_context(A, ptr::null_mut());
    assert_eq!(s, SG_ERR_NULL_POINTER);
    let mut auto = ptr::null_mut();
    assert_eq!(sg_context_create(SG_BACKEND_AUTO, 0, &mut auto), SG_OK);
    let mut backend = -1;
    assert_eq!(sg_context_backend(auto, &mut backend), SG_OK);
    sg_context_destroy(auto);
    if backend == SG_BACKEND_CPU && std::env::var_os("SEISGPU_BACKEND").is_none() {
        let s = sg_context_create_on_cuda_context(A, &mut out);
        assert_eq!(s, SG_ERR_CUDA_UNAVAILABLE, "{}", message());
        assert_eq!(out, sentinel, "out written on failure");
    }
}

#[test]
fn dwt_device_calls_on_the_cpu() {
    let c = cpu();
    let mut p = ptr::null_mut();
    assert_eq!(
        sg_dwt_plan_create(c.0, SG_WAVELET_HAAR, 2, 64, &mut p),
        SG_OK
    );
    let call = "sg_dwt_execute_device";
    unsupported(
        call,
        sg_dwt_execute_device_f32(p, SG_DWT_FORWARD, 0, A, B, 4, 64),
    );
    unsupported(
        call,
        sg_dwt_execute_device_f64(p, SG_DWT_FORWARD, 0, A, B, 4, 64),
    );
    let mut t = vec![-1f64; 24];
    let o = sg_dwt_denoise_options_default();
    let call = "sg_dwt_denoise_device";
    let s = sg_dwt_denoise_device_f32(p, &o, A, B, 4, 64, t.as_mut_ptr());
    unsupported(call, s);
    let s = sg_dwt_denoise_device_f64(p, &o, A, B, 4, 64, t.as_mut_ptr());
    unsupported(call, s);
    assert!(t.iter().all(|&v| v == -1.0), "thresholds written");
    let s = sg_dwt_execute_device_f32(ptr::null(), SG_DWT_FORWARD, 0, A, B, 4, 64);
    assert_eq!(s, SG_ERR_NULL_POINTER);
    sg_dwt_plan_destroy(p);
}

#[test]
fn usfft_device_calls_on_the_cpu() {
    let c = cpu();
    let mut p = ptr::null_mut();
    let modes = [16usize];
    let s = sg_usfft_plan_create(
        c.0,
        SG_USFFT_TYPE1,
        1,
        modes.as_ptr(),
        -1,
        1e-6,
        SG_USFFT_F32,
        1,
        ptr::null(),
        &mut p,
    );
    assert_eq!(s, SG_OK, "{}", message());
    let call = "sg_usfft_set_points_device";
    unsupported(call, sg_usfft_set_points_device_f32(p, 10, A, 0, 0));
    let s = sg_usfft_set_points_device_f64(p, 10, A, 0, 0);
    assert_eq!(
        s,
        SG_ERR_INVALID_ARGUMENT,
        "a single-precision plan: {}",
        message()
    );
    let x = [0.5f32; 10];
    assert_eq!(
        sg_usfft_set_points_f32(p, 10, x.as_ptr(), ptr::null(), ptr::null()),
        SG_OK
    );
    unsupported(
        "sg_usfft_execute_device",
        sg_usfft_execute_device_f32(p, A, B),
    );
    let s = sg_usfft_execute_device_f64(p, A, B);
    assert_eq!(
        s,
        SG_ERR_INVALID_ARGUMENT,
        "a single-precision plan: {}",
        message()
    );
    assert_eq!(
        sg_usfft_execute_device_f32(ptr::null(), A, B),
        SG_ERR_NULL_POINTER
    );
    sg_usfft_plan_destroy(p);
}

/// Every `sg_*_device_*` function the header declares is called by name in a `device_*`
/// module of this test executable.
#[test]
fn every_device_call_is_tested() {
    let root = env!("CARGO_MANIFEST_DIR");
    let header = std::fs::read_to_string(format!("{root}/include/seisgpu.h")).unwrap();
    let mut tests = String::new();
    for e in std::fs::read_dir(format!("{root}/tests/abi")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("device_") && name.ends_with(".rs") {
            tests += &std::fs::read_to_string(&path).unwrap();
        }
    }
    let calls: Vec<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("sg_") && w.contains("_device_"))
        .collect();
    assert!(calls.len() >= 8, "the header's device calls: {calls:?}");
    let missing: Vec<_> = calls.iter().filter(|c| !tests.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "device calls no tests/abi/device_*.rs calls: {missing:?}"
    );
}
