//! The CUDA C sources of `kernels/`, embedded in the library.

/// One file of `kernels/`.
pub struct KernelSource {
    pub file: &'static str,
    pub source: &'static str,
}

/// `NAME`: the embedded kernel file `kernels/FILE`.
macro_rules! kernel_file {
    ($($name:ident = $file:literal),* $(,)?) => {$(
        pub const $name: KernelSource = KernelSource {
            file: $file,
            source: include_str!(concat!("../../../kernels/", $file)),
        };
    )*};
}

kernel_file! {
    DWT = "dwt.cu",
    USFFT = "usfft.cu",
    FXDECON = "fxdecon.cu",
    XCORR = "xcorr.cu",
    EMLOG = "emlog.cu",
    WAVEPACKET = "wavepacket.cu",
    WAVEPACKET_WINDOWS = "wavepacket_windows.cu",
    CHECKS = "checks.cu",
}

/// Every embedded kernel file, so that tests can compile them all.
pub const ALL: &[&KernelSource] = &[
    &DWT,
    &USFFT,
    &FXDECON,
    &XCORR,
    &EMLOG,
    &WAVEPACKET,
    &WAVEPACKET_WINDOWS,
    &CHECKS,
];
