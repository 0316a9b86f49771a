//! A CUDA context the application made itself (`cuCtxCreate`, not the device's primary
//! context): device calls take arrays allocated there, queued on a primary-context stream,
//! with results equal to the host call's bit for bit; a stream of that context is refused
//! by `sg_context_set_stream` with a message, since the library's kernels live in the
//! primary context.

use super::*;
use cudarc::driver::DevicePtrMut;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;

#[test]
fn device_calls_take_arrays_of_a_context_the_application_made() {
    let Some(g) = gpu() else { return };
    let (n, count) = (1024, 64);
    let mut p = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 8, n, &mut p);
    assert_eq!(s, SG_OK, "{}", message());
    let host_in: Vec<f32> = (0..n * count)
        .map(|i| ((i % n) as f32 * 0.37).sin() + ((i / n) as f32 * 0.11).cos())
        .collect();
    let mut host_out = vec![0f32; n * count];
    let (i, o) = (host_in.as_ptr(), host_out.as_mut_ptr());
    let s = sg_dwt_execute_f32(p, SG_DWT_FORWARD, 0, i, o, count, n);
    assert_eq!(s, SG_OK, "{}", message());

    let own = CudaContext::new_non_primary(0, 0).expect("cuCtxCreate on device 0");
    let own_stream = own
        .new_stream()
        .expect("a stream of the application's context");
    let input = own_stream.clone_htod(&host_in).expect("upload");
    let mut output = own_stream.alloc_zeros::<f32>(n * count).expect("alloc");
    let i = input.device_ptr(&own_stream).0;
    let o = output.device_ptr_mut(&own_stream).0;
    own_stream.synchronize().expect("the uploads");

    let refused = sg_context_set_stream(g.ctx, own_stream.cu_stream() as u64);
    let m = message();
    assert_eq!(refused, SG_ERR_INVALID_ARGUMENT, "{m}");
    assert!(m.contains("primary context"), "{m}");

    let s = sg_dwt_execute_device_f32(p, SG_DWT_FORWARD, 0, i, o, count, n);
    let m = message();
    assert_eq!(s, SG_OK, "the application's context's arrays: {m}");
    assert_eq!(sg_context_synchronize(g.ctx), SG_OK, "{}", message());
    let got = own_stream.clone_dtoh(&output).expect("download");
    own_stream.synchronize().expect("the application's stream");
    let same = bits(&got) == bits(&host_out);
    assert!(
        same,
        "the device call on the application's arrays differs from the host call"
    );
    sg_dwt_plan_destroy(p);
    println!("own context: a DWT device call on cuCtxCreate arrays equals the host call bit for bit; its stream is refused");
}
