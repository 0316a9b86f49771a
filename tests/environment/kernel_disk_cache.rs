//! The on-disk kernel cache (`backend::cuda::disk_cache`): a miss compiles and writes an entry,
//! a hit runs no NVRTC, the key separates architectures, preludes and sources, damaged entries
//! (a flipped byte, a truncation, garbage, another key's entry) are ignored and rebuilt, two
//! processes filling one entry at once both succeed and leave it valid, and an unusable folder
//! only costs the cache. Needs NVRTC, no GPU (CUBINs for sm_80/sm_90 are built without one):
//! without NVRTC the tests report "skipped", unless SEISGPU_REQUIRE_NVRTC=1 makes that a failure.

use seisgpu::backend::cuda::disk_cache::{self, CacheKey, DiskCache, Origin, DIR_VARIABLE};
use seisgpu::backend::cuda::kernels;
use seisgpu::backend::cuda::nvrtc::{self, CompiledKernel, ImageKind};
use seisgpu::dwt::cuda as dwt;
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// Set in the environment of the helper processes of `two_processes_fill_one_entry_at_once`.
const CHILD_DIR: &str = "SEISGPU_TEST_CACHE_CHILD_DIR";

const SCALE: &str = "extern \"C\" __global__ void scale(float *x, float a, int n) {\n\
                     int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                     if (i < n) x[i] *= a;\n}\n";

fn nvrtc_present() -> bool {
    match nvrtc::version() {
        Ok(_) => true,
        Err(e) => {
            let required = std::env::var("SEISGPU_REQUIRE_NVRTC").is_ok_and(|v| v.trim() == "1");
            assert!(
                !required,
                "SEISGPU_REQUIRE_NVRTC=1 but NVRTC is missing: {e}"
            );
            println!("skipped: NVRTC not found ({e})");
            false
        }
    }
}

/// An empty folder of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("kernel_disk_cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A kernel file to cache: its name, source and prelude.
struct Kernel<'a>(&'a str, &'a str, &'a str);

fn key(k: &Kernel, arch: &str) -> CacheKey {
    disk_cache::cache_key(k.0, k.1, k.2, arch).unwrap()
}

/// `get_or_compile` with a compiler that counts its calls.
fn fetch(
    cache: &DiskCache,
    k: &Kernel,
    arch: &str,
    nvrtc_runs: &Cell<usize>,
) -> (CompiledKernel, Origin) {
    cache
        .get_or_compile(&key(k, arch), || {
            nvrtc_runs.set(nvrtc_runs.get() + 1);
            nvrtc::compile(k.0, k.1, k.2, arch)
        })
        .unwrap()
}

fn entry_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// dwt.cu with the first prelude the library builds for it.
fn dwt_kernel() -> Kernel<'static> {
    let prelude = dwt::dwt_kernel_preludes().swap_remove(0).1;
    Kernel(kernels::DWT.file, kernels::DWT.source, prelude.leak())
}

#[test]
fn a_miss_writes_an_entry_and_a_hit_runs_no_nvrtc() {
    if !nvrtc_present() {
        return;
    }
    let dir = scratch("hit");
    let k = dwt_kernel();
    let runs = Cell::new(0);
    let cache = DiskCache::at(&dir);

    let (first, origin) = fetch(&cache, &k, "sm_90", &runs);
    assert_eq!((origin, runs.get()), (Origin::Compiled, 1));
    assert_eq!(
        first.kind,
        ImageKind::Cubin,
        "NVRTC knows sm_90: machine code"
    );
    assert_eq!(&first.image[..4], b"\x7fELF", "a CUBIN is an ELF file");
    let path = cache.entry_path(&key(&k, "sm_90")).unwrap();
    let on_disk = std::fs::metadata(&path)
        .expect("the miss wrote its entry")
        .len() as usize;
    assert!(
        on_disk > first.image.len(),
        "entry {on_disk} bytes holds the {}-byte image and a header",
        first.image.len()
    );
    assert_eq!(
        entry_files(&dir).len(),
        1,
        "one entry, no temporary file left"
    );

    // A second cache on the same folder stands for the next process.
    let t = std::time::Instant::now();
    let (again, origin) = fetch(&DiskCache::at(&dir), &k, "sm_90", &runs);
    let hit_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(
        (origin, runs.get()),
        (Origin::Disk, 1),
        "a hit runs no NVRTC"
    );
    assert_eq!(again, first);
    println!(
        "dwt.cu for sm_90: {} kB CUBIN, hit in {hit_ms:.2} ms",
        first.image.len() / 1024
    );
    assert!(again.to_loadable().is_ok());
}

