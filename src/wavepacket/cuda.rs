//! The box stage on the GPU (`kernels/wavepacket.cu`): the device half of `cpu.rs` and
//! `boxfft.rs`, run between the data and the USFFTs' lattice values without leaving the
//! device. Forward: gather (window · lattice value, · grid shift) → one batched cuFFT per
//! group of boxes of one shape → phase into the coefficient array. Adjoint: the transpose,
//! each lattice value summed over its boxes by one thread (no atomics, a fixed order).
//!
//! The plan's tables live on the device from creation: windows, the box table (in work order:
//! boxes grouped by shape), the phases, the lattices' box lists. Working buffers (work,
//! lattice values, modes) too, so that a plan that does not fit fails at creation.

use super::layout::Layout;
use crate::backend::cuda::buffers::{alloc, as_reals, as_reals_mut, dptr, upload};
use crate::backend::cuda::fft::{self, FftKind, FftPlan};
use crate::backend::cuda::kernels;
use crate::backend::cuda::launch::launch;
use crate::backend::cuda::{driver_error, staging, CudaBackend};
use crate::error::{Error, Result};
use crate::progress::Reporter;
use crate::sample::Real;
use crate::sample::Sample;
use crate::usfft::UsfftPlan;
use cudarc::cufft::result as cufft_result;
use cudarc::driver::{
    CudaModule, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use num_complex::Complex;
use std::sync::{Arc, Mutex};

/// Long longs per row of the box table (the F_* fields of the kernel file).
const BOX_FIELDS: usize = 12;
/// Most elements one cuFFT execute covers: bounds each plan's own work area.
const FFT_CHUNK: usize = 1 << 24;
const THREADS: u32 = 256;
/// cuFFT's direction codes: the sign of the exponent.
const EXPONENT_PLUS: i32 = 1;
const EXPONENT_MINUS: i32 = -1;

/// The NVRTC prelude for one precision.
pub fn prelude<T: Sample>() -> String {
    format!("#define REAL {}\n", T::C_TYPE)
}

/// Every prelude the library compiles `wavepacket.cu` with, labelled.
pub fn preludes() -> Vec<(String, String)> {
    vec![
        ("f32".to_string(), prelude::<f32>()),
        ("f64".to_string(), prelude::<f64>()),
    ]
}

/// The boxes of one shape: `count` boxes of `size` elements from work element `start`, their
/// FFTs run `batch` boxes per execute (the last count % batch by `rest`). No plans where
/// the boxes are single points (their FFT is the identity).
struct FftGroup {
    start: usize,
    size: usize,
    count: usize,
    batch: usize,
    full: Option<FftPlan>,
    rest: Option<FftPlan>,
}

/// A plan's box stage on the device. Every call runs on `stream` (the type-2 USFFT's); the
/// type-1 USFFT of the adjoint is ordered into it with stream joins.
pub struct BoxStage<T: Real> {
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    windows: CudaSlice<T>,
    table: CudaSlice<i64>,
    work_start: CudaSlice<i64>,
    phase: CudaSlice<T>,
    lat_start: CudaSlice<i64>,
    lat_len: CudaSlice<i64>,
    lat_first: CudaSlice<i32>,
    lat_boxes: CudaSlice<i32>,
    groups: Vec<FftGroup>,
    /// Box indices in work order.
    order: Vec<usize>,
    n_work: usize,
    n_points: usize,
    n_coefficients: usize,
    n_samples: usize,
    buffers: Mutex<Buffers<T>>,
}

/// One call's device arrays (interleaved complex as reals): `work` (the boxes in work
/// order), `values` (lattice values), `modes` (the data as complex); `data` and `coeffs`
/// for host-to-host calls, made on their first use; a shifted call's shift table.
struct Buffers<T> {
    work: CudaSlice<T>,
    values: CudaSlice<T>,
    modes: CudaSlice<T>,
    data: Option<CudaSlice<T>>,
    coeffs: Option<CudaSlice<T>>,
    shift_at: Option<CudaSlice<i64>>,
    shift: Option<CudaSlice<T>>,
    /// The first non-finite input value found (u64::MAX: none).
    first_bad: CudaSlice<u64>,
}

/// `slot`, made with `len` elements if absent.
fn ensure<'a, U: cudarc::driver::DeviceRepr>(
    slot: &'a mut Option<CudaSlice<U>>,
    len: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<&'a mut CudaSlice<U>> {
    if slot.is_none() {
        *slot = Some(alloc(stream, len, what)?);
    }
    Ok(slot.as_mut().unwrap())
}

