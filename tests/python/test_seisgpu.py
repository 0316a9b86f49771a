"""The package against known answers: an orthonormal Haar transform of a constant, DWT round
trips, denoising that brings a noisy trace closer to the clean one, F-X decon that does too,
USFFT types 1 and 2 against direct sums, the wave packets' exact adjoint and inverse (a
layout, and a volume in tiles), progress reports and cancellation, and errors raised with
the library's status and message."""

from __future__ import annotations

import math

import numpy as np
import pytest

import seisgpu
from conftest import BACKEND, rel_l2


def test_version_and_context(ctx):
    import re
    assert re.match(r"^\d+\.\d+\.\d+", seisgpu.version())
    assert ctx.backend == BACKEND
    assert ("CPU" if BACKEND == "cpu" else "CUDA") in ctx.description
    with pytest.raises(seisgpu.InvalidArgumentError):
        seisgpu.Context("tpu")


def test_haar_of_a_constant_and_round_trips(ctx):
    haar = seisgpu.Dwt(ctx, 8, "haar", 2)
    c = haar.forward(np.ones(8))
    # Orthonormal: the approximation holds sqrt(8), every detail is 0.
    assert abs(c[0] - math.sqrt(8.0)) < 1e-12
    assert np.all(np.abs(c[1:]) < 1e-12)
    rng = np.random.default_rng(3)
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        x = rng.uniform(-1, 1, (4, 256)).astype(dtype)
        dwt = seisgpu.Dwt(ctx, 256)
        back = dwt.inverse(dwt.forward(x))
        assert rel_l2(back, x) < tol
        assert back.dtype == dtype and back.shape == x.shape


def test_dwt_reserve_makes_room_on_a_gpu_and_nothing_on_the_cpu(ctx):
    dwt = seisgpu.Dwt(ctx, 256)
    assert dwt.workspace_bytes == 0
    dwt.reserve(64)
    if BACKEND == "cpu":
        assert dwt.workspace_bytes == 0
    else:
        # The medians of 64 traces of 8 levels, in float64.
        assert dwt.workspace_bytes >= 64 * 8 * 8
    x = np.ones((64, 256), np.float32)
    assert rel_l2(dwt.inverse(dwt.forward(x)), x) < 1e-5


def test_denoising_brings_a_noisy_trace_closer(ctx):
    rng = np.random.default_rng(7)
    n = 1024
    clean = np.sin(2 * np.pi * 5 * np.arange(n) / n)
    noisy = (clean + rng.normal(0, 0.3, n)).astype(np.float32)
    out = seisgpu.Dwt(ctx, n).denoise(noisy)
    assert rel_l2(out, clean) < 0.6 * rel_l2(noisy, clean)


def test_wavepacket_adjoint_and_inverse(ctx):
    rng = np.random.default_rng(11)
    for dtype, tol in ((np.float64, 1e-9), (np.float32, 1e-5)):
        wp = seisgpu.WavepacketLayout(ctx, (40, 48), dtype, directions=8,
                                      tolerance=1e-12 if dtype == np.float64 else 1e-6)
        assert wp.n_coefficients > wp.n_samples
        f = rng.uniform(-1, 1, wp.shape).astype(dtype)
        c = (rng.uniform(-1, 1, wp.n_coefficients)
             + 1j * rng.uniform(-1, 1, wp.n_coefficients)).astype(wp.dtype)
        cf, ac = wp.forward(f), wp.adjoint(c)
        lhs = float(np.sum(cf.real * c.real + cf.imag * c.imag, dtype=np.float64))
        rhs = float(np.sum(f * ac, dtype=np.float64))
        scale = math.sqrt(float(np.sum(np.abs(cf) ** 2, dtype=np.float64))
                          * float(np.sum(np.abs(c) ** 2, dtype=np.float64)))
        assert abs(lhs - rhs) / scale < tol
        back, iterations, residual = wp.inverse(cf, tolerance=tol / 10, max_iterations=60)
        assert rel_l2(back, f) < tol * 10
        assert iterations > 0


def ricker(t):
    a = (np.pi * 25.0 * t) ** 2
    return (1.0 - 2.0 * a) * np.exp(-a)


def test_fx_decon_brings_a_noisy_section_closer(ctx):
    rng = np.random.default_rng(9)
    ns, nt = 500, 48
    s, x = np.arange(ns)[None, :], np.arange(nt)[:, None]
    clean = ricker(0.004 * s - 0.4 - 0.002 * x) - 0.7 * ricker(0.004 * s - 1.0)
    noisy = (clean + rng.normal(0, 0.2, clean.shape)).astype(np.float32)
    out = seisgpu.FxDecon(ctx, noisy.shape).filter(noisy)
    # The default band leaves the noise outside it alone: about 0.79 of the error stays
    # (0.79-0.81 over seeds and noise levels); the identity would leave all of it.
    assert rel_l2(out, clean) < 0.85 * rel_l2(noisy, clean)


