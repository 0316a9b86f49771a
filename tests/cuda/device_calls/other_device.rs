//! Memory of another GPU given to a context of device 0 is refused before anything is
//! queued, with the device the driver reports; managed memory is accepted (any device may
//! use it). Runs where two GPUs are present; reported skipped elsewhere.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;

#[test]
fn memory_of_another_device_is_refused() {
    let Some(g) = gpu() else { return };
    if CudaContext::device_count().unwrap_or(0) < 2 {
        println!("other device: skipped (one GPU)");
        return;
    }
    let (n, traces) = (256, 16);
    let mut plan = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 4, n, &mut plan);
    assert_eq!(s, SG_OK, "{}", message());
    let other = CudaContext::new(1).expect("device 1");
    let stream1 = other.default_stream();
    let input1 = stream1
        .alloc_zeros::<f32>(n * traces)
        .expect("alloc on device 1");
    let (addr1, _rec) = input1.device_ptr(&stream1);
    let output = g.zeros::<f32>(n * traces);
    let s = sg_dwt_execute_device_f32(plan, SG_DWT_FORWARD, 0, addr1, output.addr(), traces, n);
    assert_eq!(s, SG_ERR_INVALID_ARGUMENT, "an array of device 1");
    let m = message();
    assert!(
        m.contains("input") && m.contains("device 1") && m.contains("device 0"),
        "{m}"
    );
    // Back on device 0, the same call with the context's memory runs.
    let input = g.zeros::<f32>(n * traces);
    let s = sg_dwt_execute_device_f32(
        plan,
        SG_DWT_FORWARD,
        0,
        input.addr(),
        output.addr(),
        traces,
        n,
    );
    assert_eq!(s, SG_OK, "{}", message());
    g.synchronize();
    sg_dwt_plan_destroy(plan);
    println!("other device: an array of device 1 refused on a device-0 context: {m}");
}
