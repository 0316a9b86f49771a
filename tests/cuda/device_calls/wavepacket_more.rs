//! `sg_wavepacket_{keep_largest,threshold_noise,estimate_noise}_device_*` against the host
//! calls on the same context: keep-largest bit for bit in both precisions (several counts,
//! and coefficients full of equal magnitudes, whose ties the host keeps in array order), the
//! noise estimate and the noise threshold bit for bit in f32 (f64: the GPU's hypot, within
//! an ulp of a magnitude), the chain C → estimate → noise threshold → keep-largest queued
//! back to back, five runs alike, and refusals of host pointers and short ranges.

use super::wavepacket_setup::*;
use super::*;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::device_coeffs::*;
use seisgpu::ffi::wavepacket::*;

/// One precision's host and device calls.
struct Calls<T> {
    precision: i32,
    tolerance: f64,
    from: fn(f64) -> T,
    forward: extern "C" fn(*const L, *const T, *mut T) -> sg_status,
    keep: extern "C" fn(*const L, *mut T, usize) -> sg_status,
    noise: extern "C" fn(*const L, *mut T, i32, f64, f64) -> sg_status,
    estimate: extern "C" fn(*const L, *const T, *mut f64) -> sg_status,
    forward_device: extern "C" fn(*const L, u64, u64) -> sg_status,
    keep_device: extern "C" fn(*const L, u64, usize) -> sg_status,
    noise_device: extern "C" fn(*const L, u64, i32, f64, f64) -> sg_status,
    estimate_device: extern "C" fn(*const L, u64, *mut f64) -> sg_status,
}

const F32: Calls<f32> = Calls {
    precision: SG_WAVEPACKET_F32,
    tolerance: 1e-6,
    from: |v| v as f32,
    forward: sg_wavepacket_forward_f32,
    keep: sg_wavepacket_keep_largest_f32,
    noise: sg_wavepacket_threshold_noise_f32,
    estimate: sg_wavepacket_estimate_noise_f32,
    forward_device: sg_wavepacket_forward_device_f32,
    keep_device: sg_wavepacket_keep_largest_device_f32,
    noise_device: sg_wavepacket_threshold_noise_device_f32,
    estimate_device: sg_wavepacket_estimate_noise_device_f32,
};

const F64: Calls<f64> = Calls {
    precision: SG_WAVEPACKET_F64,
    tolerance: 1e-12,
    from: |v| v,
    forward: sg_wavepacket_forward_f64,
    keep: sg_wavepacket_keep_largest_f64,
    noise: sg_wavepacket_threshold_noise_f64,
    estimate: sg_wavepacket_estimate_noise_f64,
    forward_device: sg_wavepacket_forward_device_f64,
    keep_device: sg_wavepacket_keep_largest_device_f64,
    noise_device: sg_wavepacket_threshold_noise_device_f64,
    estimate_device: sg_wavepacket_estimate_noise_device_f64,
};

/// The layout's packet norms and each box's coefficient range.
fn boxes(l: *mut L) -> Vec<(f64, std::ops::Range<usize>)> {
    let (mut n, mut m, mut nb, mut d, mut e) = (0, 0, 0, 0, 0);
    ok(sg_wavepacket_layout_sizes(
        l, &mut n, &mut m, &mut nb, &mut d, &mut e,
    ));
    let mut norms = vec![0.0; nb];
    ok(sg_wavepacket_packet_norms(l, norms.as_mut_ptr(), nb));
    (0..nb)
        .map(|b| {
            let (mut level, mut dir, mut offset) = (0i32, 0i32, 0usize);
            let (mut centre, mut shape) = ([0.0f64; 3], [0usize; 3]);
            ok(sg_wavepacket_box_info(
                l,
                b,
                &mut level,
                &mut dir,
                centre.as_mut_ptr(),
                shape.as_mut_ptr(),
                &mut offset,
            ));
            let size: usize = shape.iter().map(|&s| s.max(1)).product();
            (norms[b], offset..offset + size)
        })
        .collect()
}

