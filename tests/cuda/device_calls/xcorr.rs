//! `sg_xcorr_preprocess_device_f32`, `sg_xcorr_correlate_device_f32` and
//! `sg_xcorr_correlate_substacks_device_f32` against the host calls on the same context:
//! spectra, window flags, stacks, substacks and counts bit for bit, for linear, phase-
//! weighted and robust stacks and the coherency and deconvolution methods, with strided
//! station-days, a gap mask, strided output rows (the gaps between rows untouched) and an
//! empty substack group.

use super::*;
use crate::xcorr_common::{small_options, synthetic};
use seisgpu::ffi::xcorr::device::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;

const N_STA: usize = 6;
const N: usize = 1000;
const STRIDE: usize = 1010;
/// Row stride of the outputs: 3 floats between rows that no call writes.
const GAP: usize = 3;
const SENTINEL: f32 = -7.25;

fn plan(g: &Gpu, stack_method: i32, cc_method: i32) -> *mut sg_xcorr_plan {
    let o = sg_xcorr_options {
        stack_method,
        cc_method,
        ..small_options()
    };
    let mut p = ptr::null_mut();
    assert_eq!(
        sg_xcorr_plan_create(g.ctx, &o, &mut p),
        SG_OK,
        "{}",
        message()
    );
    p
}

/// Strided station-days and a mask with a gap in station 2.
fn inputs() -> (Vec<f32>, Vec<u8>) {
    let dense = synthetic(N_STA, N, 11);
    let mut days = vec![0f32; N_STA * STRIDE];
    let mut valid = vec![1u8; N_STA * STRIDE];
    for s in 0..N_STA {
        days[s * STRIDE..][..N].copy_from_slice(&dense[s * N..][..N]);
    }
    valid[2 * STRIDE + 430..2 * STRIDE + 470].fill(0);
    (days, valid)
}

/// Values and kept flags of spectra, as bits.
pub(super) fn spectra_bits(s: *const sg_xcorr_spectra) -> (Vec<u64>, Vec<u8>) {
    let (mut ns, mut nw, mut bl) = (0, 0, 0);
    let st = sg_xcorr_spectra_sizes(
        s,
        &mut ns,
        &mut nw,
        ptr::null_mut(),
        &mut bl,
        ptr::null_mut(),
    );
    assert_eq!(st, SG_OK, "{}", message());
    let mut values = vec![0f32; 2 * bl * ns * nw];
    let mut kept = vec![9u8; ns * nw];
    let st = sg_xcorr_spectra_copy(s, values.as_mut_ptr(), kept.as_mut_ptr());
    assert_eq!(st, SG_OK, "{}", message());
    (bits(&values), kept)
}

fn preprocess_both(
    g: &Gpu,
    p: *mut sg_xcorr_plan,
) -> (*mut sg_xcorr_spectra, *mut sg_xcorr_spectra) {
    let (days, valid) = inputs();
    let mut host = ptr::null_mut();
    let s = sg_xcorr_preprocess_f32(
        p,
        days.as_ptr(),
        N_STA,
        N,
        STRIDE,
        valid.as_ptr(),
        &mut host,
    );
    assert_eq!(s, SG_OK, "{}", message());
    let (d_days, d_valid) = (g.upload(&days), g.upload(&valid));
    let want = spectra_bits(host);
    let mut dev = ptr::null_mut();
    five_times_equal("xcorr preprocess", || {
        sg_xcorr_spectra_destroy(dev);
        let s = sg_xcorr_preprocess_device_f32(
            p,
            d_days.addr(),
            N_STA,
            N,
            STRIDE,
            d_valid.addr(),
            &mut dev,
        );
        assert_eq!(s, SG_OK, "{}", message());
        let got = spectra_bits(dev);
        assert!(got == want, "device spectra differ from the host call's");
        got.0
    });
    let need = (N_STA - 1) * STRIDE + N;
    check_refusals("station_days", days.as_ptr() as u64, &d_days, need, |a| {
        let mut out = ptr::null_mut();
        sg_xcorr_preprocess_device_f32(p, a, N_STA, N, STRIDE, 0, &mut out)
    });
    (host, dev)
}

/// Host rows (`stride` floats apart, `rows` of them) beside the device call's.
fn rows_equal(what: &str, host: &[f32], dev: &[f32], n_lags: usize) {
    let stride = n_lags + GAP;
    for (r, row) in dev.chunks(stride).enumerate() {
        let (h, d) = (&host[r * n_lags..][..n_lags], &row[..n_lags.min(row.len())]);
        assert!(
            bits(h) == bits(d),
            "{what}: row {r} differs from the host call"
        );
        assert!(
            row[n_lags..].iter().all(|&v| v == SENTINEL),
            "{what}: gap written"
        );
    }
}

pub(super) fn n_lags(p: *mut sg_xcorr_plan) -> usize {
    let mut l = 0;
    assert_eq!(sg_xcorr_plan_sizes(p, N, ptr::null_mut(), &mut l), SG_OK);
    l
}

