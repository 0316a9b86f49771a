"""The type-3 USFFT (points → frequencies) against the direct sum, 1D–3D, both precisions
and signs, a batch; against FINUFFT's nufft1d3/2d3/3d3 where the package is installed; and
its refusals (missing frequencies, non-finite values, spans no grid can hold)."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from conftest import rel_l2


def direct(xs, ss, c, sign):
    """f_k = Σ_j c_j exp(i·sign·s_k·x_j), in double precision."""
    phase = sum(np.outer(s.astype(np.float64), x.astype(np.float64)) for x, s in zip(xs, ss))
    return c.astype(np.complex128) @ np.exp(1j * sign * phase).T


def problem(rng, dim, m, n, nv=1):
    xs = [rng.uniform(-3.0, 5.0, m) for _ in range(dim)]
    ss = [rng.uniform(-20.0, 12.0, n) for _ in range(dim)]
    lead = () if nv == 1 else (nv,)
    c = rng.standard_normal(lead + (m,)) + 1j * rng.standard_normal(lead + (m,))
    return xs, ss, c


@pytest.mark.parametrize("dtype,tol", [(np.complex128, 1e-9), (np.complex64, 1e-4)])
@pytest.mark.parametrize("dim,m,n,nv,sign", [(1, 400, 300, 1, -1), (2, 300, 200, 2, 1),
                                             (3, 200, 150, 1, 1)])
def test_type3_matches_direct_sums(ctx, dtype, tol, dim, m, n, nv, sign):
    rng = np.random.default_rng(dim * 100 + nv)
    xs, ss, c = problem(rng, dim, m, n, nv)
    real = np.float64 if dtype == np.complex128 else np.float32
    xs, ss = [x.astype(real) for x in xs], [s.astype(real) for s in ss]
    plan = seisgpu.Usfft3(ctx, dim, dtype=dtype, sign=sign, tolerance=tol, n_vectors=nv)
    plan.set_points(*xs, **dict(zip("stu", ss)))
    cin = c.astype(dtype)
    got = plan.execute(cin)
    assert got.dtype == dtype and got.shape == c.shape[:-1] + (n,)
    e = rel_l2(got, direct(xs, ss, cin, sign))
    print(f"{dim}D M={m} N={n} vectors={nv} {np.dtype(dtype)}: relative ℓ2 error {e:.2e}")
    assert e <= tol


def test_type3_matches_finufft(ctx):
    finufft = pytest.importorskip("finufft")
    rng = np.random.default_rng(7)
    for dim, fn in ((1, finufft.nufft1d3), (2, finufft.nufft2d3), (3, finufft.nufft3d3)):
        xs, ss, c = problem(rng, dim, 250, 180)
        plan = seisgpu.Usfft3(ctx, dim, sign=1, tolerance=1e-9)
        plan.set_points(*xs, **dict(zip("stu", ss)))
        want = fn(*xs, c, *ss, eps=1e-14, isign=1)
        e = rel_l2(plan.execute(c), want)
        print(f"{dim}D against FINUFFT: {e:.2e}")
        assert e <= 1e-9


def test_type3_refusals(ctx):
    plan = seisgpu.Usfft3(ctx, 2, tolerance=1e-6)
    x = np.linspace(-1.0, 1.0, 5)
    s = np.linspace(-3.0, 3.0, 4)
    with pytest.raises(seisgpu.InvalidArgumentError):
        plan.set_points(x, x, s=s)  # t missing
    bad = x.copy()
    bad[2] = np.nan
    with pytest.raises(seisgpu.NonFiniteError):
        plan.set_points(x, bad, s=s, t=s)
    wide = np.array([-1e8, 1e8])
    with pytest.raises(seisgpu.UnsupportedError):
        plan.set_points(wide, wide, s=wide, t=wide)
    with pytest.raises(seisgpu.InvalidArgumentError):
        seisgpu.Usfft3(ctx, 4)
