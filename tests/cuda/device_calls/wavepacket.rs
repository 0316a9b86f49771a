//! `sg_wavepacket_{forward,adjoint,inverse,threshold}_device_*` against the host calls on
//! the same context: C, C*, the inverse and the hard and soft thresholds (and the threshold
//! round trip C → threshold → C* queued back to back) bit for bit in both precisions (the
//! f64 threshold within an ulp of the magnitude: see its doc comment), five runs alike, and
//! refusals of host pointers, short ranges, overlaps and the σ-per-level threshold.

use super::wavepacket_setup::*;
use super::*;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;

/// One precision's host and device calls.
struct Calls<T> {
    precision: i32,
    tolerance: f64,
    /// How far results that pass through an atomic sum may differ, relative to the largest.
    rounding: f64,
    from: fn(f64) -> T,
    forward: extern "C" fn(*const L, *const T, *mut T) -> sg_status,
    adjoint: extern "C" fn(*const L, *const T, *mut T) -> sg_status,
    inverse:
        extern "C" fn(*const L, *const T, *mut T, f64, usize, *mut usize, *mut f64) -> sg_status,
    threshold: extern "C" fn(*const L, *mut T, i32, i32, f64) -> sg_status,
    forward_device: extern "C" fn(*const L, u64, u64) -> sg_status,
    adjoint_device: extern "C" fn(*const L, u64, u64) -> sg_status,
    inverse_device:
        extern "C" fn(*const L, u64, u64, f64, usize, *mut usize, *mut f64) -> sg_status,
    threshold_device: extern "C" fn(*const L, u64, i32, i32, f64) -> sg_status,
}

const F32: Calls<f32> = Calls {
    precision: SG_WAVEPACKET_F32,
    tolerance: 1e-6,
    rounding: 1e-5,
    from: |v| v as f32,
    forward: sg_wavepacket_forward_f32,
    adjoint: sg_wavepacket_adjoint_f32,
    inverse: sg_wavepacket_inverse_f32,
    threshold: sg_wavepacket_threshold_f32,
    forward_device: sg_wavepacket_forward_device_f32,
    adjoint_device: sg_wavepacket_adjoint_device_f32,
    inverse_device: sg_wavepacket_inverse_device_f32,
    threshold_device: sg_wavepacket_threshold_device_f32,
};

const F64: Calls<f64> = Calls {
    precision: SG_WAVEPACKET_F64,
    tolerance: 1e-12,
    rounding: 1e-12,
    from: |v| v,
    forward: sg_wavepacket_forward_f64,
    adjoint: sg_wavepacket_adjoint_f64,
    inverse: sg_wavepacket_inverse_f64,
    threshold: sg_wavepacket_threshold_f64,
    forward_device: sg_wavepacket_forward_device_f64,
    adjoint_device: sg_wavepacket_adjoint_device_f64,
    inverse_device: sg_wavepacket_inverse_device_f64,
    threshold_device: sg_wavepacket_threshold_device_f64,
};

/// Device thresholds against the host's: bit for bit, or (`exact` false: f64, whose
/// magnitudes are the GPU's hypot) each magnitude within a few ulps of |c| or t, and a value zeroed
/// by one side only where its magnitude lies within 1e-14 of `t`.
fn thresholds_agree<T: Copy + Into<f64>>(dev: &[T], host: &[T], t: f64, exact: bool) {
    if exact {
        assert!(bits(dev) == bits(host), "device threshold differs");
        return;
    }
    for (i, (d, h)) in dev.chunks(2).zip(host.chunks(2)).enumerate() {
        let (d, h) = ([d[0].into(), d[1].into()], [h[0].into(), h[1].into()]);
        let (md, mh) = (d[0].hypot(d[1]), h[0].hypot(h[1]));
        if (md == 0.0) != (mh == 0.0) {
            let m = md.max(mh);
            assert!(
                (m - t).abs() <= 1e-14 * t,
                "coefficient {i}: {d:?} vs {h:?}, t = {t}"
            );
        } else {
            assert!(
                (md - mh).abs() <= 1e-14 * mh.max(t),
                "coefficient {i}: {d:?} vs {h:?}"
            );
        }
    }
}

