"""The USFFT against FINUFFT's Python package: types 1 and 2, 1D–3D, both signs, both mode
orders, batches; tolerance 1e-9 in double and 1e-5 in single precision (FINUFFT's answer
at 1e-14 is the reference; the relative ℓ2 error of the whole output must not exceed the
plan's tolerance)."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from conftest import rel_l2

finufft = pytest.importorskip("finufft")

_F1 = {1: finufft.nufft1d1, 2: finufft.nufft2d1, 3: finufft.nufft3d1}
_F2 = {1: finufft.nufft1d2, 2: finufft.nufft2d2, 3: finufft.nufft3d2}

CASES = [  # (modes, points, n_vectors, sign, mode_order)
    ((97,), 500, 1, -1, "centred"),
    ((64,), 300, 3, 1, "fft"),
    ((40, 33), 900, 1, -1, "centred"),
    ((32, 24), 700, 2, 1, "fft"),
    ((16, 13, 20), 1200, 1, -1, "centred"),
    ((12, 16, 9), 800, 2, 1, "centred"),
]


def points(rng: np.random.Generator, dim: int, m: int) -> list[np.ndarray]:
    return [rng.uniform(-np.pi, np.pi, m) for _ in range(dim)]


@pytest.mark.parametrize("dtype,tol", [(np.complex128, 1e-9), (np.complex64, 1e-5)])
@pytest.mark.parametrize("modes,m,nv,sign,order", CASES)
def test_types_1_and_2_match_finufft(ctx, dtype, tol, modes, m, nv, sign, order):
    rng = np.random.default_rng(len(modes) * 1000 + m)
    dim = len(modes)
    xyz = points(rng, dim, m)
    real = np.float64 if dtype == np.complex128 else np.float32
    lead = () if nv == 1 else (nv,)
    c = (rng.standard_normal(lead + (m,)) + 1j * rng.standard_normal(lead + (m,)))
    f = (rng.standard_normal(lead + modes) + 1j * rng.standard_normal(lead + modes))
    modeord = 0 if order == "centred" else 1
    errors = []
    for kind in (1, 2):
        plan = seisgpu.Usfft(ctx, kind, modes, dtype=dtype, sign=sign, tolerance=tol,
                             n_vectors=nv, mode_order=order)
        plan.set_points(*[p.astype(real) for p in xyz])
        # The reference takes the coordinates the plan got (rounded to single precision).
        pts = [p.astype(real).astype(np.float64) for p in xyz]
        if kind == 1:
            got = plan.execute(c.astype(dtype))
            want = _F1[dim](*pts, c, modes, eps=1e-14, isign=sign, modeord=modeord)
        else:
            got = plan.execute(f.astype(dtype))
            want = _F2[dim](*pts, f, eps=1e-14, isign=sign, modeord=modeord)
        assert got.dtype == dtype and got.shape == want.shape
        errors.append(rel_l2(got, want))
    print(f"{modes} M={m} vectors={nv} sign={sign:+d} {order} {np.dtype(dtype)}: "
          f"relative ℓ2 error type 1 {errors[0]:.2e}, type 2 {errors[1]:.2e} (tol {tol:g})")
    assert max(errors) <= tol


def test_mode_arrays_of_any_layout_and_out(ctx):
    rng = np.random.default_rng(2)
    plan = seisgpu.Usfft(ctx, 2, (10, 12), tolerance=1e-12)
    x, y = points(rng, 2, 50)
    plan.set_points(x, y)
    f = rng.standard_normal((10, 12)) + 1j * rng.standard_normal((10, 12))
    ref = plan.execute(f)
    np.testing.assert_array_equal(plan.execute(np.asfortranarray(f)), ref)
    np.testing.assert_array_equal(plan.execute(f.copy(order="C")), ref)
    out = np.empty(50, np.complex128)
    assert plan.execute(f, out=out) is out
    t1 = seisgpu.Usfft(ctx, 1, (10, 12), tolerance=1e-12)
    t1.set_points(x, y)
    modes = t1.empty_modes()
    assert t1.execute(ref, out=modes) is modes
    with pytest.raises(seisgpu.InvalidArgumentError, match="empty_modes"):
        t1.execute(ref, out=np.empty((10, 12), np.complex128))


def test_points_must_match_the_plan(ctx):
    plan = seisgpu.Usfft(ctx, 1, (8, 8), dtype=np.complex64, tolerance=1e-5)
    x = np.zeros(5, np.float32)
    with pytest.raises(seisgpu.InvalidArgumentError, match="coordinates x, y"):
        plan.set_points(x)
    with pytest.raises(seisgpu.ArgumentTypeError, match="float32"):
        plan.set_points(x.astype(np.float64), x.astype(np.float64))
    with pytest.raises(seisgpu.InvalidArgumentError, match="4 points"):
        plan.set_points(x, x[:4])
    bad = x.copy()
    bad[2] = np.nan
    with pytest.raises(seisgpu.NonFiniteError):
        plan.set_points(x, bad)
    with pytest.raises(seisgpu.InvalidArgumentError):
        seisgpu.Usfft(ctx, 1, (8, 8), dtype=np.complex64, tolerance=1e-9)
    with pytest.raises(seisgpu.ArgumentTypeError):
        seisgpu.Usfft(ctx, 1, (8,), dtype=np.int32)
