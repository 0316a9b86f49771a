//! Requests the machine cannot serve fail cleanly on the CPU path: a status, the sizes in
//! the message, nothing written, and the context still usable afterwards. Absurd plan
//! requests are refused from their sizes alone: quickly, and before anything is allocated.

use crate::common;

use common::{last_error, ok, status_name, Ctx};
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::emlog::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::xcorr::*;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The tests of this file run one at a time: each measures the whole process's memory.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Resident bytes now (/proc/self/statm), 0 where there is no /proc.
fn resident() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// The peak resident bytes since the last reset (VmHWM), where resetting it is allowed.
fn peak_since_reset() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<usize>().ok()? * 1024)
}

/// Runs `f`; returns its result, how long it took and how far, at the most, it raised the
/// process's resident memory: VmHWM after resetting it (/proc/self/clear_refs), and in any
/// case RSS sampled from /proc/self/statm every 100 µs while `f` runs.
fn cost<R>(f: impl FnOnce() -> R) -> (R, Duration, usize) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = resident();
    let done = AtomicBool::new(false);
    let (r, took, sampled) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut most = resident();
            while !done.load(Ordering::Relaxed) {
                most = most.max(resident());
                std::thread::sleep(Duration::from_micros(100));
            }
            most
        });
        let t = Instant::now();
        let r = f();
        let took = t.elapsed();
        done.store(true, Ordering::Relaxed);
        (r, took, sampler.join().unwrap())
    });
    let peak = match reset {
        true => peak_since_reset().unwrap_or(0).max(sampled),
        false => sampled,
    };
    (r, took, peak.saturating_sub(before))
}

/// Runs `f` (a refused request) and asserts that it answered within 50 ms and raised the
/// resident memory by less than 10 MB; returns its status.
#[track_caller]
fn cheaply(what: &str, f: impl FnOnce() -> sg_status) -> sg_status {
    let (s, took, grew) = cost(f);
    eprintln!("{what}: answered in {took:?}, resident memory +{grew} bytes");
    assert!(
        took < Duration::from_millis(50),
        "{what}: refused after {took:?}: {}",
        last_error()
    );
    assert!(
        grew < 10 << 20,
        "{what}: resident memory grew by {grew} bytes before the refusal"
    );
    s
}

/// Asserts the status and that the message holds each of `words`.
#[track_caller]
fn refused(s: sg_status, want: sg_status, words: &[&str]) {
    let msg = last_error();
    assert_eq!(status_name(s), status_name(want), "message: {msg}");
    for w in words {
        assert!(msg.contains(w), "message lacks {w:?}: {msg}");
    }
}

/// The context still serves a small request, with the right numbers (Haar of [1, 3]).
fn still_usable(ctx: &Ctx) {
    let plan = ctx.plan(SG_WAVELET_HAAR, 2, 2);
    let x = [1.0f64, 3.0];
    let mut y = [0.0f64; 2];
    ok(sg_dwt_execute_f64(
        plan.0,
        SG_DWT_FORWARD,
        0,
        x.as_ptr(),
        y.as_mut_ptr(),
        1,
        2,
    ));
    let r = std::f64::consts::SQRT_2;
    assert!(
        (y[0] - 4.0 / r).abs() < 1e-12 && (y[1] - -2.0 / r).abs() < 1e-12,
        "{y:?}"
    );
}

#[test]
fn fxdecon_volumes_beyond_the_host_are_out_of_memory() {
    let _one = serial();
    let ctx = Ctx::cpu();
    for (n, il, xl) in [
        (1000, 1_000_000, 1_000_000),
        (64, usize::MAX, 2),
        (1 << 62, 1, 1),
    ] {
        let mut plan: *mut sg_fxdecon_plan = 0x5151 as *mut _;
        let s = sg_fxdecon_plan_create_3d(ctx.0, ptr::null(), n, il, xl, &mut plan);
        refused(s, SG_ERR_OUT_OF_MEMORY, &[&il.to_string(), "bytes"]);
        assert_eq!(plan as usize, 0x5151, "output written on failure");
        still_usable(&ctx);
    }
    let mut plan = ptr::null_mut();
    let s = sg_fxdecon_plan_create_2d(ctx.0, ptr::null(), 1 << 40, 1 << 30, &mut plan);
    refused(s, SG_ERR_OUT_OF_MEMORY, &["1099511627776 × 1 × 1073741824"]);
    // A 1,000³ layout (4 GB of f32) is a plan this host can serve.
    ok(sg_fxdecon_plan_create_3d(
        ctx.0,
        ptr::null(),
        1000,
        1000,
        1000,
        &mut plan,
    ));
    sg_fxdecon_plan_destroy(plan);
}