#[test]
fn the_key_separates_architectures_preludes_and_sources() {
    if !nvrtc_present() {
        return;
    }
    let dir = scratch("keys");
    let cache = DiskCache::at(&dir);
    let edited = SCALE.replace("*= a", "*= a + 1.0f");
    let kernels = [
        Kernel("scale.cu", SCALE, ""),
        Kernel("scale.cu", SCALE, "#define UNUSED 1"),
        Kernel("scale.cu", &edited, ""),
    ];
    let runs = Cell::new(0);
    let mut images = Vec::new();
    for k in &kernels {
        for arch in ["sm_80", "sm_90"] {
            let (image, origin) = fetch(&cache, k, arch, &runs);
            assert_eq!(
                origin,
                Origin::Compiled,
                "{} [{}] {arch} is a new key",
                k.0,
                k.2
            );
            images.push(image);
        }
    }
    assert_eq!(runs.get(), 6);
    assert_eq!(entry_files(&dir).len(), 6, "one entry per key");
    assert_ne!(images[0], images[1], "sm_80 and sm_90 machine code differ");
    assert_ne!(images[0], images[4], "an edited source is compiled anew");
    // Each key finds its own image again.
    for (i, k) in kernels.iter().enumerate() {
        for (j, arch) in ["sm_80", "sm_90"].iter().enumerate() {
            let (image, origin) = fetch(&cache, k, arch, &runs);
            assert_eq!((origin, &image), (Origin::Disk, &images[2 * i + j]));
        }
    }
    assert_eq!(runs.get(), 6);

    // Another key's entry under this key's name (a file-name hash collision) is refused:
    // the header echoes the key it was written for.
    let (a, b) = (key(&kernels[0], "sm_80"), key(&kernels[0], "sm_90"));
    std::fs::copy(cache.entry_path(&a).unwrap(), cache.entry_path(&b).unwrap()).unwrap();
    assert_eq!(cache.lookup(&b), None);
    assert_eq!(cache.lookup(&a), Some(images[0].clone()));
}

#[test]
fn damaged_entries_are_ignored_and_rebuilt() {
    if !nvrtc_present() {
        return;
    }
    let dir = scratch("damage");
    let cache = DiskCache::at(&dir);
    let k = Kernel("scale.cu", SCALE, "");
    let runs = Cell::new(0);
    let (good, _) = fetch(&cache, &k, "sm_90", &runs);
    let path = cache.entry_path(&key(&k, "sm_90")).unwrap();
    let intact = std::fs::read(&path).unwrap();
    let n = intact.len();

    let flip = |i: usize| {
        let mut v = intact.clone();
        v[i] ^= 0x10;
        v
    };
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("a flipped byte in the magic", flip(0)),
        ("a flipped byte in the image length", flip(22)),
        ("a flipped byte in the key echo", flip(40)),
        ("a flipped byte in the image", flip(n / 2 + 3)),
        ("a flipped byte in the checksum", flip(n - 1)),
        ("the last byte cut", intact[..n - 1].to_vec()),
        ("cut in half", intact[..n / 2].to_vec()),
        ("the header only", intact[..28].to_vec()),
        ("empty", Vec::new()),
        (
            "garbage",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
                .collect(),
        ),
        ("the entry twice", [intact.clone(), intact.clone()].concat()),
    ];
    for (what, bytes) in damages {
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.lookup(&key(&k, "sm_90")), None, "{what}: ignored");
        let before = runs.get();
        let (rebuilt, origin) = fetch(&cache, &k, "sm_90", &runs);
        assert_eq!(
            (origin, runs.get()),
            (Origin::Compiled, before + 1),
            "{what}: compiled again"
        );
        assert_eq!(rebuilt, good, "{what}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            intact,
            "{what}: the entry is rewritten"
        );
    }
    // Removed entries are simply misses.
    std::fs::remove_file(&path).unwrap();
    assert_eq!(fetch(&cache, &k, "sm_90", &runs).1, Origin::Compiled);
}

