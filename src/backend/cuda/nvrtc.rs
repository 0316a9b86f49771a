//! Run-time compilation of the embedded kernels with NVRTC: machine code (CUBIN) for the
//! GPU present, so that loading a module costs no driver JIT, or PTX when this NVRTC cannot
//! generate code for that GPU.

use crate::error::{Error, Result};
use cudarc::nvrtc::{result, sys, Ptx};
use std::ffi::{c_char, c_int, CStr, CString};

/// What NVRTC produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code for one architecture: loads without JIT.
    Cubin,
    /// Virtual-architecture assembly: the driver compiles it on load.
    Ptx,
}

/// The `--gpu-architecture` NVRTC is given for a device, and what it yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub kind: ImageKind,
    /// "sm_90" for a CUBIN, "compute_90" for PTX.
    pub gpu_architecture: String,
}

/// A compiled kernel file, ready to be loaded into a context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledKernel {
    pub kind: ImageKind,
    /// The CUBIN (an ELF file) or the PTX text, without a terminating NUL.
    pub image: Vec<u8>,
}

impl CompiledKernel {
    /// The form the driver loads.
    pub fn to_loadable(&self) -> Result<Ptx> {
        match self.kind {
            ImageKind::Cubin => Ok(Ptx::from_binary(self.image.clone())),
            ImageKind::Ptx => String::from_utf8(self.image.clone())
                .map(Ptx::from_src)
                .map_err(|_| Error::KernelCompile("NVRTC returned PTX that is not text".into())),
        }
    }
}

fn require_nvrtc() -> Result<()> {
    // SAFETY: probing only dlopens; any NVRTC entry point would panic if it were absent.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::CudaUnavailable(
            "NVRTC (libnvrtc) was not found by the dynamic loader; add its folder to LD_LIBRARY_PATH".into(),
        ))
    }
}

/// The version of the NVRTC found, e.g. (12, 9).
pub fn version() -> Result<(i32, i32)> {
    require_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded; the pointers are valid locals.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::KernelCompile(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// The real architectures this NVRTC generates machine code for, as numbers (90 for sm_90).
fn supported_archs() -> Result<Vec<c_int>> {
    let fail = |e| Error::KernelCompile(format!("NVRTC could not list its architectures: {e:?}"));
    let mut n: c_int = 0;
    // SAFETY: NVRTC is loaded (checked by the caller); the buffer holds `n` entries.
    unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) }
        .result()
        .map_err(fail)?;
    let mut archs = vec![0; n.max(0) as usize];
    unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
        .result()
        .map_err(fail)?;
    Ok(archs)
}

/// "sm_90" → 90.
fn arch_number(arch: &str) -> Option<c_int> {
    arch.strip_prefix("sm_")?.parse().ok()
}

/// What to ask NVRTC for on a device of `arch` ("sm_90"): its CUBIN when this NVRTC knows the
/// architecture, else PTX for the newest virtual architecture it knows below it (a GPU newer
/// than the NVRTC), which the driver compiles forward.
pub fn target(arch: &str) -> Result<Target> {
    require_nvrtc()?;
    let wanted = arch_number(arch).ok_or_else(|| {
        Error::KernelCompile(format!("'{arch}' is not an architecture of the form sm_XY"))
    })?;
    let supported = supported_archs()?;
    if supported.contains(&wanted) {
        return Ok(Target {
            kind: ImageKind::Cubin,
            gpu_architecture: arch.to_string(),
        });
    }
    match supported.iter().filter(|&&a| a < wanted).max() {
        Some(below) => Ok(Target {
            kind: ImageKind::Ptx,
            gpu_architecture: format!("compute_{below}"),
        }),
        None => {
            let (major, minor) = version()?;
            Err(Error::KernelCompile(format!(
                "NVRTC {major}.{minor} cannot generate code for {arch}; it knows sm_{supported:?}"
            )))
        }
    }
}

/// NVRTC's options for `target` (also part of the disk cache's key).
pub fn options(target: &Target) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", target.gpu_architecture),
        "--std=c++17".into(),
    ]
}

