//! `sg_dwt_execute_device_*` and `sg_dwt_denoise_device_*` against the host calls.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;

fn plan(g: &Gpu, n: usize) -> *mut sg_dwt_plan {
    let mut p = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 8, n, &mut p);
    assert_eq!(s, SG_OK, "{}", message());
    p
}

fn traces(count: usize, stride: usize) -> Vec<f32> {
    (0..count * stride)
        .map(|i| ((i % stride) as f32 * 0.37).sin() + ((i / stride) as f32 * 0.11).cos())
        .collect()
}

#[test]
fn dwt_device_calls_equal_the_host_calls() {
    let Some(g) = gpu() else { return };
    let (n, count, stride) = (1024, 300, 1030);
    let p = plan(&g, n);
    let host_in = traces(count, stride);
    let mut host_out = host_in.clone();
    let s = sg_dwt_execute_f32(
        p,
        SG_DWT_FORWARD,
        0,
        host_in.as_ptr(),
        host_out.as_mut_ptr(),
        count,
        stride,
    );
    assert_eq!(s, SG_OK, "{}", message());
    let input = g.upload(&host_in);
    let output = g.upload(&host_in);
    let dev = five_times_equal("dwt forward", || {
        let s = sg_dwt_execute_device_f32(
            p,
            SG_DWT_FORWARD,
            0,
            input.addr(),
            output.addr(),
            count,
            stride,
        );
        assert_eq!(s, SG_OK, "{}", message());
        bits(&g.download(&output))
    });
    assert!(
        dev == bits(&host_out),
        "device forward differs from the host call"
    );
    // In place, then the inverse back to the input.
    let inplace = g.upload(&host_in);
    let s = sg_dwt_execute_device_f32(
        p,
        SG_DWT_FORWARD,
        0,
        inplace.addr(),
        inplace.addr(),
        count,
        stride,
    );
    assert_eq!(s, SG_OK, "{}", message());
    assert!(
        bits(&g.download(&inplace)) == bits(&host_out),
        "in place differs"
    );
    // Denoise with thresholds (the call waits) and without.
    let opts = sg_dwt_denoise_options_default();
    let mut host_t = vec![0f64; count * 10];
    let s = sg_dwt_denoise_f32(
        p,
        &opts,
        host_in.as_ptr(),
        host_out.as_mut_ptr(),
        count,
        stride,
        host_t.as_mut_ptr(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    let mut dev_t = vec![0f64; count * 10];
    let s = sg_dwt_denoise_device_f32(
        p,
        &opts,
        input.addr(),
        output.addr(),
        count,
        stride,
        dev_t.as_mut_ptr(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    assert_eq!(host_t, dev_t, "thresholds differ");
    assert!(
        bits(&g.download(&output)) == bits(&host_out),
        "device denoise differs"
    );
    let s = sg_dwt_denoise_device_f32(
        p,
        &opts,
        input.addr(),
        output.addr(),
        count,
        stride,
        std::ptr::null_mut(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    g.synchronize();
    assert!(
        bits(&g.download(&output)) == bits(&host_out),
        "denoise without thresholds differs"
    );
    // What the driver can tell is refused before anything is queued.
    let span = (count - 1) * stride + n;
    check_refusals("input", host_in.as_ptr() as u64, &input, span, |a| {
        sg_dwt_execute_device_f32(p, SG_DWT_FORWARD, 0, a, output.addr(), count, stride)
    });
    let s = sg_dwt_execute_device_f32(
        p,
        SG_DWT_FORWARD,
        0,
        input.addr(),
        input.addr_at(5),
        count,
        stride,
    );
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "overlapping arrays");
    sg_dwt_plan_destroy(p);
    let (n, count) = (1024, 16384);
    let p = plan(&g, n);
    let (input, output) = (g.zeros::<f32>(n * count), g.zeros::<f32>(n * count));
    let (i, o) = (input.addr(), output.addr());
    enqueue_cost(&g, "dwt denoise 16,384 × 1,024 f32", 50, || {
        sg_dwt_denoise_device_f32(p, &opts, i, o, count, n, std::ptr::null_mut())
    });
    sg_dwt_plan_destroy(p);
    println!("dwt device calls: forward, in place, denoise equal the host calls bit for bit");
}
