//! A CUDA context the application made itself (`cuCtxCreate`, not the device's primary
//! context): device calls take its arrays and are ordered on its stream, and the results
//! equal the host call's bit for bit.

use super::*;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;

#[test]
fn device_calls_take_arrays_and_a_stream_of_a_context_the_application_made() {
    let Some(g) = gpu() else { return };
    let (n, count) = (1024, 64);
    let mut p = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 8, n, &mut p);
    assert_eq!(s, SG_OK, "{}", message());
    let host_in: Vec<f32> = (0..n * count)
        .map(|i| ((i % n) as f32 * 0.37).sin() + ((i / n) as f32 * 0.11).cos())
        .collect();
    let mut host_out = vec![0f32; n * count];
    let s = sg_dwt_execute_f32(
        p,
        SG_DWT_FORWARD,
        0,
        host_in.as_ptr(),
        host_out.as_mut_ptr(),
        count,
        n,
    );
    assert_eq!(s, SG_OK, "{}", message());

    let own = CudaContext::new_non_primary(0, 0).expect("cuCtxCreate on device 0");
    let stream = own
        .new_stream()
        .expect("a stream of the application's context");
    let input = stream.clone_htod(&host_in).expect("upload");
    let mut output = stream.alloc_zeros::<f32>(n * count).expect("alloc");
    let (i, o) = (
        input.device_ptr(&stream).0,
        cudarc::driver::DevicePtrMut::device_ptr_mut(&mut output, &stream).0,
    );
    stream.synchronize().expect("the uploads");
    assert_eq!(
        sg_context_set_stream(g.ctx, stream.cu_stream() as u64),
        SG_OK,
        "{}",
        message()
    );
    let s = sg_dwt_execute_device_f32(p, SG_DWT_FORWARD, 0, i, o, count, n);
    assert_eq!(s, SG_OK, "{}", message());
    let got = stream.clone_dtoh(&output).expect("download");
    stream.synchronize().expect("the application's stream");
    assert!(
        bits(&got) == bits(&host_out),
        "the device call on the application's context differs from the host call"
    );
    assert_eq!(sg_context_synchronize(g.ctx), SG_OK, "{}", message());
    let restored = sg_context_set_stream(g.ctx, g.stream.cu_stream() as u64);
    assert_eq!(restored, SG_OK, "{}", message());
    sg_dwt_plan_destroy(p);
    println!("own context: a DWT device call on cuCtxCreate memory and stream equals the host call bit for bit");
}
