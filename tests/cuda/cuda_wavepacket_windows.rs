//! The wave-packet windows made on the device (`kernels/wavepacket_windows.cu`, a CUDA
//! plan's) against the host evaluator's (`windows::box_windows`, a CPU plan's): every value
//! of every box, 2D and 3D, odd and even sizes, few and many directions, f32 and f64; and
//! the packet norms made from them. Without a CUDA device the test reports "skipped", unless
//! SEISGPU_REQUIRE_CUDA=1 makes that a failure.

use crate::cuda_common::gpu_context;
use crate::wavepacket_support::layout_options;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::wavepacket::sparse::packet_norms;
use seisgpu::wavepacket::windows::box_windows;
use seisgpu::wavepacket::{LayoutOptions, WavepacketPlan};
use std::sync::Arc;

/// The device plan's windows differ from the host's by at most `tol` times the largest
/// window value (f64), or by at most one unit in the last place of each value (f32: the
/// same double rounded to float, where the two doubles straddle a rounding boundary).
fn check<T: Real>(gpu: &Arc<Context>, shape: &[usize], o: &LayoutOptions) {
    let plan = WavepacketPlan::<T>::new(gpu.clone(), shape, o).unwrap();
    let layout = plan.layout();
    let want = box_windows::<T>(layout);
    let peak = want
        .iter()
        .flatten()
        .map(|w| w.to_f64().unwrap().abs())
        .fold(0.0, f64::max);
    let f32_plan = std::mem::size_of::<T>() == 4;
    let (mut worst, mut differ, mut beyond) = (0.0f64, 0usize, 0usize);
    for (b, w) in want.iter().enumerate() {
        let got = plan.window(b).unwrap();
        assert_eq!(got.len(), w.len(), "box {b}");
        for (g, h) in got.iter().zip(w) {
            let (g, h) = (g.to_f64().unwrap(), h.to_f64().unwrap());
            let d = (g - h).abs();
            worst = worst.max(d / peak);
            differ += usize::from(d != 0.0);
            let allowed = if f32_plan {
                h.abs() * f64::from(f32::EPSILON) + 1e-45
            } else {
                1e-12 * peak
            };
            beyond += usize::from(d > allowed);
        }
    }
    let norms = plan.packet_norms();
    let host_norms = packet_norms(layout, &want);
    let norm_err = norms
        .iter()
        .zip(&host_norms)
        .map(|(a, b)| (a / b - 1.0).abs())
        .fold(0.0, f64::max);
    println!(
        "{shape:?} {} directions, {}: {} values, {differ} differ, largest difference {worst:.2e} \
         of the peak; packet norms within {norm_err:.2e}; windows made in {:.3} s",
        o.directions,
        if f32_plan { "f32" } else { "f64" },
        layout.n_coefficients,
        plan.creation_phases().windows.as_secs_f64()
    );
    assert_eq!(
        beyond, 0,
        "{shape:?}: {beyond} values beyond the rounding allowed"
    );
    assert!(
        norm_err < 1e-10,
        "{shape:?}: packet norms off by {norm_err:e}"
    );
}

#[test]
fn gpu_windows_equal_the_hosts() {
    let Some(gpu) = gpu_context() else { return };
    let o3 = layout_options(26, 2, Some(0.2));
    let o350 = layout_options(350, 1, None);
    let o2 = layout_options(16, 3, None);
    check::<f64>(&gpu, &[20, 18, 16], &o3);
    check::<f32>(&gpu, &[19, 17, 15], &o3);
    check::<f64>(&gpu, &[24, 24, 24], &o350);
    check::<f32>(&gpu, &[24, 24, 24], &o350);
    check::<f64>(&gpu, &[64, 48], &o2);
    check::<f32>(&gpu, &[63, 47], &o2);
}