fn correlate_both(
    g: &Gpu,
    p: *mut sg_xcorr_plan,
    host: *const sg_xcorr_spectra,
    dev: *const sg_xcorr_spectra,
) {
    let m = n_lags(p);
    let pairs = N_STA * (N_STA - 1) / 2;
    let mut h_out = vec![0f32; pairs * m];
    let mut h_counts = vec![0u32; pairs];
    let days = [host];
    let s = sg_xcorr_correlate_f32(
        p,
        days.as_ptr(),
        1,
        0,
        N_STA,
        0,
        N_STA,
        h_out.as_mut_ptr(),
        m,
        h_counts.as_mut_ptr(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    let span = (pairs - 1) * (m + GAP) + m;
    let out = g.upload(&vec![SENTINEL; span + GAP]);
    let days = [dev];
    five_times_equal("xcorr correlate", || {
        let mut counts = vec![0u32; pairs];
        let s = sg_xcorr_correlate_device_f32(
            p,
            days.as_ptr(),
            1,
            0,
            N_STA,
            0,
            N_STA,
            out.addr(),
            m + GAP,
            counts.as_mut_ptr(),
        );
        assert_eq!(s, SG_OK, "{}", message());
        assert_eq!(counts, h_counts, "window counts");
        let got = g.download(&out);
        rows_equal("stacks", &h_out, &got[..span + GAP], m);
        bits(&got)
    });
    check_refusals("stacks", h_out.as_ptr() as u64, &out, span, |a| {
        sg_xcorr_correlate_device_f32(
            p,
            days.as_ptr(),
            1,
            0,
            N_STA,
            0,
            N_STA,
            a,
            m + GAP,
            ptr::null_mut(),
        )
    });
    substacks_both(g, p, host, dev);
}

/// Three groups: windows 0–2 in group 0, the others in group 1 but the last (no group);
/// group 2 has no windows (its rows are zeros).
fn substacks_both(
    g: &Gpu,
    p: *mut sg_xcorr_plan,
    host: *const sg_xcorr_spectra,
    dev: *const sg_xcorr_spectra,
) {
    let (m, pairs) = (n_lags(p), N_STA * (N_STA - 1) / 2);
    let mut nw = 0;
    assert_eq!(sg_xcorr_plan_sizes(p, N, &mut nw, ptr::null_mut()), SG_OK);
    let labels: Vec<i32> = (0..nw)
        .map(|w| {
            if w < 3 {
                0
            } else if w + 1 < nw {
                1
            } else {
                -1
            }
        })
        .collect();
    let ng = 3;
    let (mut ha, mut hs) = (vec![0f32; pairs * m], vec![0f32; ng * pairs * m]);
    let (mut hac, mut hsc) = (vec![0u32; pairs], vec![0u32; ng * pairs]);
    let days = [host];
    let s = sg_xcorr_correlate_substacks_f32(
        p,
        days.as_ptr(),
        1,
        0,
        N_STA,
        0,
        N_STA,
        labels.as_ptr(),
        ng,
        ha.as_mut_ptr(),
        m,
        hac.as_mut_ptr(),
        hs.as_mut_ptr(),
        hsc.as_mut_ptr(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    let stride = m + GAP;
    let all = g.upload(&vec![SENTINEL; pairs * stride]);
    let sub = g.upload(&vec![SENTINEL; ng * pairs * stride]);
    let days = [dev];
    five_times_equal("xcorr substacks", || {
        let (mut ac, mut sc) = (vec![0u32; pairs], vec![0u32; ng * pairs]);
        let s = sg_xcorr_correlate_substacks_device_f32(
            p,
            days.as_ptr(),
            1,
            0,
            N_STA,
            0,
            N_STA,
            labels.as_ptr(),
            ng,
            all.addr(),
            stride,
            ac.as_mut_ptr(),
            sub.addr(),
            sc.as_mut_ptr(),
        );
        assert_eq!(s, SG_OK, "{}", message());
        assert_eq!((ac, sc), (hac.clone(), hsc.clone()), "window counts");
        let (a, s) = (g.download(&all), g.download(&sub));
        rows_equal("stacks", &ha, &a, m);
        rows_equal("substacks", &hs, &s, m);
        [bits(&a), bits(&s)].concat()
    });
    let s = sg_xcorr_correlate_substacks_device_f32(
        p,
        days.as_ptr(),
        1,
        0,
        N_STA,
        0,
        N_STA,
        labels.as_ptr(),
        ng,
        all.addr(),
        stride,
        ptr::null_mut(),
        all.addr_at(5),
        ptr::null_mut(),
    );
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "overlapping outputs");
}

#[test]
fn xcorr_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    let methods = [
        (SG_XCORR_STACK_LINEAR, SG_XCORR_CC_XCORR),
        (SG_XCORR_STACK_PWS, SG_XCORR_CC_XCORR),
        (SG_XCORR_STACK_ROBUST, SG_XCORR_CC_XCORR),
        (SG_XCORR_STACK_LINEAR, SG_XCORR_CC_COHERENCY),
        (SG_XCORR_STACK_LINEAR, SG_XCORR_CC_DECONV),
    ];
    for (stack, cc) in methods {
        let p = plan(&g, stack, cc);
        let (host, dev) = preprocess_both(&g, p);
        correlate_both(&g, p, host, dev);
        sg_xcorr_spectra_destroy(host);
        sg_xcorr_spectra_destroy(dev);
        sg_xcorr_plan_destroy(p);
    }
    println!(
        "xcorr device calls: preprocess, correlate, substacks equal the host calls bit for bit"
    );
}
