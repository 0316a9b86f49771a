//! Each capability through its Rust API on the CPU backend, against independent references
//! and quality margins: the EM-logging search, F-X decon on synthetic events, the USFFT
//! against direct sums, the wave packets (transform, tiles, processing, 3D compression
//! against FFT and DWT), the cross-correlations against NoisePy's.
//!
//! One executable, so that the library is linked once for all of them.
//! `cargo test --release --test capabilities` runs them all; `… usfft_direct::` one module.

#[path = "../support/emlog_support/mod.rs"]
mod emlog_support;
#[path = "../support/fxdecon_data/mod.rs"]
mod fxdecon_data;
#[path = "../support/usfft3_support/mod.rs"]
mod usfft3_support;
#[path = "../support/usfft_support/mod.rs"]
mod usfft_support;
#[path = "../support/wavepacket_support/mod.rs"]
mod wavepacket_support;
#[path = "../support/xcorr_common/mod.rs"]
mod xcorr_common;

mod emlog_search;
mod fxdecon_synthetic;
mod usfft_direct;
mod usfft_type3;
mod wavepacket_compression_3d;
mod wavepacket_frame;
mod wavepacket_processing;
mod wavepacket_tiles;
mod wavepacket_transform;
mod xcorr_noisepy;
