//! A tiled volume one tile at a time through the C ABI (`sg_wavepacket_volume_tile_info`,
//! `_tile_data`, `_forward_tile`, `_add_tile`, `_adjoint_tile`), as MPI ranks use it: the
//! tiles added in tile order equal the volume's forward bit for bit, the tiles' adjoints the
//! volume's adjoint; bad input refused with the argument named and nothing written.

use crate::common;

use common::{last_error, ok, Ctx};
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use seisgpu::ffi::wavepacket::*;
use seisgpu::ffi::wavepacket_volume::*;
use seisgpu::ffi::wavepacket_volume_tiles::*;
use std::ptr;

const VOLUME: [usize; 2] = [80, 70];
const TILE: [usize; 2] = [48, 40];

struct Volume(*mut sg_wavepacket_volume);
impl Drop for Volume {
    fn drop(&mut self) {
        sg_wavepacket_volume_destroy(self.0);
    }
}

fn volume(ctx: *mut sg_context) -> Volume {
    let o = sg_wavepacket_layout_options {
        directions: 12,
        levels: 2,
        ..sg_wavepacket_layout_options_default()
    };
    let mut v = ptr::null_mut();
    let p = SG_WAVEPACKET_F64;
    ok(sg_wavepacket_volume_create(
        ctx,
        2,
        VOLUME.as_ptr(),
        TILE.as_ptr(),
        p,
        &o,
        &mut v,
    ));
    Volume(v)
}

fn data() -> Vec<f64> {
    (0..VOLUME[0] * VOLUME[1])
        .map(|i| ((i * 7919) % 1013) as f64 / 1013.0 - 0.5)
        .collect()
}

/// (n_samples, n_coefficients, tiles) and a tile's (samples, coefficients).
fn sizes(v: &Volume) -> (usize, usize, usize, usize, usize) {
    let (mut n, mut m, mut t, mut b) = (0, 0, [0usize; 3], 0);
    ok(sg_wavepacket_volume_sizes(
        v.0,
        &mut n,
        &mut m,
        t.as_mut_ptr(),
        &mut b,
    ));
    let (mut o, mut nt, mut mt) = ([0usize; 3], 0, 0);
    ok(sg_wavepacket_volume_tile_info(
        v.0,
        0,
        o.as_mut_ptr(),
        &mut nt,
        &mut mt,
    ));
    (n, m, t.iter().product(), nt, mt)
}

#[test]
fn tiles_one_at_a_time_equal_the_volume_calls_bit_for_bit() {
    let ctx = Ctx::cpu();
    let v = volume(ctx.0);
    let (n, m, n_tiles, nt, mt) = sizes(&v);
    assert_eq!((n_tiles, nt), (4, TILE[0] * TILE[1]));
    let d = data();
    let mut whole = vec![0.0; 2 * m];
    ok(sg_wavepacket_volume_forward_f64(
        v.0,
        d.as_ptr(),
        whole.as_mut_ptr(),
    ));
    let mut adjoint = vec![0.0; n];
    ok(sg_wavepacket_volume_adjoint_f64(
        v.0,
        whole.as_ptr(),
        adjoint.as_mut_ptr(),
    ));

    let (mut sum, mut local, mut tile) = (vec![0.0; 2 * m], vec![0.0; 2 * mt], vec![0.0; nt]);
    for t in 0..n_tiles {
        let (mut o, mut nt2, mut mt2) = ([9usize; 3], 0, 0);
        ok(sg_wavepacket_volume_tile_info(
            v.0,
            t,
            o.as_mut_ptr(),
            &mut nt2,
            &mut mt2,
        ));
        assert_eq!(
            [o[0], o[1], o[2]],
            [(t % 2) * TILE[0], (t / 2) * TILE[1], 0]
        );
        ok(sg_wavepacket_volume_tile_data_f64(
            v.0,
            t,
            d.as_ptr(),
            tile.as_mut_ptr(),
        ));
        ok(sg_wavepacket_volume_forward_tile_f64(
            v.0,
            t,
            tile.as_ptr(),
            local.as_mut_ptr(),
        ));
        ok(sg_wavepacket_volume_add_tile_f64(
            v.0,
            t,
            local.as_ptr(),
            sum.as_mut_ptr(),
        ));
        ok(sg_wavepacket_volume_adjoint_tile_f64(
            v.0,
            t,
            whole.as_ptr(),
            tile.as_mut_ptr(),
        ));
        for i2 in 0..TILE[1].min(VOLUME[1] - o[1]) {
            for i1 in 0..TILE[0].min(VOLUME[0] - o[0]) {
                let want = adjoint[(o[1] + i2) * VOLUME[0] + o[0] + i1];
                assert_eq!(tile[i2 * TILE[0] + i1].to_bits(), want.to_bits());
            }
        }
    }
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&sum), bits(&whole));
}