fn device_calls_equal_the_host_calls<T>(g: &Gpu, c: &Calls<T>, exact_threshold: bool)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64> + PartialEq + std::fmt::Debug,
{
    let l = layout(g, c.precision, c.tolerance);
    let f = section(SHAPE, c.from, smooth);
    let (n, m2) = (f.len(), {
        let (mut a, mut m, mut b, mut d, mut e) = (0, 0, 0, 0, 0);
        ok(sg_wavepacket_layout_sizes(
            l, &mut a, &mut m, &mut b, &mut d, &mut e,
        ));
        2 * m
    });
    let zero = (c.from)(0.0);
    // C.
    let mut coeffs = vec![zero; m2];
    ok((c.forward)(l, f.as_ptr(), coeffs.as_mut_ptr()));
    let data = g.upload(&f);
    let dev_c = g.zeros::<T>(m2);
    let got = five_times_equal("wave-packet forward", || {
        ok((c.forward_device)(l, data.addr(), dev_c.addr()));
        bits(&g.download(&dev_c))
    });
    assert!(
        got == bits(&coeffs),
        "device forward differs from the host call"
    );
    // Calls on the same arrays as the call before replay a capture of the call: two other
    // arrays, each called on three times in a row, are written, and only they.
    let outs = [g.zeros::<T>(m2), g.zeros::<T>(m2)];
    for (k, out) in outs.iter().enumerate() {
        for _ in 0..3 {
            ok((c.forward_device)(l, data.addr(), out.addr()));
        }
        assert!(
            bits(&g.download(out)) == got,
            "replayed forward into array {k}"
        );
        if k == 0 {
            let untouched = g.download(&outs[1]).iter().all(|&v| v.into() == 0.0);
            assert!(untouched, "a replay wrote an array it was not given");
        }
    }
    let forward = |out: &Dev<T>| (c.forward_device)(l, data.addr(), out.addr());
    enqueue_cost(
        g,
        "wave-packet forward, the arrays of the call before",
        30,
        || forward(&outs[0]),
    );
    let mut at = 0;
    enqueue_cost(
        g,
        "wave-packet forward, other arrays than the call before",
        30,
        || {
            at = 1 - at;
            forward(&outs[at])
        },
    );
    // C*.
    let mut back = vec![zero; n];
    ok((c.adjoint)(l, coeffs.as_ptr(), back.as_mut_ptr()));
    let dev_d = g.zeros::<T>(n);
    // The adjoint's type-1 USFFT spreads with atomic sums, in an order that follows the
    // threads' timing: equal to the host call to rounding, not bit for bit.
    ok((c.adjoint_device)(l, dev_c.addr(), dev_d.addr()));
    assert_close("device adjoint", &g.download(&dev_d), &back, c.rounding);
    // Thresholds, hard and soft, and the round trip C → threshold → C* queued back to back.
    let t = 0.05 * largest(&coeffs);
    for mode in [SG_WAVEPACKET_HARD, SG_WAVEPACKET_SOFT] {
        let mut host = coeffs.clone();
        ok((c.threshold)(
            l,
            host.as_mut_ptr(),
            mode,
            SG_WAVEPACKET_THRESHOLD_VALUE,
            t,
        ));
        let dev = g.upload(&coeffs);
        ok((c.threshold_device)(
            l,
            dev.addr(),
            mode,
            SG_WAVEPACKET_THRESHOLD_VALUE,
            t,
        ));
        thresholds_agree(&g.download(&dev), &host, t, exact_threshold);
        if exact_threshold {
            let mut host_back = vec![zero; n];
            ok((c.adjoint)(l, host.as_ptr(), host_back.as_mut_ptr()));
            ok((c.forward_device)(l, data.addr(), dev_c.addr()));
            ok((c.threshold_device)(
                l,
                dev_c.addr(),
                mode,
                SG_WAVEPACKET_THRESHOLD_VALUE,
                t,
            ));
            ok((c.adjoint_device)(l, dev_c.addr(), dev_d.addr()));
            assert_close(
                "threshold round trip",
                &g.download(&dev_d),
                &host_back,
                c.rounding,
            );
        }
    }
    // The inverse (it waits: its outputs are there when it returns).
    let (mut it_h, mut res_h, mut it_d, mut res_d) = (0usize, 0f64, 0usize, 0f64);
    let mut inv = vec![zero; n];
    ok((c.inverse)(
        l,
        coeffs.as_ptr(),
        inv.as_mut_ptr(),
        1e-4,
        6,
        &mut it_h,
        &mut res_h,
    ));
    let dev_c = g.upload(&coeffs);
    let s = (c.inverse_device)(
        l,
        dev_c.addr(),
        dev_d.addr(),
        1e-4,
        6,
        &mut it_d,
        &mut res_d,
    );
    ok(s);
    assert_close(
        "device inverse",
        &g.download(&dev_d),
        &inv,
        100.0 * c.rounding,
    );
    assert_eq!(it_d, it_h, "inverse iterations");
    assert!(
        (res_d - res_h).abs() <= 1e-3 * res_h.abs().max(f64::MIN_POSITIVE),
        "inverse residual {res_d:e} vs {res_h:e}"
    );
    refusals(g, c, l, (&data, &dev_c), (&f, &coeffs));
    sg_wavepacket_layout_destroy(l);
}

