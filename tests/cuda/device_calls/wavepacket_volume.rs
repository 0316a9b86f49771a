//! `sg_wavepacket_volume_{forward,adjoint,inverse}_device_*` against the host calls on the
//! same context, in both precisions: C bit for bit over five runs; C* and the inverse to
//! rounding (each tile's adjoint sums with atomic additions); refusals of host pointers,
//! short ranges and an overlap; C and C* captured into a CUDA graph and replayed.

use super::wavepacket_setup::*;
use super::*;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::wavepacket_volume_device::*;

type V = sg_wavepacket_volume;
type Inverse<C, D> = extern "C" fn(*const V, C, D, f64, usize, *mut usize, *mut f64) -> sg_status;

/// Four tiles of the layout's shape, the last ones cut by the volume's end.
const VOLUME: [usize; 2] = [100, 70];

/// One precision's host and device calls.
struct Calls<T> {
    precision: i32,
    /// How far results that pass through an atomic sum may differ, relative to the largest.
    rounding: f64,
    from: fn(f64) -> T,
    forward: extern "C" fn(*const V, *const T, *mut T) -> sg_status,
    adjoint: extern "C" fn(*const V, *const T, *mut T) -> sg_status,
    inverse: Inverse<*const T, *mut T>,
    forward_device: extern "C" fn(*const V, u64, u64) -> sg_status,
    adjoint_device: extern "C" fn(*const V, u64, u64) -> sg_status,
    inverse_device: Inverse<u64, u64>,
}

const F32: Calls<f32> = Calls {
    precision: SG_WAVEPACKET_F32,
    rounding: 1e-5,
    from: |v| v as f32,
    forward: sg_wavepacket_volume_forward_f32,
    adjoint: sg_wavepacket_volume_adjoint_f32,
    inverse: sg_wavepacket_volume_inverse_f32,
    forward_device: sg_wavepacket_volume_forward_device_f32,
    adjoint_device: sg_wavepacket_volume_adjoint_device_f32,
    inverse_device: sg_wavepacket_volume_inverse_device_f32,
};

const F64: Calls<f64> = Calls {
    precision: SG_WAVEPACKET_F64,
    rounding: 1e-12,
    from: |v| v,
    forward: sg_wavepacket_volume_forward_f64,
    adjoint: sg_wavepacket_volume_adjoint_f64,
    inverse: sg_wavepacket_volume_inverse_f64,
    forward_device: sg_wavepacket_volume_forward_device_f64,
    adjoint_device: sg_wavepacket_volume_adjoint_device_f64,
    inverse_device: sg_wavepacket_volume_inverse_device_f64,
};

/// A volume of `VOLUME` in tiles of `SHAPE` (12 directions, the precision's tolerance).
fn volume<T>(g: &Gpu, c: &Calls<T>) -> (*mut V, usize) {
    let mut opts = sg_wavepacket_layout_options_default();
    opts.directions = 12;
    opts.tolerance = if c.precision == SG_WAVEPACKET_F32 {
        1e-6
    } else {
        1e-12
    };
    let mut v = std::ptr::null_mut();
    ok(sg_wavepacket_volume_create(
        g.ctx,
        2,
        VOLUME.as_ptr(),
        SHAPE.as_ptr(),
        c.precision,
        &opts,
        &mut v,
    ));
    let (mut n, mut m, mut tiles, mut boxes) = (0, 0, [0usize; 3], 0);
    ok(sg_wavepacket_volume_sizes(
        v,
        &mut n,
        &mut m,
        tiles.as_mut_ptr(),
        &mut boxes,
    ));
    assert_eq!(tiles, [2, 2, 1]);
    (v, 2 * m)
}