/// Appends one box's per-axis factors, axis 1 then 2 then 3 (n1 + n2 + n3), interleaved.
fn push_factors<T: Real>(
    out: &mut Vec<T>,
    shape: [usize; 3],
    f: impl Fn(usize, usize) -> Complex<f64>,
) {
    for (a, &n) in shape.iter().enumerate() {
        for i in 0..n {
            let z = f(a, i);
            out.push(T::from_f64(z.re).unwrap());
            out.push(T::from_f64(z.im).unwrap());
        }
    }
}

fn grid_for(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            (n as u64).div_ceil(THREADS as u64).clamp(1, 1 << 20) as u32,
            1,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The type-2 (forward) or type-1 (adjoint) USFFT's stream.
fn usfft_stream<T: Real>(plan: &UsfftPlan<T>) -> Result<Arc<CudaStream>> {
    plan.device_points()
        .map(|p| p.stream().clone())
        .ok_or_else(|| Error::Unsupported("the wave-packet USFFT has no device points".into()))
}

impl<T: Real> BoxStage<T> {
    /// The device tables of `layout` with its `windows`, on the type-2 USFFT's stream.
    pub fn new(
        gpu: &CudaBackend,
        layout: &Layout,
        windows: &[Vec<T>],
        type2: &UsfftPlan<T>,
    ) -> Result<BoxStage<T>> {
        gpu.ctx
            .bind_to_thread()
            .map_err(driver_error("binding the context"))?;
        let stream = usfft_stream(type2)?;
        let s = &stream;
        let module = gpu
            .modules
            .get(&gpu.ctx, &gpu.arch, &kernels::WAVEPACKET, &prelude::<T>())?;
        // Work order: boxes grouped by shape (a stable sort: box order within a group).
        let mut order: Vec<usize> = (0..layout.boxes.len()).collect();
        order.sort_by_key(|&b| layout.boxes[b].shape);
        let mut table = Vec::with_capacity(order.len() * BOX_FIELDS);
        let mut work_start = Vec::with_capacity(order.len());
        let mut phase = Vec::new();
        let mut groups: Vec<(FftGroup, [usize; 3])> = Vec::new();
        let mut at = 0usize;
        for &b in &order {
            let bx = &layout.boxes[b];
            let l = &layout.lattices[bx.lattice];
            let o: [usize; 3] = std::array::from_fn(|a| (bx.lo[a] - l.lo[a]) as usize);
            let (s2, s3) = (l.len[0], l.len[0] * l.len[1]);
            let base = l.point_offset + o[2] * s3 + o[1] * s2 + o[0];
            let [n1, n2, n3] = bx.shape;
            let row = [
                at,
                bx.offset,
                base,
                s2,
                s3,
                n1,
                n2,
                n3,
                phase.len() / 2,
                o[0],
                o[1],
                o[2],
            ];
            table.extend(row.map(|v| v as i64));
            work_start.push(at as i64);
            // L^(−½)·e^{2πi·lo·y/L} per axis (the scale on axis 1), as `boxfft::apply_phase`.
            let scale = 1.0 / (bx.n_coefficients() as f64).sqrt();
            push_factors(&mut phase, bx.shape, |a, y| {
                let n = bx.shape[a] as i64;
                // lo·y mod n in integers keeps the angle exact for large lo.
                let k = (bx.lo[a].rem_euclid(n) * y as i64) % n;
                let r = if a == 0 { scale } else { 1.0 };
                Complex::from_polar(r, std::f64::consts::TAU * k as f64 / n as f64)
            });
            let size = bx.n_coefficients();
            match groups.last_mut() {
                Some((g, shape)) if *shape == bx.shape => g.count += 1,
                _ => groups.push((
                    FftGroup {
                        start: at,
                        size,
                        count: 1,
                        batch: 0,
                        full: None,
                        rest: None,
                    },
                    bx.shape,
                )),
            }
            at += size;
        }
        let kind = if std::mem::size_of::<T>() == 4 {
            FftKind::CUFFT_C2C
        } else {
            FftKind::CUFFT_Z2Z
        };
        let what = "the wave-packet box FFTs";
        let mut fft_groups = Vec::with_capacity(groups.len());
        for (mut g, shape) in groups {
            // cuFFT orders dimensions slowest first; an axis of length 1 is no transform.
            let dims: Vec<usize> = shape.iter().rev().copied().filter(|&n| n > 1).collect();
            if !dims.is_empty() {
                let dist = (g.size, g.size);
                g.batch = (FFT_CHUNK / g.size).clamp(1, g.count);
                g.full = Some(FftPlan::many(&dims, dist, kind, g.batch, s, what)?);
                let rest = g.count % g.batch;
                if rest > 0 {
                    g.rest = Some(FftPlan::many(&dims, dist, kind, rest, s, what)?);
                }
            }
            fft_groups.push(g);
        }
        // Each lattice's boxes, as work-order indices.
        let mut pos = vec![0usize; order.len()];
        for (j, &b) in order.iter().enumerate() {
            pos[b] = j;
        }
        let mut lat_first = vec![0i32];
        let mut lat_boxes = Vec::new();
        let mut lat_start = Vec::new();
        let mut lat_len = Vec::new();
        for (li, l) in layout.lattices.iter().enumerate() {
            for (b, bx) in layout.boxes.iter().enumerate() {
                if bx.lattice == li {
                    lat_boxes.push(pos[b] as i32);
                }
            }
            lat_first.push(lat_boxes.len() as i32);
            lat_start.push(l.point_offset as i64);
            lat_len.extend([l.len[0] as i64, l.len[1] as i64]);
        }
        let mut flat = Vec::with_capacity(layout.n_coefficients);
        for w in windows {
            flat.extend_from_slice(w);
        }
        let what = "uploading the wave-packet tables";
        let stage = BoxStage {
            windows: upload(s, &flat, "uploading the wave-packet windows")?,
            table: upload(s, &table, what)?,
            work_start: upload(s, &work_start, what)?,
            phase: upload(s, &phase, what)?,
            lat_start: upload(s, &lat_start, what)?,
            lat_len: upload(s, &lat_len, what)?,
            lat_first: upload(s, &lat_first, what)?,
            lat_boxes: upload(s, &lat_boxes, what)?,
            buffers: Mutex::new(Buffers {
                work: alloc(s, 2 * at, "allocating the wave-packet box work array")?,
                values: alloc(
                    s,
                    2 * layout.n_points,
                    "allocating the wave-packet lattice values",
                )?,
                modes: alloc(
                    s,
                    2 * layout.n_samples(),
                    "allocating the wave-packet modes",
                )?,
                data: None,
                coeffs: None,
                shift_at: None,
                shift: None,
                first_bad: alloc(s, 1, "allocating the wave-packet input check")?,
            }),
            module,
            groups: fft_groups,
            order,
            n_work: at,
            n_points: layout.n_points,
            n_coefficients: layout.n_coefficients,
            n_samples: layout.n_samples(),
            stream: stream.clone(),
        };
        // `flat` and the tables are host memory the copies read from.
        stream
            .synchronize()
            .map_err(driver_error("uploading the wave-packet tables"))?;
        Ok(stage)
    }

    /// The stream every call runs on (for events around device-resident calls).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Uploads one call's grid shifts (`shifts`: one per box, or none): each box's factors
    /// e^{−2πi(lo+i)δ/L} per axis (as `boxfft::apply_shift`'s forward) and where they start.
    /// Returns (shift_at, shift) device addresses, or zeros for a call without shifts.
    fn set_shifts(
        &self,
        layout: &Layout,
        shifts: &[[f64; 3]],
        bufs: &mut Buffers<T>,
    ) -> Result<(u64, u64)> {
        if shifts.iter().all(|d| *d == [0.0; 3]) {
            return Ok((0, 0));
        }
        let mut factors = Vec::new();
        let mut at = Vec::with_capacity(self.order.len());
        for &b in &self.order {
            let delta = shifts.get(b).copied().unwrap_or([0.0; 3]);
            if delta == [0.0; 3] {
                at.push(-1i64);
                continue;
            }
            at.push((factors.len() / 2) as i64);
            let bx = &layout.boxes[b];
            push_factors(&mut factors, bx.shape, |a, i| {
                let turns = (bx.lo[a] + i as i64) as f64 * delta[a] / bx.shape[a] as f64;
                Complex::from_polar(1.0, -std::f64::consts::TAU * turns.fract())
            });
        }
        let s = &self.stream;
        let what = "uploading wave-packet grid shifts";
        bufs.shift_at = Some(upload(s, &at, what)?);
        bufs.shift = Some(upload(s, &factors, what)?);
        // The host tables must outlive the copies.
        s.synchronize().map_err(driver_error(what))?;
        Ok((
            dptr(bufs.shift_at.as_ref().unwrap(), s),
            dptr(bufs.shift.as_ref().unwrap(), s),
        ))
    }

    /// The box FFTs over `work`, in place; `dir`: the exponent's sign.
    fn box_ffts(&self, work: u64, dir: i32) -> Result<()> {
        let bytes = 2 * std::mem::size_of::<T>();
        for g in &self.groups {
            let Some(full) = &g.full else { continue };
            let mut done = 0;
            while done < g.count {
                let (plan, n) = match g.rest.as_ref() {
                    Some(rest) if g.count - done < g.batch => (rest, g.count - done),
                    _ => (full, g.batch),
                };
                let p = work + ((g.start + done * g.size) * bytes) as u64;
                // SAFETY: n boxes of g.size elements from p lie inside the work array.
                unsafe {
                    if bytes == 8 {
                        cufft_result::exec_c2c(plan.handle(), p as *mut _, p as *mut _, dir)
                    } else {
                        cufft_result::exec_z2z(plan.handle(), p as *mut _, p as *mut _, dir)
                    }
                }
                .map_err(fft::error("running the wave-packet box FFTs"))?;
                done += n;
            }
        }
        Ok(())
    }

    /// Waits for the stream and reports one step of `stage` (only with a callback set).
    fn report(&self, reporter: &mut Reporter, stage: &'static str, share: f64) -> Result<()> {
        if reporter.is_active() {
            reporter.stage(stage, share, 1);
            self.stream
                .synchronize()
                .map_err(driver_error("running the wave-packet transform"))?;
            reporter.advance(1)?;
        }
        Ok(())
    }

    /// C on the device: `data` (n reals) → `coeffs` (2·m reals), queued on the stream.
    #[allow(clippy::too_many_arguments)]
    fn forward_on(
        &self,
        layout: &Layout,
        type2: &UsfftPlan<T>,
        data: u64,
        coeffs: u64,
        shifts: &[[f64; 3]],
        bufs: &mut Buffers<T>,
        reporter: &mut Reporter,
        usfft_share: f64,
    ) -> Result<()> {
        let s = &self.stream;
        let (n, total) = (self.n_samples as i64, self.n_work as i64);
        let modes = dptr(&bufs.modes, s);
        // The arguments match wp_complex_from_real.
        launch!(
            self.module,
            s,
            "wp_complex_from_real",
            grid_for(self.n_samples),
            &data,
            &modes,
            &n
        );
        type2.execute_device(&mut bufs.values, &mut bufs.modes)?;
        self.report(reporter, "wave-packet spectrum", usfft_share)?;
        let (shift_at, shift) = self.set_shifts(layout, shifts, bufs)?;
        let (values, work) = (dptr(&bufs.values, s), dptr(&bufs.work, s));
        let (windows, table, starts, phase) = (
            dptr(&self.windows, s),
            dptr(&self.table, s),
            dptr(&self.work_start, s),
            dptr(&self.phase, s),
        );
        let n_boxes = self.order.len() as i32;
        // The arguments match wp_gather; work holds n_work complex values.
        launch!(
            self.module,
            s,
            "wp_gather",
            grid_for(self.n_work),
            &values,
            &windows,
            &table,
            &starts,
            &n_boxes,
            &total,
            &shift_at,
            &shift,
            &work,
        );
        self.box_ffts(work, EXPONENT_PLUS)?;
        // The arguments match wp_to_coefficients; coeffs holds n_coefficients complex values.
        launch!(
            self.module,
            s,
            "wp_to_coefficients",
            grid_for(self.n_work),
            &work,
            &table,
            &starts,
            &n_boxes,
            &total,
            &phase,
            &coeffs,
        );
        self.report(reporter, "wave-packet boxes", 1.0 - usfft_share)
    }

    /// C* on the device: `coeffs` (2·m reals) → `data` (n reals, the real part), queued.
    #[allow(clippy::too_many_arguments)]
    fn adjoint_on(
        &self,
        layout: &Layout,
        type1: &UsfftPlan<T>,
        coeffs: u64,
        data: u64,
        shifts: &[[f64; 3]],
        bufs: &mut Buffers<T>,
        reporter: &mut Reporter,
        usfft_share: f64,
    ) -> Result<()> {
        let s = &self.stream;
        let (shift_at, shift) = self.set_shifts(layout, shifts, bufs)?;
        let (values, work) = (dptr(&bufs.values, s), dptr(&bufs.work, s));
        let (windows, table, starts, phase) = (
            dptr(&self.windows, s),
            dptr(&self.table, s),
            dptr(&self.work_start, s),
            dptr(&self.phase, s),
        );
        let (n_boxes, total) = (self.order.len() as i32, self.n_work as i64);
        // The arguments match wp_from_coefficients.
        launch!(
            self.module,
            s,
            "wp_from_coefficients",
            grid_for(self.n_work),
            &coeffs,
            &table,
            &starts,
            &n_boxes,
            &total,
            &phase,
            &work,
        );
        self.box_ffts(work, EXPONENT_MINUS)?;
        let (lat_start, lat_len, lat_first, lat_boxes) = (
            dptr(&self.lat_start, s),
            dptr(&self.lat_len, s),
            dptr(&self.lat_first, s),
            dptr(&self.lat_boxes, s),
        );
        let (n_lattices, n_points) = (layout.lattices.len() as i32, self.n_points as i64);
        // The arguments match wp_scatter; values holds n_points complex values.
        launch!(
            self.module,
            s,
            "wp_scatter",
            grid_for(self.n_points),
            &work,
            &windows,
            &table,
            &lat_start,
            &lat_len,
            &lat_first,
            &lat_boxes,
            &n_lattices,
            &n_points,
            &shift_at,
            &shift,
            &values,
        );
        self.report(reporter, "wave-packet boxes", 1.0 - usfft_share)?;
        // The type-1 USFFT runs on its plan's stream, between two joins.
        let s1 = usfft_stream(type1)?;
        let join = driver_error("ordering the wave-packet adjoint's streams");
        s1.join(s).map_err(&join)?;
        type1.execute_device(&mut bufs.values, &mut bufs.modes)?;
        s.join(&s1).map_err(&join)?;
        let (modes, n) = (dptr(&bufs.modes, s), self.n_samples as i64);
        // The arguments match wp_real_part.
        launch!(
            self.module,
            s,
            "wp_real_part",
            grid_for(self.n_samples),
            &modes,
            &data,
            &n
        );
        self.report(reporter, "wave-packet spectrum", usfft_share)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buffers<T>> {
        self.buffers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Host-to-host C: uploads `data`, runs, downloads into `coeffs` (written only at the end).
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        gpu: &CudaBackend,
        cpu: &crate::backend::cpu::CpuBackend,
        layout: &Layout,
        type2: &UsfftPlan<T>,
        data: &[T],
        coeffs: &mut [Complex<T>],
        shifts: &[[f64; 3]],
        reporter: &mut Reporter,
        usfft_share: f64,
    ) -> Result<()> {
        bind(gpu)?;
        let s = &self.stream;
        let mut bufs = self.lock();
        let b = &mut *bufs;
        let (d, c) = self.host_buffers(b)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe { staging::upload_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, d, data) }?;
        self.forward_on(layout, type2, d, c, shifts, b, reporter, usfft_share)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe {
            staging::download_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, c, as_reals_mut(coeffs))
        }
    }

    /// The index of the first non-finite value of `n` reals at `x` (uploaded input), if any:
    /// checked on the device, where the values already are (one 8-byte read-back).
    fn find_non_finite(&self, x: u64, n: usize, bufs: &mut Buffers<T>) -> Result<Option<usize>> {
        let s = &self.stream;
        let what = "checking the wave-packet input";
        let first = dptr(&bufs.first_bad, s);
        // SAFETY: one u64.
        unsafe { cudarc::driver::result::memset_d8_async(first, 0xff, 8, s.cu_stream()) }
            .map_err(driver_error(what))?;
        let n64 = n as i64;
        // The arguments match wp_first_non_finite.
        launch!(
            self.module,
            s,
            "wp_first_non_finite",
            grid_for(n),
            &x,
            &n64,
            &first
        );
        let mut found = [0u64];
        s.memcpy_dtoh(&bufs.first_bad, &mut found)
            .map_err(driver_error(what))?;
        Ok((found[0] != u64::MAX).then_some(found[0] as usize))
    }

    /// Host-to-host C*: uploads `coeffs`, refuses non-finite ones (checked on the device),
    /// runs, downloads into `data` (written at the end).
    #[allow(clippy::too_many_arguments)]
    pub fn adjoint(
        &self,
        gpu: &CudaBackend,
        cpu: &crate::backend::cpu::CpuBackend,
        layout: &Layout,
        type1: &UsfftPlan<T>,
        coeffs: &[Complex<T>],
        data: &mut [T],
        shifts: &[[f64; 3]],
        reporter: &mut Reporter,
        usfft_share: f64,
    ) -> Result<()> {
        bind(gpu)?;
        let s = &self.stream;
        let mut bufs = self.lock();
        let b = &mut *bufs;
        let (d, c) = self.host_buffers(b)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe { staging::upload_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, c, as_reals(coeffs)) }?;
        if let Some(i) = self.find_non_finite(c, 2 * self.n_coefficients, b)? {
            return Err(Error::NonFinite(format!(
                "coefficient {} is not finite; nothing was written",
                i / 2
            )));
        }
        self.adjoint_on(layout, type1, c, d, shifts, b, reporter, usfft_share)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe { staging::download_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, d, data) }
    }

    /// C*·P(C f): `f` up, C, P and C* on the device, `out` down; the coefficients between
    /// them never leave it. P is nothing (C*C f, the inverse's iterations) or, with
    /// `keep_below` (one threshold per box, by box index), the zeroing of every coefficient
    /// above its box's threshold (`wp_keep_below`: a POCS step).
    #[allow(clippy::too_many_arguments)]
    pub fn synthesis(
        &self,
        gpu: &CudaBackend,
        cpu: &crate::backend::cpu::CpuBackend,
        layout: &Layout,
        type2: &UsfftPlan<T>,
        type1: &UsfftPlan<T>,
        f: &[T],
        out: &mut [T],
        keep_below: Option<&[f64]>,
    ) -> Result<()> {
        bind(gpu)?;
        let s = &self.stream;
        let mut bufs = self.lock();
        let b = &mut *bufs;
        let (d, c) = self.host_buffers(b)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe { staging::upload_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, d, f) }?;
        let mut quiet = Reporter::new(None);
        self.forward_on(layout, type2, d, c, &[], b, &mut quiet, 0.5)?;
        // Kept alive until the stream has used it (the download below waits for it).
        let mut _thresholds = None;
        if let Some(t) = keep_below {
            let by_work: Vec<f64> = self.order.iter().map(|&bx| t[bx]).collect();
            let t = upload(s, &by_work, "uploading the wave-packet thresholds")?;
            let n_boxes = by_work.len() as i64;
            let (table, tp) = (dptr(&self.table, s), dptr(&t, s));
            let cfg = LaunchConfig {
                grid_dim: (by_work.len().clamp(1, 1 << 16) as u32, 1, 1),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            // The arguments match wp_keep_below.
            launch!(
                self.module,
                s,
                "wp_keep_below",
                cfg,
                &c,
                &table,
                &tp,
                &n_boxes
            );
            _thresholds = Some(t);
        }
        self.adjoint_on(layout, type1, c, d, &[], b, &mut quiet, 0.5)?;
        // SAFETY: the address is a device buffer of this plan spanning the slice (interim raw form).
        unsafe { staging::download_staged_raw(&gpu.ctx, &gpu.staging, cpu, s, d, out) }
    }

    /// The device arrays of host-to-host calls, (data, coefficients), made on first use.
    fn host_buffers(&self, b: &mut Buffers<T>) -> Result<(u64, u64)> {
        let s = &self.stream;
        let data = ensure(
            &mut b.data,
            self.n_samples,
            s,
            "allocating wave-packet data",
        )?;
        let d = dptr(data, s);
        let what = "allocating wave-packet coefficients";
        let c = dptr(ensure(&mut b.coeffs, 2 * self.n_coefficients, s, what)?, s);
        Ok((d, c))
    }

    /// Device-resident C, queued on `stream()` without waiting: `data` holds n reals,
    /// `coeffs` 2·m (interleaved complex). Non-finite data is not checked.
    pub fn forward_device(
        &self,
        gpu: &CudaBackend,
        layout: &Layout,
        type2: &UsfftPlan<T>,
        data: &CudaSlice<T>,
        coeffs: &mut CudaSlice<T>,
    ) -> Result<()> {
        self.check_device(data.len(), coeffs.len())?;
        bind(gpu)?;
        let s = &self.stream;
        let d = dptr(data, s);
        let (c, _record) = coeffs.device_ptr_mut(s);
        let mut bufs = self.lock();
        self.forward_on(
            layout,
            type2,
            d,
            c,
            &[],
            &mut bufs,
            &mut Reporter::new(None),
            0.5,
        )
    }

    /// Device-resident C*, queued on `stream()` without waiting (the sizes as `forward_device`).
    pub fn adjoint_device(
        &self,
        gpu: &CudaBackend,
        layout: &Layout,
        type1: &UsfftPlan<T>,
        coeffs: &CudaSlice<T>,
        data: &mut CudaSlice<T>,
    ) -> Result<()> {
        self.check_device(data.len(), coeffs.len())?;
        bind(gpu)?;
        let s = &self.stream;
        let c = dptr(coeffs, s);
        let (d, _record) = data.device_ptr_mut(s);
        let mut bufs = self.lock();
        self.adjoint_on(
            layout,
            type1,
            c,
            d,
            &[],
            &mut bufs,
            &mut Reporter::new(None),
            0.5,
        )
    }

    fn check_device(&self, data: usize, coeffs: usize) -> Result<()> {
        let (n, m) = (self.n_samples, 2 * self.n_coefficients);
        if data < n || coeffs < m {
            return Err(crate::invalid!(
                "device buffers hold {data} and {coeffs} reals; the layout needs {n} (data) and {m} (coefficients)"
            ));
        }
        Ok(())
    }
}

fn bind(gpu: &CudaBackend) -> Result<()> {
    gpu.ctx
        .bind_to_thread()
        .map_err(driver_error("binding the context"))
}
