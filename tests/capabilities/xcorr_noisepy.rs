//! The library's stacks against NoisePy's own (noisepy-seis 0.9.93, run by
//! tests/reference/make_xcorr_reference.py) on a real day: MSNoise's UnderVolc data,
//! 2010-09-01, stations YA.UV05, UV06, UV10, decimated to 1 Hz (tests/data/README.md).
//! Every stacked pair must correlate with NoisePy's at ≥ 0.999 and match its amplitude.
//!
//! Lag convention: the library's element k is lag (k − maxlag)·dt. NoisePy labels its
//! trimmed output with t = arange(−Nfft2+1, Nfft2)·dt, which for even Nfft puts the
//! correlation at lag τ under the label τ + dt: its element m is our element m − 1.

use crate::xcorr_common;

use seisgpu::backend::BackendRequest;

#[test]
fn cpu_stacks_match_noisepy_on_the_undervolc_day() {
    xcorr_common::noisepy::run_against_noisepy(BackendRequest::Cpu, 1e-5, 1e-3);
}

#[test]
fn cpu_deconv_coherency_and_substacks_match_noisepy() {
    xcorr_common::noisepy::run_methods_against_noisepy(BackendRequest::Cpu, 5e-5);
}
