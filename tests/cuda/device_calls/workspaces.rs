//! Plans whose device workspace follows their calls' sizes (the DWT's batches, EM
//! logging's grids, xcorr's station-days and pairs), with the counting hooks of
//! `memory.rs`: what a plan holds (`workspace_bytes`) is what the hooks gave it at creation
//! and reserve; device calls then allocate nothing but what their results keep (an EM
//! search's histograms, a preprocess's spectra), xcorr's once a first call has sized the
//! plan's workspace; every byte goes back at destroy; results equal the default
//! allocator's bit for bit; under a 4 MiB budget a workspace that cannot fit is refused
//! with SG_ERR_DEVICE_OUT_OF_MEMORY and the sizes, and the context and the plan stay
//! usable. A DWT call captured into a graph needs its workspace reserved first: without it
//! the call is refused, nothing allocated.

use super::emlog::{host_outputs, Search};
use super::memory::*;
use super::xcorr::{n_lags, spectra_bits};
use super::*;
use crate::emlog_support::{vikiz, Owned};
use crate::xcorr_common::{small_options, synthetic};
use seisgpu::ffi::context::memory::sg_context_device_memory;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::device::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::xcorr::device::*;
use seisgpu::ffi::xcorr::*;

/// A Daubechies-4 DWT plan of `n` samples.
fn dwt_plan(g: &Gpu, n: usize) -> *mut sg_dwt_plan {
    let mut p = std::ptr::null_mut();
    let s = sg_dwt_plan_create(g.ctx, SG_WAVELET_DAUBECHIES, 4, n, &mut p);
    assert_eq!(s, SG_OK, "{}", message());
    p
}

fn dwt_workspace(p: *const sg_dwt_plan) -> usize {
    let mut bytes = usize::MAX;
    assert_eq!(sg_dwt_plan_workspace_bytes(p, &mut bytes), SG_OK);
    bytes
}

fn traces(n: usize, count: usize) -> Vec<f32> {
    (0..n * count)
        .map(|i| ((i * 13 % 97) as f32 - 48.0) / 9.0 + (i as f32 * 0.01).sin())
        .collect()
}

/// Per-level universal soft denoising: medians for every level (the largest workspace).
fn per_level() -> sg_dwt_denoise_options {
    sg_dwt_denoise_options {
        noise_estimate: SG_NOISE_PER_LEVEL,
        ..sg_dwt_denoise_options_default()
    }
}

/// Five device denoises of `count` traces of `n` samples (the long-signal path when `n` is
/// beyond one block's shared memory), the third with thresholds, after a reserve; the
/// denoised traces and thresholds, as bits.
fn dwt_run(g: &Gpu, c: Option<&Counter>, n: usize, count: usize) -> Vec<u64> {
    let (p, held) = match c {
        Some(c) => made(c, || Ok(dwt_plan(g, n))),
        None => (dwt_plan(g, n), 0),
    };
    assert_eq!((held, dwt_workspace(p)), (0, 0), "nothing made at creation");
    let before = c.map(Counter::live);
    assert_eq!(sg_dwt_plan_reserve(p, count), SG_OK, "{}", message());
    let bytes = dwt_workspace(p);
    assert!(bytes > 0, "the reserve made the workspace");
    if let (Some(c), Some(before)) = (c, before) {
        assert_eq!(
            c.live() - before,
            bytes,
            "workspace_bytes against the hooks"
        );
    }
    let (input, o) = (traces(n, count), per_level());
    let (id, od) = (g.upload(&input), g.zeros::<f32>(n * count));
    let mut thresholds = vec![0.0f64; count * n.trailing_zeros() as usize];
    g.synchronize();
    let seen = c.map(Counter::seen);
    for k in 0..5 {
        let t = match k {
            2 => thresholds.as_mut_ptr(),
            _ => std::ptr::null_mut(),
        };
        let s = sg_dwt_denoise_device_f32(p, &o, id.addr(), od.addr(), count, n, t);
        assert_eq!(s, SG_OK, "{}", message());
    }
    g.synchronize();
    if let Some(c) = c {
        assert_eq!(Some(c.seen()), seen, "a device DWT call allocated or freed");
        assert_eq!(dwt_workspace(p), bytes, "the workspace grew");
        assert_eq!(
            in_use(g),
            bytes,
            "the context holds the plan's workspace alone"
        );
    }
    let mut out = bits(&g.download(&od));
    out.extend(bits(&thresholds));
    sg_dwt_plan_destroy(p);
    out
}

