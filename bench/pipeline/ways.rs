//! The three ways of running the chain, timed, and the comparison of their results.

use super::chain::{check, Chain, STEPS};
use super::harness::cuda::{drv_err, Events};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use seisgpu::ffi::context::sg_context_set_stream;
use std::sync::Arc;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Plane events dipping both ways, and noise, one value a sample.
fn volume(c: &Chain) -> Vec<f32> {
    let s = c.shape;
    (0..s.samples())
        .map(|i| {
            let (t, x, y) = (i % s.n, (i / s.n) % s.nx, i / (s.n * s.nx));
            let a = 0.2 * (t as f32 - 0.3 * s.n as f32 - 0.4 * x as f32 + 0.2 * y as f32);
            let noise = ((i * 7919 + 13) % 1000) as f32 / 1000.0 - 0.5;
            (-a * a).exp() * (1.0 - 2.0 * a * a) + 0.5 * noise
        })
        .collect()
}

/// The device arrays of the chain: input, two work volumes, the coefficients.
struct OnDevice {
    arrays: Vec<CudaSlice<f32>>,
    addrs: [u64; 4],
}

impl OnDevice {
    fn new(
        stream: &Arc<CudaStream>,
        input: &[f32],
        coeff_reals: usize,
    ) -> Result<OnDevice, String> {
        let err = drv_err("allocating the chain's device arrays");
        let mut arrays = vec![stream.clone_htod(input).map_err(&err)?];
        for len in [input.len(), input.len(), coeff_reals] {
            arrays.push(stream.alloc_zeros::<f32>(len).map_err(&err)?);
        }
        let mut addrs = [0u64; 4];
        for (a, s) in addrs.iter_mut().zip(&arrays) {
            *a = s.device_ptr(stream).0;
        }
        Ok(OnDevice { arrays, addrs })
    }
}

pub fn run(mut chain: Chain, reps: usize) -> Result<(), String> {
    let cuda = CudaContext::new(0).map_err(drv_err("opening the device"))?;
    let stream = cuda.new_stream().map_err(drv_err("creating a stream"))?;
    let s = sg_context_set_stream(chain.ctx, stream.cu_stream() as u64);
    check(s, "setting the context's stream")?;
    let input = volume(&chain);
    let m2 = 2 * chain.coefficients;
    // The threshold: a twentieth of the largest coefficient after the first two steps.
    let mut host = [
        input.clone(),
        vec![0f32; input.len()],
        vec![0f32; input.len()],
        vec![0f32; m2],
    ];
    for k in 0..3 {
        chain.host_step(k, pointers(&mut host))?;
    }
    let largest = host[3]
        .chunks(2)
        .map(|z| z[0].hypot(z[1]))
        .fold(0f32, f32::max);
    chain.threshold = 0.05 * largest as f64;
    let host_ms = host_way(&chain, &mut host, reps)?;
    let dev = OnDevice::new(&stream, &input, m2)?;
    let steps = step_times(&chain, &stream, &dev, reps)?;
    let device_ms = timed(&stream, reps, || {
        (0..5).try_for_each(|k| chain.device_step(k, dev.addrs))
    })?;
    let direct = download(&stream, &dev.arrays[1])?;
    let graph_ms = graph_way(&chain, &stream, &dev, reps)?;
    let replayed = download(&stream, &dev.arrays[1])?;
    report(&steps, [host_ms, device_ms, graph_ms]);
    println!(
        "results: device calls vs host calls max |Δ| {:.2e}, graph vs device calls {:.2e} (of the largest sample)",
        rel_diff(&direct, &host[1]),
        rel_diff(&replayed, &direct)
    );
    Ok(())
}

fn pointers(v: &mut [Vec<f32>; 4]) -> [*mut f32; 4] {
    [
        v[0].as_mut_ptr(),
        v[1].as_mut_ptr(),
        v[2].as_mut_ptr(),
        v[3].as_mut_ptr(),
    ]
}

