//! Every file of `kernels/` is embedded (`kernels::ALL`) and compiles with NVRTC, with every
//! prelude the library can produce, for sm_70, sm_80 and sm_90 (as CUBINs; PTX for a GPU
//! newer than the NVRTC). A file's few representative preludes are compiled to PTX for all
//! three; its many others go through NVRTC's front end only (`nvrtc::check_syntax`), which
//! finds what a prelude can break (constants, template instances, device-code rules) in a
//! twentieth of a compile's time. Needs no GPU, only NVRTC:
//! without it the test reports "skipped", unless SEISGPU_REQUIRE_NVRTC=1 makes that a failure.
//!
//! A variant that compiled is remembered under target/ (`checked_variants`), keyed by
//! everything its output depends on, and not compiled again by the next run: a rerun
//! compiles only what changed, a fresh target/ (as on CI) every variant.

use seisgpu::backend::cuda::disk_cache::{fnv1a, CacheKey, DiskCache};
use seisgpu::backend::cuda::{kernels, nvrtc};
use seisgpu::Error;
use seisgpu::{dwt::cuda as dwt, fxdecon::cuda as fxdecon, usfft::cuda as usfft};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const ARCHS: [&str; 3] = ["sm_70", "sm_80", "sm_90"];

fn nvrtc_required() -> bool {
    std::env::var("SEISGPU_REQUIRE_NVRTC").is_ok_and(|v| v.trim() == "1")
}

/// How a variant is checked: compiled to PTX, or through the front end only.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    Ptx,
    Syntax,
}

/// A prelude of a kernel file: its label, its text, the architectures and how to check it.
type Variant = (String, String, &'static [&'static str], Check);

/// The preludes a kernel file is compiled with by the library, each with the architectures
/// to check it for. Files with many preludes compile a few to PTX for all three
/// architectures and check every other one's front end for one: a prelude only sets
/// constants (filter taps, widths, precision), and code generation does not depend on
/// which of them, so the few (short and long filters, each dimension, both precisions
/// among them) cover what the back end and each architecture add.
fn preludes_for(file: &str) -> Vec<Variant> {
    match file {
        "dwt.cu" => few_for_every_arch(
            dwt::dwt_kernel_preludes(),
            &["sm_80"],
            &[
                "haar 2 f32",
                "haar 2 f64",
                "haar_centered 2 f32",
                "daubechies 20 f32",
                "daubechies 20 f64",
                "daubechies_centered 20 f64",
                "bspline 103 f32",
                "bspline 309 f64",
                "bspline_centered 309 f32",
            ],
        ),
        "usfft.cu" => few_for_every_arch(
            usfft::usfft_kernel_preludes(),
            &["sm_80"],
            &[
                "1d prolate w7 f32",
                "2d es w8 f64",
                "3d es w8 f32",
                "3d prolate w10 f64",
                "3d es w16 f64",
                "3d gauss w12 f64",
            ],
        ),
        "fxdecon.cu" => vec![("f32".to_string(), fxdecon::prelude(), &ARCHS, Check::Ptx)],
        "wavepacket.cu" | "wavepacket_windows.cu" => {
            with_archs(seisgpu::wavepacket::cuda::preludes(), &ARCHS)
        }
        "emlog.cu" => few_for_every_arch(
            seisgpu::emlog::cuda::preludes(),
            &["sm_90"],
            &["p = 1", "p = 9", "p = 16"],
        ),
        // A file without constants baked in by its host code.
        _ => vec![("no prelude".to_string(), String::new(), &ARCHS, Check::Ptx)],
    }
}

/// The labels in `few` compiled for all of `ARCHS`, every other prelude's front end checked
/// for the architectures in `one`. A label of `few` that the library no longer makes fails
/// the test, so the list cannot silently stop covering anything.
fn few_for_every_arch(
    preludes: Vec<(String, String)>,
    one: &'static [&'static str],
    few: &[&str],
) -> Vec<Variant> {
    for label in few {
        assert!(
            preludes.iter().any(|(l, _)| l == label),
            "{label:?} is not a prelude the library makes"
        );
    }
    preludes
        .into_iter()
        .map(|(label, prelude)| {
            if few.contains(&label.as_str()) {
                (label, prelude, &ARCHS[..], Check::Ptx)
            } else {
                (label, prelude, one, Check::Syntax)
            }
        })
        .collect()
}

