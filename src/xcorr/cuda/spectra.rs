//! Spectra kept on the device between the stages, and the divisions of NoisePy's
//! correlation methods on them (`xc_divide`).

use super::kit::{blocks, grid_dim, Kit};
use crate::backend::cuda::array::{complex, complex_mut, Part};
use crate::backend::cuda::buffers::{alloc, as_reals, as_reals_mut, download, upload};
use crate::backend::cuda::driver_error;
use crate::backend::cuda::memory::untallied;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::CudaBackend;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::xcorr::geometry::Geometry;
use crate::xcorr::method::Planes;
use cudarc::driver::{CudaEvent, CudaStream};
use num_complex::Complex32;
use std::sync::Mutex;

/// One day's spectra on the device, `[bin][station][window]`: `len` complex values as
/// `2·len` interleaved floats. Written before the handle is returned (the calls that make
/// it wait for their stream); `reads` are the events recorded after the correlations queued
/// on other streams, which the buffer's stream waits for before it frees the buffer.
pub struct DeviceSpectra {
    pub(super) buf: DeviceBuf<f32>,
    pub(super) len: usize,
    pub(super) reads: Mutex<Vec<CudaEvent>>,
}

impl DeviceSpectra {
    pub(super) fn new(buf: DeviceBuf<f32>, len: usize) -> DeviceSpectra {
        DeviceSpectra {
            buf,
            len,
            reads: Mutex::new(Vec::new()),
        }
    }

    /// Records that work queued on `stream` so far reads the spectra (kept until the
    /// buffer is freed; events already passed are dropped).
    pub(super) fn read_on(&self, stream: &CudaStream) -> Result<()> {
        let event = stream
            .record_event(None)
            .map_err(driver_error("recording a read of the spectra"))?;
        let mut reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        reads.retain(|e| !e.is_complete());
        reads.push(event);
        Ok(())
    }
}

impl Drop for DeviceSpectra {
    fn drop(&mut self) {
        let reads = self.reads.get_mut().unwrap_or_else(|e| e.into_inner());
        for event in reads.drain(..) {
            // Queued before the buffer's own (stream-ordered) free, which runs after this.
            let _ = self.buf.stream().wait(&event);
        }
    }
}

impl DeviceSpectra {
    pub fn to_host(&self, ctx: &Context) -> Result<Vec<Complex32>> {
        let gpu = ctx
            .cuda()
            .ok_or_else(|| Error::Internal("device spectra on a CPU context".into()))?;
        let stream = gpu.stream()?;
        let mut host =
            crate::error::try_vec(self.len, Complex32::default(), "a copy of the spectra")?;
        let what = "copying spectra to the host";
        download(&stream, &self.buf, as_reals_mut(&mut host), what)?;
        Ok(host)
    }

    /// Host values copied to the device.
    pub fn upload(gpu: &CudaBackend, values: &[Complex32]) -> Result<DeviceSpectra> {
        let stream = gpu.stream()?;
        let buf = upload(&stream, as_reals(values), "copying spectra to the device")?;
        stream
            .synchronize()
            .map_err(crate::backend::cuda::driver_error(
                "copying spectra to the device",
            ))?;
        Ok(DeviceSpectra::new(buf, values.len()))
    }

    /// The spectra as complex values (as the kernels and cuBLAS read them).
    pub(super) fn values(&self) -> Part<'_, Complex32> {
        complex(&self.buf)
    }
}

/// `x` divided by its smoothed amplitude (`n` bins) to `power`, as `method::divided`.
pub fn divided(
    gpu: &CudaBackend,
    x: &DeviceSpectra,
    p: Planes,
    g: &Geometry,
    n: usize,
    power: i32,
) -> Result<DeviceSpectra> {
    let kit = Kit::new(gpu)?;
    let out = divided_on(&kit, x, p, g, (n, power))?;
    kit.stream
        .synchronize()
        .map_err(crate::backend::cuda::driver_error("dividing spectra"))?;
    Ok(out)
}

/// `divided` queued on the kit's stream without waiting.
pub fn divided_on(
    kit: &Kit,
    x: &DeviceSpectra,
    p: Planes,
    g: &Geometry,
    (n, power): (usize, i32),
) -> Result<DeviceSpectra> {
    // The result's, not the plan's (a device call runs in the plan's tally).
    let what = "allocating divided spectra";
    let mut buf: DeviceBuf<f32> = untallied(|| alloc(&kit.stream, 2 * x.len, what))?;
    let values = x.values();
    divide_into(kit, (&values, &mut buf), p, g, (n, power))?;
    Ok(DeviceSpectra::new(buf, x.len))
}

fn divide_into(
    kit: &Kit,
    (values, buf): (&Part<Complex32>, &mut DeviceBuf<f32>),
    p: Planes,
    g: &Geometry,
    (n, power): (usize, i32),
) -> Result<()> {
    let plane = p.n_stations * p.n_windows;
    let mut out = complex_mut(buf);
    let grid = (
        grid_dim(plane.div_ceil(256), "stations × windows")?,
        g.band_len.min(65535) as u32,
    );
    let mut l = kit.launch("xc_divide", blocks(grid, (256, 1)))?;
    l.input(values)
        .output(&mut out)
        .scalar(plane as i64)
        .scalar(p.n_windows as i32)
        .scalar(g.band_start as i32)
        .scalar(g.band_len as i32)
        .scalar(g.nfft2 as i32)
        .scalar(n as i32)
        .scalar(power);
    // SAFETY: xc_divide(const c32* x, c32* out, i64 plane, int nw, int band_start,
    // int band_len, int nfft2, int n, int power): threads k < plane (the others return) and
    // bins f < band_len read x at f'·plane + s·nw + w' with f' < band_len, s·nw + w' < plane
    // (k = s·nw + w, w' < nw), inside x's band_len·plane = len values, and write out at
    // f·plane + k, inside out's 2·len floats.
    unsafe { l.run() }
}
