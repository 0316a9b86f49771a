//! `sg_wavepacket_{pocs,sparse_approximation}_device_*` against the host calls on the same
//! context, in both precisions: each runs the host algorithm between one read of the
//! device data and one write of its result, so the two differ only where the adjoint's
//! atomic sums round differently (POCS: within 1e-3 of the largest sample in f32, 1e-9 in
//! f64; the sparse approximation: the same count, the residual within 1 %, and in f64 the
//! coefficients within 1e-9 of the largest). Five runs alike to those bounds; refusals of
//! host pointers, short ranges, an overlap and a bad trace mask.

use super::wavepacket_setup::*;
use super::*;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use seisgpu::ffi::wavepacket::device_iterations::*;
use seisgpu::ffi::wavepacket::*;

type Pocs<D> = extern "C" fn(*const L, D, *const i32, usize, *const PocsOpts) -> sg_status;
type Sparse<D, C> =
    extern "C" fn(*const L, D, C, usize, *const SparseOpts, *mut usize, *mut f64) -> sg_status;
type PocsOpts = sg_wavepacket_pocs_options;
type SparseOpts = sg_wavepacket_sparse_options;

/// One precision's host and device calls.
struct Calls<T> {
    precision: i32,
    tolerance: f64,
    /// How far POCS may differ, relative to the largest sample.
    pocs_rounding: f64,
    /// Whether the sparse coefficients are compared (f64: a support member is exchanged by
    /// rounding only where two scores agree to 1e-15).
    coefficients_close: bool,
    from: fn(f64) -> T,
    pocs: Pocs<*mut T>,
    sparse: Sparse<*const T, *mut T>,
    pocs_device: Pocs<u64>,
    sparse_device: Sparse<u64, u64>,
}

const F32: Calls<f32> = Calls {
    precision: SG_WAVEPACKET_F32,
    tolerance: 1e-6,
    pocs_rounding: 1e-3,
    coefficients_close: false,
    from: |v| v as f32,
    pocs: sg_wavepacket_pocs_f32,
    sparse: sg_wavepacket_sparse_approximation_f32,
    pocs_device: sg_wavepacket_pocs_device_f32,
    sparse_device: sg_wavepacket_sparse_approximation_device_f32,
};

const F64: Calls<f64> = Calls {
    precision: SG_WAVEPACKET_F64,
    tolerance: 1e-12,
    pocs_rounding: 1e-9,
    coefficients_close: true,
    from: |v| v,
    pocs: sg_wavepacket_pocs_f64,
    sparse: sg_wavepacket_sparse_approximation_f64,
    pocs_device: sg_wavepacket_pocs_device_f64,
    sparse_device: sg_wavepacket_sparse_approximation_device_f64,
};

/// Every fourth trace missing (their samples a value POCS must not read).
fn live_mask() -> Vec<i32> {
    (0..SHAPE[1]).map(|t| i32::from(t % 4 != 2)).collect()
}

fn pocs_agrees<T>(g: &Gpu, c: &Calls<T>, l: *mut L, f: &[T])
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    let live = live_mask();
    let mut f = f.to_vec();
    for (t, &ok_) in live.iter().enumerate() {
        if ok_ == 0 {
            f[t * SHAPE[0]..(t + 1) * SHAPE[0]].fill((c.from)(f64::NAN));
        }
    }
    let opts = PocsOpts {
        iterations: 5,
        ..sg_wavepacket_pocs_options_default()
    };
    let mut host = f.clone();
    ok((c.pocs)(
        l,
        host.as_mut_ptr(),
        live.as_ptr(),
        live.len(),
        &opts,
    ));
    let to_f64 = |v: Vec<T>| v.into_iter().map(Into::into).collect::<Vec<f64>>();
    let host = to_f64(host);
    let got = five_times_close("wave-packet POCS", c.pocs_rounding, || {
        let d = g.upload(&f);
        ok((c.pocs_device)(
            l,
            d.addr(),
            live.as_ptr(),
            live.len(),
            &opts,
        ));
        to_f64(g.download(&d))
    });
    assert_close("device POCS", &got, &host, c.pocs_rounding);
    // The recorded traces come out as they went in, bit for bit.
    for (t, &ok_) in live.iter().enumerate() {
        if ok_ == 1 {
            let r = t * SHAPE[0]..(t + 1) * SHAPE[0];
            assert!(
                bits(&got[r.clone()]) == bits(&to_f64(f[r].to_vec())),
                "trace {t}"
            );
        }
    }
    // Refusals: a host pointer, a short range, a mask of another length, a 2 in the mask.
    let dev = g.upload(&f);
    let n = f.len();
    check_refusals("data", f.as_ptr() as u64, &dev, n, |a| {
        (c.pocs_device)(l, a, live.as_ptr(), live.len(), &opts)
    });
    let s = (c.pocs_device)(l, dev.addr(), live.as_ptr(), live.len() - 1, &opts);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "n_traces: {}", message());
    let mut bad = live.clone();
    bad[3] = 2;
    let s = (c.pocs_device)(l, dev.addr(), bad.as_ptr(), bad.len(), &opts);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "live[3] = 2: {}", message());
    assert!(
        bits(&g.download(&dev)) == bits(&f),
        "a refused POCS wrote the data"
    );
}

