//! The GPU correlation against the CPU and the references, on the device machine:
//! NoisePy's stacks of the UnderVolc day (correlation ≥ 0.999; max error ≤ 2e-3 of max
//! linear, 5e-3 nonlinear: one one-bit sample whose sign differs between float and
//! NoisePy's rounding moves a whitened window by ~1e-3), the pairwise-sum, gap/spike/dead-station, several-day,
//! two-context block and nonlinear checks of tests/abi/xcorr_cases.rs, NoisePy's deconv,
//! coherency and substacks (≤ 2e-3 of max), the method, substack and import checks of
//! tests/support/xcorr_common/methods.rs, and GPU spectra, stacks and substacks (stacked on the
//! device for PWS and robust) against the CPU's on cases large enough to use several tiles,
//! pair chunks and batches (≤ 1e-4 of max). Without a CUDA device the test reports "skipped", unless
//! SEISGPU_REQUIRE_CUDA=1 makes that a failure. One test function: one context, in order.

use crate::xcorr_common;

use seisgpu::backend::BackendRequest;
use seisgpu::ffi::context::*;
use seisgpu::ffi::xcorr::*;
use std::time::Instant;
use xcorr_common::*;

fn max_rel(a: &[f32], b: &[f32]) -> f64 {
    let scale = b
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs() as f64))
        .max(1e-30);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs() as f64))
        / scale
}

/// Runs one section, catching its panic so that the later sections still run (device
/// time is scarce: one run should report everything); returns the failure, if any.
fn section(name: &str, body: impl FnOnce()) -> Option<String> {
    let t = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    let secs = t.elapsed().as_secs_f64();
    match r {
        Ok(()) => {
            println!("{name:<44} ok    {secs:>8.3} s");
            None
        }
        Err(e) => {
            let what = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            println!("{name:<44} FAIL  {secs:>8.3} s: {what}");
            Some(format!("{name}: {what}"))
        }
    }
}

/// Substacks (hourly-like groups of 4 windows, one window in none) of 60 stations, on the
/// 8 MiB budget's several tiles and batches, for linear, robust and deconvolution stacks:
/// GPU against CPU, stacks and substacks, to 1e-4 of max.
fn gpu_vs_cpu_substacks(gpu: &Context, cpu: &Context, data: &[f32], valid: &[u8], n: usize) {
    let stations = 60;
    for (stack, cc) in [
        (SG_XCORR_STACK_LINEAR, SG_XCORR_CC_XCORR),
        (SG_XCORR_STACK_ROBUST, SG_XCORR_CC_XCORR),
        (SG_XCORR_STACK_LINEAR, SG_XCORR_CC_DECONV),
        (SG_XCORR_STACK_PWS, SG_XCORR_CC_COHERENCY),
    ] {
        let o = sg_xcorr_options {
            stack_method: stack,
            cc_method: cc,
            autocorrelation: 1,
            ..small_options()
        };
        let (pg, pc) = (gpu.plan(&o), cpu.plan(&o));
        let d = &data[..stations * n];
        let v = &valid[..stations * n];
        let (sg, sc) = (
            pg.preprocess(d, stations, n, Some(v)).unwrap(),
            pc.preprocess(d, stations, n, Some(v)).unwrap(),
        );
        let nw = sg.host().n_windows;
        let mut labels: Vec<i32> = (0..nw).map(|w| (w / 4) as i32).collect();
        labels[1] = SG_XCORR_NO_GROUP;
        let n_groups = nw.div_ceil(4);
        let block = (0, stations, 0, stations);
        let (ag, bg) = pg
            .correlate_substacks(&[&sg], block, &labels, n_groups)
            .unwrap();
        let (ac, bc) = pc
            .correlate_substacks(&[&sc], block, &labels, n_groups)
            .unwrap();
        assert_eq!((&ag.counts, &bg.counts), (&ac.counts, &bc.counts));
        let (e, es) = (
            max_rel(&ag.stacks, &ac.stacks),
            max_rel(&bg.stacks, &bc.stacks),
        );
        println!("  stack {stack} cc {cc}: {stations} stations, {n_groups} groups: stacks {e:.2e}, substacks {es:.2e}");
        assert!(
            e <= 1e-4 && es <= 1e-4,
            "stack {stack} cc {cc}: {e:.2e}, {es:.2e}"
        );
    }
}

