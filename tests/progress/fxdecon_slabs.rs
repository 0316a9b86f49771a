//! The CPU path cuts large data into slabs of spatial windows (bounded memory); a line
//! covered by windows of two slabs gets both parts. Cutting small data into many slabs must
//! give the one-slab result (to rounding), out-of-band pass-through included.

use crate::fxdecon_data;

use fxdecon_data::*;
use seisgpu::backend::BackendRequest;
use seisgpu::context::Context;
use seisgpu::fxdecon::cpu::set_slab_bytes;
use seisgpu::fxdecon::options::{FxdeconOptions, OutOfBand};
use seisgpu::fxdecon::FxdeconPlan;

#[test]
fn many_slabs_give_the_one_slab_result() {
    let _slabs = crate::FX_SLABS.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new(BackendRequest::Cpu, 0).unwrap();
    let evs = [
        Event {
            t0: 0.2,
            px: 0.002,
            py: -0.001,
            amp: 1.0,
        },
        Event {
            t0: 0.5,
            px: -0.003,
            py: 0.002,
            amp: 0.7,
        },
    ];
    for (name, dims, shape, o) in [
        ("2D defaults", 2, (300, 1, 130), FxdeconOptions::default()),
        (
            "2D 0.4 s windows, zero out of band",
            2,
            (300, 1, 130),
            FxdeconOptions {
                time_window: 0.4,
                out_of_band: OutOfBand::Zero,
                ..Default::default()
            },
        ),
        ("3D defaults", 3, (200, 30, 75), FxdeconOptions::default()),
        (
            "3D overlap 8",
            3,
            (200, 30, 75),
            FxdeconOptions {
                overlap: [8, 8],
                time_window: 0.4,
                ..Default::default()
            },
        ),
    ] {
        let (n, nx, ny) = shape;
        let x: Vec<f64> = with_noise(&events(n, nx, ny, &evs), 0.3, 2);
        let plan = if dims == 2 {
            FxdeconPlan::new_2d(ctx.clone(), &o, n, ny).unwrap()
        } else {
            FxdeconPlan::new_3d(ctx.clone(), &o, n, nx, ny).unwrap()
        };
        let layout = if dims == 2 {
            plan.layout_2d(n).unwrap()
        } else {
            plan.layout_3d(n, n * nx).unwrap()
        };
        let mut one = vec![0.0; x.len()];
        plan.execute(&x, &mut one, layout).unwrap();
        // About two windows' lines per slab.
        set_slab_bytes(Some(nx * 40 * (8 * n + 32 * 129)));
        let mut many = vec![f64::NAN; x.len()];
        let r = plan.execute(&x, &mut many, layout);
        set_slab_bytes(None);
        r.unwrap();
        let e = rel_rms(&many, &one);
        println!("{name}: slabs vs one slab {e:.2e}");
        assert!(e < 1e-12, "{name}: {e}");
    }
}