/// The variants that compiled in an earlier run, each under the key of what decides its
/// output: file, source, prelude, target, options and NVRTC version. Deleting the folder
/// makes the next run compile every variant again.
fn checked_variants() -> DiskCache {
    DiskCache::at(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvrtc_compile"))
}

fn variant_key(
    file: &str,
    source: &str,
    prelude: &str,
    target: &nvrtc::Target,
    check: Check,
) -> CacheKey {
    let (major, minor) = nvrtc::version().expect("NVRTC was probed");
    let text = format!(
        "nvrtc_compile check\nfile {file}\nsource fnv1a64 {:016x}\nprelude fnv1a64 {:016x}\n\
         target {:?} {}\noptions {}\ncheck {check:?}\nnvrtc {major}.{minor}\n",
        fnv1a(source.as_bytes()),
        fnv1a(prelude.as_bytes()),
        target.kind,
        target.gpu_architecture,
        nvrtc::options(target).join(" "),
    );
    CacheKey::new(file, &target.gpu_architecture, text)
}

fn with_archs(preludes: Vec<(String, String)>, archs: &'static [&'static str]) -> Vec<Variant> {
    preludes
        .into_iter()
        .map(|(l, p)| (l, p, archs, Check::Ptx))
        .collect()
}

#[test]
fn every_kernel_file_is_registered() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let registered: Vec<&str> = kernels::ALL.iter().map(|k| k.file).collect();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("kernels/ is readable") {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".cu") || name.ends_with(".cuh") {
            files.push(name);
        }
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "no kernel files found in {}",
        dir.display()
    );
    for f in &files {
        assert!(
            registered.contains(&f.as_str()),
            "kernels/{f} is not registered in seisgpu::backend::cuda::kernels::ALL"
        );
        let embedded = kernels::ALL.iter().find(|k| k.file == f).unwrap();
        let on_disk = std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(
            embedded.source, on_disk,
            "kernels/{f}: embedded copy is stale"
        );
    }
    for r in &registered {
        assert!(
            files.iter().any(|f| f == r),
            "ALL names {r}, which kernels/ does not hold"
        );
    }
}