#[test]
fn dwt_device_calls_use_the_reserved_workspace_and_allocate_nothing() {
    // 256 samples: the whole-trace kernel; 2^18: the long-signal path on any GPU.
    for (n, count) in [(256usize, 64usize), (1 << 18, 3)] {
        let c = Counter::with_budget(usize::MAX);
        let Some(g) = hooked(&c) else { return };
        let with_hooks = dwt_run(&g, Some(&c), n, count);
        assert_all_given_back(&c, &g);
        let plain = gpu().unwrap();
        assert!(
            dwt_run(&plain, None, n, count) == with_hooks,
            "n = {n}: the hooks' results differ"
        );
    }
}

/// Without a reserve, the first device call makes the workspace and later ones of no more
/// traces reuse it; a call of more traces grows it.
#[test]
fn dwt_workspace_grows_to_the_largest_batch() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let (n, o) = (256usize, per_level());
    let p = dwt_plan(&g, n);
    let input = g.upload(&traces(n, 64));
    let out = g.zeros::<f32>(n * 64);
    let denoise = |count: usize| {
        let null = std::ptr::null_mut();
        let s = sg_dwt_denoise_device_f32(p, &o, input.addr(), out.addr(), count, n, null);
        assert_eq!(s, SG_OK, "{}", message());
        g.synchronize();
        dwt_workspace(p)
    };
    let first = denoise(32);
    assert!(
        first > 0 && first == c.live(),
        "made by the first call, from the hooks"
    );
    let seen = c.seen();
    assert_eq!(denoise(16), first);
    assert_eq!(c.seen(), seen, "a smaller batch allocated");
    let larger = denoise(64);
    assert!(larger > first, "a larger batch grows it");
    sg_dwt_plan_destroy(p);
    assert_all_given_back(&c, &g);
}

/// A device call captured into a graph may not allocate: refused without a reserve, then
/// captured after one; the graph's replay equals the direct call bit for bit.
#[test]
fn dwt_captured_calls_need_a_reserved_workspace() {
    let Some(g) = gpu() else { return };
    let (n, count, o) = (256usize, 64usize, per_level());
    let p = dwt_plan(&g, n);
    let input = g.upload(&traces(n, count));
    let (direct, replayed) = (g.zeros::<f32>(n * count), g.zeros::<f32>(n * count));
    let (i, d, r) = (input.addr(), direct.addr(), replayed.addr());
    let null = std::ptr::null_mut();
    let mut status = SG_OK;
    drop(g.capture(|| status = sg_dwt_denoise_device_f32(p, &o, i, r, count, n, null)));
    assert_eq!(
        status, SG_ERR_INVALID_ARGUMENT,
        "an allocation in a capture"
    );
    let m = message();
    assert!(m.contains("captured") && m.contains("reserve"), "{m}");
    assert_eq!(dwt_workspace(p), 0, "nothing allocated");
    assert_eq!(sg_dwt_plan_reserve(p, count), SG_OK, "{}", message());
    let graph = g.capture(|| status = sg_dwt_denoise_device_f32(p, &o, i, r, count, n, null));
    assert_eq!(status, SG_OK, "{}", message());
    graph.launch().expect("the graph");
    let s = sg_dwt_denoise_device_f32(p, &o, i, d, count, n, null);
    assert_eq!(s, SG_OK, "{}", message());
    assert!(bits(&g.download(&replayed)) == bits(&g.download(&direct)));
    sg_dwt_plan_destroy(p);
}

