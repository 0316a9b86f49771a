//! `sg_fxdecon_execute_{2d,3d}_device_f32` against the host calls on the same plan: strided
//! sections and volumes cut into several slabs (traces shared by two slabs summed on the
//! device), the SU mode (zeroed out-of-band), in place, an empty band (the input or zeros)
//! and a single trace (passed through); the f64 calls refused.

use super::*;
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::fxdecon::cuda::set_slab_bytes;

const SENTINEL: f32 = 12345.5;

/// A plan whose slabs hold at most `slab_bytes` of input (the plan keeps the slabs of its
/// first call, made here, for the calls after it), and the host call's output.
struct Case {
    plan: *mut sg_fxdecon_plan,
    dims: usize,
    strides: (usize, usize),
    input: Vec<f32>,
    host: Vec<f32>,
}

impl Drop for Case {
    fn drop(&mut self) {
        sg_fxdecon_plan_destroy(self.plan);
    }
}

/// Noisy dipping events at `shape` (n, nx, ny) in a strided array padded with SENTINEL.
fn volume(shape: (usize, usize, usize), strides: (usize, usize)) -> Vec<f32> {
    let (n, nx, ny) = shape;
    let span = (nx - 1) * strides.0 + (ny - 1) * strides.1 + n;
    let mut v = vec![SENTINEL; span];
    for iy in 0..ny {
        for ix in 0..nx {
            for i in 0..n {
                let t = i as f32 - 0.7 * ix as f32 - 1.3 * iy as f32;
                let noise = ((i * 7919 + ix * 104729 + iy * 1299709) % 1000) as f32 / 500.0 - 1.0;
                v[ix * strides.0 + iy * strides.1 + i] = (t * 0.21).sin() + 0.5 * noise;
            }
        }
    }
    v
}

fn execute_host(c: &Case, input: &[f32], output: &mut [f32]) -> sg_status {
    let (i, o) = (input.as_ptr(), output.as_mut_ptr());
    match c.dims {
        2 => sg_fxdecon_execute_2d_f32(c.plan, i, o, c.strides.1),
        _ => sg_fxdecon_execute_3d_f32(c.plan, i, o, c.strides.0, c.strides.1),
    }
}

fn execute_device(c: &Case, input: u64, output: u64) -> sg_status {
    match c.dims {
        2 => sg_fxdecon_execute_2d_device_f32(c.plan, input, output, c.strides.1),
        _ => sg_fxdecon_execute_3d_device_f32(c.plan, input, output, c.strides.0, c.strides.1),
    }
}

fn case(
    g: &Gpu,
    o: &sg_fxdecon_options,
    shape: (usize, usize, usize),
    strides: (usize, usize),
    slab_bytes: Option<usize>,
) -> Case {
    let (n, nx, ny) = shape;
    let dims = if nx == 1 { 2 } else { 3 };
    let mut plan = std::ptr::null_mut();
    // A plan sizes its slabs when it is made.
    set_slab_bytes(slab_bytes);
    let s = match dims {
        2 => sg_fxdecon_plan_create_2d(g.ctx, o, n, ny, &mut plan),
        _ => sg_fxdecon_plan_create_3d(g.ctx, o, n, nx, ny, &mut plan),
    };
    set_slab_bytes(None);
    assert_eq!(s, SG_OK, "{}", message());
    let input = volume(shape, strides);
    let mut c = Case {
        plan,
        dims,
        strides,
        host: vec![SENTINEL; input.len()],
        input,
    };
    let mut host = std::mem::take(&mut c.host);
    let s = execute_host(&c, &c.input, &mut host);
    assert_eq!(s, SG_OK, "{}", message());
    c.host = host;
    c
}

/// The device call equals the host call (five runs alike), apart and in place.
/// The device call against the host call: the same kernels, but the windows' predictions
/// are added into each trace's spectrum with atomic additions (overlapping windows), whose
/// order follows the threads' timing: equal to rounding (1e-5 of the largest sample), the
/// stride padding untouched, in place as apart.
fn check_equal(g: &Gpu, c: &Case, what: &str) {
    // The stride padding untouched; the samples within 1e-5 of the largest.
    let close = |got: &[f32], how: &str| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (i, (x, y)) in got.iter().zip(&c.host).enumerate() {
            if *y == SENTINEL {
                assert!(x == y, "{what}{how}: padding {i} written: {x}");
            } else {
                a.push(*x);
                b.push(*y);
            }
        }
        assert_close(&format!("{what}{how} against the host call"), &a, &b, 1e-5);
    };
    let input = g.upload(&c.input);
    let output = g.upload(&vec![SENTINEL; c.input.len()]);
    for _ in 0..3 {
        let s = execute_device(c, input.addr(), output.addr());
        assert_eq!(s, SG_OK, "{what}: {}", message());
        close(&g.download(&output), "");
    }
    let inplace = g.upload(&c.input);
    let s = execute_device(c, inplace.addr(), inplace.addr());
    assert_eq!(s, SG_OK, "{what} in place: {}", message());
    g.synchronize();
    close(&g.download(&inplace), " in place");
}