/// What the driver can tell, overlaps and the σ threshold, refused before anything is queued.
fn refusals<T: DeviceRepr + ValidAsZeroBits>(
    g: &Gpu,
    c: &Calls<T>,
    l: *mut L,
    (data, coeffs): (&Dev<T>, &Dev<T>),
    (f, host_c): (&[T], &[T]),
) {
    let out = g.zeros::<T>(f.len());
    check_refusals("data", f.as_ptr() as u64, data, f.len(), |a| {
        (c.forward_device)(l, a, coeffs.addr())
    });
    check_refusals(
        "coeffs",
        host_c.as_ptr() as u64,
        coeffs,
        host_c.len(),
        |a| (c.adjoint_device)(l, a, out.addr()),
    );
    let (mut it, mut res) = (0usize, 0f64);
    check_refusals(
        "coeffs",
        host_c.as_ptr() as u64,
        coeffs,
        host_c.len(),
        |a| (c.inverse_device)(l, a, out.addr(), 1e-3, 2, &mut it, &mut res),
    );
    check_refusals(
        "coeffs",
        host_c.as_ptr() as u64,
        coeffs,
        host_c.len(),
        |a| (c.threshold_device)(l, a, SG_WAVEPACKET_HARD, SG_WAVEPACKET_THRESHOLD_VALUE, 0.1),
    );
    let s = (c.forward_device)(l, coeffs.addr_at(2), coeffs.addr());
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "overlapping arrays");
    assert!(message().contains("overlap"), "{}", message());
    let s = (c.threshold_device)(
        l,
        coeffs.addr(),
        SG_WAVEPACKET_HARD,
        SG_WAVEPACKET_THRESHOLD_SIGMA,
        2.0,
    );
    assert_eq!(s, SG_ERR_UNSUPPORTED, "σ threshold: {}", message());
    let s = (c.inverse_device)(l, coeffs.addr(), out.addr(), 1.5, 2, &mut it, &mut res);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "tolerance: {}", message());
}

#[test]
fn wavepacket_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    device_calls_equal_the_host_calls(&g, &F32, true);
    device_calls_equal_the_host_calls(&g, &F64, false);
    println!(
        "wavepacket device calls: forward, adjoint, inverse, thresholds and the threshold round trip equal the host calls (f32 and f64)"
    );
}