/// A random problem of `n` measurements and two searched columns (A's entries in [0.5,
/// 1.5), so that f₀ > 0 and the columns are independent).
fn em_problem(n: usize) -> Owned {
    let a: Vec<f64> = (0..2 * n)
        .map(|k| 0.5 + ((k as f64 * 0.754_877_666).fract()))
        .collect();
    let sigma0 = vec![1.0, 2.0];
    let f0: Vec<f64> = (0..n).map(|i| a[2 * i] + 2.0 * a[2 * i + 1]).collect();
    let f_exp = f0
        .iter()
        .enumerate()
        .map(|(i, f)| f * (1.0 + 0.003 * (i as f64).sin()));
    Owned {
        n,
        m: 2,
        f_exp: f_exp.collect(),
        a,
        sigma0,
        f0,
        delta: vec![0.01; n],
        searched: vec![0, 1],
    }
}

fn em_plan(g: &Gpu, o: &Owned) -> Result<*mut sg_emlog_plan, sg_status> {
    let mut p = std::ptr::null_mut();
    let cols: Vec<i32> = o.searched.iter().map(|&c| c as i32).collect();
    let s = sg_emlog_plan_create(
        g.ctx,
        o.n,
        o.m,
        o.a.as_ptr(),
        o.m,
        1,
        o.sigma0.as_ptr(),
        o.f0.as_ptr(),
        o.f_exp.as_ptr(),
        o.delta.as_ptr(),
        cols.len(),
        cols.as_ptr(),
        &mut p,
    );
    match s {
        SG_OK => Ok(p),
        s => Err(s),
    }
}

fn em_workspace(p: *const sg_emlog_plan) -> usize {
    let mut bytes = usize::MAX;
    assert_eq!(sg_emlog_plan_workspace_bytes(p, &mut bytes), SG_OK);
    bytes
}

/// A plan and five device searches in each mode: the plan's bytes (matrix, reductions) are
/// the hooks' at creation; after a first search (which makes the tables) each search
/// allocates its result's histograms alone, given back with the result, and copying a
/// histogram out allocates nothing. The summaries, histograms and models, as bits.
fn em_run(g: &Gpu, c: Option<&Counter>) -> Vec<u64> {
    let o = vikiz(2, 40, 0.01, 1.0, vec![1, 2, 3, 6]);
    let (p, held) = match c {
        Some(c) => made(c, || em_plan(g, &o)),
        None => (em_plan(g, &o).unwrap(), 0),
    };
    if c.is_some() {
        assert_eq!(em_workspace(p), held, "workspace_bytes against the hooks");
        assert!(
            held >= o.n * (o.searched.len() + 1) * 8,
            "the matrix made at creation"
        );
    }
    let mut out = Vec::new();
    for mode in [SG_EMLOG_FAST, SG_EMLOG_DIRECT] {
        let s = Search::new(&o, &[23, 17, 11, 9], mode);
        sg_emlog_result_destroy(s.run(p, true));
        let tables = em_workspace(p);
        let histograms = 8 * s.histogram_lens().iter().sum::<usize>();
        for _ in 0..5 {
            let before = c.map(Counter::seen);
            let r = s.run(p, true);
            if let (Some(c), Some(before)) = (c, before) {
                let after = c.seen();
                assert_eq!(
                    after.0 - before.0,
                    1,
                    "a search allocated more than its histograms"
                );
                assert_eq!((after.1, after.2 - before.2), (before.1, histograms));
                let bins = g.zeros::<u64>(s.histogram_lens()[0]);
                let st = sg_emlog_result_marginal_device(r, 0, bins.addr(), bins.slice.len());
                assert_eq!(st, SG_OK, "{}", message());
                assert_eq!(c.seen(), after, "copying a histogram allocated");
            }
            out = host_outputs(r, &s);
            sg_emlog_result_destroy(r);
            assert_eq!(em_workspace(p), tables, "the tables' workspace grew");
        }
    }
    sg_emlog_plan_destroy(p);
    out
}

#[test]
fn emlog_plans_hold_their_matrix_and_searches_allocate_their_histograms_alone() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let with_hooks = em_run(&g, Some(&c));
    assert_all_given_back(&c, &g);
    let plain = gpu().unwrap();
    assert!(
        em_run(&plain, None) == with_hooks,
        "the hooks' results differ"
    );
}

