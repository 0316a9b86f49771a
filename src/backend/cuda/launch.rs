//! The one way to launch a kernel: find it in its module, let it take the dynamic shared
//! memory its configuration asks for, push typed arrays and scalars, launch on a stream.
//!
//! ```ignore
//! let mut launch = Launch::new(&module, &stream, "dwt_forward", cfg)?;
//! launch.input(&traces).output(&mut coeffs).scalar(n as i32);
//! // SAFETY: dwt_forward(const T* in, T* out, int n): both span cfg's traces × n.
//! unsafe { launch.run() }?;
//! ```
//! The `unsafe` stands at each call: only the call site knows the kernel's parameter list
//! and how far its threads reach into the arrays for that configuration.

use super::array::{DeviceArray, DeviceArrayMut};
use super::driver_error;
use crate::error::Result;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{result, CudaFunction, CudaModule, CudaStream, DeviceRepr, LaunchConfig};
use std::sync::Arc;

/// Above this many bytes of dynamic shared memory a kernel must opt in (per function).
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

/// Threads per block of the element-wise kernels.
pub(crate) const THREADS: u32 = 256;

/// Kernel `name` of `module`, allowed `shared_bytes` of dynamic shared memory.
pub fn kernel(module: &Arc<CudaModule>, name: &str, shared_bytes: usize) -> Result<CudaFunction> {
    let f = module
        .load_function(name)
        .map_err(driver_error("finding a kernel in its module"))?;
    if shared_bytes > DEFAULT_SHARED_LIMIT {
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared_bytes as i32,
        )
        .map_err(driver_error("raising a kernel's shared-memory limit"))?;
    }
    Ok(f)
}

/// With `SEISGPU_LAUNCH_LOG=FILE`, the name of each kernel the process launches is appended
/// to FILE once (for checking what a test run covered, e.g. under compute-sanitizer).
fn record_launch(name: &str) {
    use std::collections::HashSet;
    use std::io::Write;
    use std::sync::{Mutex, OnceLock};
    /// The log file and the names written to it.
    type Log = Mutex<(std::fs::File, HashSet<String>)>;
    static LOG: OnceLock<Option<Log>> = OnceLock::new();
    let log = LOG.get_or_init(|| {
        let path = std::env::var_os("SEISGPU_LAUNCH_LOG")?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        file.ok().map(|f| Mutex::new((f, HashSet::new())))
    });
    if let Some(log) = log {
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        let (file, seen) = &mut *log;
        if seen.insert(name.to_owned()) {
            let _ = writeln!(file, "{name}");
        }
    }
}

/// The most blocks a launch's grid takes along y (and z).
pub(crate) const MAX_GRID_Y: usize = 65_535;

/// One thread per element of `n` (at least one block), `THREADS` a block.
pub fn for_elems(n: usize) -> LaunchConfig {
    for_elems_in_blocks_of(n, THREADS)
}

/// One thread per element of `n` (at least one block), `threads` a block. The grid's x
/// extent holds 2³¹ − 1 blocks, far beyond the arrays a call makes.
pub fn for_elems_in_blocks_of(n: usize, threads: u32) -> LaunchConfig {
    let blocks = n.div_ceil(threads as usize).clamp(1, i32::MAX as usize);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A kernel launch being put together: arrays and scalars in the kernel's parameter order.
pub struct Launch<'s> {
    stream: &'s CudaStream,
    function: CudaFunction,
    cfg: LaunchConfig,
    /// Each parameter's value (device addresses and scalars fit in eight bytes); the
    /// driver reads as many bytes of each as its parameter's type takes.
    slots: Vec<u64>,
}

impl<'s> Launch<'s> {
    pub fn new(
        module: &Arc<CudaModule>,
        stream: &'s CudaStream,
        name: &str,
        cfg: LaunchConfig,
    ) -> Result<Launch<'s>> {
        let function = kernel(module, name, cfg.shared_mem_bytes as usize)?;
        record_launch(name);
        Ok(Launch {
            stream,
            function,
            cfg,
            slots: Vec::with_capacity(16),
        })
    }

    /// An array the kernel reads (a `const T*` parameter).
    pub fn input<T, A: DeviceArray<T> + ?Sized>(&mut self, a: &A) -> &mut Self {
        self.slots.push(a.addr());
        self
    }

    /// An array the kernel writes (a `T*` parameter).
    pub fn output<T, A: DeviceArrayMut<T> + ?Sized>(&mut self, a: &mut A) -> &mut Self {
        self.slots.push(a.addr());
        self
    }

    /// An array the kernel may read when present: a null pointer when `a` is `None`.
    pub fn optional<T, A: DeviceArray<T>>(&mut self, a: Option<&A>) -> &mut Self {
        self.slots.push(a.map_or(0, |a| a.addr()));
        self
    }

    /// An array the kernel may write when present: a null pointer when `a` is `None`.
    pub fn optional_output<T, A: DeviceArrayMut<T>>(&mut self, a: Option<&mut A>) -> &mut Self {
        self.slots.push(a.map_or(0, |a| a.addr()));
        self
    }

    /// A value parameter (`int`, `long long`, `float`, `double`, …).
    pub fn scalar<S: DeviceRepr + Copy>(&mut self, s: S) -> &mut Self {
        let size = std::mem::size_of::<S>();
        assert!(size <= 8, "a kernel scalar of {size} bytes");
        let mut slot = 0u64;
        // SAFETY: S is plain data of at most eight bytes, copied into the slot's first bytes
        // (the driver reads a parameter of sizeof(S) bytes from the slot's address).
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&s as *const S).cast::<u8>(),
                (&mut slot as *mut u64).cast::<u8>(),
                size,
            )
        };
        self.slots.push(slot);
        self
    }

    /// Enqueues the kernel on the stream; returns without waiting for it.
    ///
    /// # Safety
    /// The pushed arguments are the kernel's parameters in order and type, and for this
    /// configuration every thread stays inside the arrays passed (and writes only those
    /// pushed with `output`).
    pub unsafe fn run(&mut self) -> Result<()> {
        super::bind(self.stream.context())?;
        let mut params: Vec<*mut std::ffi::c_void> = self
            .slots
            .iter_mut()
            .map(|s| (s as *mut u64).cast())
            .collect();
        let cfg = self.cfg;
        // SAFETY: the function belongs to a module of the stream's context, and `params`
        // points at one live slot per parameter (the caller vouches for their meaning).
        unsafe {
            result::launch_kernel(
                self.function.cu_function(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(driver_error("launching a kernel"))
    }
}