/// Device noise thresholds against the host's: bit for bit, or (`exact` false: f64, the
/// GPU's hypot) each magnitude within 1e-14 of the host's, and a value zeroed by one side
/// only where its magnitude lies within 1e-14 of its box's threshold `t[i]`.
fn noise_thresholds_agree<T: Copy + Into<f64>>(dev: &[T], host: &[T], t: &[f64], exact: bool) {
    if exact {
        assert!(bits(dev) == bits(host), "device noise threshold differs");
        return;
    }
    for (i, (d, h)) in dev.chunks(2).zip(host.chunks(2)).enumerate() {
        let (d, h) = ([d[0].into(), d[1].into()], [h[0].into(), h[1].into()]);
        let (md, mh) = (d[0].hypot(d[1]), h[0].hypot(h[1]));
        if (md == 0.0) != (mh == 0.0) {
            let m = md.max(mh);
            assert!(
                (m - t[i]).abs() <= 1e-14 * t[i],
                "coefficient {i}: {d:?} vs {h:?}, t = {}",
                t[i]
            );
        } else {
            assert!(
                (md - mh).abs() <= 1e-14 * mh.max(t[i]),
                "coefficient {i}: {d:?} vs {h:?}"
            );
        }
    }
}

/// Keep-largest of `coeffs` on the device against the host call, for each count.
fn keep_agrees<T>(g: &Gpu, c: &Calls<T>, l: *mut L, coeffs: &[T], counts: &[usize])
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    for &s in counts {
        let mut host = coeffs.to_vec();
        ok((c.keep)(l, host.as_mut_ptr(), s));
        let dev = g.upload(coeffs);
        ok((c.keep_device)(l, dev.addr(), s));
        assert!(
            bits(&g.download(&dev)) == bits(&host),
            "keep-largest of {s} differs from the host call"
        );
    }
}

fn device_calls_equal_the_host_calls<T>(g: &Gpu, c: &Calls<T>, exact: bool)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64> + PartialEq + std::fmt::Debug,
{
    let l = layout(g, c.precision, c.tolerance);
    let f = section(SHAPE, c.from, noise());
    let per_box = boxes(l);
    let m2 = 2 * per_box.last().unwrap().1.end;
    let zero = (c.from)(0.0);
    let mut coeffs = vec![zero; m2];
    ok((c.forward)(l, f.as_ptr(), coeffs.as_mut_ptr()));
    // Keep-largest: nothing, one, some, all but one, all.
    let m = m2 / 2;
    keep_agrees(g, c, l, &coeffs, &[0, 1, 100, m / 3, m - 1, m, m + 5]);
    // Coefficients of 13 magnitudes only: the ties decide.
    let ties: Vec<T> = (0..m2)
        .map(|i| {
            (c.from)(if i % 2 == 0 {
                ((i * 7919) % 13) as f64
            } else {
                0.0
            })
        })
        .collect();
    keep_agrees(g, c, l, &ties, &[m / 2, m / 7]);
    let dev = g.upload(&coeffs);
    five_times_equal("wave-packet keep-largest", || {
        let d = g.upload(&coeffs);
        ok((c.keep_device)(l, d.addr(), m / 5));
        bits(&g.download(&d))
    });
    // The noise estimate (it waits: σ is there when it returns).
    let mut sigma = 0.0;
    ok((c.estimate)(l, coeffs.as_ptr(), &mut sigma));
    let got = five_times_equal("wave-packet noise estimate", || {
        let mut s = -1.0;
        ok((c.estimate_device)(l, dev.addr(), &mut s));
        vec![s.to_bits()]
    });
    let got = f64::from_bits(got[0]);
    assert!(sigma > 0.0, "the section holds noise: σ = {sigma}");
    if exact {
        assert_eq!(
            got.to_bits(),
            sigma.to_bits(),
            "noise estimate {got} vs {sigma}"
        );
    } else {
        assert!((got - sigma).abs() <= 1e-14 * sigma, "{got} vs {sigma}");
    }
    // The noise threshold, hard and soft, at k·σ·‖ψ_b‖.
    let k = 2.5;
    let mut t = vec![0.0; m];
    for (nb, range) in &per_box {
        t[range.clone()].fill(k * sigma * nb);
    }
    for mode in [SG_WAVEPACKET_HARD, SG_WAVEPACKET_SOFT] {
        let mut host = coeffs.clone();
        ok((c.noise)(l, host.as_mut_ptr(), mode, k, sigma));
        let zeroed = host.chunks(2).filter(|z| z[0] == zero && z[1] == zero);
        let zeroed = zeroed.count();
        assert!(0 < zeroed && zeroed < m, "{zeroed} of {m} zeroed");
        let d = g.upload(&coeffs);
        ok((c.noise_device)(l, d.addr(), mode, k, sigma));
        noise_thresholds_agree(&g.download(&d), &host, &t, exact);
    }
    chain(g, c, l, &f, &coeffs, exact);
    refusals(c, l, &dev, &coeffs);
    sg_wavepacket_layout_destroy(l);
}

