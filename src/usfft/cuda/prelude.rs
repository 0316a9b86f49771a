//! The compile-time constants `kernels/usfft.cu` is built with (one module per dimension,
//! kernel width, kernel shape and precision).

use super::heuristics::{interp_split, row_min_blocks, row_tile1};
use crate::sample::Sample;
use crate::usfft::kernel::{KernelShape, SpreadKernel};
use crate::usfft::prolate::prolate_fit;
use crate::usfft::spec::{MIN_TOL_F32, MIN_TOL_F64};

/// The NVRTC prelude for one dimension, kernel and precision.
pub fn prelude<T: Sample>(dim: usize, width: usize, shape: KernelShape) -> String {
    let bytes = std::mem::size_of::<T>();
    format!(
        "#define REAL {}\n#define DIM {dim}\n#define NSPREAD {width}\n#define KERNEL_ES {}\n{}#define ROW_TILE1 {}\n#define ROW_MIN_BLOCKS {}\n#define INTERP_SPLIT {}\n",
        T::C_TYPE,
        (shape != KernelShape::Gaussian) as i32,
        es_factor(width, shape),
        row_tile1(dim, width, bytes),
        row_min_blocks(dim, width, bytes),
        interp_split(dim, bytes)
    )
}

/// The prolate kernel's factor P(x) as a macro in Horner form, its coefficients baked in as
/// literals (an FMA with an immediate a degree), and its mirror term's e^{−2β}; nothing for
/// the other shapes.
fn es_factor(width: usize, shape: KernelShape) -> String {
    if shape != KernelShape::Prolate {
        return String::new();
    }
    let fit = prolate_fit(width);
    let horner = fit.factor.iter().fold(String::new(), |acc, a| {
        if acc.is_empty() {
            format!("(REAL){a:.17e}")
        } else {
            format!("({acc} * (x) + (REAL){a:.17e})")
        }
    });
    format!(
        "#define ES_FACTOR(x) {horner}\n#define ES_MIRROR (REAL){:.17e}\n",
        (-2.0 * fit.beta).exp()
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
            (KernelShape::Prolate, "prolate"),
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
