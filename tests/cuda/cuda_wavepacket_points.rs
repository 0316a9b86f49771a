//! The wave-packet plan's lattice points made on the device (`wavepacket::cuda::
//! lattice_points`, the USFFTs' points on a CUDA context) against the host's: 2π·ξ of every
//! lattice point, lattice after lattice, axis 1 fastest, equal bit for bit in f32 and f64,
//! 2D and 3D. Without a CUDA device the test reports "skipped", unless
//! SEISGPU_REQUIRE_CUDA=1 makes that a failure.

use crate::cuda_common::gpu_context;
use crate::wavepacket_support::layout_options;
use seisgpu::context::Context;
use seisgpu::sample::Real;
use seisgpu::wavepacket::{Layout, LayoutOptions};

/// Per dimension, 2π·ξ(t) of every lattice point rounded to T (the host's order).
fn host_points<T: Real>(layout: &Layout) -> Vec<Vec<T>> {
    let mut c = vec![Vec::new(); layout.dim];
    for l in &layout.lattices {
        for t3 in 0..l.len[2] as i64 {
            for t2 in 0..l.len[1] as i64 {
                for t1 in 0..l.len[0] as i64 {
                    let xi = l.point([l.lo[0] + t1, l.lo[1] + t2, l.lo[2] + t3]);
                    for (d, cd) in c.iter_mut().enumerate() {
                        cd.push(T::from_f64(std::f64::consts::TAU * xi[d]).unwrap());
                    }
                }
            }
        }
    }
    c
}

fn check<T: Real>(ctx: &Context, shape: &[usize], o: &LayoutOptions) {
    let layout = Layout::new(shape.len(), shape, o).unwrap();
    let gpu = ctx.cuda().unwrap();
    let stream = gpu.stream().unwrap();
    let dev = seisgpu::wavepacket::cuda::lattice_points::<T>(gpu, &layout, &stream).unwrap();
    let want = host_points::<T>(&layout);
    assert_eq!(dev.len(), layout.dim);
    for (d, (buf, w)) in dev.iter().zip(&want).enumerate() {
        let got: Vec<T> = stream.clone_dtoh(&**buf).unwrap();
        assert_eq!(got.len(), layout.n_points);
        let differ = got.iter().zip(w).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "{shape:?}, axis {d}: {differ} points differ from the host's"
        );
    }
    println!(
        "{shape:?}: {} lattice points equal the host's",
        layout.n_points
    );
}

#[test]
fn gpu_lattice_points_equal_the_hosts() {
    let Some(gpu) = gpu_context() else { return };
    let o3 = layout_options(26, 2, Some(0.2));
    let o2 = layout_options(16, 3, None);
    check::<f32>(&gpu, &[20, 18, 16], &o3);
    check::<f64>(&gpu, &[19, 17, 15], &o3);
    check::<f32>(&gpu, &[64, 48], &o2);
    check::<f64>(&gpu, &[63, 47], &o2);
}
