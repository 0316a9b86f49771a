//! The NVRTC prelude: the wavelet and the sample type baked into kernels/dwt.cu.

use crate::dwt::wavelet::{self, Wavelet};
use crate::sample::Sample;

/// The NVRTC prelude of kernels/dwt.cu for one wavelet and sample type.
pub fn prelude<T: Sample>(wavelet: &Wavelet) -> String {
    let size = std::mem::size_of::<T>();
    let (key, bits) = if size == 4 {
        ("unsigned int", 32)
    } else {
        ("unsigned long long", 64)
    };
    let array = |name: &str, taps: &[f64]| {
        let values: Vec<String> = taps.iter().map(|c| format!("{c:.16e}")).collect();
        format!(
            "__constant__ REAL {name}[NC] = {{{}}};\n",
            values.join(", ")
        )
    };
    format!(
        "// {} member {}, {}\n#define REAL {}\n#define KEY {key}\n#define KEY_BITS {bits}\n#define VEC {}\n\
         #define NC {}\n#define OFF {}\n{}{}{}{}",
        wavelet.family.name(),
        wavelet.member,
        T::C_TYPE,
        T::C_TYPE,
        16 / size,
        wavelet.taps(),
        wavelet.offset,
        array("H1", &wavelet.analysis.low),
        array("G1", &wavelet.analysis.high),
        array("H2", &wavelet.synthesis.low),
        array("G2", &wavelet.synthesis.high),
    )
}

/// Every prelude this module can produce, labelled: each GSL family and member, f32 and f64.
/// (Trace length, depth and launch shape are kernel arguments, not prelude constants.)
pub fn dwt_kernel_preludes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in wavelet::all() {
        let label = format!("{} {}", w.family.name(), w.member);
        out.push((format!("{label} f32"), prelude::<f32>(&w)));
        out.push((format!("{label} f64"), prelude::<f64>(&w)));
    }
    out
}