/// The text NVRTC compiles: the prelude bakes in compile-time constants.
fn program_text(file: &str, source: &str, prelude: &str) -> String {
    format!("{prelude}\n#line 1 \"{file}\"\n{source}")
}

/// Destroys the program however compilation ends.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// Reads one of the program's outputs through its size and copy entry points.
unsafe fn output(
    prog: sys::nvrtcProgram,
    size: unsafe fn(sys::nvrtcProgram, *mut usize) -> sys::nvrtcResult,
    copy: unsafe fn(sys::nvrtcProgram, *mut c_char) -> sys::nvrtcResult,
) -> std::result::Result<Vec<u8>, result::NvrtcError> {
    let mut n = 0usize;
    size(prog, &mut n).result()?;
    let mut bytes = vec![0u8; n];
    copy(prog, bytes.as_mut_ptr().cast()).result()?;
    Ok(bytes)
}

/// `compile_for` through NVRTC's front end only (`--fdevice-syntax-only`): parsing,
/// templates and the device-code rules, as a full compile checks them, in a twentieth of
/// its time and without generating code. The test of every kernel variant checks most
/// variants this way.
pub fn check_syntax(
    file: &str,
    source: &str,
    prelude: &str,
    arch: &str,
    target: &Target,
) -> Result<()> {
    require_nvrtc()?;
    let mut opts = options(target);
    opts.push("--fdevice-syntax-only".into());
    compiled_program(file, source, prelude, arch, &opts).map(|_| ())
}

/// Creates and compiles the program with `opts`; a compile error carries NVRTC's log.
fn compiled_program(
    file: &str,
    source: &str,
    prelude: &str,
    arch: &str,
    opts: &[String],
) -> Result<Program> {
    let text = CString::new(program_text(file, source, prelude))
        .map_err(|_| Error::KernelCompile(format!("{file} holds a NUL byte")))?;
    let name = CString::new(file)
        .map_err(|_| Error::KernelCompile(format!("kernel name {file:?} holds a NUL byte")))?;
    let prog = Program(result::create_program(&text, Some(&name)).map_err(|e| {
        Error::KernelCompile(format!(
            "NVRTC failed on {file} for {arch} (creating the program): {e:?}"
        ))
    })?);
    // SAFETY: `prog` is a live program for every call below.
    if let Err(e) = unsafe { result::compile_program(prog.0, opts) } {
        let log = unsafe { result::get_program_log(prog.0) }
            .map(|raw| {
                unsafe { CStr::from_ptr(raw.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_else(|_| format!("(no log: {e:?})"));
        return Err(Error::KernelCompile(format!(
            "NVRTC could not compile {file} for {arch}:\n{log}"
        )));
    }
    Ok(prog)
}

/// Compiles `prelude` + `source` (one file of `kernels/`) for a device of `arch` ("sm_90").
pub fn compile(file: &str, source: &str, prelude: &str, arch: &str) -> Result<CompiledKernel> {
    compile_for(file, source, prelude, arch, &target(arch)?)
}

/// `compile` for an explicit target: PTX of a virtual architecture checks that a source
/// compiles for it without the cost of ptxas (the test of every kernel variant uses it).
pub fn compile_for(
    file: &str,
    source: &str,
    prelude: &str,
    arch: &str,
    target: &Target,
) -> Result<CompiledKernel> {
    let prog = compiled_program(file, source, prelude, arch, &options(target))?;
    let fail = |what: &str, e: result::NvrtcError| {
        Error::KernelCompile(format!("NVRTC failed on {file} for {arch} ({what}): {e:?}"))
    };
    // SAFETY: `prog` compiled, so its outputs are readable.
    let mut image = match target.kind {
        ImageKind::Cubin => unsafe { output(prog.0, sys::nvrtcGetCUBINSize, sys::nvrtcGetCUBIN) }
            .map_err(|e| fail("reading the CUBIN", e))?,
        ImageKind::Ptx => unsafe { output(prog.0, sys::nvrtcGetPTXSize, sys::nvrtcGetPTX) }
            .map_err(|e| fail("reading the PTX", e))?,
    };
    if target.kind == ImageKind::Ptx && image.last() == Some(&0) {
        image.pop();
    }
    Ok(CompiledKernel {
        kind: target.kind,
        image,
    })
}
