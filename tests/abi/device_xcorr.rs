//! The correlation's device calls on a CPU context: refused with SG_ERR_UNSUPPORTED and a
//! message naming the call, nothing written (host outputs untouched); a NULL plan refused
//! with SG_ERR_NULL_POINTER.

use crate::xcorr_common::*;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::xcorr::device::*;
use std::ptr;

fn refused(s: sg_status, call: &str) {
    assert_eq!(s, SG_ERR_UNSUPPORTED, "{call} on a CPU context");
    let m = last_error();
    assert!(m.contains(call), "{m}");
}

#[test]
fn xcorr_device_calls_are_refused_on_a_cpu_context() {
    let ctx = Context::new(SG_BACKEND_CPU);
    let plan = ctx.plan(&small_options());
    let (n_sta, n) = (3, 1000);
    let data = synthetic(n_sta, n, 5);
    let day = plan.preprocess(&data, n_sta, n, None).unwrap();
    // Addresses that are never read: the context is refused first.
    let fake = 0x1000u64;
    let mut out = ptr::null_mut();
    let s = sg_xcorr_preprocess_device_f32(plan.0, fake, n_sta, n, n, 0, &mut out);
    refused(s, "sg_xcorr_preprocess_device_f32");
    assert!(out.is_null(), "no spectra handed out");
    let days = [day.0 as *const _];
    let mut counts = vec![7u32; 3];
    let s = sg_xcorr_correlate_device_f32(
        plan.0,
        days.as_ptr(),
        1,
        0,
        n_sta,
        0,
        n_sta,
        fake,
        plan.n_lags(),
        counts.as_mut_ptr(),
    );
    refused(s, "sg_xcorr_correlate_device_f32");
    assert_eq!(counts, vec![7; 3], "window counts untouched");
    let labels = vec![0i32; 100];
    let mut sub_counts = vec![7u32; 3];
    let s = sg_xcorr_correlate_substacks_device_f32(
        plan.0,
        days.as_ptr(),
        1,
        0,
        n_sta,
        0,
        n_sta,
        labels.as_ptr(),
        1,
        fake,
        plan.n_lags(),
        counts.as_mut_ptr(),
        fake + (1 << 20),
        sub_counts.as_mut_ptr(),
    );
    refused(s, "sg_xcorr_correlate_substacks_device_f32");
    assert_eq!((counts, sub_counts), (vec![7; 3], vec![7; 3]), "untouched");
}

#[test]
fn xcorr_device_calls_refuse_a_null_plan() {
    let mut out = ptr::null_mut();
    let s = sg_xcorr_preprocess_device_f32(ptr::null(), 0x1000, 1, 1000, 1000, 0, &mut out);
    assert_eq!(s, SG_ERR_NULL_POINTER);
    let s = sg_xcorr_correlate_device_f32(
        ptr::null(),
        ptr::null(),
        0,
        0,
        1,
        0,
        1,
        0x1000,
        101,
        ptr::null_mut(),
    );
    assert_eq!(s, SG_ERR_NULL_POINTER);
    let s = sg_xcorr_correlate_substacks_device_f32(
        ptr::null(),
        ptr::null(),
        0,
        0,
        1,
        0,
        1,
        ptr::null(),
        1,
        0x1000,
        101,
        ptr::null_mut(),
        0x2000,
        ptr::null_mut(),
    );
    assert_eq!(s, SG_ERR_NULL_POINTER);
}
