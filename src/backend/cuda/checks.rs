//! Device checks: with them on (`sg_context_set_device_checks`), each device call scans its
//! sample inputs on the device before its own work, in the caller's stream order, and a
//! non-finite value raises a flag the context keeps in device memory. Nothing waits: the
//! flag is read when the application synchronises through the library
//! (`sg_context_synchronize`), which then reports the first call that met one and lowers the
//! flag. Off by default: the scan reads every input once more.

use super::array::DeviceArray;
use super::buffers::{download, fill_zero};
use super::launch::{Launch, THREADS};
use super::memory::DeviceBuf;
use super::{driver_error, kernels, CudaBackend};
use crate::error::{Error, Result};
use crate::sample::Sample;
use cudarc::driver::{CudaStream, LaunchConfig};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Where a call reads its samples: `runs` (nx · ny of them) of `n` samples, run (ix, iy)
/// starting at element ix · `stride_x` + iy · `stride_y`.
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    pub n: usize,
    pub nx: usize,
    pub stride_x: usize,
    pub ny: usize,
    pub stride_y: usize,
}

impl Rows {
    /// `len` consecutive samples.
    pub fn contiguous(len: usize) -> Rows {
        Rows::traces(len, 1, len)
    }

    /// `count` traces of `n` samples, `stride` apart.
    pub fn traces(n: usize, count: usize, stride: usize) -> Rows {
        Rows {
            n,
            nx: count,
            stride_x: stride,
            ny: 1,
            stride_y: 0,
        }
    }
}

/// The flag (0: nothing found; k: the k-th name below met a non-finite value) and the
/// names of what was scanned, each once.
struct Flag {
    on_device: DeviceBuf<u32>,
    names: Vec<String>,
}

#[derive(Default)]
pub struct DeviceChecks {
    on: AtomicBool,
    flag: Mutex<Option<Flag>>,
}

impl DeviceChecks {
    pub fn enabled(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }
}

impl CudaBackend {
    /// Turns the device checks on or off for later device calls.
    pub fn set_device_checks(&self, on: bool) -> Result<()> {
        let mut flag = self.checks.flag.lock().unwrap_or_else(|e| e.into_inner());
        if on && flag.is_none() {
            // On the legacy default stream, which outlives any the application sets.
            let stream = self.ctx.default_stream();
            let what = "allocating the device checks' flag";
            super::memory::make_current(&self.memory);
            let on_device = super::buffers::zeros::<u32>(&stream, 1, what)?;
            stream.synchronize().map_err(driver_error(what))?;
            *flag = Some(Flag {
                on_device,
                names: Vec::new(),
            });
        }
        self.checks.on.store(on, Ordering::Relaxed);
        Ok(())
    }

    /// With the checks on, queues a scan of `x` (the samples `rows` covers) on `stream`,
    /// `what` naming the call and the array in the report.
    pub fn check_finite<T: Sample>(
        &self,
        stream: &CudaStream,
        x: &impl DeviceArray<T>,
        rows: Rows,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let total = rows.n * rows.nx * rows.ny;
        if !self.checks.enabled() || total == 0 {
            return Ok(());
        }
        let mut guard = self.checks.flag.lock().unwrap_or_else(|e| e.into_inner());
        let Some(flag) = guard.as_mut() else {
            return Ok(());
        };
        let name = what();
        let code = match flag.names.iter().position(|n| *n == name) {
            Some(i) => i + 1,
            None => {
                flag.names.push(name);
                flag.names.len()
            }
        };
        let module = self
            .modules
            .get(&self.ctx, &self.arch, &kernels::CHECKS, "")?;
        let kernel = if T::C_TYPE == "float" {
            "check_finite_f32"
        } else {
            "check_finite_f64"
        };
        let blocks = total
            .div_ceil(THREADS as usize)
            .clamp(1, 8 * self.multiprocessors.max(1));
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = Launch::new(&module, stream, kernel, cfg)?;
        l.input(x)
            .scalar(rows.n as i64)
            .scalar(rows.nx as i64)
            .scalar(rows.stride_x as i64)
            .scalar(rows.ny as i64)
            .scalar(rows.stride_y as i64)
            .output(&mut flag.on_device)
            .scalar(code as u32);
        // SAFETY: check_finite_T(const T* x, long long n, long long nx, long long sx,
        // long long ny, long long sy, unsigned* flag, unsigned code): threads read
        // x[iy·sy + ix·sx + i] for i < n, ix < nx, iy < ny — the samples of `rows`, which
        // the calling plan checked `x` spans — and write only the one-element flag.
        unsafe { l.run() }
    }

    /// After the caller's stream is done: `NonFinite` naming the first call whose input
    /// held a non-finite value since the last report (the flag then lowered), else `Ok`.
    pub fn take_device_finding(&self) -> Result<()> {
        let mut guard = self.checks.flag.lock().unwrap_or_else(|e| e.into_inner());
        let Some(flag) = guard.as_mut() else {
            return Ok(());
        };
        let stream = self.ctx.default_stream();
        let mut code = [0u32];
        download(
            &stream,
            &flag.on_device,
            &mut code,
            "reading the device checks' flag",
        )?;
        if code[0] == 0 {
            return Ok(());
        }
        fill_zero(
            &stream,
            &mut flag.on_device,
            "lowering the device checks' flag",
        )?;
        stream
            .synchronize()
            .map_err(driver_error("lowering the device checks' flag"))?;
        let name = flag
            .names
            .get(code[0] as usize - 1)
            .map_or("a device call", |n| n);
        Err(Error::NonFinite(format!(
            "{name} held a non-finite value (found by the device checks; the call's outputs hold what the kernels made of it)"
        )))
    }
}
