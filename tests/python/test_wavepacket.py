"""Wave packets: the adjoint (dot-product test ⟨Cf, c⟩ = ⟨f, C*c⟩), the inverse, tiled
volumes (also over two contexts), boxes, and the coefficient operations."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from conftest import BACKEND, rel_l2


def dot_product_mismatch(wp, rng):
    f = rng.uniform(-1, 1, wp.shape).astype(wp.real_dtype)
    c = (rng.uniform(-1, 1, wp.n_coefficients)
         + 1j * rng.uniform(-1, 1, wp.n_coefficients)).astype(wp.dtype)
    cf, ac = wp.forward(f), wp.adjoint(c)
    lhs = np.vdot(c.astype(np.complex128), cf.astype(np.complex128)).real
    rhs = float(np.dot(f.ravel().astype(np.float64), ac.ravel().astype(np.float64)))
    scale = np.linalg.norm(cf) * np.linalg.norm(c)
    return abs(lhs - rhs) / scale, f


@pytest.mark.parametrize("shape,dtype,usfft_tol,tol", [
    ((40, 48), np.float64, 1e-12, 1e-11), ((40, 48), np.float32, 1e-6, 1e-5),
    ((12, 14, 16), np.float64, 1e-10, 1e-9), ((12, 14, 16), np.float32, 1e-6, 1e-5),
])
def test_adjoint_and_inverse(ctx, shape, dtype, usfft_tol, tol):
    rng = np.random.default_rng(len(shape))
    # 3D: the smallest Lebedev rule, one level, a loose cutoff, to keep the suite quick.
    options = (dict(directions=8) if len(shape) == 2 else
               dict(directions=6, levels=1, cutoff=0.1))
    wp = seisgpu.WavepacketLayout(ctx, shape, dtype, tolerance=usfft_tol, **options)
    assert wp.n_coefficients > wp.n_samples
    mismatch, f = dot_product_mismatch(wp, rng)
    back = wp.inverse(wp.forward(f), tolerance=tol / 10, max_iterations=60)
    err = rel_l2(back.data, f)
    print(f"{shape} {np.dtype(dtype)}: dot-product mismatch {mismatch:.1e}, inverse error "
          f"{err:.1e} in {back.iterations} iterations (residual {back.residual:.1e})")
    assert mismatch < tol
    assert err < 10 * tol
    assert back.iterations > 0 and back.data.shape == shape and back.data.dtype == dtype


def test_device_memory_query_and_cap(ctx):
    shape, dt = (12, 14, 16), np.float32
    opts = dict(directions=6, levels=1, cutoff=0.1)
    need = seisgpu.WavepacketLayout.device_bytes(ctx, shape, dt, **opts)
    # At least the fine grid (2·24·28·32 complex values) and the data's modes.
    assert need > 8 * (2 * 24 * 28 * 32 + 12 * 14 * 16)
    at_cap = seisgpu.WavepacketLayout.device_bytes(ctx, shape, dt, max_device_bytes=need, **opts)
    assert at_cap == need
    with pytest.raises(seisgpu.OutOfMemoryError, match="max_device_bytes"):
        seisgpu.WavepacketLayout.device_bytes(ctx, shape, dt, max_device_bytes=1, **opts)
    wp = seisgpu.WavepacketLayout(ctx, shape, dt, max_device_bytes=need, **opts)
    f = np.sin(np.arange(np.prod(shape), dtype=dt).reshape(shape))
    whole = seisgpu.WavepacketLayout(ctx, shape, dt, **opts)
    assert rel_l2(wp.forward(f), whole.forward(f)) < 1e-6
    if BACKEND == "cuda":
        assert 0 < wp.workspace_bytes <= need
        with pytest.raises(seisgpu.OutOfMemoryError, match="max_device_bytes"):
            seisgpu.WavepacketLayout(ctx, shape, dt, max_device_bytes=1, **opts)


def test_boxes_and_coefficient_operations(ctx, penobscot):
    section = penobscot[300:364, 600:700].astype(np.float64)  # 64 traces × 100 samples
    wp = seisgpu.WavepacketLayout(ctx, section.shape, np.float64, directions=8, cutoff=0.2)
    boxes = wp.boxes
    assert len(boxes) == wp.n_boxes and boxes[0].level == 0 and boxes[0].direction == -1
    assert sum(b.size for b in boxes) == wp.n_coefficients
    c = wp.forward(section)
    assert boxes[5].view(c).shape == boxes[5].shape
    # A box's centre frequency is along (traces, samples): a level's directions turn.
    assert all(len(b.centre) == 2 for b in boxes)
    norms = wp.packet_norms()
    assert norms.shape == (wp.n_boxes,) and (norms > 0).all()
    kept = wp.keep_largest(c, 500)
    assert np.count_nonzero(kept) == 500 and np.count_nonzero(c) > 500
    same = c.copy()
    assert wp.keep_largest(same, 500, out=same) is same
    np.testing.assert_array_equal(same, kept)
    rng = np.random.default_rng(8)
    noisy = section + 0.2 * section.std() * rng.standard_normal(section.shape)
    cn = wp.forward(noisy)
    sigma = wp.estimate_noise(cn)
    assert 0.1 * section.std() < sigma < 0.4 * section.std()
    den = wp.inverse(wp.threshold_noise(cn, 2.5, sigma)).data
    assert rel_l2(den, section) < rel_l2(noisy, section)
    assert np.count_nonzero(wp.threshold(cn, 2.0, kind="sigma", mode="soft")) < cn.size
    sparse = wp.sparse_approximation(section, 1000, stages=4, refit_iterations=4)
    assert sparse.kept <= 1000 and 0 < sparse.residual < 1
    np.testing.assert_allclose(rel_l2(wp.adjoint(sparse.coeffs), section), sparse.residual,
                               rtol=1e-6)


def test_pocs_keeps_the_recorded_traces(ctx, penobscot):
    section = penobscot[300:348, 600:664].copy()
    wp = seisgpu.WavepacketLayout(ctx, section.shape, np.float32, directions=8, levels=2)
    live = np.ones(section.shape[0], bool)
    live[[5, 6, 20, 33]] = False
    holed = section.copy()
    holed[~live] = 0
    out = wp.pocs(holed, live, iterations=5)
    np.testing.assert_array_equal(out[live], section[live])
    assert np.abs(out[~live]).max() > 0
    assert rel_l2(out[~live], section[~live]) < 1.0
    with pytest.raises(seisgpu.InvalidArgumentError, match="one flag per trace"):
        wp.pocs(holed, live[:-1])


def test_volume_in_tiles(ctx):
    rng = np.random.default_rng(13)
    v = seisgpu.WavepacketVolume(ctx, (70, 40), (32, 40), np.float64, directions=8,
                                 tolerance=1e-12)
    assert v.tiles == (3, 1)
    f = rng.uniform(-1, 1, v.shape)
    back = v.inverse(v.forward(f), tolerance=1e-11, max_iterations=60)
    assert rel_l2(back.data, f) < 1e-9 and back.iterations > 0
    boxes = v.boxes
    assert sum(b.count for b in boxes) == v.n_coefficients
    two = seisgpu.WavepacketVolume([ctx, seisgpu.Context(BACKEND)], (70, 40), (32, 40),
                                   np.float64, directions=8, tolerance=1e-12)
    np.testing.assert_array_equal(two.forward(f), v.forward(f))
    with pytest.raises(seisgpu.Error):
        seisgpu.WavepacketVolume([], (70, 40), (32, 40), np.float64)
    # Capped at what one tile's transform needs at its peak: what the cap leaves no room for
    # goes through the host (a CPU context holds no device memory: no cap applies), with
    # the same coefficients.
    opts = dict(directions=8, tolerance=1e-12)
    cap = seisgpu.WavepacketLayout.device_bytes(ctx, (32, 40), np.float64, **opts)
    capped = seisgpu.WavepacketVolume(ctx, (70, 40), (32, 40), np.float64,
                                      max_device_bytes=max(cap, 1), **opts)
    np.testing.assert_array_equal(capped.forward(f), v.forward(f))
    assert capped.workspace_bytes <= cap
    if BACKEND == "cuda":
        assert capped.workspace_bytes > 0
        with pytest.raises(seisgpu.OutOfMemoryError, match="max_device_bytes"):
            seisgpu.WavepacketVolume(ctx, (70, 40), (32, 40), np.float64, max_device_bytes=1,
                                     **opts)