fn xcorr_plan(g: &Gpu, stack_method: i32) -> Result<*mut sg_xcorr_plan, sg_status> {
    let o = sg_xcorr_options {
        stack_method,
        ..small_options()
    };
    let mut p = std::ptr::null_mut();
    match sg_xcorr_plan_create(g.ctx, &o, &mut p) {
        SG_OK => Ok(p),
        s => Err(s),
    }
}

fn xcorr_workspace(p: *const sg_xcorr_plan) -> usize {
    let mut bytes = usize::MAX;
    assert_eq!(sg_xcorr_plan_workspace_bytes(p, &mut bytes), SG_OK);
    bytes
}

/// Six dense station-days of 1,000 samples, preprocessed on the device.
fn xcorr_preprocess(p: *mut sg_xcorr_plan, days: &Dev<f32>) -> *mut sg_xcorr_spectra {
    let mut s = std::ptr::null_mut();
    let st = sg_xcorr_preprocess_device_f32(p, days.addr(), 6, 1000, 1000, 0, &mut s);
    assert_eq!(st, SG_OK, "{}", message());
    s
}

/// A plan of `stack_method`: its bytes at creation are the hooks' (cuBLAS's workspace for
/// linear stacks, the filter tables); a first preprocess and correlation size its
/// workspace; then five of each allocate nothing but each preprocess's spectra (given back
/// with them) and leave the workspace as it was. The last spectra and stacks, as bits.
fn xcorr_run(g: &Gpu, c: Option<&Counter>, stack_method: i32) -> Vec<u64> {
    let (p, held) = match c {
        Some(c) => made(c, || xcorr_plan(g, stack_method)),
        None => (xcorr_plan(g, stack_method).unwrap(), 0),
    };
    if c.is_some() {
        assert!(held > 0, "the plan's tables made at creation");
        assert_eq!(
            xcorr_workspace(p),
            held,
            "workspace_bytes against the hooks"
        );
    }
    let days = g.upload(&synthetic(6, 1000, 5));
    let (m, pairs) = (n_lags(p), 15);
    let out = g.zeros::<f32>(pairs * m);
    let correlate = |s: *const sg_xcorr_spectra| {
        let days = [s];
        let st = sg_xcorr_correlate_device_f32(
            p,
            days.as_ptr(),
            1,
            0,
            6,
            0,
            6,
            out.addr(),
            m,
            std::ptr::null_mut(),
        );
        assert_eq!(st, SG_OK, "{}", message());
    };
    let first = xcorr_preprocess(p, &days);
    correlate(first);
    sg_xcorr_spectra_destroy(first);
    g.synchronize();
    let kept = xcorr_workspace(p);
    let mut got = Vec::new();
    for _ in 0..5 {
        let before = c.map(Counter::seen);
        let s = xcorr_preprocess(p, &days);
        if let (Some(c), Some(before)) = (c, before) {
            let after = c.seen();
            assert_eq!(
                after.0 - before.0,
                1,
                "a preprocess allocated more than its spectra"
            );
            assert_eq!(after.1, before.1, "a preprocess freed");
        }
        let seen = c.map(Counter::seen);
        correlate(s);
        g.synchronize();
        assert_eq!(
            c.map(Counter::seen),
            seen,
            "a device correlation allocated or freed"
        );
        got = spectra_bits(s).0;
        sg_xcorr_spectra_destroy(s);
        assert_eq!(xcorr_workspace(p), kept, "the workspace changed");
    }
    got.extend(bits(&g.download(&out)));
    sg_xcorr_plan_destroy(p);
    got
}

#[test]
fn xcorr_device_calls_like_an_earlier_one_allocate_nothing() {
    for method in [
        SG_XCORR_STACK_LINEAR,
        SG_XCORR_STACK_PWS,
        SG_XCORR_STACK_ROBUST,
    ] {
        let c = Counter::with_budget(usize::MAX);
        let Some(g) = hooked(&c) else { return };
        let with_hooks = xcorr_run(&g, Some(&c), method);
        assert_all_given_back(&c, &g);
        let plain = gpu().unwrap();
        assert!(
            xcorr_run(&plain, None, method) == with_hooks,
            "stack method {method}: the hooks' results differ"
        );
    }
}