/// The chain on host arrays, each call copying in and out: the median wall time, ms.
fn host_way(chain: &Chain, host: &mut [Vec<f32>; 4], reps: usize) -> Result<f64, String> {
    let mut t = Vec::new();
    for _ in 0..reps {
        let start = Instant::now();
        for k in 0..5 {
            chain.host_step(k, pointers(host))?;
        }
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

/// Each device call alone: its device time (events around it on the stream, ms) and the
/// host time inside it (µs), medians.
fn step_times(
    chain: &Chain,
    stream: &Arc<CudaStream>,
    dev: &OnDevice,
    reps: usize,
) -> Result<Vec<(f64, f64)>, String> {
    let ev = Events::new(stream.context(), 2)?;
    let sync = drv_err("waiting for the stream");
    let mut out = Vec::new();
    for k in 0..5 {
        let (mut device, mut enqueue) = (Vec::new(), Vec::new());
        for _ in 0..reps + 1 {
            stream.synchronize().map_err(&sync)?;
            ev.record(0, stream)?;
            let t = Instant::now();
            chain.device_step(k, dev.addrs)?;
            enqueue.push(t.elapsed().as_secs_f64() * 1e6);
            ev.record(1, stream)?;
            stream.synchronize().map_err(&sync)?;
            device.push(ev.ms(0, 1)?);
        }
        out.push((median(device), median(enqueue)));
    }
    Ok(out)
}

/// `queue` run `reps` times (after one untimed run), each from an idle stream until the
/// stream is done: the median wall time, ms.
fn timed(
    stream: &Arc<CudaStream>,
    reps: usize,
    mut queue: impl FnMut() -> Result<(), String>,
) -> Result<f64, String> {
    let sync = drv_err("waiting for the stream");
    let mut t = Vec::new();
    for r in 0..reps + 1 {
        stream.synchronize().map_err(&sync)?;
        let start = Instant::now();
        queue()?;
        stream.synchronize().map_err(&sync)?;
        if r > 0 {
            t.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(median(t))
}

/// The device calls captured once into a graph, then replays timed.
fn graph_way(
    chain: &Chain,
    stream: &Arc<CudaStream>,
    dev: &OnDevice,
    reps: usize,
) -> Result<f64, String> {
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        .map_err(drv_err("beginning a capture"))?;
    let queued = (0..5).try_for_each(|k| chain.device_step(k, dev.addrs));
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(drv_err("ending the capture"))?;
    queued?;
    let graph = graph.ok_or("the capture made no graph")?;
    timed(stream, reps, || {
        graph.launch().map_err(drv_err("launching the graph"))
    })
}

fn download(stream: &Arc<CudaStream>, a: &CudaSlice<f32>) -> Result<Vec<f32>, String> {
    let v = stream
        .clone_dtoh(a)
        .map_err(drv_err("copying the result"))?;
    stream
        .synchronize()
        .map_err(drv_err("copying the result"))?;
    Ok(v)
}

fn rel_diff(a: &[f32], b: &[f32]) -> f64 {
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
    let d = a
        .iter()
        .zip(b)
        .fold(0f64, |m, (x, y)| m.max((x - y).abs() as f64));
    d / scale.max(f64::MIN_POSITIVE)
}

fn report(steps: &[(f64, f64)], ways: [f64; 3]) {
    let sum: f64 = steps.iter().map(|s| s.0).sum();
    println!("| device call | GPU ms | enqueue µs (host time inside the call) |");
    println!("|---|---:|---:|");
    for (name, (ms, us)) in STEPS.iter().zip(steps) {
        println!("| {name} | {ms:.3} | {us:.1} |");
    }
    println!("| sum of the calls | {sum:.3} | |");
    println!();
    println!("| way | end to end ms | ÷ sum of the calls' GPU times |");
    println!("|---|---:|---:|");
    let names = [
        "host arrays per call",
        "device calls on one stream",
        "one CUDA graph, replayed",
    ];
    for (name, ms) in names.iter().zip(ways) {
        println!("| {name} | {ms:.3} | {:.3} |", ms / sum);
    }
}
