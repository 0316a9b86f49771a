//! A CUDA context the application made itself (`cuCtxCreate`, not the device's primary
//! context): device calls take arrays allocated there, queued on a primary-context stream,
//! with results equal to the host call's bit for bit; a stream of that context is refused
//! by `sg_context_set_stream` with a message, since the library's kernels live in the
//! primary context. A library context made on the application's context
//! (`sg_context_create_on_cuda_context`) runs there: it takes that context's streams, and
//! the application's context outlives it.

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
    assert!(m.contains("sg_context_create_on_cuda_context"), "{m}");

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

/// The DWT forward and denoise of `host_in` (count traces of n) on `ctx`'s device calls,
/// ordered on the application's `stream` (set as the context's), against the host calls of
/// the same plan: bit for bit.
fn dwt_on_application_stream(
    ctx: *mut sg_context,
    stream: &Arc<CudaStream>,
    n: usize,
    count: usize,
) {
    let mut p = std::ptr::null_mut();
    let s = sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, 8, n, &mut p);
    assert_eq!(s, SG_OK, "{}", message());
    let host_in: Vec<f32> = (0..n * count)
        .map(|i| ((i % n) as f32 * 0.29).sin() * ((i / n) as f32 * 0.07).cos())
        .collect();
    let mut want = vec![0f32; n * count];
    let s = sg_dwt_execute_f32(
        p,
        SG_DWT_FORWARD,
        0,
        host_in.as_ptr(),
        want.as_mut_ptr(),
        count,
        n,
    );
    assert_eq!(s, SG_OK, "{}", message());
    let input = stream.clone_htod(&host_in).expect("upload");
    let mut output = stream.alloc_zeros::<f32>(n * count).expect("alloc");
    let i = input.device_ptr(stream).0;
    let o = output.device_ptr_mut(stream).0;
    let s = sg_context_set_stream(ctx, stream.cu_stream() as u64);
    assert_eq!(s, SG_OK, "the application's stream: {}", message());
    let equal_to = |want: &[f32], what: &str| {
        let got = stream.clone_dtoh(&output).expect("download");
        stream.synchronize().expect("the application's stream");
        assert!(
            bits(&got) == bits(want),
            "device {what} on the application's context differs"
        );
    };
    let s = sg_dwt_execute_device_f32(p, SG_DWT_FORWARD, 0, i, o, count, n);
    assert_eq!(s, SG_OK, "{}", message());
    equal_to(&want, "forward");
    let s = sg_dwt_denoise_f32(
        p,
        std::ptr::null(),
        host_in.as_ptr(),
        want.as_mut_ptr(),
        count,
        n,
        std::ptr::null_mut(),
    );
    assert_eq!(s, SG_OK, "{}", message());
    let s = sg_dwt_denoise_device_f32(p, std::ptr::null(), i, o, count, n, std::ptr::null_mut());
    assert_eq!(s, SG_OK, "{}", message());
    equal_to(&want, "denoise");
    assert_eq!(sg_context_set_stream(ctx, 0), SG_OK, "{}", message());
    sg_dwt_plan_destroy(p);
}

/// The context's description.
fn described(ctx: *mut sg_context) -> String {
    let mut buf = vec![0 as std::ffi::c_char; 4096];
    let s = sg_context_describe(ctx, buf.as_mut_ptr(), buf.len(), std::ptr::null_mut());
    assert_eq!(s, SG_OK, "{}", message());
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_library_context_runs_on_a_context_the_application_made() {
    let Some(_g) = gpu() else { return };
    let own = CudaContext::new_non_primary(0, 0).expect("cuCtxCreate on device 0");
    let stream = own
        .new_stream()
        .expect("a stream of the application's context");
    let mut ctx = std::ptr::null_mut();
    let s = sg_context_create_on_cuda_context(own.cu_ctx() as u64, &mut ctx);
    assert_eq!(s, SG_OK, "{}", message());
    let d = described(ctx);
    assert!(d.contains("the application's CUDA context"), "{d}");
    dwt_on_application_stream(ctx, &stream, 512, 48);
    // A second library context on the same CUDA context shares it.
    let mut again = std::ptr::null_mut();
    let s = sg_context_create_on_cuda_context(own.cu_ctx() as u64, &mut again);
    assert_eq!(s, SG_OK, "{}", message());
    dwt_on_application_stream(again, &stream, 256, 16);
    sg_context_destroy(again);
    sg_context_destroy(ctx);
    // The application's context is still the application's: it works after the library's
    // contexts are gone.
    let after = stream
        .clone_htod(&[1.0f32, 2.0, 3.0])
        .expect("an upload after");
    assert_eq!(
        stream.clone_dtoh(&after).expect("a download after"),
        vec![1.0, 2.0, 3.0]
    );
    // The runtime's primary context given by its handle is recognised as the primary one.
    let primary = CudaContext::new(0).expect("the primary context");
    let s = sg_context_create_on_cuda_context(primary.cu_ctx() as u64, &mut ctx);
    assert_eq!(s, SG_OK, "{}", message());
    let d = described(ctx);
    assert!(
        d.contains("the device's primary context, given by the application"),
        "{d}"
    );
    sg_context_destroy(ctx);
    println!("own context: library contexts on a cuCtxCreate context take its streams and equal the host calls bit for bit");
}