#[test]
fn an_unusable_folder_costs_only_the_cache() {
    if !nvrtc_present() {
        return;
    }
    // A folder inside a regular file cannot be created, whoever runs the test (root included).
    let dir = scratch("unusable");
    std::fs::write(dir.join("a-file"), b"not a folder").unwrap();
    let k = Kernel("scale.cu", SCALE, "");
    for cache in [
        DiskCache::at(dir.join("a-file").join("cache")),
        DiskCache::off(),
    ] {
        let runs = Cell::new(0);
        for _ in 0..2 {
            let (image, origin) = fetch(&cache, &k, "sm_90", &runs);
            assert_eq!((origin, image.kind), (Origin::Compiled, ImageKind::Cubin));
        }
        assert_eq!(runs.get(), 2, "{cache:?}: no entry, so every call compiles");
        let (image, _) = fetch(&cache, &k, "sm_90", &runs);
        assert!(
            !cache.store(&key(&k, "sm_90"), &image),
            "{cache:?}: nothing stored"
        );
    }
    assert_eq!(entry_files(&dir), ["a-file"]);
}

#[test]
fn two_processes_fill_one_entry_at_once() {
    if !nvrtc_present() {
        return;
    }
    let dir = scratch("processes");
    let spawn = || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "kernel_disk_cache::cache_filler_process",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, &dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a filler process failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("filler done"));
    }
    let k = Kernel("scale.cu", SCALE, "");
    let names = entry_files(&dir);
    assert_eq!(
        names.len(),
        1,
        "one entry and no temporary file left: {names:?}"
    );
    let found = DiskCache::at(&dir).lookup(&key(&k, "sm_90"));
    assert_eq!(found, Some(nvrtc::compile(k.0, k.1, k.2, "sm_90").unwrap()));
}

/// One of the two processes of `two_processes_fill_one_entry_at_once`: both miss and compile
/// the same entry, then each rewrites it while reading it back; every read must find a whole
/// entry (renames are atomic), never a partial one.
#[test]
#[ignore = "a helper process, started by two_processes_fill_one_entry_at_once"]
fn cache_filler_process() {
    let dir = std::env::var_os(CHILD_DIR).expect("started by two_processes_fill_one_entry_at_once");
    let cache = DiskCache::at(PathBuf::from(dir));
    let k = Kernel("scale.cu", SCALE, "");
    let runs = Cell::new(0);
    let (image, _) = fetch(&cache, &k, "sm_90", &runs);
    let key = key(&k, "sm_90");
    for _ in 0..200 {
        assert!(cache.store(&key, &image));
        assert_eq!(cache.lookup(&key).as_ref(), Some(&image));
    }
    println!("filler done ({} NVRTC runs)", runs.get());
}

#[test]
fn the_folder_comes_from_the_environment() {
    // All environment cases in one test: the variables are process-wide.
    let set = |name: &str, value: Option<&str>| match value {
        Some(v) => std::env::set_var(name, v),
        None => std::env::remove_var(name),
    };
    let saved: Vec<_> = [DIR_VARIABLE, "XDG_CACHE_HOME", "HOME"]
        .map(|n| (n, std::env::var(n).ok()))
        .into();
    let dir_of = |v: Option<&str>, xdg: Option<&str>, home: Option<&str>| {
        set(DIR_VARIABLE, v);
        set("XDG_CACHE_HOME", xdg);
        set("HOME", home);
        DiskCache::from_env().dir().map(Path::to_path_buf)
    };
    let p = |s: &str| Some(PathBuf::from(s));
    assert_eq!(
        dir_of(Some("/tmp/sg"), Some("/x"), Some("/h")),
        p("/tmp/sg")
    );
    assert_eq!(dir_of(Some("off"), Some("/x"), Some("/h")), None);
    assert_eq!(dir_of(Some("OFF"), None, Some("/h")), None);
    assert_eq!(dir_of(None, Some("/x"), Some("/h")), p("/x/seisgpu"));
    assert_eq!(
        dir_of(Some(""), Some("/x"), Some("/h")),
        p("/x/seisgpu"),
        "empty is unset"
    );
    assert_eq!(
        dir_of(None, Some("rel"), Some("/h")),
        p("/h/.cache/seisgpu"),
        "relative XDG ignored"
    );
    assert_eq!(dir_of(None, None, Some("/h")), p("/h/.cache/seisgpu"));
    assert_eq!(dir_of(None, None, None), None);
    for (n, v) in saved {
        set(n, v.as_deref());
    }
}
