//! Device memory on a CPU context: the allocator hooks are refused (a CPU context holds no
//! device memory) with a message naming the call, one NULL hook is refused as an invalid
//! argument, the context's device bytes are 0 and every plan's workspace is 0 bytes (a
//! DWT plan's reserve does nothing); NULL
//! handles and outputs are refused with the outputs untouched.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::context::memory::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::xcorr::*;
use std::ffi::c_void;
use std::ptr;

const SENTINEL: usize = 0x5151;

unsafe extern "C" fn never_alloc(_: *mut c_void, _: usize, _: u64, _: *mut u64) -> i32 {
    panic!("a CPU context allocated device memory")
}

unsafe extern "C" fn never_free(_: *mut c_void, _: u64, _: usize, _: u64) {
    panic!("a CPU context freed device memory")
}

#[test]
fn allocator_hooks_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    let call = "sg_context_set_device_allocator";
    let (alloc, free): (sg_device_alloc_fn, sg_device_free_fn) =
        (Some(never_alloc), Some(never_free));
    let s = sg_context_set_device_allocator(ctx.0, alloc, free, ptr::null_mut());
    assert_eq!(s, SG_ERR_UNSUPPORTED, "{}", last_error());
    let m = last_error();
    assert!(m.contains(call) && m.contains("CPU"), "{m}");
    let s = sg_context_set_device_allocator(ctx.0, None, None, ptr::null_mut());
    assert_eq!(
        s,
        SG_ERR_UNSUPPORTED,
        "the default, on a CPU context: {}",
        last_error()
    );
    for (alloc, free) in [
        (Some(never_alloc as _), None),
        (None, Some(never_free as _)),
    ] {
        let s = sg_context_set_device_allocator(ctx.0, alloc, free, ptr::null_mut());
        assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "one hook NULL");
        assert!(last_error().contains("NULL"), "{}", last_error());
    }
    let s = sg_context_set_device_allocator(
        ptr::null_mut(),
        Some(never_alloc),
        Some(never_free),
        ptr::null_mut(),
    );
    assert_eq!(s, SG_ERR_NULL_POINTER);
}

#[test]
fn device_memory_of_a_cpu_context_is_zero() {
    let ctx = Ctx::cpu();
    let (mut in_use, mut peak) = (SENTINEL, SENTINEL);
    ok(sg_context_device_memory(ctx.0, &mut in_use, &mut peak));
    assert_eq!((in_use, peak), (0, 0));
    let (mut in_use, mut peak) = (SENTINEL, SENTINEL);
    let s = sg_context_device_memory(ptr::null(), &mut in_use, &mut peak);
    assert_eq!(s, SG_ERR_NULL_POINTER);
    let s = sg_context_device_memory(ctx.0, ptr::null_mut(), &mut peak);
    assert_eq!(s, SG_ERR_NULL_POINTER);
    assert!(last_error().contains("in_use"), "{}", last_error());
    let s = sg_context_device_memory(ctx.0, &mut in_use, ptr::null_mut());
    assert_eq!(s, SG_ERR_NULL_POINTER);
    assert!(last_error().contains("peak"), "{}", last_error());
    assert_eq!((in_use, peak), (SENTINEL, SENTINEL), "outputs untouched");
}

/// A CPU context holds no device memory, yet it answers what a wave-packet layout would hold
/// on a GPU (`sg_wavepacket_device_bytes`, its cap in `wavepacket_abi.rs`), the same each
/// time and more in double precision; a NULL context is refused with the output untouched.
#[test]
fn a_cpu_context_answers_the_wave_packets_device_bytes() {
    let ctx = Ctx::cpu();
    let shape = [48usize, 40];
    let query = |ctx, precision, bytes: &mut usize| {
        sg_wavepacket_device_bytes(ctx, 2, shape.as_ptr(), precision, ptr::null(), 0, bytes)
    };
    let (mut a, mut b, mut d) = (SENTINEL, SENTINEL, SENTINEL);
    ok(query(ctx.0, SG_WAVEPACKET_F32, &mut a));
    ok(query(ctx.0, SG_WAVEPACKET_F32, &mut b));
    ok(query(ctx.0, SG_WAVEPACKET_F64, &mut d));
    assert!(a == b && a > 48 * 40 * 8 && d > a, "{a} {b} {d}");
    let mut untouched = SENTINEL;
    assert_eq!(
        query(ptr::null_mut(), 1, &mut untouched),
        SG_ERR_NULL_POINTER
    );
    assert_eq!(untouched, SENTINEL);
}