#[test]
fn gpu_correlation_matches_cpu_and_references() {
    let Some(gpu) = Context::cuda() else {
        assert!(
            std::env::var("SEISGPU_REQUIRE_CUDA").map_or(true, |v| v.trim() != "1"),
            "SEISGPU_REQUIRE_CUDA=1 but no CUDA context: {}",
            last_error()
        );
        println!("skipped: no CUDA device ({})", last_error());
        return;
    };
    let cpu = Context::new(SG_BACKEND_CPU);

    let mut failures = Vec::new();
    failures.extend(section("NoisePy UnderVolc day (GPU)", || {
        noisepy::run_against_noisepy(BackendRequest::Cuda, 2e-3, 5e-3)
    }));
    failures.extend(section("matrix product = pairwise sums", || {
        check_against_pairwise_sums(&gpu, 1e-4)
    }));
    failures.extend(section("gaps, spikes, dead station", || {
        check_gaps_spikes_dead(&gpu)
    }));
    failures.extend(section("several days", || check_several_days(&gpu, 1e-4)));
    failures.extend(section("blocks on two GPU contexts", || {
        let gpu2 = Context::cuda().unwrap();
        check_blocks_two_contexts(&gpu, &gpu2, 1e-5)
    }));
    failures.extend(section("PWS and robust stacks", || {
        check_nonlinear_against_reference(&gpu, 1e-3)
    }));
    failures.extend(section(
        "NoisePy deconv, coherency, substacks (GPU)",
        || noisepy::run_methods_against_noisepy(BackendRequest::Cuda, 2e-3),
    ));
    failures.extend(section("deconv and coherency vs references", || {
        methods::check_methods_against_reference(&gpu, 1e-3)
    }));
    failures.extend(section("substacks vs pairwise sums", || {
        methods::check_substacks(&gpu, 1e-3)
    }));
    failures.extend(section("imported spectra bit for bit", || {
        methods::check_import(&gpu)
    }));

    // GPU against CPU, all stack methods and normalisations; an 8 MiB budget makes the
    // 260 stations take two preprocessing chunks and 3 × 3 correlation tiles, and their
    // stacks (14 MB) come to the host chunk by chunk; the 40 stations' stay on the device
    // until the call is done.
    seisgpu::xcorr::cuda::set_memory_budget(Some(8 << 20));
    seisgpu::xcorr::cuda::set_result_budget(Some(8 << 20));
    let (n_sta, n) = (260, 2000);
    let data = synthetic(n_sta, n, 77);
    let mut valid = vec![1u8; n_sta * n];
    valid[5 * n + 100..5 * n + 300].fill(0);
    for (time_norm, freq_norm, stack) in [
        (
            SG_XCORR_TIME_NORM_NONE,
            SG_XCORR_FREQ_NORM_RUNNING_MEAN,
            SG_XCORR_STACK_LINEAR,
        ),
        (
            SG_XCORR_TIME_NORM_ONE_BIT,
            SG_XCORR_FREQ_NORM_PHASE_ONLY,
            SG_XCORR_STACK_LINEAR,
        ),
        (
            SG_XCORR_TIME_NORM_RUNNING_MEAN,
            SG_XCORR_FREQ_NORM_NONE,
            SG_XCORR_STACK_LINEAR,
        ),
        (
            SG_XCORR_TIME_NORM_NONE,
            SG_XCORR_FREQ_NORM_RUNNING_MEAN,
            SG_XCORR_STACK_PWS,
        ),
        (
            SG_XCORR_TIME_NORM_NONE,
            SG_XCORR_FREQ_NORM_RUNNING_MEAN,
            SG_XCORR_STACK_ROBUST,
        ),
    ] {
        let name = format!("GPU vs CPU, time {time_norm} freq {freq_norm} stack {stack}");
        failures.extend(section(&name, || {
        let o = sg_xcorr_options {
            time_norm,
            freq_norm,
            stack_method: stack,
            autocorrelation: 1,
            ..small_options()
        };
        // One-bit: a sample within rounding of 0 may take another sign on the GPU (float)
        // than on the CPU (double), moving its window's whitened spectrum by ~10 %: fewer
        // stations, stacks only, to 2e-3.
        let one_bit = time_norm == SG_XCORR_TIME_NORM_ONE_BIT;
        let stations = if stack == SG_XCORR_STACK_LINEAR && !one_bit {
            n_sta
        } else {
            40
        };
        let (pg, pc) = (gpu.plan(&o), cpu.plan(&o));
        let sg = pg
            .preprocess(
                &data[..stations * n],
                stations,
                n,
                Some(&valid[..stations * n]),
            )
            .unwrap();
        let sc = pc
            .preprocess(
                &data[..stations * n],
                stations,
                n,
                Some(&valid[..stations * n]),
            )
            .unwrap();
        let (hg, hc) = (sg.host(), sc.host());
        assert_eq!(hg.kept, hc.kept, "kept windows");
        let flat = |h: &HostSpectra| {
            h.values
                .iter()
                .flat_map(|c| [c[0] as f32, c[1] as f32])
                .collect::<Vec<_>>()
        };
        let e_spec = max_rel(&flat(&hg), &flat(&hc));
        assert!(one_bit || e_spec <= 1e-4, "spectra differ by {e_spec:.2e}");
        let block = (0, stations, 0, stations);
        let (cg, cc) = (
            pg.correlate(&[&sg], block).unwrap(),
            pc.correlate(&[&sc], block).unwrap(),
        );
        assert_eq!(cg.counts, cc.counts);
        let e = max_rel(&cg.stacks, &cc.stacks);
        println!("  time_norm {time_norm} freq_norm {freq_norm} stack {stack}: {stations} stations, spectra {e_spec:.2e}, stacks {e:.2e}");
        let tol = if one_bit { 2e-3 } else { 1e-4 };
        assert!(e <= tol, "stacks differ by {e:.2e}");
        }));
    }
    failures.extend(section("GPU vs CPU substacks and methods", || {
        gpu_vs_cpu_substacks(&gpu, &cpu, &data, &valid, n)
    }));
    seisgpu::xcorr::cuda::set_memory_budget(None);
    seisgpu::xcorr::cuda::set_result_budget(None);
    assert!(
        failures.is_empty(),
        "failed sections:\n{}",
        failures.join("\n")
    );
}
