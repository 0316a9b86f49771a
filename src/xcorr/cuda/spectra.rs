//! Spectra kept on the device between the stages, and the divisions of NoisePy's
//! correlation methods on them (`xc_divide`).

use super::kit::{blocks, grid_dim, Kit};
use crate::backend::cuda::array::{complex, complex_mut, Part};
use crate::backend::cuda::buffers::{alloc, as_reals, as_reals_mut, download, upload};
use crate::backend::cuda::launch::Launch;
use crate::backend::cuda::CudaBackend;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::xcorr::geometry::Geometry;
use crate::xcorr::method::Planes;
use cudarc::driver::CudaSlice;
use num_complex::Complex32;

/// One day's spectra on the device, `[bin][station][window]`: `len` complex values as
/// `2·len` interleaved floats.
pub struct DeviceSpectra {
    pub(super) buf: CudaSlice<f32>,
    pub(super) len: usize,
}

impl DeviceSpectra {
    pub fn to_host(&self, ctx: &Context) -> Result<Vec<Complex32>> {
        let gpu = ctx
            .cuda
            .as_ref()
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
        Ok(DeviceSpectra {
            buf,
            len: values.len(),
        })
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
    let mut buf: CudaSlice<f32> = alloc(&kit.stream, 2 * x.len, "allocating divided spectra")?;
    let values = x.values();
    divide_into(kit, (&values, &mut buf), p, g, (n, power))?;
    Ok(DeviceSpectra { buf, len: x.len })
}

fn divide_into(
    kit: &Kit,
    (values, buf): (&Part<Complex32>, &mut CudaSlice<f32>),
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
    let mut l = Launch::new(
        &kit.module,
        &kit.stream,
        "xc_divide",
        blocks(grid, (256, 1)),
    )?;
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