#[test]
fn fxdecon_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    let def = sg_fxdecon_options_default();
    // 2D, 200 samples (800 bytes a trace) in 16 kB slabs: 20 traces, one window a slab.
    let c2 = case(&g, &def, (200, 1, 60), (0, 210), Some(20 * 800));
    check_equal(&g, &c2, "2D strided, 4 slabs");
    let mut su = sg_fxdecon_options_seismic_unix();
    su.sample_interval_s = 0.004;
    let c = case(&g, &su, (200, 1, 60), (0, 200), Some(20 * 800));
    check_equal(&g, &c, "2D SU mode, 4 slabs");
    // 3D, 30 × 24 traces of 128 samples (15 kB a crossline line) in 128 kB slabs: one
    // 10 × 10 window along y a slab, 3 slabs.
    let o3 = sg_fxdecon_options {
        window_inline: 10,
        window_crossline: 10,
        operator_inline: 5,
        operator_crossline: 5,
        ..def
    };
    let c3 = case(&g, &o3, (128, 30, 24), (131, 131 * 30 + 5), Some(128 << 10));
    check_equal(&g, &c3, "3D strided, 3 slabs");
    let c = case(&g, &def, (128, 30, 24), (128 * 24, 128), None);
    check_equal(&g, &c, "3D inline-major, 1 slab");
    // Nothing to filter: an empty band (7.3 Hz between bins) passes the input or zeros;
    // a single trace passes through.
    let empty = sg_fxdecon_options {
        fmin_hz: 7.3,
        fmax_hz: 7.3,
        ..def
    };
    let c = case(&g, &empty, (256, 1, 40), (0, 260), None);
    check_equal(&g, &c, "2D empty band, passed");
    let zero = sg_fxdecon_options {
        out_of_band: SG_FXDECON_ZERO_OUT_OF_BAND,
        ..empty
    };
    let c = case(&g, &zero, (256, 1, 40), (0, 260), None);
    check_equal(&g, &c, "2D empty band, zeroed");
    let c = case(&g, &def, (256, 1, 1), (0, 256), None);
    check_equal(&g, &c, "2D single trace");
    refusals(&g, &c2, &c3);
    let (input, output) = (g.upload(&c3.input), g.zeros::<f32>(c3.input.len()));
    let (i, o) = (input.addr(), output.addr());
    enqueue_cost(&g, "F-XY 30 × 24 × 128, 3 slabs", 20, || {
        execute_device(&c3, i, o)
    });
    println!("fxdecon device calls: 2D, 3D, SU mode, in place, empty band equal the host calls");
}

/// What the driver can tell is refused before anything is queued; overlaps; f64.
fn refusals(g: &Gpu, c2: &Case, c3: &Case) {
    let input = g.upload(&c2.input);
    let output = g.zeros::<f32>(c2.input.len());
    let host = c2.input.as_ptr() as u64;
    let need = c2.input.len();
    check_refusals("input", host, &input, need, |a| {
        execute_device(c2, a, output.addr())
    });
    check_refusals("output", host, &output, need, |a| {
        execute_device(c2, input.addr(), a)
    });
    let s = execute_device(c2, input.addr(), input.addr_at(5));
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "overlapping arrays");
    let input3 = g.upload(&c3.input);
    let output3 = g.zeros::<f32>(c3.input.len());
    let need3 = c3.input.len();
    check_refusals("input", c3.input.as_ptr() as u64, &input3, need3, |a| {
        execute_device(c3, a, output3.addr())
    });
    let (i, o) = (input.addr(), output.addr());
    let s = sg_fxdecon_execute_2d_device_f64(c2.plan, i, o, c2.strides.1);
    assert_eq!(s, SG_ERR_UNSUPPORTED, "2D f64");
    assert!(
        message().contains("sg_fxdecon_execute_2d_device_f64"),
        "{}",
        message()
    );
    let (i, o) = (input3.addr(), output3.addr());
    let s = sg_fxdecon_execute_3d_device_f64(c3.plan, i, o, c3.strides.0, c3.strides.1);
    assert_eq!(s, SG_ERR_UNSUPPORTED, "3D f64");
    assert!(
        g.download(&output).iter().all(|&v| v == 0.0),
        "output written"
    );
    assert!(
        g.download(&output3).iter().all(|&v| v == 0.0),
        "output written"
    );
}
