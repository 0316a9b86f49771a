"""The DWT against PyWavelets (mode "periodization"), every GSL wavelet; denoising against
the same shrinkage done with PyWavelets; shapes, layouts and options.

GSL's wavelets are PyWavelets' (daubechies m = db(m/2), haar = haar, bspline ab = bior
a.b), read at another sample offset: one PyWavelets step of x equals one seisgpu step of
x rolled by `r` samples (the table below), detail coefficients times `detail_sign`.
Over J levels, seisgpu's transform of X = roll(x, r·(2^J − 1)) has PyWavelets'
approximation, and its level-j details rolled by −r·(2^(J−j) − 1) (times the sign) are
PyWavelets' level-j details. docs/python.md states the same.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import seisgpu
from conftest import rel_l2

pywt = pytest.importorskip("pywt")

_BIOR = {103: "bior1.3", 105: "bior1.5", 202: "bior2.2", 204: "bior2.4", 206: "bior2.6",
         208: "bior2.8", 301: "bior3.1", 303: "bior3.3", 305: "bior3.5", 307: "bior3.7",
         309: "bior3.9"}


def mapping(family: str, member: int) -> tuple[str, int, int]:
    """(PyWavelets name, roll r, detail sign) of a GSL wavelet."""
    centred = family.endswith("_centered")
    base = family.removesuffix("_centered")
    if base == "haar":
        return "haar", (-1 if centred else 0), 1
    if base == "daubechies":
        return f"db{member // 2}", (-1 if centred else member // 2 - 1), 1
    nr, nd = divmod(member, 100)
    r = -1 if centred else (nd - 1 if nr == 1 else nd)
    return _BIOR[member], r, (1 if nr == 1 else -1)


CASES = ([("haar", 2), ("haar_centered", 2)]
         + [(f, m) for f in ("daubechies", "daubechies_centered") for m in range(4, 22, 2)]
         + [(f, m) for f in ("bspline", "bspline_centered") for m in _BIOR])


def to_pywt(dwt: seisgpu.Dwt, c: np.ndarray, levels: int, r: int, sign: int) -> list:
    """seisgpu's coefficients of roll(x, r(2^J − 1)) as PyWavelets' wavedec list of x."""
    pieces = dwt.split(c, levels)
    out = [pieces[0]]
    for j, d in zip(range(levels, 0, -1), pieces[1:]):
        out.append(sign * np.roll(d, -r * (2 ** (levels - j) - 1)))
    return out


def from_pywt(coeffs: list, levels: int, r: int, sign: int) -> np.ndarray:
    parts = [coeffs[0]]
    for j, d in zip(range(levels, 0, -1), coeffs[1:]):
        parts.append(sign * np.roll(d, r * (2 ** (levels - j) - 1)))
    return np.concatenate(parts)


@pytest.mark.parametrize("family,member", CASES)
def test_forward_and_inverse_equal_pywavelets(ctx, family, member):
    name, r, sign = mapping(family, member)
    n, rng = 256, np.random.default_rng(member)
    x = rng.standard_normal(n)
    dwt = seisgpu.Dwt(ctx, n, family, member)
    worst = 0.0
    for levels in (1, 3, 5):
        shift = r * (2 ** levels - 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyWavelets warns of boundary effects at depth
            ref = pywt.wavedec(x, name, mode="periodization", level=levels)
        ours = to_pywt(dwt, dwt.forward(np.roll(x, shift), levels=levels), levels, r, sign)
        for a, b in zip(ours, ref):
            worst = max(worst, float(np.abs(a - b).max()))
        # Inverse: random coefficients, not a transform's, through both inverses.
        coeffs = [rng.standard_normal(len(b)) for b in ref]
        back = dwt.inverse(from_pywt(coeffs, levels, r, sign), levels=levels)
        want = pywt.waverec(coeffs, name, mode="periodization")
        worst = max(worst, float(np.abs(np.roll(back, -shift) - want).max()))
    print(f"{family} {member} = {name}: max |seisgpu − PyWavelets| {worst:.2e}")
    assert worst < 1e-12


def test_float32_matches_pywavelets_to_single_precision(ctx):
    x = np.random.default_rng(3).standard_normal(1024)
    dwt = seisgpu.Dwt(ctx, 1024, "daubechies", 8)
    ref = pywt.wavedec(x, "db4", mode="periodization", level=4)
    ours = to_pywt(dwt, dwt.forward(np.roll(x, 3 * 15).astype(np.float32), levels=4), 4, 3, 1)
    err = max(rel_l2(a, b) for a, b in zip(ours, ref))
    print(f"db4 float32: relative ℓ2 error per level ≤ {err:.1e}")
    assert err < 1e-6
    assert ours[0].dtype == np.float32


def pywt_denoise(x, name, r, levels, mode, per_level, mask):
    """Universal-threshold shrinkage done with PyWavelets, as the library documents it."""
    shift = r * (2 ** levels - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # boundary effects at depth: periodic here
        c = pywt.wavedec(np.roll(x, -shift), name, mode="periodization", level=levels)
    # c[0] approximation, c[1] = d_L … c[-1] = d_1; PyWavelets' level j = seisgpu's level j.
    sigma1 = np.median(np.abs(c[-1])) / 0.6745
    lam = np.zeros(levels)
    for j in range(1, levels + 1):
        d = c[levels + 1 - j]
        sigma = np.median(np.abs(d)) / 0.6745 if per_level else sigma1
        if mask & (1 << (j - 1)):
            lam[j - 1] = sigma * np.sqrt(2 * np.log(len(x)))
            c[levels + 1 - j] = pywt.threshold(d, lam[j - 1], mode)
    return np.roll(pywt.waverec(c, name, mode="periodization"), shift), lam


@pytest.mark.parametrize("mode,per_level,levels,mask", [
    ("soft", False, 0, None), ("hard", False, 6, [1, 2]), ("soft", True, 8, [1, 2, 3]),
])
def test_denoise_equals_pywavelets_shrinkage(ctx, mode, per_level, levels, mask):
    n, rng = 1024, np.random.default_rng(11)
    t = np.arange(n) / n
    clean = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sign(np.sin(2 * np.pi * 2 * t))
    noisy = clean + 0.3 * rng.standard_normal((4, n))
    dwt = seisgpu.Dwt(ctx, n, "daubechies", 8)
    out, thresholds = dwt.denoise(noisy, mode=mode, noise="per_level" if per_level else
                                  "finest_level", levels=levels, thresholded_levels=mask,
                                  return_thresholds=True)
    depth = levels or 10
    bits = sum(1 << (j - 1) for j in mask) if mask else (1 << depth) - 1
    worst = 0.0
    for k in range(len(noisy)):
        want, lam = pywt_denoise(noisy[k], "db4", 3, depth, mode, per_level, bits)
        worst = max(worst, float(np.abs(out[k] - want).max()))
        np.testing.assert_allclose(thresholds[k], lam, rtol=1e-12, atol=0)
    print(f"denoise {mode} per_level={per_level} levels={depth} mask={mask}: max diff {worst:.1e}")
    assert worst < 1e-12
    assert thresholds.shape == (4, depth)
    assert rel_l2(out, np.broadcast_to(clean, out.shape)) < rel_l2(noisy, np.broadcast_to(
        clean, out.shape))


def test_shapes_are_preserved_and_layouts_read_in_place(ctx):
    rng = np.random.default_rng(5)
    dwt = seisgpu.Dwt(ctx, 1024)
    x = rng.standard_normal((8, 1024)).astype(np.float32)
    assert dwt.denoise(x).shape == (8, 1024)
    assert dwt.forward(x[0]).shape == (1024,)
    cube = rng.standard_normal((3, 4, 1024))
    np.testing.assert_array_equal(dwt.forward(cube).reshape(12, 1024),
                                  dwt.forward(cube.reshape(12, 1024)))
    wide = rng.standard_normal((6, 2048))
    for view in (wide[:, :1024], wide[::2, 1024:], np.asfortranarray(wide[:, :1024]),
                 wide[:, :1024][::-1]):
        np.testing.assert_array_equal(dwt.forward(view), dwt.forward(np.array(view)))
    ro = x.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(dwt.denoise(ro), dwt.denoise(x))
    # out=: C-contiguous, written in place; out=x transforms in place.
    out = np.empty_like(x)
    assert dwt.forward(x, out=out) is out
    y = x.copy()
    dwt.forward(y, out=y)
    np.testing.assert_array_equal(y, out)
    np.testing.assert_allclose(dwt.inverse(out), x, atol=1e-5)


def test_levels_above_chooses_the_levels_over_the_signal_band():
    # dt 4 ms: level 1 covers 62.5–125 Hz, level 2 31.25–62.5 Hz, level 3 15.6–31.25 Hz.
    assert seisgpu.levels_above(60.0, 0.004, 1024) == [1]
    assert seisgpu.levels_above(30.0, 0.004, 1024) == [1, 2]
    assert seisgpu.levels_above(200.0, 0.004, 1024) == []