def test_usfft_against_direct_sums(ctx):
    rng = np.random.default_rng(5)
    m, n1, n2 = 40, 12, 10
    x, y = rng.uniform(-np.pi, np.pi, m), rng.uniform(-np.pi, np.pi, m)
    k1 = np.arange(-(n1 // 2), n1 - n1 // 2)[:, None, None]
    k2 = np.arange(-(n2 // 2), n2 - n2 // 2)[None, :, None]
    phase = k1 * x + k2 * y  # (n1, n2, m)
    # Type 1: f[k1, k2] = sum_j c_j exp(-i k.x_j), modes centred.
    t1 = seisgpu.Usfft(ctx, 1, (n1, n2), dtype=np.complex128, sign=-1, tolerance=1e-12)
    t1.set_points(x, y)
    c = rng.uniform(-1, 1, m) + 1j * rng.uniform(-1, 1, m)
    want = (c * np.exp(-1j * phase)).sum(axis=-1)
    assert rel_l2(t1.execute(c), want) < 1e-10
    # Type 2: c_j = sum_k f[k] exp(+i k.x_j), in single precision.
    t2 = seisgpu.Usfft(ctx, 2, (n1, n2), dtype=np.complex64, sign=1, tolerance=1e-5)
    t2.set_points(x.astype(np.float32), y.astype(np.float32))
    fm = (rng.uniform(-1, 1, (n1, n2)) + 1j * rng.uniform(-1, 1, (n1, n2))).astype(np.complex64)
    want = (fm[..., None] * np.exp(1j * phase)).sum(axis=(0, 1))
    assert rel_l2(t2.execute(fm), want) < 1e-4
    with pytest.raises(ValueError):
        t1.set_points(x)


def test_a_volume_in_tiles_round_trips(ctx):
    rng = np.random.default_rng(13)
    v = seisgpu.WavepacketVolume(ctx, (70, 40), (32, 40), np.float64, directions=8,
                                 tolerance=1e-12)
    assert v.tiles == (3, 1)
    f = rng.uniform(-1, 1, v.shape)
    back, iterations, _ = v.inverse(v.forward(f), tolerance=1e-11, max_iterations=60)
    assert rel_l2(back, f) < 1e-9
    assert iterations > 0
    # The tiles dealt out over two contexts: the same coefficients, bit for bit.
    two = seisgpu.WavepacketVolume([ctx, seisgpu.Context(BACKEND)], (70, 40), (32, 40),
                                   np.float64, directions=8, tolerance=1e-12)
    np.testing.assert_array_equal(two.forward(f), v.forward(f))
    with pytest.raises(seisgpu.Error):
        seisgpu.WavepacketVolume([], (70, 40), (32, 40), np.float64)


def test_progress_reports_and_cancels():
    ctx = seisgpu.Context(BACKEND)
    dwt = seisgpu.Dwt(ctx, 1024)
    traces = np.random.default_rng(17).uniform(-1, 1, (512, 1024)).astype(np.float32)
    seen = []
    ctx.set_progress(lambda stage, fraction: seen.append((stage, fraction)) and False)
    dwt.denoise(traces)
    fractions = [f for _, f in seen]
    assert fractions and fractions[-1] == 1.0
    assert fractions == sorted(fractions)
    assert all(stage for stage, _ in seen)
    out = np.zeros_like(traces)
    ctx.set_progress(lambda stage, fraction: True)
    with pytest.raises(seisgpu.Error) as e:
        dwt.denoise(traces, out=out)
    assert e.value.status == "SG_ERR_CANCELLED" and not out.any()

    def broken(stage, fraction):
        raise RuntimeError("a bug in the callback")

    ctx.set_progress(broken)
    with pytest.raises(seisgpu.Error) as e:
        dwt.denoise(traces)
    assert e.value.status == "SG_ERR_CANCELLED"
    ctx.set_progress(None)
    assert dwt.denoise(traces).shape == traces.shape


def test_errors_carry_the_status_and_message(ctx):
    wp = seisgpu.WavepacketLayout(ctx, (32, 32), np.float32, directions=4)
    data = np.full(wp.shape, 0.5, np.float32)
    data.ravel()[77] = np.nan
    with pytest.raises(seisgpu.Error) as e:
        wp.forward(data)
    assert e.value.status == "SG_ERR_NON_FINITE"
    assert "77" in e.value.message
    with pytest.raises(ValueError):
        wp.forward(np.zeros((32, 31), np.float32))
    with pytest.raises(TypeError):
        wp.forward(np.zeros((32, 32), np.float64))
    with pytest.raises(seisgpu.Error) as e:
        seisgpu.WavepacketLayout(ctx, (32, 4))
    assert "shape[1]" in e.value.message
    with pytest.raises(seisgpu.Error) as e:
        seisgpu.Dwt(ctx, 100)
    assert e.value.status == "SG_ERR_UNSUPPORTED"
    with pytest.raises(TypeError):
        seisgpu.WavepacketLayout(ctx, (32, 32), spin=1)