#[test]
fn usfft_grids_beyond_the_host_are_out_of_memory() {
    let _one = serial();
    let ctx = Ctx::cpu();
    // 1,000³ modes: a 2000³ fine grid of complex doubles per vector, 128 GB each.
    let modes = [1000usize, 1000, 1000];
    for n_vectors in [4, usize::MAX / 2] {
        let mut plan: *mut sg_usfft_plan = 0x5151 as *mut _;
        let s = sg_usfft_plan_create(
            ctx.0,
            SG_USFFT_TYPE1,
            3,
            modes.as_ptr(),
            1,
            1e-6,
            SG_USFFT_F64,
            n_vectors,
            ptr::null(),
            &mut plan,
        );
        refused(
            s,
            SG_ERR_OUT_OF_MEMORY,
            &["2000 × 2000 × 2000", &n_vectors.to_string()],
        );
        assert_eq!(plan as usize, 0x5151, "output written on failure");
        still_usable(&ctx);
    }
}

#[test]
fn pair_blocks_are_addressed_without_listing_them() {
    let _one = serial();
    let ctx = Ctx::cpu();
    let mut o = sg_xcorr_options_default();
    o.autocorrelation = 1;
    let mut plan = ptr::null_mut();
    ok(sg_xcorr_plan_create(ctx.0, &o, &mut plan));
    // Ten million stations: 5·10^13 pairs, found by arithmetic (a list would need 800 TB).
    let n = 10_000_000usize;
    let (mut count, mut i, mut j) = (0usize, 0usize, 0usize);
    ok(sg_xcorr_pair_count(plan, n, 0, n, 0, n, &mut count));
    assert_eq!(count, n * (n + 1) / 2);
    ok(sg_xcorr_pair_stations(
        plan,
        n,
        0,
        n,
        0,
        n,
        count - 1,
        &mut i,
        &mut j,
    ));
    assert_eq!((i, j), (n - 1, n - 1));
    // Row a starts at pair a·n − a(a−1)/2: pair (a, a) of row a = 12345.
    let a = 12345usize;
    ok(sg_xcorr_pair_stations(
        plan,
        n,
        0,
        n,
        0,
        n,
        a * n - a * (a - 1) / 2,
        &mut i,
        &mut j,
    ));
    assert_eq!((i, j), (a, a));
    // A block whose pair indices overflow size_t is refused, the outputs untouched.
    let big = usize::MAX / 2;
    let mut c = 7usize;
    let s = sg_xcorr_pair_count(plan, usize::MAX, 0, big, big, big, &mut c);
    refused(s, SG_ERR_INVALID_ARGUMENT, &["overflow", &big.to_string()]);
    assert_eq!(c, 7);
    sg_xcorr_plan_destroy(plan);
    still_usable(&ctx);
}

/// Asserts the status, and that the message names each of `words`, of a request refused
/// cheaply (`cheaply`).
#[track_caller]
fn refused_cheaply(what: &str, f: impl FnOnce() -> sg_status, want: sg_status, words: &[&str]) {
    let s = cheaply(what, f);
    let msg = last_error();
    assert_eq!(status_name(s), status_name(want), "{what}: {msg}");
    for w in words {
        assert!(msg.contains(w), "{what}: the message lacks {w:?}: {msg}");
    }
}