fn sparse_agrees<T>(g: &Gpu, c: &Calls<T>, l: *mut L, f: &[T], m2: usize)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    let opts = SparseOpts {
        stages: 3,
        refit_iterations: 4,
    };
    let s = m2 / 2 / 50;
    let mut host = vec![(c.from)(0.0); m2];
    let (mut kept, mut residual) = (0usize, 0f64);
    let sp = c.sparse;
    ok(sp(
        l,
        f.as_ptr(),
        host.as_mut_ptr(),
        s,
        &opts,
        &mut kept,
        &mut residual,
    ));
    assert_eq!(kept, s, "host sparse approximation");
    let data = g.upload(f);
    let coeffs = g.zeros::<T>(m2);
    let mut runs = Vec::new();
    let first = five_times_close("wave-packet sparse residual", 1e-2, || {
        let (mut k, mut r) = (0usize, -1f64);
        let sd = c.sparse_device;
        ok(sd(l, data.addr(), coeffs.addr(), s, &opts, &mut k, &mut r));
        assert_eq!(k, kept, "device sparse approximation's count");
        runs.push(g.download(&coeffs));
        vec![r]
    });
    assert!(
        (first[0] - residual).abs() <= 1e-2 * residual,
        "device sparse residual {} vs {residual}",
        first[0]
    );
    for run in &runs {
        let nonzero = run
            .chunks(2)
            .filter(|z| z[0].into() != 0.0 || z[1].into() != 0.0);
        assert_eq!(nonzero.count(), kept, "non-zero device coefficients");
        if c.coefficients_close {
            assert_close("device sparse coefficients", run, &host, 1e-9);
        }
    }
    // Refusals: a host pointer, a short range, overlapping arrays; nothing written.
    let (mut k, mut r) = (7usize, -1f64);
    let sd = c.sparse_device;
    check_refusals("coeffs", host.as_ptr() as u64, &coeffs, m2, |a| {
        sd(l, data.addr(), a, s, &opts, &mut k, &mut r)
    });
    let both = g.zeros::<T>(m2 + f.len());
    let st = sd(l, both.addr(), both.addr_at(2), s, &opts, &mut k, &mut r);
    assert_eq!(st, SG_ERR_INVALID_ARGUMENT, "overlapping arrays");
    assert!(message().contains("overlap"), "{}", message());
    assert_eq!((k, r), (7, -1.0), "a refused call wrote its host outputs");
}

fn device_calls_equal_the_host_calls<T>(g: &Gpu, c: &Calls<T>)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Copy + Into<f64>,
{
    let l = layout(g, c.precision, c.tolerance);
    let f = section(SHAPE, c.from, smooth);
    let (mut n, mut m, mut b, mut d, mut e) = (0, 0, 0, 0, 0);
    ok(sg_wavepacket_layout_sizes(
        l, &mut n, &mut m, &mut b, &mut d, &mut e,
    ));
    pocs_agrees(g, c, l, &f);
    sparse_agrees(g, c, l, &f, 2 * m);
    sg_wavepacket_layout_destroy(l);
}

#[test]
fn wavepacket_pocs_and_sparse_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    device_calls_equal_the_host_calls(&g, &F32);
    device_calls_equal_the_host_calls(&g, &F64);
    println!(
        "wavepacket device calls: POCS and the sparse approximation equal the host calls to rounding (f32 and f64)"
    );
}
