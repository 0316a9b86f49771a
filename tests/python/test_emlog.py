"""The EM-logging search against a NumPy brute force: every grid model's misfit evaluated
from its definition (f_syn = f0 + A(σ − σ0), r = (f_exp − f_syn)/(f_exp·δ)), on the two
problems of tests/data/emlog_reference.txt (linear, logarithmic and list axes); counts,
marginals (1D and 2D), best model, listed models and ranges, in both modes and all norms
and criteria; the analytic ellipsoid against NumPy's least squares."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from seisgpu.emlog import Axis


def problems(source):
    out, cur = [], None
    for line in (source / "tests/data/emlog_reference.txt").read_text().splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "case":
            cur = {"name": w[1], "axes": []}
            out.append(cur)
        elif w[0] in ("n", "m"):
            cur[w[0]] = int(w[1])
        elif w[0] in ("a", "sigma0", "f0", "f_exp", "delta"):
            cur[w[0]] = np.array([float(v) for v in w[1:]])
        elif w[0] == "searched":
            cur["searched"] = [int(v) for v in w[1:]]
        elif w[0] == "axis":
            lo, hi, count = float(w[2]), float(w[3]), int(w[4])
            cur["axes"].append({"linear": Axis.linear(lo, hi, count),
                                "log": Axis.log(lo, hi, count),
                                "list": Axis.list([float(v) for v in w[5:]])}[w[1]])
        elif w[0] == "count":
            cur["count"] = int(w[1])
    for p in out:
        p["a"] = p["a"].reshape(p["n"], p["m"])
    return out


def brute_force(p, norm="l2"):
    """Every grid model's misfit, in index order (axis 0 fastest)."""
    values = [a.values for a in p["axes"]]
    shape = [len(v) for v in values]
    idx = np.arange(int(np.prod(shape)))
    grid = np.empty((idx.size, len(values)))
    rest = idx
    for k, v in enumerate(values):
        grid[:, k] = v[rest % shape[k]]
        rest = rest // shape[k]
    s = p["searched"]
    f_syn = p["f0"] + (grid - p["sigma0"][s]) @ p["a"][:, s].T
    r = (p["f_exp"] - f_syn) / (p["f_exp"] * p["delta"])
    if norm == "l2":
        return np.sqrt((r * r).mean(axis=1)), grid
    if norm == "l1":
        return np.abs(r).mean(axis=1), grid
    return np.abs(r).max(axis=1), grid


def least_squares(p):
    s = p["searched"]
    w = 1.0 / (p["f_exp"] * p["delta"])
    rhs = w * (p["f_exp"] - p["f0"] + p["a"][:, s] @ p["sigma0"][s])
    mat = w[:, None] * p["a"][:, s]
    x, *_ = np.linalg.lstsq(mat, rhs, rcond=None)
    phi_min = float(((rhs - mat @ x) ** 2).sum())
    return x, phi_min, mat


