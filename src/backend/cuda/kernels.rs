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

pub const USFFT: KernelSource = KernelSource {
    file: "usfft.cu",
    source: include_str!("../../../kernels/usfft.cu"),
};

pub const FXDECON: KernelSource = KernelSource {
    file: "fxdecon.cu",
    source: include_str!("../../../kernels/fxdecon.cu"),
};

pub const XCORR: KernelSource = KernelSource {
    file: "xcorr.cu",
    source: include_str!("../../../kernels/xcorr.cu"),
};

pub const EMLOG: KernelSource = KernelSource {
    file: "emlog.cu",
    source: include_str!("../../../kernels/emlog.cu"),
};

pub const WAVEPACKET: KernelSource = KernelSource {
    file: "wavepacket.cu",
    source: include_str!("../../../kernels/wavepacket.cu"),
};

/// Every embedded kernel file, so that tests can compile them all.
pub const ALL: &[&KernelSource] = &[&DWT, &USFFT, &FXDECON, &XCORR, &EMLOG, &WAVEPACKET];