/// `query(plan, bytes)` on a CPU plan gives 0; a NULL plan or output is refused untouched.
fn workspace_is_zero<P>(plan: *mut P, query: extern "C" fn(*const P, *mut usize) -> sg_status) {
    let mut bytes = SENTINEL;
    ok(query(plan, &mut bytes));
    assert_eq!(bytes, 0);
    let mut bytes = SENTINEL;
    assert_eq!(query(ptr::null(), &mut bytes), SG_ERR_NULL_POINTER);
    assert_eq!(bytes, SENTINEL);
    assert_eq!(query(plan, ptr::null_mut()), SG_ERR_NULL_POINTER);
    assert!(last_error().contains("bytes"), "{}", last_error());
}

#[test]
fn every_plan_holds_no_device_memory_on_a_cpu_context() {
    let ctx = Ctx::cpu();
    let mut dwt = ptr::null_mut();
    ok(sg_dwt_plan_create(ctx.0, SG_WAVELET_HAAR, 2, 64, &mut dwt));
    workspace_is_zero(dwt, sg_dwt_plan_workspace_bytes);
    // Reserving device room on a CPU context does nothing (host calls need none).
    ok(sg_dwt_plan_reserve(dwt, 1 << 20));
    workspace_is_zero(dwt, sg_dwt_plan_workspace_bytes);
    assert_eq!(sg_dwt_plan_reserve(ptr::null(), 8), SG_ERR_NULL_POINTER);
    assert!(last_error().contains("plan"), "{}", last_error());
    sg_dwt_plan_destroy(dwt);

    let mut usfft = ptr::null_mut();
    let modes = [16usize];
    ok(sg_usfft_plan_create(
        ctx.0,
        SG_USFFT_TYPE1,
        1,
        modes.as_ptr(),
        -1,
        1e-6,
        SG_USFFT_F32,
        1,
        ptr::null(),
        &mut usfft,
    ));
    workspace_is_zero(usfft, sg_usfft_plan_workspace_bytes);
    sg_usfft_plan_destroy(usfft);

    let mut fx = ptr::null_mut();
    let o = sg_fxdecon_options_default();
    ok(sg_fxdecon_plan_create_2d(ctx.0, &o, 64, 30, &mut fx));
    workspace_is_zero(fx, sg_fxdecon_plan_workspace_bytes);
    sg_fxdecon_plan_destroy(fx);

    let mut xcorr = ptr::null_mut();
    ok(sg_xcorr_plan_create(ctx.0, ptr::null(), &mut xcorr));
    workspace_is_zero(xcorr, sg_xcorr_plan_workspace_bytes);
    sg_xcorr_plan_destroy(xcorr);

    let mut emlog = ptr::null_mut();
    let a = [1.0, 0.5, 0.3, 1.0];
    let (sigma0, f0, f_exp, delta, searched) = ([1.0; 2], [1.0, 1.2], [1.05, 1.1], [0.05; 2], [0]);
    ok(sg_emlog_plan_create(
        ctx.0,
        2,
        2,
        a.as_ptr(),
        2,
        1,
        sigma0.as_ptr(),
        f0.as_ptr(),
        f_exp.as_ptr(),
        delta.as_ptr(),
        1,
        searched.as_ptr(),
        &mut emlog,
    ));
    workspace_is_zero(emlog, sg_emlog_plan_workspace_bytes);
    sg_emlog_plan_destroy(emlog);

    let mut layout = ptr::null_mut();
    let shape = [32usize, 24];
    ok(sg_wavepacket_layout_create(
        ctx.0,
        2,
        shape.as_ptr(),
        8,
        0,
        0.0,
        0.0,
        1e-6,
        SG_WAVEPACKET_F32,
        &mut layout,
    ));
    workspace_is_zero(layout, sg_wavepacket_layout_workspace_bytes);
    sg_wavepacket_layout_destroy(layout);

    let mut volume = ptr::null_mut();
    let (vol, tile) = ([80usize, 70], [48usize, 40]);
    let o = sg_wavepacket_layout_options_default();
    ok(sg_wavepacket_volume_create(
        ctx.0,
        2,
        vol.as_ptr(),
        tile.as_ptr(),
        SG_WAVEPACKET_F32,
        &o,
        &mut volume,
    ));
    workspace_is_zero(volume, sg_wavepacket_volume_workspace_bytes);
    sg_wavepacket_volume_destroy(volume);
}