def check(result, f, grid, equivalent, p, label):
    shape = [len(a.values) for a in p["axes"]]
    assert result.total == f.size
    assert result.count == int(equivalent.sum()), label
    best = int(np.argmin(f))
    assert result.best_index == best, label
    np.testing.assert_allclose(result.best_misfit, f[best], rtol=1e-10)
    np.testing.assert_array_equal(result.best_model, grid[best])
    for k in range(len(shape)):
        counts = np.bincount((np.arange(f.size) // int(np.prod(shape[:k]))) % shape[k],
                             weights=equivalent, minlength=shape[k]).astype(np.uint64)
        np.testing.assert_array_equal(result.marginal(k), counts, err_msg=label)
        if equivalent.any():
            assert result.value_min[k] == grid[equivalent, k].min()
            assert result.value_max[k] == grid[equivalent, k].max()
    first = np.flatnonzero(equivalent)[:len(result.model_indices)]
    np.testing.assert_array_equal(result.model_indices, first)
    np.testing.assert_array_equal(result.model_values, grid[first])
    return best


@pytest.mark.parametrize("mode", ["fast", "direct"])
def test_search_equals_brute_force(ctx, source, mode):
    for p in problems(source):
        plan = seisgpu.EmSearch(ctx, p["a"], p["sigma0"], p["f0"], p["f_exp"], p["delta"],
                                p["searched"])
        f, grid = brute_force(p)
        x, phi_min, _ = least_squares(p)
        n = p["n"]
        for criterion, level, eq in [
                ("within_errors", 1.0, f <= 1.0), ("max_misfit", 1.1, f <= 1.1),
                ("delta_chi_square", 0.05, f * f <= phi_min / n + 0.05)]:
            r = plan.search(p["axes"], criterion=criterion, level=level, mode=mode,
                            max_models=15, pairs=[(0, 1)])
            check(r, f, grid, eq, p, f"{p['name']} {criterion} {mode}")
            # 2D marginal (0, 1), indexed [i0, i1].
            n0, n1 = len(p["axes"][0].values), len(p["axes"][1].values)
            i = np.arange(f.size)
            want = np.zeros((n0, n1), np.uint64)
            np.add.at(want, (i % n0, (i // n0) % n1), eq.astype(np.uint64))
            np.testing.assert_array_equal(r.pair((0, 1)), want)
            assert r.more_models == (eq.sum() > 15)
        print(f"{p['name']} {mode}: {f.size} models, {int((f <= 1).sum())} within the errors "
              f"(fixture: {p['count']}), best F {f.min():.6f}")
        assert int((f <= 1).sum()) == p["count"]


@pytest.mark.parametrize("norm", ["l1", "max"])
def test_direct_norms_equal_brute_force(ctx, source, norm):
    p = problems(source)[0]
    plan = seisgpu.EmSearch(ctx, p["a"], p["sigma0"], p["f0"], p["f_exp"], p["delta"],
                            p["searched"])
    f, grid = brute_force(p, norm)
    level = float(np.quantile(f, 0.1))
    r = plan.search(p["axes"], criterion="max_misfit", level=level, mode="direct", norm=norm)
    check(r, f, grid, f <= level, p, norm)
    with pytest.raises(seisgpu.UnsupportedError):
        plan.search(p["axes"], mode="fast", norm=norm)


def test_analytic_ellipsoid_equals_least_squares(ctx, source):
    for p in problems(source):
        # Fortran-ordered A: read in place through its strides.
        plan = seisgpu.EmSearch(ctx, np.asfortranarray(p["a"]), p["sigma0"], p["f0"],
                                p["f_exp"], p["delta"], p["searched"])
        x, phi_min, mat = least_squares(p)
        n = p["n"]
        e = plan.analytic("within_errors")
        np.testing.assert_allclose(e.sigma_star, x, rtol=1e-9)
        np.testing.assert_allclose(e.f_min, np.sqrt(phi_min / n), rtol=1e-9)
        inv = np.linalg.inv(mat.T @ mat)
        half = np.sqrt((n - phi_min) * np.diag(inv))
        assert not e.empty
        np.testing.assert_allclose(e.lower, x - half, rtol=1e-8)
        np.testing.assert_allclose(e.upper, x + half, rtol=1e-8)
        sv = np.linalg.svd(mat, compute_uv=False)
        ratio = e.singular_values / sv
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
        # The grid's equivalent models lie inside the ellipsoid's box.
        r = plan.search(p["axes"])
        inside = (r.value_min >= e.lower - 1e-12) & (r.value_max <= e.upper + 1e-12)
        assert inside.all()
        tight = plan.analytic("max_misfit", level=0.5 * e.f_min)
        assert tight.empty and np.isnan(tight.lower).all()
        print(f"{p['name']}: σ* = {np.array2string(e.sigma_star, precision=4)}, "
              f"F_min {e.f_min:.4f}, extents {np.array2string(e.upper - e.lower, precision=4)}")


def test_axes_values_and_bad_input(ctx, source):
    p = problems(source)[0]
    plan = seisgpu.EmSearch(ctx, p["a"], p["sigma0"], p["f0"], p["f_exp"], p["delta"],
                            p["searched"])
    r = plan.search(p["axes"])
    for k, axis in enumerate(p["axes"]):
        np.testing.assert_array_equal(r.axes[k], axis.values)
    with pytest.raises(seisgpu.InvalidArgumentError, match="2 axes for 3"):
        plan.search(p["axes"][:2])
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        plan.search([Axis.linear(1, 0, 5)] + p["axes"][1:])
    assert "axis 0" in e.value.message
    with pytest.raises(seisgpu.InvalidArgumentError, match="was not requested"):
        r.pair((0, 1))
    bad = p["delta"].copy()
    bad[3] = np.nan
    with pytest.raises(seisgpu.NonFiniteError):
        seisgpu.EmSearch(ctx, p["a"], p["sigma0"], p["f0"], p["f_exp"], bad, p["searched"])
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"f0: shape \(59,\)"):
        seisgpu.EmSearch(ctx, p["a"], p["sigma0"], p["f0"][:-1], p["f_exp"], p["delta"],
                         p["searched"])
