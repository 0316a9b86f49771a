#!/usr/bin/env python3
"""Writes tests/data/emlog_reference.txt: small EM-logging search problems and the answer
of an independent brute-force evaluation of the seed's misfit for every grid model.

For each case: a random sensitivity matrix A (n x m, row-major), sigma0, f0 = A sigma0
(+ an offset), f_exp, delta, the searched columns and the grid axes; then, evaluating
F = sqrt(mean(((f_exp - f_syn) / (f_exp delta))^2)) with f_syn = f0 + A (sigma - sigma0)
for every model in NumPy (no quadratic form, no QR), the number of models with F <= 1,
the 1D marginals, the index and F of the best model and the first 20 equivalent models.
Models within 1e-9 (relative) of F^2 = 1 are refused, so that the answer does not depend
on rounding. The random numbers come from a SplitMix64 generator written here, so that
any NumPy gives the same file. Run: python3 tests/reference/make_emlog_reference.py
"""
import numpy as np
from pathlib import Path

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self, n):
        return np.array([(self.next() >> 11) / float(1 << 53) for _ in range(n)])


def axis_values(kind, lo, hi, count, values):
    if kind == "linear":
        return np.array([lo + (hi - lo) / (count - 1) * i if i + 1 < count else hi for i in range(count)]) if count > 1 else np.array([lo])
    if kind == "log":
        a, b = np.log10(lo), np.log10(hi)
        v = np.array([10 ** (a + (b - a) / (count - 1) * i) for i in range(count)])
        v[0], v[-1] = lo, hi
        return v
    return np.array(values)


def fmt(v):
    return [repr(float(x)) for x in v]


def case(name, seed, n, m, searched, axes, noise):
    rng = SplitMix64(seed)
    a = rng.uniform(n * m).reshape(n, m) + 0.1
    a[:, 1] += 0.5 * a[:, 0]  # correlated columns, as real probes' are
    sigma0 = 0.2 + rng.uniform(m)
    f0 = a @ sigma0 + 0.01
    truth = sigma0.copy()
    truth[searched] += 0.05 * (rng.uniform(len(searched)) - 0.5)
    delta = 0.01 + 0.02 * rng.uniform(n)
    f_exp = (f0 + a @ (truth - sigma0)) * (1 + noise * delta * (2 * rng.uniform(n) - 1))
    # Axes are given relative to sigma0 of their column: offsets (linear, list) or factors (log).
    axes = [(k, lo + sigma0[c] if k != "log" else lo * sigma0[c], hi + sigma0[c] if k != "log" else hi * sigma0[c], cnt, [v + sigma0[c] for v in vs])
            for (k, lo, hi, cnt, vs), c in zip(axes, searched)]
    vals = [axis_values(*ax) for ax in axes]
    # Every model, axis 0 fastest.
    grids = np.meshgrid(*vals[::-1], indexing="ij")
    models = np.stack([g.ravel() for g in grids[::-1]], axis=1)
    sig = np.tile(sigma0, (len(models), 1))
    sig[:, searched] = models
    f_syn = f0[None, :] + (sig - sigma0[None, :]) @ a.T
    f2 = np.mean(((f_exp[None, :] - f_syn) / (f_exp * delta)[None, :]) ** 2, axis=1)
    near = np.abs(f2 - 1.0).min()
    assert near > 1e-9, f"{name}: a model lies within {near} of F^2 = 1"
    ok = f2 <= 1.0
    idx = np.arange(len(models))
    digits = []
    rest = idx.copy()
    for v in vals:
        digits.append(rest % len(v))
        rest //= len(v)
    marg = [np.bincount(d[ok], minlength=len(v)) for d, v in zip(digits, vals)]
    best = int(np.argmin(f2))
    lines = [f"case {name}", f"n {n}", f"m {m}", "a " + " ".join(fmt(a.ravel())),
             "sigma0 " + " ".join(fmt(sigma0)), "f0 " + " ".join(fmt(f0)),
             "f_exp " + " ".join(fmt(f_exp)), "delta " + " ".join(fmt(delta)),
             "searched " + " ".join(map(str, searched))]
    for kind, lo, hi, count, values in axes:
        lines.append(f"axis {kind} {float(lo)!r} {float(hi)!r} {count} " + " ".join(fmt(values)))
    lines += [f"count {int(ok.sum())}", f"best {best} {float(np.sqrt(f2[best]))!r}",
              "first " + " ".join(map(str, idx[ok][:20]))]
    lines += ["marginal " + " ".join(map(str, mg)) for mg in marg]
    lines.append(f"near {float(near)!r}")
    lines.append("end")
    print(f"{name}: {len(models)} models, {int(ok.sum())} equivalent, F_best {np.sqrt(f2[best]):.4f}, closest F^2 - 1: {near:.2e}")
    return lines


out = []
out += case("three", 1, 60, 5, [0, 1, 3], [("linear", -0.3, 0.3, 17, []), ("log", 0.6, 1.5, 13, []), ("list", 0, 0, 6, [-0.2, -0.05, 0.0, 0.03, 0.1, 0.25])], 1.0)
out += case("four", 2, 80, 6, [2, 0, 1, 5], [("linear", -0.2, 0.2, 9, []), ("linear", -0.4, 0.4, 9, []), ("linear", -0.4, 0.4, 11, []), ("linear", 0.01, 0.01, 1, [])], 1.0)
Path(__file__).resolve().parents[1].joinpath("data", "emlog_reference.txt").write_text("\n".join(out) + "\n")
