//! Compiled kernels kept on disk between processes, so that a fresh context loads a CUBIN
//! instead of running NVRTC. The cache is an optimisation only: whatever goes wrong with it
//! (no home folder, a read-only disk, a damaged entry) the kernel is compiled as before.
//!
//! Folder: `$SEISGPU_CACHE_DIR` if set (`off` disables the cache), else
//! `$XDG_CACHE_HOME/seisgpu`, else `$HOME/.cache/seisgpu`. One file per key; deleting the
//! folder clears it. An entry is written to a temporary file in the same folder and renamed
//! into place, so concurrent processes never see a partial entry. Layout (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SGKCACHE` |
//! | 4 | format version |
//! | 4 | image kind: 0 CUBIN, 1 PTX |
//! | 4 | key length K |
//! | 8 | image length N |
//! | K | the key text, echoed (a hash collision of file names is caught here) |
//! | N | the image |
//! | 8 | FNV-1a 64 of every byte before it |

use super::nvrtc::{options, target, version, CompiledKernel, ImageKind};
use crate::error::Result;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable that moves (or, set to `off`, disables) the cache.
pub const DIR_VARIABLE: &str = "SEISGPU_CACHE_DIR";

const MAGIC: &[u8; 8] = b"SGKCACHE";
const FORMAT: u32 = 1;
const HEADER_BYTES: usize = 8 + 4 + 4 + 4 + 8;

/// 64-bit FNV-1a: stable across runs, platforms and Rust versions (std's hashers are not),
/// and any single changed byte changes it.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Everything that decides a compiled image, as text; its hash names the entry's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    file_name: String,
    text: String,
}

impl CacheKey {
    /// `kernel` ("dwt.cu") and `arch` ("sm_90") only make the file name readable; `text`
    /// must hold everything the image depends on.
    pub fn new(kernel: &str, arch: &str, text: String) -> CacheKey {
        let stem = kernel.strip_suffix(".cu").unwrap_or(kernel);
        let readable: String = format!("{stem}-{arch}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        CacheKey {
            file_name: format!("{readable}-{:016x}.sgk", fnv1a(text.as_bytes())),
            text,
        }
    }

    pub fn file_name(&self) -> &str {
        &self.file_name
    }
}

/// Where a compiled image came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Disk,
    Compiled,
}

/// The on-disk cache of one process (a folder, or none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCache {
    dir: Option<PathBuf>,
}

impl Default for DiskCache {
    fn default() -> DiskCache {
        DiskCache::from_env()
    }
}

impl DiskCache {
    /// The folder named by the environment (see the module documentation).
    pub fn from_env() -> DiskCache {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let dir = match var(DIR_VARIABLE) {
            Some(v) if v.eq_ignore_ascii_case("off") => None,
            Some(v) => Some(PathBuf::from(v)),
            None => var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                // The XDG specification has relative paths ignored.
                .filter(|p| p.is_absolute())
                .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|base| base.join("seisgpu")),
        };
        DiskCache { dir }
    }

    /// A cache in `dir` (created on first store).
    pub fn at(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: Some(dir.into()),
        }
    }

    /// No cache: every image is compiled.
    pub fn off() -> DiskCache {
        DiskCache { dir: None }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The file that holds (or would hold) `key`'s entry.
    pub fn entry_path(&self, key: &CacheKey) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(&key.file_name))
    }

    /// `key`'s image from disk, or from `compile` (then stored for the next process).
    pub fn get_or_compile(
        &self,
        key: &CacheKey,
        compile: impl FnOnce() -> Result<CompiledKernel>,
    ) -> Result<(CompiledKernel, Origin)> {
        if let Some(found) = self.lookup(key) {
            return Ok((found, Origin::Disk));
        }
        let compiled = compile()?;
        self.store(key, &compiled);
        Ok((compiled, Origin::Compiled))
    }

    /// `key`'s image if a valid entry holds it; a missing, damaged or foreign entry is `None`.
    pub fn lookup(&self, key: &CacheKey) -> Option<CompiledKernel> {
        decode(&fs::read(self.entry_path(key)?).ok()?, key)
    }

    /// Writes `key`'s entry, replacing any; returns whether it was written. Failure is not
    /// an error: the next process compiles again.
    pub fn store(&self, key: &CacheKey, compiled: &CompiledKernel) -> bool {
        let (Some(dir), Some(path)) = (self.dir(), self.entry_path(key)) else {
            return false;
        };
        // Unique among threads and processes: pid plus a per-process counter.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let temp = dir.join(format!(
            ".{}.{}-{}.tmp",
            key.file_name,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::create_dir_all(dir)
            .and_then(|()| {
                let mut f = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&temp)?;
                f.write_all(&encode(key, compiled))?;
                f.sync_all()
            })
            .and_then(|()| fs::rename(&temp, &path));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written.is_ok()
    }
}

fn encode(key: &CacheKey, compiled: &CompiledKernel) -> Vec<u8> {
    let kind: u32 = match compiled.kind {
        ImageKind::Cubin => 0,
        ImageKind::Ptx => 1,
    };
    let mut out = Vec::with_capacity(HEADER_BYTES + key.text.len() + compiled.image.len() + 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(key.text.len() as u32).to_le_bytes());
    out.extend_from_slice(&(compiled.image.len() as u64).to_le_bytes());
    out.extend_from_slice(key.text.as_bytes());
    out.extend_from_slice(&compiled.image);
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn decode(bytes: &[u8], key: &CacheKey) -> Option<CompiledKernel> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if fnv1a(body) != u64::from_le_bytes(sum.try_into().ok()?) {
        return None;
    }
    let (header, rest) = body.split_at_checked(HEADER_BYTES)?;
    let u32_at = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().unwrap());
    if &header[..8] != MAGIC || u32_at(8) != FORMAT {
        return None;
    }
    let kind = match u32_at(12) {
        0 => ImageKind::Cubin,
        1 => ImageKind::Ptx,
        _ => return None,
    };
    let key_len = u32_at(16) as usize;
    let image_len = usize::try_from(u64::from_le_bytes(header[20..28].try_into().unwrap())).ok()?;
    let (echo, image) = rest.split_at_checked(key_len)?;
    (echo == key.text.as_bytes() && image.len() == image_len).then(|| CompiledKernel {
        kind,
        image: image.to_vec(),
    })
}

/// Everything that decides what `compile` returns, for the on-disk cache: the kernel text,
/// the device, the resolved target, the options and the NVRTC version.
pub fn cache_key(file: &str, source: &str, prelude: &str, arch: &str) -> Result<CacheKey> {
    let target = target(arch)?;
    let (major, minor) = version()?;
    let text = format!(
        "seisgpu kernel\nfile {file}\nsource fnv1a64 {:016x}\nprelude fnv1a64 {:016x}\n\
         device {arch}\ntarget {:?} {}\noptions {}\nnvrtc {major}.{minor}\n",
        fnv1a(source.as_bytes()),
        fnv1a(prelude.as_bytes()),
        target.kind,
        target.gpu_architecture,
        options(&target).join(" "),
    );
    Ok(CacheKey::new(file, arch, text))
}
