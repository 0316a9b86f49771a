//! The reference row: GSL's daubechies wavelet through FFI, one thread, in f64 (GSL is
//! double precision only), with the denoise rule written here independently.

use crate::MEMBER;

#[allow(non_upper_case_globals)]
mod ffi {
    use std::os::raw::{c_int, c_void};

    #[repr(C)]
    pub struct WaveletType {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct Wavelet {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct Workspace {
        _opaque: [u8; 0],
    }

    #[link(name = "gsl")]
    #[link(name = "gslcblas")]
    extern "C" {
        pub static gsl_wavelet_daubechies: *const WaveletType;
        pub fn gsl_wavelet_alloc(t: *const WaveletType, k: usize) -> *mut Wavelet;
        pub fn gsl_wavelet_free(w: *mut Wavelet);
        pub fn gsl_wavelet_workspace_alloc(n: usize) -> *mut Workspace;
        pub fn gsl_wavelet_workspace_free(work: *mut Workspace);
        pub fn gsl_wavelet_transform_forward(
            w: *const Wavelet,
            data: *mut f64,
            stride: usize,
            n: usize,
            work: *mut Workspace,
        ) -> c_int;
        pub fn gsl_wavelet_transform_inverse(
            w: *const Wavelet,
            data: *mut f64,
            stride: usize,
            n: usize,
            work: *mut Workspace,
        ) -> c_int;
        pub fn gsl_set_error_handler_off() -> *mut c_void;
    }
}

/// One trace at a time: f32 → f64, GSL forward (all levels), the threshold rule in
/// plain Rust, GSL inverse, f64 → f32.
pub struct GslDenoiser {
    w: *mut ffi::Wavelet,
    work: *mut ffi::Workspace,
    n: usize,
    data: Vec<f64>,
    scratch: Vec<f64>,
}

impl GslDenoiser {
    pub fn new(n: usize) -> Result<GslDenoiser, String> {
        // SAFETY: plain GSL calls; results checked for NULL, freed in Drop.
        unsafe {
            ffi::gsl_set_error_handler_off();
            let w = ffi::gsl_wavelet_alloc(ffi::gsl_wavelet_daubechies, MEMBER as usize);
            if w.is_null() {
                return Err(format!("gsl_wavelet_alloc(daubechies, {MEMBER}) failed"));
            }
            let work = ffi::gsl_wavelet_workspace_alloc(n);
            if work.is_null() {
                ffi::gsl_wavelet_free(w);
                return Err(format!("gsl_wavelet_workspace_alloc({n}) failed"));
            }
            Ok(GslDenoiser {
                w,
                work,
                n,
                data: vec![0.0; n],
                scratch: Vec::with_capacity(n / 2),
            })
        }
    }

    pub fn denoise(&mut self, input: &[f32], output: &mut [f32]) -> Result<(), String> {
        let n = self.n;
        for (src, dst) in input.chunks_exact(n).zip(output.chunks_exact_mut(n)) {
            for (d, &x) in self.data.iter_mut().zip(src) {
                *d = x as f64;
            }
            // SAFETY: data holds n doubles, the workspace was made for n.
            let rc = unsafe {
                ffi::gsl_wavelet_transform_forward(self.w, self.data.as_mut_ptr(), 1, n, self.work)
            };
            if rc != 0 {
                return Err(format!("gsl_wavelet_transform_forward returned {rc}"));
            }
            universal_soft_finest(&mut self.data, &mut self.scratch);
            // SAFETY: as above.
            let rc = unsafe {
                ffi::gsl_wavelet_transform_inverse(self.w, self.data.as_mut_ptr(), 1, n, self.work)
            };
            if rc != 0 {
                return Err(format!("gsl_wavelet_transform_inverse returned {rc}"));
            }
            for (o, &d) in dst.iter_mut().zip(&self.data) {
                *o = d as f32;
            }
        }
        Ok(())
    }
}

impl Drop for GslDenoiser {
    fn drop(&mut self) {
        // SAFETY: allocated in new, freed once.
        unsafe {
            ffi::gsl_wavelet_workspace_free(self.work);
            ffi::gsl_wavelet_free(self.w);
        }
    }
}

/// The default denoise rule on a full GSL-layout transform [a_L | d_L | … | d_1]:
/// σ = median(|d_1|)/0.6745 (d_1 = the upper half; the median of an even count is
/// the mean of the middle pair), λ = σ·√(2 ln n), soft shrinkage of every detail
/// coefficient (all but element 0). Written independently of the library's code.
fn universal_soft_finest(c: &mut [f64], scratch: &mut Vec<f64>) {
    let n = c.len();
    scratch.clear();
    scratch.extend(c[n / 2..].iter().map(|x| x.abs()));
    let m = scratch.len();
    let (lower, &mut upper, _) = scratch.select_nth_unstable_by(m / 2, f64::total_cmp);
    let median = if m % 2 == 1 {
        upper
    } else {
        let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (below + upper)
    };
    let lambda = median / 0.6745 * (2.0 * (n as f64).ln()).sqrt();
    for x in &mut c[1..] {
        let m = x.abs() - lambda;
        *x = if m > 0.0 { x.signum() * m } else { 0.0 };
    }
}