/// Under a 4 MiB budget: a DWT reserve and a device call whose workspace cannot fit, an
/// EM-logging plan whose matrix cannot and a linear-stack xcorr plan (cuBLAS's workspace)
/// are refused with the sizes; the plans and the context stay usable, and smaller ones work.
#[test]
fn a_budget_too_small_refuses_the_workspace_and_the_plan_stays_usable() {
    let c = Counter::with_budget(4 << 20);
    let Some(g) = hooked(&c) else { return };
    // 1,024 traces of 2^18 samples on the long path: a GiB of coefficients per group.
    let n = 1usize << 18;
    let p = dwt_plan(&g, n);
    refused_for_memory(
        sg_dwt_plan_reserve(p, 1024),
        "reserving the DWT plan's workspace",
    );
    let (o, null) = (per_level(), std::ptr::null_mut());
    // Eight traces: 8 MiB of coefficients.
    let (big_in, big_out) = (g.upload(&traces(n, 8)), g.zeros::<f32>(n * 8));
    let s = sg_dwt_denoise_device_f32(p, &o, big_in.addr(), big_out.addr(), 8, n, null);
    refused_for_memory(s, "a device DWT denoise");
    // Three traces: 3 MiB of coefficients and the medians' selection state.
    let (input, out) = (g.upload(&traces(n, 3)), g.zeros::<f32>(n * 3));
    let s = sg_dwt_denoise_device_f32(p, &o, input.addr(), out.addr(), 3, n, null);
    assert_eq!(s, SG_OK, "three traces fit: {}", message());
    assert_eq!(sg_dwt_plan_reserve(p, 1), SG_OK, "{}", message());
    let s = sg_dwt_denoise_device_f32(p, &o, input.addr(), out.addr(), 2, n, null);
    assert_eq!(s, SG_OK, "{}", message());
    sg_dwt_plan_destroy(p);

    // 200,000 measurements, two searched columns: 4.8 MB of matrix.
    let s = em_plan(&g, &em_problem(200_000)).unwrap_err();
    refused_for_memory(s, "creating the EM-logging plan");
    let p = em_plan(&g, &em_problem(1000)).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_emlog_plan_destroy(p);

    // Linear stacks: cuBLAS's workspace (4 MiB, 32 MiB from Hopper on) and the tables.
    let s = xcorr_plan(&g, SG_XCORR_STACK_LINEAR).unwrap_err();
    refused_for_memory(s, "creating the xcorr plan");
    let p = xcorr_plan(&g, SG_XCORR_STACK_PWS).unwrap_or_else(|s| panic!("{s}: {}", message()));
    let days = g.upload(&synthetic(6, 1000, 5));
    sg_xcorr_spectra_destroy(xcorr_preprocess(p, &days));
    sg_xcorr_plan_destroy(p);

    assert!(c.refused.load(std::sync::atomic::Ordering::SeqCst) >= 4);
    assert_all_given_back(&c, &g);
}

