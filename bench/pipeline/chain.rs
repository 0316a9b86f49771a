//! The chain's plans and calls through the C ABI, as an application makes them: a DWT
//! denoise of every trace, F-XY decon of the volume, and the wave packets' forward
//! transform, soft threshold and adjoint. Host-array calls for the first way, device calls
//! (on the context's stream) for the other two.

use seisgpu::ffi::context::sg_context;
use seisgpu::ffi::dwt::device::*;
use seisgpu::ffi::dwt::*;
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::last_error::sg_last_error_message;
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;
use std::ffi::CStr;

pub fn check(s: sg_status, what: &str) -> Result<(), String> {
    if s == SG_OK {
        return Ok(());
    }
    // SAFETY: documented as a valid NUL-terminated string.
    let m = unsafe { CStr::from_ptr(sg_last_error_message()) }.to_string_lossy();
    Err(format!("{what}: status {s}: {m}"))
}

/// The volume's shape: samples a trace (fastest), inline traces, crossline traces.
#[derive(Clone, Copy)]
pub struct Shape {
    pub n: usize,
    pub nx: usize,
    pub ny: usize,
}

impl Shape {
    pub fn samples(&self) -> usize {
        self.n * self.nx * self.ny
    }
    pub fn traces(&self) -> usize {
        self.nx * self.ny
    }
}

/// The step of the chain a call makes, for the per-call rows.
pub const STEPS: [&str; 5] = [
    "DWT denoise",
    "F-XY decon",
    "wave-packet forward",
    "wave-packet threshold",
    "wave-packet adjoint",
];

pub struct Chain {
    pub ctx: *mut sg_context,
    pub shape: Shape,
    dwt: *mut sg_dwt_plan,
    fx: *mut sg_fxdecon_plan,
    layout: *mut sg_wavepacket_layout,
    /// Complex coefficients of the layout.
    pub coefficients: usize,
    pub threshold: f64,
}

impl Chain {
    pub fn new(
        ctx: *mut sg_context,
        shape: Shape,
        directions: usize,
        levels: usize,
    ) -> Result<Chain, String> {
        let mut c = Chain {
            ctx,
            shape,
            dwt: std::ptr::null_mut(),
            fx: std::ptr::null_mut(),
            layout: std::ptr::null_mut(),
            coefficients: 0,
            threshold: 0.0,
        };
        let s = sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, 8, shape.n, &mut c.dwt);
        check(s, "DWT plan")?;
        let o = sg_fxdecon_options_default();
        let s = sg_fxdecon_plan_create_3d(ctx, &o, shape.n, shape.nx, shape.ny, &mut c.fx);
        check(s, "F-XY plan")?;
        let dims = [shape.n, shape.nx, shape.ny];
        // Windows cut at 0.2 of their peak, as the wave-packet benchmark's layouts.
        let wo = sg_wavepacket_layout_options {
            directions,
            levels,
            cutoff: 0.2,
            ..sg_wavepacket_layout_options_default()
        };
        let (f32_, out) = (SG_WAVEPACKET_F32, &mut c.layout);
        let s = sg_wavepacket_layout_create_with_options(ctx, 3, dims.as_ptr(), f32_, &wo, out);
        check(s, "wave-packet layout")?;
        let (mut a, mut m, mut b, mut d, mut e) = (0, 0, 0, 0, 0);
        let s = sg_wavepacket_layout_sizes(c.layout, &mut a, &mut m, &mut b, &mut d, &mut e);
        check(s, "wave-packet sizes")?;
        c.coefficients = m;
        Ok(c)
    }

    /// Step `k` on host arrays: `v` the input volume, two work volumes and the
    /// coefficients (input → v1 → v2 → c → v1: the result in v1, the input kept).
    pub fn host_step(&self, k: usize, v: [*mut f32; 4]) -> Result<(), String> {
        let Shape { n, nx, .. } = self.shape;
        let o = sg_dwt_denoise_options_default();
        let (traces, null) = (self.shape.traces(), std::ptr::null_mut());
        let (soft, value) = (SG_WAVEPACKET_SOFT, SG_WAVEPACKET_THRESHOLD_VALUE);
        let s = match k {
            0 => sg_dwt_denoise_f32(self.dwt, &o, v[0], v[1], traces, n, null),
            1 => sg_fxdecon_execute_3d_f32(self.fx, v[1], v[2], n, n * nx),
            2 => sg_wavepacket_forward_f32(self.layout, v[2], v[3]),
            3 => sg_wavepacket_threshold_f32(self.layout, v[3], soft, value, self.threshold),
            _ => sg_wavepacket_adjoint_f32(self.layout, v[3], v[1]),
        };
        check(s, STEPS[k])
    }

    /// `host_step` on device arrays (`CUdeviceptr`s), queued on the context's stream.
    pub fn device_step(&self, k: usize, v: [u64; 4]) -> Result<(), String> {
        let Shape { n, nx, .. } = self.shape;
        let o = sg_dwt_denoise_options_default();
        let (traces, null) = (self.shape.traces(), std::ptr::null_mut());
        let (soft, value) = (SG_WAVEPACKET_SOFT, SG_WAVEPACKET_THRESHOLD_VALUE);
        let s = match k {
            0 => sg_dwt_denoise_device_f32(self.dwt, &o, v[0], v[1], traces, n, null),
            1 => sg_fxdecon_execute_3d_device_f32(self.fx, v[1], v[2], n, n * nx),
            2 => sg_wavepacket_forward_device_f32(self.layout, v[2], v[3]),
            3 => sg_wavepacket_threshold_device_f32(self.layout, v[3], soft, value, self.threshold),
            _ => sg_wavepacket_adjoint_device_f32(self.layout, v[3], v[1]),
        };
        check(s, STEPS[k])
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        sg_dwt_plan_destroy(self.dwt);
        sg_fxdecon_plan_destroy(self.fx);
        sg_wavepacket_layout_destroy(self.layout);
    }
}
