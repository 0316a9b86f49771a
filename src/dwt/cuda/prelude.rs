//! The NVRTC prelude: the wavelet and the sample type baked into kernels/dwt.cu.

use crate::dwt::wavelet::{self, Family, Wavelet};
use crate::sample::Sample;
use std::sync::{Arc, Mutex};

/// The NVRTC prelude of kernels/dwt.cu for one wavelet and sample type, made once per
/// process: each call looks its module up by it, and printing the filters' taps to 17
/// digits took longer than the call's kernel launch.
pub fn prelude<T: Sample>(wavelet: &Wavelet) -> Arc<str> {
    type Key = (Family, u32, usize, usize);
    static MADE: Mutex<Vec<(Key, Arc<str>)>> = Mutex::new(Vec::new());
    let key = (
        wavelet.family,
        wavelet.member,
        wavelet.offset,
        std::mem::size_of::<T>(),
    );
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = made.iter().find(|(k, _)| *k == key) {
        return p.clone();
    }
    let p: Arc<str> = written::<T>(wavelet).into();
    made.push((key, p.clone()));
    p
}

/// The prelude's text.
fn written<T: Sample>(wavelet: &Wavelet) -> String {
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
        out.push((format!("{label} f32"), written::<f32>(&w)));
        out.push((format!("{label} f64"), written::<f64>(&w)));
    }
    out
}
