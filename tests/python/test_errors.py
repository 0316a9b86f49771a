"""Bad input, capability by capability: wrong dtypes and shapes, unusable out= arrays, NaN,
closed plans. Each raises a seisgpu.Error subclass (ValueError or TypeError) carrying the
library's status and message, or a message naming the argument, and leaves out= as it was."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu

SENTINEL = -7.0


def sentinel(shape, dtype):
    return np.full(shape, SENTINEL, dtype)


def untouched(out):
    return bool((out == SENTINEL).all())


def test_error_classes():
    assert issubclass(seisgpu.InvalidArgumentError, ValueError)
    assert issubclass(seisgpu.NonFiniteError, ValueError)
    assert issubclass(seisgpu.ArgumentTypeError, TypeError)
    for cls in (seisgpu.InvalidArgumentError, seisgpu.ArgumentTypeError,
                seisgpu.CancelledError, seisgpu.CudaError, seisgpu.OutOfMemoryError):
        assert issubclass(cls, seisgpu.Error)


def test_context_errors():
    with pytest.raises(seisgpu.InvalidArgumentError, match="backend = 'gpu': expected one of"):
        seisgpu.Context("gpu")
    with pytest.raises(seisgpu.InvalidArgumentError, match="device"):
        seisgpu.Context("cpu", -1)
    with pytest.raises(seisgpu.ArgumentTypeError, match="expected a seisgpu.Context"):
        seisgpu.Dwt("cpu", 64)


def test_dwt_bad_input(ctx):
    with pytest.raises(seisgpu.InvalidArgumentError, match="n_samples = -1"):
        seisgpu.Dwt(ctx, -1)
    with pytest.raises(seisgpu.UnsupportedError) as e:
        seisgpu.Dwt(ctx, 100)
    assert e.value.status == "SG_ERR_UNSUPPORTED" and "power of two" in e.value.message
    with pytest.raises(seisgpu.UnsupportedError, match="member"):
        seisgpu.Dwt(ctx, 64, "daubechies", 7)
    with pytest.raises(seisgpu.InvalidArgumentError, match="wavelet"):
        seisgpu.Dwt(ctx, 64, "db4")
    dwt = seisgpu.Dwt(ctx, 64)
    x = np.random.default_rng(0).standard_normal((4, 64))
    with pytest.raises(seisgpu.ArgumentTypeError, match="dtype int64"):
        dwt.forward(np.zeros((4, 64), np.int64))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"shape \(4, 63\)"):
        dwt.forward(x[:, :63])
    with pytest.raises(seisgpu.InvalidArgumentError, match="levels = 7"):
        dwt.forward(x, levels=7)
    with pytest.raises(seisgpu.InvalidArgumentError, match="levels = -1"):
        dwt.forward(x, levels=-1)
    with pytest.raises(seisgpu.InvalidArgumentError, match="mode"):
        dwt.denoise(x, mode="medium")
    with pytest.raises(seisgpu.InvalidArgumentError, match="thresholded_levels: level 9"):
        dwt.denoise(x, thresholded_levels=[9])
    # out=: wrong dtype, wrong shape, not C-contiguous, read-only; nothing written.
    for out, cls, words in [
            (sentinel((4, 64), np.float32), seisgpu.ArgumentTypeError, "dtype float32"),
            (sentinel((4, 32), np.float64), seisgpu.InvalidArgumentError, "shape"),
            (sentinel((64, 4), np.float64).T, seisgpu.InvalidArgumentError, "C-contiguous"),
            (sentinel((4, 128), np.float64)[:, ::2], seisgpu.InvalidArgumentError,
             "C-contiguous")]:
        with pytest.raises(cls, match=words):
            dwt.forward(x, out=out)
        assert untouched(out)
    ro = sentinel((4, 64), np.float64)
    ro.flags.writeable = False
    with pytest.raises(seisgpu.InvalidArgumentError, match="read-only"):
        dwt.forward(x, out=ro)
    # NaN: the library's status and message (naming the trace and sample); out untouched.
    bad = x.copy()
    bad[2, 17] = np.nan
    out = sentinel(x.shape, x.dtype)
    with pytest.raises(seisgpu.NonFiniteError) as e:
        dwt.denoise(bad, out=out)
    assert e.value.status == "SG_ERR_NON_FINITE" and e.value.call == "sg_dwt_denoise_f64"
    assert e.value.message and e.value.message in str(e.value)
    assert untouched(out)
    # A strided input with out=: still nothing written on failure.
    wide = np.zeros((4, 128))
    wide[:, :64] = bad
    with pytest.raises(seisgpu.NonFiniteError):
        dwt.forward(wide[:, :64], out=out)
    assert untouched(out)


def test_fxdecon_bad_input(ctx):
    plan = seisgpu.FxDecon(ctx, (16, 200))
    x = np.random.default_rng(1).standard_normal((16, 200)).astype(np.float32)
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"shape \(16, 100\)"):
        plan.filter(x[:, :100])
    with pytest.raises(seisgpu.ArgumentTypeError, match="complex64"):
        plan.filter(x.astype(np.complex64))
    bad = x.copy()
    bad[3, 50] = np.inf
    out = sentinel(x.shape, np.float32)
    with pytest.raises(seisgpu.NonFiniteError) as e:
        plan.filter(bad, out=out)
    assert e.value.message and untouched(out)
    with pytest.raises(seisgpu.InvalidArgumentError, match="shape: 1 axes"):
        seisgpu.FxDecon(ctx, (200,))
    with pytest.raises(seisgpu.InvalidArgumentError, match="shape\\[0\\] = -3"):
        seisgpu.FxDecon(ctx, (-3, 200))
    with pytest.raises(seisgpu.ArgumentTypeError, match="operator_traces: expected an integer"):
        seisgpu.FxDecon(ctx, (16, 200), operator_traces=2.5)
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        seisgpu.FxDecon(ctx, (16, 200), operator_traces=30)
    assert e.value.status == "SG_ERR_INVALID_ARGUMENT" and e.value.message
    plan.close()
    with pytest.raises(seisgpu.ClosedError, match="FxDecon is closed"):
        plan.filter(x)


def test_usfft_bad_input(ctx):
    plan = seisgpu.Usfft(ctx, 1, (16,), tolerance=1e-9)
    plan.set_points(np.linspace(-3, 3, 10))
    with pytest.raises(seisgpu.ArgumentTypeError, match="complex128"):
        plan.execute(np.zeros(10))  # real strengths: the data are complex
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"shape \(9,\)"):
        plan.execute(np.zeros(9, np.complex128))
    out = sentinel((16,), np.complex128)[::-1]
    with pytest.raises(seisgpu.InvalidArgumentError, match="strides"):
        plan.execute(np.zeros(10, np.complex128), out=out)
    assert untouched(out)
    with pytest.raises(seisgpu.InvalidArgumentError, match="type = 3"):
        seisgpu.Usfft(ctx, 3, (16,))
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        seisgpu.Usfft(ctx, 1, (16,), tolerance=1e-20)
    assert e.value.status == "SG_ERR_INVALID_ARGUMENT" and "tolerance" in e.value.message
    plan.close()
    with pytest.raises(seisgpu.ClosedError):
        plan.set_points(np.zeros(3))


def test_wavepacket_bad_input(ctx):
    wp = seisgpu.WavepacketLayout(ctx, (32, 32), np.float32, directions=4)
    data = np.full((32, 32), 0.5, np.float32)
    data[2, 13] = np.nan  # element 77 in the C library's order
    out = sentinel((wp.n_coefficients,), np.complex64)
    with pytest.raises(seisgpu.NonFiniteError) as e:
        wp.forward(data, out=out)
    assert e.value.status == "SG_ERR_NON_FINITE" and "77" in e.value.message
    assert untouched(out)
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"shape \(32, 31\)"):
        wp.forward(np.zeros((32, 31), np.float32))
    with pytest.raises(seisgpu.ArgumentTypeError, match="float32"):
        wp.forward(np.zeros((32, 32)))
    with pytest.raises(seisgpu.ArgumentTypeError, match="complex64"):
        wp.adjoint(np.zeros(wp.n_coefficients, np.float32))
    with pytest.raises(seisgpu.InvalidArgumentError, match="shape\\[0\\] = 4"):
        seisgpu.WavepacketLayout(ctx, (4, 32))
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        seisgpu.WavepacketLayout(ctx, (32, 32), directions=3)
    assert "directions" in e.value.message
    with pytest.raises(seisgpu.ArgumentTypeError, match="unknown option 'spin'"):
        seisgpu.WavepacketLayout(ctx, (32, 32), spin=1)
    c = wp.forward(np.zeros((32, 32), np.float32))
    c[5] = np.nan
    out = sentinel(c.shape, c.dtype)
    with pytest.raises(seisgpu.NonFiniteError):
        wp.threshold_noise(c, 2.5, 1.0, out=out)
    assert untouched(out)


def test_xcorr_bad_input(ctx):
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        seisgpu.Xcorr(ctx, sampling_rate=1.0, freqmin=0.4, freqmax=0.05)
    assert e.value.status == "SG_ERR_INVALID_ARGUMENT" and e.value.message
    plan = seisgpu.Xcorr(ctx, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=100,
                         step=50, maxlag=20)
    with pytest.raises(seisgpu.InvalidArgumentError, match="n_stations, n_samples"):
        plan.preprocess(np.zeros(500, np.float32))
    with pytest.raises(seisgpu.InvalidArgumentError) as e:
        plan.preprocess(np.zeros((2, 50), np.float32))  # shorter than one window
    assert e.value.status == "SG_ERR_INVALID_ARGUMENT"
    with pytest.raises(seisgpu.ArgumentTypeError, match="dtype int32"):
        plan.preprocess(np.zeros((2, 500), np.int32))
    with pytest.raises(seisgpu.InvalidArgumentError, match="time_norm"):
        seisgpu.Xcorr(ctx, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, time_norm="two_bit")
    days = np.random.default_rng(2).standard_normal((3, 500)).astype(np.float32)
    with plan.preprocess(days) as s:
        out = sentinel((3, 41), np.float32)
        with pytest.raises(seisgpu.InvalidArgumentError) as e:
            plan.correlate(s, block=(0, 2, 1, 2), out=out[:1])  # a block that overlaps
        assert e.value.status == "SG_ERR_INVALID_ARGUMENT" or "shape" in str(e.value)
        assert untouched(out)
    with pytest.raises(seisgpu.ClosedError):
        plan.correlate(s)