#[test]
fn absurd_emlog_grids_are_refused_before_their_values_are_built() {
    let _one = serial();
    let ctx = Ctx::cpu();
    // 16 parameters, 20 measurements: A = I over the first 16 rows, ones below.
    let (n, p) = (20usize, 16usize);
    let a: Vec<f64> = (0..n * p)
        .map(|e| {
            let (i, j) = (e / p, e % p);
            if i >= p || i == j {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let sigma0 = vec![1.0; p];
    let f0: Vec<f64> = (0..n).map(|i| if i < p { 1.0 } else { p as f64 }).collect();
    let delta = vec![0.05; n];
    let searched: Vec<i32> = (0..p as i32).collect();
    let mut plan = ptr::null_mut();
    ok(sg_emlog_plan_create(
        ctx.0,
        n,
        p,
        a.as_ptr(),
        p,
        1,
        sigma0.as_ptr(),
        f0.as_ptr(),
        f0.as_ptr(),
        delta.as_ptr(),
        p,
        searched.as_ptr(),
        &mut plan,
    ));
    // 16 axes of 2^24 values: 2^384 models, 2 GB of axis values were they built.
    let kinds = [SG_EMLOG_AXIS_LINEAR; 16];
    let counts = [1usize << 24; 16];
    let (lo, hi) = ([0.5; 16], [1.5; 16]);
    let mut result: *mut sg_emlog_result = 0x5151 as *mut _;
    let search = || {
        sg_emlog_search(
            plan,
            kinds.as_ptr(),
            counts.as_ptr(),
            lo.as_ptr(),
            hi.as_ptr(),
            ptr::null(),
            0,
            0,
            ptr::null(),
            ptr::null(),
            &mut result,
        )
    };
    refused_cheaply(
        "16 axes of 2^24 values",
        search,
        SG_ERR_INVALID_ARGUMENT,
        &["2^63", "16777216"],
    );
    assert_eq!(result as usize, 0x5151, "output written on failure");
    sg_emlog_plan_destroy(plan);
    still_usable(&ctx);
}

#[test]
fn absurd_wave_packet_layouts_are_refused_from_their_sizes() {
    let _one = serial();
    let ctx = Ctx::cpu();
    let big = 1usize << 20;
    for (dim, shape, precision) in [
        (3, vec![big; 3], SG_WAVEPACKET_F64),
        (2, vec![big, big], SG_WAVEPACKET_F32),
        (3, vec![big, big, 8], SG_WAVEPACKET_F32),
    ] {
        let mut out: *mut sg_wavepacket_layout = 0x5151 as *mut _;
        // The automatic level count of a 2^20 axis would be 17, past the 12 allowed.
        let o = sg_wavepacket_layout_options {
            levels: 12,
            ..sg_wavepacket_layout_options_default()
        };
        let create = || {
            sg_wavepacket_layout_create_with_options(
                ctx.0,
                dim,
                shape.as_ptr(),
                precision,
                &o,
                &mut out,
            )
        };
        let what = format!("a layout of {shape:?}");
        refused_cheaply(&what, create, SG_ERR_OUT_OF_MEMORY, &["1048576"]);
        assert_eq!(out as usize, 0x5151, "{what}: output written on failure");
    }
    let huge = [usize::MAX, 8, 8];
    let mut out = ptr::null_mut();
    let create = || {
        sg_wavepacket_layout_create_with_options(ctx.0, 3, huge.as_ptr(), 1, ptr::null(), &mut out)
    };
    refused_cheaply(
        "a layout of usize::MAX samples",
        create,
        SG_ERR_INVALID_ARGUMENT,
        &["2^20"],
    );
    for (dim, volume, tile) in [
        (3, vec![usize::MAX; 3], vec![16usize; 3]),
        (2, vec![1 << 31, 1 << 31], vec![8, 8]),
        (2, vec![1 << 40, 8], vec![64, 64]),
    ] {
        let mut out: *mut sg_wavepacket_volume = 0x5151 as *mut _;
        let create = || {
            let (v, t) = (volume.as_ptr(), tile.as_ptr());
            sg_wavepacket_volume_create(ctx.0, dim, v, t, SG_WAVEPACKET_F32, ptr::null(), &mut out)
        };
        let what = format!("a volume of {volume:?} in tiles of {tile:?}");
        refused_cheaply(
            &what,
            create,
            SG_ERR_OUT_OF_MEMORY,
            &[&volume[0].to_string()],
        );
        assert_eq!(out as usize, 0x5151, "{what}: output written on failure");
    }
    still_usable(&ctx);
}

#[test]
fn absurd_xcorr_windows_are_refused_from_their_sizes() {
    let _one = serial();
    let ctx = Ctx::cpu();
    // The longest window an option allows, 2^31 samples: its band and lags come from the
    // sizes alone; a host that cannot hold its FFT refuses it.
    let mut o = sg_xcorr_options_default();
    o.sampling_rate = 1.0;
    o.cc_len = (1u64 << 31) as f64;
    o.step = o.cc_len;
    o.freqmin = 0.01;
    o.freqmax = 0.4;
    o.maxlag = 100.0;
    let mut plan = ptr::null_mut();
    let s = cheaply("a window of 2^31 samples", || {
        sg_xcorr_plan_create(ctx.0, &o, &mut plan)
    });
    match s {
        SG_OK => sg_xcorr_plan_destroy(plan),
        s => refused(s, SG_ERR_OUT_OF_MEMORY, &["2147483648", "bytes"]),
    }
    // Windows of 2^20 samples a sample apart: a day of 2^21 samples would give 2^20
    // windows of 2^19 band bins, 4 TB of spectra for an 8 MB day.
    o.cc_len = (1u64 << 20) as f64;
    o.step = 1.0;
    o.freq_norm = SG_XCORR_FREQ_NORM_NONE;
    let mut plan = ptr::null_mut();
    ok(sg_xcorr_plan_create(ctx.0, &o, &mut plan));
    let n = 1usize << 21;
    let day = vec![1.0f32; n];
    let mut spectra: *mut sg_xcorr_spectra = 0x5151 as *mut _;
    let preprocess =
        || sg_xcorr_preprocess_f32(plan, day.as_ptr(), 1, n, n, ptr::null(), &mut spectra);
    refused_cheaply(
        "2^20 windows of 2^19 bins",
        preprocess,
        SG_ERR_OUT_OF_MEMORY,
        &["1048576", "524288", "bytes"],
    );
    assert_eq!(spectra as usize, 0x5151, "output written on failure");
    sg_xcorr_plan_destroy(plan);
    still_usable(&ctx);
}

#[test]
fn absurd_fxdecon_windows_are_refused_from_their_sizes() {
    let _one = serial();
    let ctx = Ctx::cpu();
    let d = sg_fxdecon_options_default();
    let su = sg_fxdecon_options_seismic_unix();
    let sections = [
        // An operator of 2^23 traces on each side.
        (
            sg_fxdecon_options {
                operator_traces: 1 << 23,
                window_traces: 1 << 25,
                ..d
            },
            "8388608",
        ),
        // sufxdecon with a 10^9 s time window: its automatic FFT length follows the window.
        (
            sg_fxdecon_options {
                time_window_s: 1e9,
                ..su
            },
            "bytes",
        ),
        (
            sg_fxdecon_options {
                time_window_s: 1e30,
                ..su
            },
            "time_window",
        ),
        (
            sg_fxdecon_options {
                taper_s: 1e30,
                ..su
            },
            "taper",
        ),
    ];
    for (k, (o, word)) in sections.iter().enumerate() {
        let mut plan: *mut sg_fxdecon_plan = 0x5151 as *mut _;
        let what = format!("section case {k}");
        let create = || sg_fxdecon_plan_create_2d(ctx.0, o, 1000, 100, &mut plan);
        let s = cheaply(&what, create);
        assert!(
            s == SG_ERR_OUT_OF_MEMORY || s == SG_ERR_INVALID_ARGUMENT,
            "{what}: {} {}",
            status_name(s),
            last_error()
        );
        assert!(last_error().contains(word), "{what}: {}", last_error());
        assert_eq!(plan as usize, 0x5151, "{what}: output written on failure");
    }
    // An F-XY operator of (2^22 + 1) × 7 traces, and an FFT of 2^31 − 2 points for
    // 1000-sample traces, 10^5 of them per crossline (800 MB of data).
    let volumes = [
        (
            sg_fxdecon_options {
                operator_inline: (1 << 22) + 1,
                window_inline: 1 << 23,
                ..d
            },
            100,
            "4194305",
        ),
        (
            sg_fxdecon_options {
                fft_length: i32::MAX - 1,
                ..d
            },
            100_000,
            "2147483646",
        ),
    ];
    for (o, nx, word) in volumes {
        let mut plan: *mut sg_fxdecon_plan = 0x5151 as *mut _;
        let create = || sg_fxdecon_plan_create_3d(ctx.0, &o, 1000, nx, 2, &mut plan);
        let what = format!("a volume whose windows hold {word}");
        refused_cheaply(&what, create, SG_ERR_OUT_OF_MEMORY, &[word, "bytes"]);
        assert_eq!(plan as usize, 0x5151, "{what}: output written on failure");
    }
    still_usable(&ctx);
}

#[test]
fn absurd_usfft_and_dwt_plans_are_refused_from_their_sizes() {
    let _one = serial();
    let ctx = Ctx::cpu();
    let huge = 1usize << 30;
    for (dim, modes, want, word) in [
        (3, [huge; 3], SG_ERR_OUT_OF_MEMORY, "bytes"),
        (2, [huge, huge, 1], SG_ERR_OUT_OF_MEMORY, "bytes"),
        (1, [usize::MAX, 1, 1], SG_ERR_UNSUPPORTED, "2^30"),
    ] {
        let mut plan: *mut sg_usfft_plan = 0x5151 as *mut _;
        let create = || {
            let m = modes.as_ptr();
            sg_usfft_plan_create(
                ctx.0,
                1,
                dim,
                m,
                1,
                1e-6,
                SG_USFFT_F64,
                1,
                ptr::null(),
                &mut plan,
            )
        };
        refused_cheaply(&format!("USFFT modes {modes:?}"), create, want, &[word]);
        assert_eq!(plan as usize, 0x5151, "output written on failure");
    }
    // Traces of 2^62 samples: a power of two, but no host holds one.
    for n in [1usize << 62, 1 << 50] {
        let mut plan: *mut sg_dwt_plan = 0x5151 as *mut _;
        let create = || sg_dwt_plan_create(ctx.0, SG_WAVELET_DAUBECHIES, 4, n, &mut plan);
        refused_cheaply(
            &format!("DWT of {n} samples"),
            create,
            SG_ERR_OUT_OF_MEMORY,
            &[&n.to_string(), "bytes"],
        );
        assert_eq!(plan as usize, 0x5151, "output written on failure");
    }
    still_usable(&ctx);
}
