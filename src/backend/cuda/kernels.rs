//! The CUDA C sources of `kernels/`, embedded in the library.

/// One file of `kernels/`.
pub struct KernelSource {
    pub file: &'static str,
    pub source: &'static str,
}

pub const DWT: KernelSource = KernelSource {
    file: "dwt.cu",
    source: include_str!("../../../kernels/dwt.cu"),
};

pub const XCORR: KernelSource = KernelSource {
    file: "xcorr.cu",
    source: include_str!("../../../kernels/xcorr.cu"),
};

/// Every embedded kernel file, so that tests can compile them all.
pub const ALL: &[&KernelSource] = &[&DWT, &XCORR];