fn device_calls_equal_the_host_calls<T>(g: &Gpu, c: &Calls<T>)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    let (v, m2) = volume(g, c);
    let f = section(VOLUME, c.from, smooth);
    let n = f.len();
    let zero = (c.from)(0.0);
    // C.
    let mut coeffs = vec![zero; m2];
    ok((c.forward)(v, f.as_ptr(), coeffs.as_mut_ptr()));
    let data = g.upload(&f);
    let dev_c = g.zeros::<T>(m2);
    let got = five_times_equal("wave-packet volume forward", || {
        ok((c.forward_device)(v, data.addr(), dev_c.addr()));
        bits(&g.download(&dev_c))
    });
    assert!(
        got == bits(&coeffs),
        "device volume forward differs from the host call"
    );
    // C*.
    let mut back = vec![zero; n];
    ok((c.adjoint)(v, coeffs.as_ptr(), back.as_mut_ptr()));
    let dev_d = g.zeros::<T>(n);
    let to_f64 = |v: Vec<T>| v.into_iter().map(Into::into).collect::<Vec<f64>>();
    let got = five_times_close("wave-packet volume adjoint", c.rounding, || {
        ok((c.adjoint_device)(v, dev_c.addr(), dev_d.addr()));
        to_f64(g.download(&dev_d))
    });
    assert_close("device volume adjoint", &got, &to_f64(back), c.rounding);
    // The inverse (it waits: its outputs are there when it returns).
    let (mut it_h, mut res_h, mut it_d, mut res_d) = (0usize, 0f64, 0usize, 0f64);
    let mut inv = vec![zero; n];
    let p = coeffs.as_ptr();
    ok((c.inverse)(
        v,
        p,
        inv.as_mut_ptr(),
        1e-4,
        4,
        &mut it_h,
        &mut res_h,
    ));
    let (cd, dd) = (dev_c.addr(), dev_d.addr());
    ok((c.inverse_device)(
        v, cd, dd, 1e-4, 4, &mut it_d, &mut res_d,
    ));
    let got = g.download(&dev_d);
    assert_close("device volume inverse", &got, &inv, 100.0 * c.rounding);
    assert_eq!(it_d, it_h, "volume inverse iterations");
    assert!(
        (res_d - res_h).abs() <= 1e-3 * res_h.abs().max(f64::MIN_POSITIVE),
        "volume inverse residual {res_d:e} vs {res_h:e}"
    );
    refusals(c, v, (&data, &dev_c), (&f, &coeffs));
    sg_wavepacket_volume_destroy(v);
}

/// Host pointers, short ranges and overlaps refused before anything is queued.
fn refusals<T: DeviceRepr + ValidAsZeroBits>(
    c: &Calls<T>,
    v: *mut V,
    (data, coeffs): (&Dev<T>, &Dev<T>),
    (f, host_c): (&[T], &[T]),
) {
    let (n, m2) = (f.len(), host_c.len());
    let (hf, hc) = (f.as_ptr() as u64, host_c.as_ptr() as u64);
    check_refusals("data", hf, data, n, |a| {
        (c.forward_device)(v, a, coeffs.addr())
    });
    check_refusals("coeffs", hc, coeffs, m2, |a| {
        (c.adjoint_device)(v, a, data.addr())
    });
    let (mut it, mut res) = (7usize, -1f64);
    check_refusals("coeffs", hc, coeffs, m2, |a| {
        (c.inverse_device)(v, a, data.addr(), 1e-3, 2, &mut it, &mut res)
    });
    assert_eq!(
        (it, res),
        (7, -1.0),
        "a refused inverse wrote its host outputs"
    );
    let s = (c.forward_device)(v, coeffs.addr_at(2), coeffs.addr());
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "overlapping arrays");
    assert!(message().contains("overlap"), "{}", message());
    let s = (c.inverse_device)(v, coeffs.addr(), data.addr(), 1.5, 2, &mut it, &mut res);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "tolerance: {}", message());
}

#[test]
fn wavepacket_volume_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    device_calls_equal_the_host_calls(&g, &F32);
    device_calls_equal_the_host_calls(&g, &F64);
    println!(
        "wavepacket volume device calls: forward bit for bit, adjoint and inverse to rounding (f32 and f64)"
    );
}

/// The volume's forward and adjoint on one context are queued without waiting: captured
/// into a CUDA graph on the context's stream, a replay writes the direct forward's
/// coefficients bit for bit (into an array overwritten after the capture), and the adjoint
/// the direct adjoint's data to rounding.
#[test]
fn wavepacket_volume_device_calls_capture_into_a_graph() {
    let Some(g) = gpu() else { return };
    let (v, m2) = volume(&g, &F32);
    let f = section(VOLUME, F32.from, smooth);
    let (data, dev_c, dev_d) = (g.upload(&f), g.zeros::<f32>(m2), g.zeros::<f32>(f.len()));
    let (d, c, back) = (data.addr(), dev_c.addr(), dev_d.addr());
    // Direct calls first: the box FFTs are captured on a plan's first use.
    ok(sg_wavepacket_volume_forward_device_f32(v, d, c));
    ok(sg_wavepacket_volume_adjoint_device_f32(v, c, back));
    let (want_c, want_d) = (bits(&g.download(&dev_c)), g.download(&dev_d));
    let graph = g.capture(|| {
        ok(sg_wavepacket_volume_forward_device_f32(v, d, c));
        ok(sg_wavepacket_volume_adjoint_device_f32(v, c, back));
    });
    let mut dev_c = dev_c;
    let mut dev_d = dev_d;
    let ones = vec![1f32; m2];
    g.stream
        .memcpy_htod(&ones, &mut dev_c.slice)
        .expect("overwrite");
    g.stream
        .memcpy_htod(&ones[..f.len()], &mut dev_d.slice)
        .expect("overwrite");
    graph.launch().expect("graph launch");
    assert!(
        bits(&g.download(&dev_c)) == want_c,
        "the replayed volume forward differs from the direct call"
    );
    let got = g.download(&dev_d);
    assert_close("replayed volume adjoint", &got, &want_d, F32.rounding);
    sg_wavepacket_volume_destroy(v);
}