#[test]
fn bad_tile_input_is_refused_and_nothing_written() {
    let ctx = Ctx::cpu();
    let v = volume(ctx.0);
    let (n, m, n_tiles, nt, mt) = sizes(&v);
    let d = data();
    let mut local = vec![7.0; 2 * mt];
    let mut tile = vec![7.0; nt];
    let mut common = vec![7.0; 2 * m];
    let refused = |s: sg_status, want: sg_status, word: &str| {
        assert_eq!(s, want, "{word}: {}", last_error());
        assert!(last_error().contains(word), "{word}: {}", last_error());
    };
    let (mut o, mut a, mut b) = ([5usize; 3], 5usize, 5usize);
    let s = sg_wavepacket_volume_tile_info(v.0, n_tiles, o.as_mut_ptr(), &mut a, &mut b);
    refused(s, SG_ERR_INVALID_ARGUMENT, "tile is 4");
    assert_eq!((o, a, b), ([5; 3], 5, 5));
    let s = sg_wavepacket_volume_tile_info(v.0, 0, ptr::null_mut(), &mut a, &mut b);
    refused(s, SG_ERR_NULL_POINTER, "origin");
    let s = sg_wavepacket_volume_tile_data_f64(v.0, n_tiles, d.as_ptr(), tile.as_mut_ptr());
    refused(s, SG_ERR_INVALID_ARGUMENT, "tile is 4");
    let s = sg_wavepacket_volume_forward_tile_f64(v.0, 0, ptr::null(), local.as_mut_ptr());
    refused(s, SG_ERR_NULL_POINTER, "tile_data");
    let s = sg_wavepacket_volume_add_tile_f64(v.0, 0, local.as_ptr(), ptr::null_mut());
    refused(s, SG_ERR_NULL_POINTER, "coeffs");
    // The other precision's call, and arrays that overlap.
    let s = sg_wavepacket_volume_forward_tile_f32(v.0, 0, ptr::null(), ptr::null_mut());
    refused(
        s,
        SG_ERR_INVALID_ARGUMENT,
        "sg_wavepacket_volume_forward_tile",
    );
    let p = common.as_mut_ptr();
    let s = sg_wavepacket_volume_adjoint_tile_f64(v.0, 0, p, p);
    refused(s, SG_ERR_INVALID_ARGUMENT, "overlap");
    assert!(local.iter().chain(&tile).chain(&common).all(|&x| x == 7.0));
    // A NaN sample; then a NaN coefficient, into the common grid and for the adjoint.
    tile[3] = f64::NAN;
    let s = sg_wavepacket_volume_forward_tile_f64(v.0, 0, tile.as_ptr(), local.as_mut_ptr());
    assert_eq!(s, SG_ERR_NON_FINITE, "{}", last_error());
    local[5] = f64::NAN;
    let s = sg_wavepacket_volume_add_tile_f64(v.0, 1, local.as_ptr(), common.as_mut_ptr());
    assert_eq!(s, SG_ERR_NON_FINITE, "{}", last_error());
    common[1] = f64::NAN;
    let s = sg_wavepacket_volume_adjoint_tile_f64(v.0, 1, common.as_ptr(), tile.as_mut_ptr());
    assert_eq!(s, SG_ERR_NON_FINITE, "{}", last_error());
    assert!(local.iter().enumerate().all(|(i, &x)| i == 5 || x == 7.0));
    assert!(tile.iter().enumerate().all(|(i, &x)| i == 3 || x == 7.0));
    assert!(common.iter().enumerate().all(|(i, &x)| i == 1 || x == 7.0));
    assert_eq!(n, VOLUME[0] * VOLUME[1]);
}
