//! A wave-packet volume on a context whose device memory comes from counting hooks: its
//! workspace_bytes equal what the hooks gave while it was created (the device calls' tables
//! and tile arrays included); its device forward and adjoint then allocate and free nothing;
//! the forward's coefficients equal those of the same volume on a plain context bit for bit.

use super::memory::{hooked, made, Counter};
use super::wavepacket_setup::*;
use super::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::wavepacket_volume_device::*;

type V = sg_wavepacket_volume;

/// Four tiles of `SHAPE`, the last ones cut by the volume's end.
const VOLUME: [usize; 2] = [100, 70];

fn create(g: &Gpu) -> Result<*mut V, sg_status> {
    let mut opts = sg_wavepacket_layout_options_default();
    opts.directions = 12;
    opts.tolerance = 1e-6;
    let mut v = std::ptr::null_mut();
    let precision = SG_WAVEPACKET_F32;
    let (volume, tile) = (VOLUME.as_ptr(), SHAPE.as_ptr());
    match sg_wavepacket_volume_create(g.ctx, 2, volume, tile, precision, &opts, &mut v) {
        SG_OK => Ok(v),
        s => Err(s),
    }
}

/// Three device forwards and adjoints of a volume on `g`: the coefficients' bits.
fn volume_run(g: &Gpu, c: Option<&Counter>) -> Vec<u64> {
    let (v, held) = match c {
        Some(c) => made(c, || create(g)),
        None => (create(g).unwrap(), 0),
    };
    let mut bytes = 0;
    ok(sg_wavepacket_volume_workspace_bytes(v, &mut bytes));
    if c.is_some() {
        assert_eq!(
            bytes, held,
            "workspace_bytes against the hooks, at creation"
        );
    }
    let (mut n, mut m, mut tiles, mut boxes) = (0, 0, [0usize; 3], 0);
    ok(sg_wavepacket_volume_sizes(
        v,
        &mut n,
        &mut m,
        tiles.as_mut_ptr(),
        &mut boxes,
    ));
    let f = section(VOLUME, |x| x as f32, smooth);
    assert_eq!(f.len(), n);
    let (dd, cd, back) = (g.upload(&f), g.zeros::<f32>(2 * m), g.zeros::<f32>(n));
    g.synchronize();
    let before = c.map(|c| c.seen());
    for _ in 0..3 {
        ok(sg_wavepacket_volume_forward_device_f32(
            v,
            dd.addr(),
            cd.addr(),
        ));
        ok(sg_wavepacket_volume_adjoint_device_f32(
            v,
            cd.addr(),
            back.addr(),
        ));
    }
    g.synchronize();
    if let Some(c) = c {
        assert_eq!(
            Some(c.seen()),
            before,
            "a device wave-packet volume call allocated or freed"
        );
    }
    let out = bits(&g.download(&cd));
    sg_wavepacket_volume_destroy(v);
    out
}

#[test]
fn wavepacket_volume_device_calls_allocate_nothing() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let with_hooks = volume_run(&g, Some(&c));
    g.synchronize();
    let (allocs, frees, live) = c.seen();
    assert!(allocs > 0);
    assert_eq!((allocs, live), (frees, 0), "every byte given back");
    let plain = gpu().unwrap();
    assert!(
        volume_run(&plain, None) == with_hooks,
        "the hooks' coefficients differ"
    );
}