/// Without hooks: most of the device's free memory taken by the application (cuMemAlloc),
/// a DWT workspace and an EM-logging plan too big for what is left are refused with
/// SG_ERR_DEVICE_OUT_OF_MEMORY naming the sizes, nothing kept; once the memory is freed the
/// same requests succeed on the same context and plan. It takes the device's memory from
/// every other test of the process: run it alone.
#[test]
#[ignore = "takes most of the device's memory: run alone with --ignored"]
fn real_device_memory_exhausted_refuses_workspaces_then_they_fit() {
    let Some(g) = gpu() else { return };
    let p = dwt_plan(&g, 1 << 18);
    let (free, _) = g.cuda.mem_get_info().expect("free memory");
    let hog: cudarc::driver::CudaSlice<u8> =
        // SAFETY: never read.
        unsafe { g.stream.alloc::<u8>(free.saturating_sub(256 << 20)) }.expect("taking the free memory");
    g.stream.synchronize().unwrap();
    let held = in_use(&g);
    let refused = |s: sg_status, what: &str| {
        assert_eq!(s, SG_ERR_DEVICE_OUT_OF_MEMORY, "{what}: {}", message());
        let m = message();
        for part in [what, "bytes asked for", "free on the device"] {
            assert!(m.contains(part), "{part:?} not in {m}");
        }
        assert_eq!(in_use(&g), held, "{what}: nothing kept");
    };
    // 1,024 traces of 2^18 samples: a GiB of coefficients.
    refused(
        sg_dwt_plan_reserve(p, 1024),
        "reserving the DWT plan's workspace",
    );
    // 20 M measurements, two searched columns: 320 MB of matrix.
    let big = em_problem(20_000_000);
    refused(
        em_plan(&g, &big).unwrap_err(),
        "creating the EM-logging plan",
    );
    drop(hog);
    g.stream.synchronize().unwrap();
    assert_eq!(sg_dwt_plan_reserve(p, 1024), SG_OK, "{}", message());
    sg_dwt_plan_destroy(p);
    let e = em_plan(&g, &big).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_emlog_plan_destroy(e);
}

/// A host correlation of 120 stations (the hooks' context or not): its stacks as bits, or
/// the status that refused it.
fn xcorr_host_stacks(g: &Gpu) -> Result<Vec<u32>, sg_status> {
    let (n_sta, n) = (120, 2000);
    let data = synthetic(n_sta, n, 9);
    let p = xcorr_plan(g, SG_XCORR_STACK_LINEAR)?;
    let mut s = std::ptr::null_mut();
    let st = sg_xcorr_preprocess_f32(p, data.as_ptr(), n_sta, n, n, std::ptr::null(), &mut s);
    assert_eq!(st, SG_OK, "{}", message());
    let (m, mut pairs) = (n_lags(p), 0);
    assert_eq!(
        sg_xcorr_pair_count(p, n_sta, 0, n_sta, 0, n_sta, &mut pairs),
        SG_OK
    );
    let mut out = vec![0f32; pairs * m];
    let days = [s as *const sg_xcorr_spectra];
    let st = sg_xcorr_correlate_f32(
        p,
        days.as_ptr(),
        1,
        0,
        n_sta,
        0,
        n_sta,
        out.as_mut_ptr(),
        m,
        std::ptr::null_mut(),
    );
    sg_xcorr_spectra_destroy(s);
    sg_xcorr_plan_destroy(p);
    match st {
        SG_OK => Ok(out.iter().map(|v| v.to_bits()).collect()),
        s => Err(s),
    }
}

/// A host correlation keeps its stacks on the device until its last row is made; where the
/// application's allocator has no room for them (though the device has), the call takes the
/// chunked way through the host instead: the hooks refuse the device's way, and the stacks
/// are those of the default allocator bit for bit.
#[test]
fn xcorr_host_calls_go_chunk_by_chunk_when_the_allocator_is_short() {
    let Some(plain) = gpu() else { return };
    let reference = xcorr_host_stacks(&plain).unwrap();
    let roomy = Counter::with_budget(usize::MAX / 2);
    let g = hooked(&roomy).unwrap();
    assert_eq!(
        xcorr_host_stacks(&g).unwrap(),
        reference,
        "hooks, room enough"
    );
    let (mut now, mut peak) = (0, 0);
    assert_eq!(sg_context_device_memory(g.ctx, &mut now, &mut peak), SG_OK);
    // Less than the device's way needs by half its stacks; the chunked way needs the
    // stacks' bytes less than that.
    let stacks = 4 * reference.len();
    let short = Counter::with_budget(peak - stacks / 2);
    let g = hooked(&short).unwrap();
    assert_eq!(xcorr_host_stacks(&g).unwrap(), reference, "hooks, short");
    assert!(
        short.refused.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the device's way was not refused (peak {peak} B, stacks {stacks} B)"
    );
}
