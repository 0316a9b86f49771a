//! The compile-time constants `kernels/usfft.cu` is built with (one module per dimension,
//! kernel width, kernel shape and precision).

use super::heuristics::{interp_split, row_min_blocks, row_tile1};
use crate::sample::Sample;
use crate::usfft::kernel::{KernelShape, SpreadKernel};
use crate::usfft::spec::{MIN_TOL_F32, MIN_TOL_F64};

/// The NVRTC prelude for one dimension, kernel and precision.
pub fn prelude<T: Sample>(dim: usize, width: usize, shape: KernelShape) -> String {
    let bytes = std::mem::size_of::<T>();
    format!(
        "#define REAL {}\n#define DIM {dim}\n#define NSPREAD {width}\n#define KERNEL_ES {}\n#define ROW_TILE1 {}\n#define ROW_MIN_BLOCKS {}\n#define INTERP_SPLIT {}\n",
        T::C_TYPE,
        (shape == KernelShape::ExpSemicircle) as i32,
        row_tile1(dim, width, bytes),
        row_min_blocks(dim, width, bytes),
        interp_split(dim, bytes)
    )
}

/// Every prelude the library can produce, labelled ("3d es w8 f32"): each dimension, kernel
/// shape and precision with every width its tolerances reach (f32 down to 1e-6, f64 to 1e-14).
pub fn usfft_kernel_preludes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dim in 1..=3 {
        for (shape, name) in [
            (KernelShape::ExpSemicircle, "es"),
            (KernelShape::Gaussian, "gauss"),
        ] {
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F32) {
                out.push((
                    format!("{dim}d {name} w{w} f32"),
                    prelude::<f32>(dim, w, shape),
                ));
            }
            for w in SpreadKernel::reachable_widths(shape, MIN_TOL_F64) {
                out.push((
                    format!("{dim}d {name} w{w} f64"),
                    prelude::<f64>(dim, w, shape),
                ));
            }
        }
    }
    out
}