/// C → estimate → noise threshold → keep-largest on the device, queued back to back on the
/// caller's stream (the estimate waits for its σ), against the host calls (f32: bit for bit).
fn chain<T>(g: &Gpu, c: &Calls<T>, l: *mut L, f: &[T], coeffs: &[T], exact: bool)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    let mut host = coeffs.to_vec();
    let mut sigma = 0.0;
    ok((c.estimate)(l, host.as_ptr(), &mut sigma));
    ok((c.noise)(
        l,
        host.as_mut_ptr(),
        SG_WAVEPACKET_SOFT,
        2.0,
        sigma,
    ));
    ok((c.keep)(l, host.as_mut_ptr(), host.len() / 8));
    let data = g.upload(f);
    let dev = g.zeros::<T>(coeffs.len());
    ok((c.forward_device)(l, data.addr(), dev.addr()));
    let mut s = 0.0;
    ok((c.estimate_device)(l, dev.addr(), &mut s));
    ok((c.noise_device)(l, dev.addr(), SG_WAVEPACKET_SOFT, 2.0, s));
    ok((c.keep_device)(l, dev.addr(), host.len() / 8));
    let got = g.download(&dev);
    if exact {
        assert!(
            bits(&got) == bits(&host),
            "device chain differs from the host calls"
        );
    } else {
        let kept = |v: &[T]| {
            v.chunks(2)
                .filter(|z| z[0].into() != 0.0 || z[1].into() != 0.0)
                .count()
        };
        assert_eq!(kept(&got), kept(&host), "device chain keeps another count");
    }
}

/// Host pointers and short ranges refused before anything is queued; σ untouched.
fn refusals<T: DeviceRepr + ValidAsZeroBits>(
    c: &Calls<T>,
    l: *mut L,
    coeffs: &Dev<T>,
    host_c: &[T],
) {
    let n = host_c.len();
    let host = host_c.as_ptr() as u64;
    check_refusals("coeffs", host, coeffs, n, |a| (c.keep_device)(l, a, 3));
    check_refusals("coeffs", host, coeffs, n, |a| {
        (c.noise_device)(l, a, SG_WAVEPACKET_HARD, 2.5, 0.1)
    });
    let mut sigma = -1.0;
    check_refusals("coeffs", host, coeffs, n, |a| {
        (c.estimate_device)(l, a, &mut sigma)
    });
    assert_eq!(sigma, -1.0, "σ written by a refused estimate");
    let s = (c.noise_device)(l, coeffs.addr(), SG_WAVEPACKET_HARD, -1.0, 0.1);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "k < 0: {}", message());
    let s = (c.estimate_device)(l, coeffs.addr(), std::ptr::null_mut());
    assert_eq!(s, SG_ERR_NULL_POINTER, "NULL σ: {}", message());
}

#[test]
fn wavepacket_device_coefficient_operations_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    device_calls_equal_the_host_calls(&g, &F32, true);
    device_calls_equal_the_host_calls(&g, &F64, false);
    println!(
        "wavepacket device calls: keep-largest, the noise estimate and the noise threshold equal the host calls (f32 and f64)"
    );
}
