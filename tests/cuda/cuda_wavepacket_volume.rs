//! A 3D wave-packet volume's device forward and adjoint against its host calls: on one
//! context (the tiles cut, transformed and added on the device, queued on the context's
//! stream) and over two contexts (the common grids in two parts): the forward bit for bit,
//! the adjoint to rounding (each tile's type-1 USFFT adds with atomics).

use crate::cuda_common::{gpu_context, sanitize_small};
use crate::wavepacket_support::{f3, rel_l2};
use num_complex::Complex;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::wavepacket::tiles::TiledPlan;
use seisgpu::wavepacket::{LayoutOptions, Pass};

/// The device calls' coefficients (interleaved reals) and adjoint of `f`, on the first
/// context's caller stream.
fn on_device(plan: &TiledPlan<f32>, f: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let s = plan.context().cuda().unwrap().caller_stream();
    let data = s.clone_htod(f).unwrap();
    let mut c = s.alloc_zeros::<f32>(2 * plan.n_coefficients()).unwrap();
    let mut back = s.alloc_zeros::<f32>(f.len()).unwrap();
    plan.transform_on_device(Pass::Forward, &data, &mut c)
        .unwrap();
    plan.transform_on_device(Pass::Adjoint, &c, &mut back)
        .unwrap();
    (s.clone_dtoh(&c).unwrap(), s.clone_dtoh(&back).unwrap())
}

/// The volume the tests share: 2×2×2 tiles, the last ones partial, 26 directions, and
/// test data of `seed`.
fn volume_case(seed: usize) -> (LayoutOptions, [usize; 3], [usize; 3], Vec<f32>) {
    let o = LayoutOptions {
        directions: 26,
        levels: 1,
        tolerance: 1e-6,
        ..Default::default()
    };
    let (volume, tile) = if sanitize_small() {
        ([12, 10, 9], [8, 8, 8])
    } else {
        ([20, 18, 23], [12, 10, 12])
    };
    let f = f3(seed, volume[0], volume[1], volume[2])
        .into_iter()
        .map(|v| v as f32)
        .collect();
    (o, volume, tile, f)
}

#[test]
fn gpu_volume_device_calls_equal_the_host_calls_in_3d() {
    let Some(gpu) = gpu_context() else { return };
    let (o, volume, tile, f) = volume_case(10);
    let second = Context::new(BackendRequest::Cuda, 0).unwrap();
    let one = TiledPlan::<f32>::new(gpu.clone(), &volume, &tile, &o).unwrap();
    let two = TiledPlan::<f32>::on_contexts(&[gpu, second], &volume, &tile, &o).unwrap();
    let zero = Complex::new(0f32, 0.0);
    let mut c = vec![zero; one.n_coefficients()];
    one.forward(&f, &mut c).unwrap();
    let mut back = vec![0f32; f.len()];
    one.adjoint(&c, &mut back).unwrap();
    let reals: Vec<f32> = c.iter().flat_map(|z| [z.re, z.im]).collect();
    let to_f64 = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    for (plan, what) in [(&one, "one context"), (&two, "two contexts")] {
        let (c_dev, back_dev) = on_device(plan, &f);
        let same = c_dev
            .iter()
            .zip(&reals)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(
            same && c_dev.len() == reals.len(),
            "device volume forward ({what}) differs from the host call"
        );
        let e = rel_l2(&to_f64(&back_dev), &to_f64(&back));
        assert!(e < 1e-6, "device volume adjoint ({what}) differs by {e:e}");
    }
    println!(
        "3D volume device calls on one and two contexts: forward bit for bit, adjoint to rounding"
    );
}

/// The host calls of one context keep the common grids on the device where the volume and
/// the grids fit beside the plan, and on the host where a cap leaves no room for them: the
/// two give the same forward bit for bit, the adjoint and the inverse to rounding.
#[test]
fn gpu_volume_grids_on_the_device_equal_the_grids_on_the_host() {
    let Some(gpu) = gpu_context() else { return };
    let (o, volume, tile, f) = volume_case(11);
    let device = TiledPlan::<f32>::new(gpu.clone(), &volume, &tile, &o).unwrap();
    // The call's volume and grids on the device, bytes; a cap with room for half of them.
    let call = 4 * (f.len() + 2 * device.n_coefficients());
    let cap = device.device_bytes() + call / 2;
    let host = TiledPlan::<f32>::on_contexts_capped(&[gpu], &volume, &tile, &o, cap).unwrap();
    assert!(
        host.device_bytes() > 0 && host.device_bytes() + call > cap,
        "the capped plan ({} bytes) leaves room for the call's {call} bytes under {cap}",
        host.device_bytes()
    );
    let zero = Complex::new(0f32, 0.0);
    let mut c = [
        vec![zero; device.n_coefficients()],
        vec![zero; host.n_coefficients()],
    ];
    let mut back = [vec![0f32; f.len()], vec![0f32; f.len()]];
    let mut inv = [vec![0f32; f.len()], vec![0f32; f.len()]];
    for (i, plan) in [&device, &host].into_iter().enumerate() {
        plan.forward(&f, &mut c[i]).unwrap();
        plan.adjoint(&c[i], &mut back[i]).unwrap();
        plan.inverse(&c[i], &mut inv[i], 1e-12, 4).unwrap();
    }
    let same = c[0]
        .iter()
        .zip(&c[1])
        .all(|(a, b)| a.re.to_bits() == b.re.to_bits() && a.im.to_bits() == b.im.to_bits());
    assert!(
        same,
        "the forward with the grids on the device differs from the host's"
    );
    let to_f64 = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let e = rel_l2(&to_f64(&back[0]), &to_f64(&back[1]));
    assert!(e < 1e-6, "the adjoints differ by {e:e}");
    let e_inv = rel_l2(&to_f64(&inv[0]), &to_f64(&inv[1]));
    assert!(
        e_inv < 1e-5,
        "the inverses (4 iterations) differ by {e_inv:e}"
    );
    let e_f = rel_l2(&to_f64(&inv[0]), &to_f64(&f));
    assert!(e_f < 0.1, "the inverse is {e_f:e} from the data");
    println!(
        "3D volume host calls, grids on the device vs on the host (cap {cap}): forward bit for \
         bit, adjoint {e:.1e}, inverse {e_inv:.1e} (round trip {e_f:.1e})"
    );
}
