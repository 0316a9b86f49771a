//! The EM-logging device calls on a CPU context: each refused with SG_ERR_UNSUPPORTED and
//! a message naming the call, nothing written; a NULL plan or result refused first.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::emlog::device::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::status::*;
use std::ptr;

/// Addresses the calls must refuse before using: never dereferenced.
const DEVICE_ADDR: u64 = 0x7f00_0000_1000;
const SENTINEL: usize = 0x5151;

/// A 4 × 3 problem searching columns 0 and 2, on `ctx`.
fn plan(ctx: &Ctx) -> *mut sg_emlog_plan {
    let a = [1.0, 0.5, 0.2, 0.3, 1.0, 0.4, 0.1, 0.2, 1.0, 0.6, 0.3, 0.8];
    let sigma0 = [1.0, 1.0, 1.0];
    let f0 = [1.0, 1.2, 0.9, 1.1];
    let f_exp = [1.05, 1.15, 0.95, 1.1];
    let delta = [0.05; 4];
    let searched = [0, 2];
    let mut p = ptr::null_mut();
    ok(sg_emlog_plan_create(
        ctx.0,
        4,
        3,
        a.as_ptr(),
        3,
        1,
        sigma0.as_ptr(),
        f0.as_ptr(),
        f_exp.as_ptr(),
        delta.as_ptr(),
        2,
        searched.as_ptr(),
        &mut p,
    ));
    p
}

fn search_args() -> ([i32; 2], [usize; 2], [f64; 2], [f64; 2]) {
    let kinds = [SG_EMLOG_AXIS_LINEAR; 2];
    ([kinds[0], kinds[1]], [9, 7], [0.0, 0.0], [2.0, 2.0])
}

fn unsupported(s: sg_status, call: &str) {
    assert_eq!(s, SG_ERR_UNSUPPORTED, "{call}: {}", last_error());
    let m = last_error();
    assert!(m.contains(call), "{call}: {m}");
}

#[test]
fn emlog_device_plan_and_search_are_unsupported_on_the_cpu() {
    let ctx = Ctx::cpu();
    let searched = [0, 2];
    let mut out: *mut sg_emlog_plan = SENTINEL as *mut _;
    let d = DEVICE_ADDR;
    let s = sg_emlog_plan_create_device(
        ctx.0,
        4,
        3,
        d,
        3,
        1,
        d,
        d,
        d,
        d,
        2,
        searched.as_ptr(),
        &mut out,
    );
    unsupported(s, "sg_emlog_plan_create_device");
    assert_eq!(out as usize, SENTINEL, "plan written on failure");

    let p = plan(&ctx);
    let (kinds, counts, lo, hi) = search_args();
    let mut r: *mut sg_emlog_result = SENTINEL as *mut _;
    let search = |plan: *const sg_emlog_plan, r: &mut *mut sg_emlog_result| {
        sg_emlog_search_device(
            plan,
            kinds.as_ptr(),
            counts.as_ptr(),
            lo.as_ptr(),
            hi.as_ptr(),
            ptr::null(),
            0,
            0,
            ptr::null(),
            ptr::null(),
            r,
        )
    };
    unsupported(search(p, &mut r), "sg_emlog_search_device");
    assert_eq!(r as usize, SENTINEL, "result written on failure");
    assert_eq!(search(ptr::null(), &mut r), SG_ERR_NULL_POINTER);
    assert_eq!(r as usize, SENTINEL, "result written on failure");
    sg_emlog_plan_destroy(p);
}

#[test]
fn emlog_device_result_calls_are_unsupported_on_the_cpu() {
    let ctx = Ctx::cpu();
    let p = plan(&ctx);
    let (kinds, counts, lo, hi) = search_args();
    let pairs = [0, 1];
    let opts = sg_emlog_options {
        criterion: SG_EMLOG_MAX_MISFIT,
        level: 50.0,
        max_models: 3,
        ..sg_emlog_options_default()
    };
    let mut r = ptr::null_mut();
    ok(sg_emlog_search(
        p,
        kinds.as_ptr(),
        counts.as_ptr(),
        lo.as_ptr(),
        hi.as_ptr(),
        ptr::null(),
        0,
        1,
        pairs.as_ptr(),
        &opts,
        &mut r,
    ));
    let mut listed = [0u64; 3];
    let mut values = [0f64; 6];
    ok(sg_emlog_result_models(
        r,
        listed.as_mut_ptr(),
        values.as_mut_ptr(),
        3,
    ));
    assert!(listed.iter().any(|&i| i != 0), "the search lists models");
    let d = DEVICE_ADDR;
    let calls: [(&str, &dyn Fn(*const sg_emlog_result) -> sg_status); 3] = [
        ("sg_emlog_result_marginal_device", &|r| {
            sg_emlog_result_marginal_device(r, 0, d, 9)
        }),
        ("sg_emlog_result_pair_device", &|r| {
            sg_emlog_result_pair_device(r, 0, d, 63)
        }),
        ("sg_emlog_result_models_device", &|r| {
            sg_emlog_result_models_device(r, d, d + 64, 3)
        }),
    ];
    for (name, call) in calls {
        unsupported(call(r), name);
        assert_eq!(call(ptr::null()), SG_ERR_NULL_POINTER, "{name} of NULL");
    }
    sg_emlog_result_destroy(r);
    sg_emlog_plan_destroy(p);
}