#[test]
fn every_kernel_compiles_for_every_prelude_and_arch() {
    // Probe once: without NVRTC every compile would fail the same way.
    match nvrtc::compile(
        "probe.cu",
        "extern \"C\" __global__ void probe() {}",
        "",
        "sm_70",
    ) {
        Err(Error::CudaUnavailable(why)) => {
            assert!(
                !nvrtc_required(),
                "SEISGPU_REQUIRE_NVRTC=1 but NVRTC is missing: {why}"
            );
            println!("skipped: NVRTC not found ({why})");
            return;
        }
        Err(e) => panic!("NVRTC failed on an empty kernel: {e}"),
        Ok(_) => {}
    }
    let checked = checked_variants();
    let mut jobs = Vec::new();
    let mut unchanged = 0;
    for k in kernels::ALL {
        for (label, prelude, archs, check) in preludes_for(k.file) {
            for &arch in archs {
                // PTX for the architecture's virtual target: NVRTC's front end checks
                // every variant; the ptxas stage (CUBIN) is covered by the probe test
                // below and by every GPU run, and would multiply this test's minutes.
                let ptx = nvrtc::Target {
                    kind: nvrtc::ImageKind::Ptx,
                    gpu_architecture: arch.replace("sm_", "compute_"),
                };
                let key = variant_key(k.file, k.source, &prelude, &ptx, check);
                if checked.lookup(&key).is_some() {
                    unchanged += 1;
                } else {
                    jobs.push((*k, label.clone(), prelude.clone(), arch, ptx, check, key));
                }
            }
        }
    }
    println!(
        "{unchanged} variants compiled as they are by an earlier run ({}); {} to compile",
        checked.dir().unwrap().display(),
        jobs.len()
    );
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let started = std::time::Instant::now();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(16);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((k, label, prelude, arch, ptx, check, key)) = jobs.get(i) else {
                    break;
                };
                let t = std::time::Instant::now();
                let result = match check {
                    Check::Ptx => nvrtc::compile_for(k.file, k.source, prelude, arch, ptx)
                        .map(|k| format!("ok ({} kB {:?})", k.image.len() / 1024, k.kind)),
                    Check::Syntax => nvrtc::check_syntax(k.file, k.source, prelude, arch, ptx)
                        .map(|()| "ok (front end)".to_string()),
                };
                let status = result.as_deref().unwrap_or("FAILED").to_string();
                if result.is_ok() {
                    // Only the fact that it compiled is needed, not the image.
                    let mark = nvrtc::CompiledKernel {
                        kind: ptx.kind,
                        image: Vec::new(),
                    };
                    checked.store(key, &mark);
                }
                println!(
                    "{:<10} {:<32} {:<6} {:>6.2} s  {status}",
                    k.file,
                    label,
                    arch,
                    t.elapsed().as_secs_f64()
                );
                if let Err(e) = result {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{} [{label}] {arch}: {e}", k.file));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    println!(
        "{} compilations in {:.1} s, {} failed",
        jobs.len(),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "NVRTC failures:\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn a_kernel_that_does_not_compile_reports_nvrtc_log() {
    let broken = "extern \"C\" __global__ void k(float *x) { x[0] = undeclared_name; }";
    match nvrtc::compile("broken.cu", broken, "", "sm_80") {
        Err(Error::KernelCompile(log)) => {
            assert!(log.contains("broken.cu"), "message names the file: {log}");
            assert!(
                log.contains("undeclared_name"),
                "message holds NVRTC's log: {log}"
            );
            assert_eq!(
                Error::KernelCompile(String::new()).status(),
                seisgpu::ffi::status::SG_ERR_KERNEL_COMPILE
            );
            // The front-end check finds the same error, and one a prelude's constant
            // causes only in a template's instance.
            let front = nvrtc::Target {
                kind: nvrtc::ImageKind::Ptx,
                gpu_architecture: "compute_80".into(),
            };
            let check =
                |file, source, prelude| nvrtc::check_syntax(file, source, prelude, "sm_80", &front);
            match check("broken.cu", broken, "") {
                Err(Error::KernelCompile(log)) => assert!(log.contains("undeclared_name"), "{log}"),
                other => panic!("expected SG_ERR_KERNEL_COMPILE, got {other:?}"),
            }
            let taps = "template <int N> __device__ float f(float x) { \
                        static_assert(N < 10, \"too many taps\"); return x * N; }\n\
                        extern \"C\" __global__ void k(float *x) { x[0] = f<TAPS>(x[1]); }";
            assert!(check("taps.cu", taps, "#define TAPS 5").is_ok());
            match check("taps.cu", taps, "#define TAPS 20") {
                Err(Error::KernelCompile(log)) => assert!(log.contains("too many taps"), "{log}"),
                other => panic!("expected SG_ERR_KERNEL_COMPILE, got {other:?}"),
            }
        }
        Err(Error::CudaUnavailable(why)) => {
            assert!(
                !nvrtc_required(),
                "SEISGPU_REQUIRE_NVRTC=1 but NVRTC is unavailable: {why}"
            );
            println!("skipped: NVRTC not found ({why})");
        }
        other => panic!(
            "expected SG_ERR_KERNEL_COMPILE, got {:?}",
            other.map(|_| ())
        ),
    }
}

#[test]
fn a_gpu_this_nvrtc_knows_gets_a_cubin_a_newer_one_ptx() {
    let Ok((major, minor)) = nvrtc::version() else {
        assert!(
            !nvrtc_required(),
            "SEISGPU_REQUIRE_NVRTC=1 but NVRTC is missing"
        );
        println!("skipped: NVRTC not found");
        return;
    };
    let probe = "extern \"C\" __global__ void probe(float *x) { x[0] = 1.0f; }";
    for arch in ARCHS {
        let t = nvrtc::target(arch).unwrap();
        assert_eq!(
            (t.kind, t.gpu_architecture.as_str()),
            (nvrtc::ImageKind::Cubin, arch)
        );
        let k = nvrtc::compile("probe.cu", probe, "", arch).unwrap();
        assert_eq!(&k.image[..4], b"\x7fELF", "{arch}: a CUBIN is an ELF file");
    }
    // An architecture newer than any NVRTC knows: PTX of the newest virtual one below it,
    // which the driver compiles forward.
    let t = nvrtc::target("sm_990").unwrap();
    assert_eq!(t.kind, nvrtc::ImageKind::Ptx);
    assert!(t.gpu_architecture.starts_with("compute_"), "{t:?}");
    let k = nvrtc::compile("probe.cu", probe, "", "sm_990").unwrap();
    let text = String::from_utf8(k.image.clone()).expect("PTX is text");
    assert!(
        text.contains(".entry probe") && !text.contains('\0'),
        "{text}"
    );
    println!("NVRTC {major}.{minor}: sm_990 → {}", t.gpu_architecture);
    // Older than any it knows, or not an architecture at all: a clear compile error.
    for arch in ["sm_10", "gfx90a"] {
        match nvrtc::target(arch) {
            Err(Error::KernelCompile(why)) => assert!(why.contains(arch), "{why}"),
            other => panic!("{arch}: expected SG_ERR_KERNEL_COMPILE, got {other:?}"),
        }
    }
}
