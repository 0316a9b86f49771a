"""F-X decon and wave packets on GPU arrays, on the CPU: each
device call is recorded and answered by its host twin on the same addresses
(`device_fakes.twin_library`; the fake GPU arrays' memory is host memory). So each test
checks which C function a method calls, the addresses, lengths, strides and stream it
passes, that the result is the caller's `out=` or an array of the input's library, and that
the values equal the host call's bit for bit (the same host code ran); and that refused
arguments reach no C call. test_device_gpu.py runs the same methods on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from device_fakes import CUPY_STREAM, CupyArray, FakeGpuArray, fake_cupy, twin_library


@pytest.fixture(scope="module")
def cpu() -> seisgpu.Context:
    with seisgpu.Context("cpu") as c:
        yield c


@pytest.fixture
def twin(monkeypatch):
    return twin_library(monkeypatch)


def sentinel(shape, dtype) -> np.ndarray:
    return np.full(shape, 7, dtype)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---- F-X decon ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 100), (4, 5, 100)])
def test_fxdecon_filter_on_gpu_arrays(cpu, twin, monkeypatch, shape):
    fx = seisgpu.FxDecon(cpu, shape)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    want = fx.filter(x)
    call = f"sg_fxdecon_execute_{len(shape)}d_device_f32"
    strides = (100,) if len(shape) == 2 else (5 * 100, 100)  # inline, crossline (elements)
    out = sentinel(shape, np.float32)
    o = FakeGpuArray(out)
    assert fx.filter(FakeGpuArray(x, stream=0x99), out=o) is o
    assert same_bits(out, want)
    stream, args = twin.only(call)
    assert stream == 0x99 and args[1:] == (x.ctypes.data, out.ctypes.data, *strides)
    # In place: the same address twice.
    y = x.copy()
    g = FakeGpuArray(y)
    assert fx.filter(g, out=g) is g
    assert same_bits(y, want) and twin.calls[-1][2][1:3] == (y.ctypes.data, y.ctypes.data)
    # No out=: an array of the input's library, on its current stream.
    made = fake_cupy(monkeypatch)
    got = fx.filter(CupyArray(x))
    assert len(made) == 1 and got is made[0] and same_bits(got.host, want)
    assert twin.calls[-1][1] == CUPY_STREAM


def test_fxdecon_refusals_reach_no_device_call(cpu, twin):
    fx = seisgpu.FxDecon(cpu, (6, 100))
    x = np.zeros((6, 100), np.float32)
    with pytest.raises(seisgpu.InvalidArgumentError, match="data is in GPU memory but out"):
        fx.filter(FakeGpuArray(x), out=np.zeros_like(x))
    with pytest.raises(seisgpu.InvalidArgumentError, match="data: .* not C-contiguous"):
        fx.filter(FakeGpuArray(np.zeros((6, 200), np.float32)[:, ::2]),
                  out=FakeGpuArray(x.copy()))
    with pytest.raises(seisgpu.ArgumentTypeError, match="data: dtype float16"):
        fx.filter(FakeGpuArray(x.astype(np.float16)), out=FakeGpuArray(x.copy()))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"this plan filters \(6, 100\)"):
        fx.filter(FakeGpuArray(np.zeros((5, 100), np.float32)),
                  out=FakeGpuArray(np.zeros((5, 100), np.float32)))
    with pytest.raises(seisgpu.ArgumentTypeError, match="out: dtype float64"):
        fx.filter(FakeGpuArray(x), out=FakeGpuArray(x.astype(np.float64)))
    with pytest.raises(seisgpu.ArgumentTypeError, match="pass out="):
        fx.filter(FakeGpuArray(x))  # a library seisgpu cannot allocate in
    assert twin.calls == []


# ---- wave packets ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wavepacket_transforms_on_gpu_arrays(cpu, twin, dtype):
    wp = seisgpu.WavepacketLayout(cpu, (16, 32), dtype)
    t = "f32" if dtype == np.float32 else "f64"
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(dtype)
    c_want = wp.forward(x)
    c = sentinel(c_want.shape, c_want.dtype)
    out = FakeGpuArray(c)
    assert wp.forward(FakeGpuArray(x), out=out) is out
    assert same_bits(c, c_want)
    stream, args = twin.only(f"sg_wavepacket_forward_device_{t}")
    assert stream == 0 and args[1:] == (x.ctypes.data, c.ctypes.data)
    back = sentinel(x.shape, dtype)
    wp.adjoint(FakeGpuArray(c), out=FakeGpuArray(back))
    assert same_bits(back, wp.adjoint(c_want))
    assert twin.only(f"sg_wavepacket_adjoint_device_{t}")[1][1:] == (c.ctypes.data,
                                                                      back.ctypes.data)
    inv = sentinel(x.shape, dtype)
    got = wp.inverse(FakeGpuArray(c), tolerance=1e-9, max_iterations=3, out=FakeGpuArray(inv))
    want = wp.inverse(c_want, tolerance=1e-9, max_iterations=3)
    assert got.iterations == want.iterations == 3 and got.residual == want.residual
    assert got.data.host is inv and same_bits(inv, want.data)
    _, args = twin.only(f"sg_wavepacket_inverse_device_{t}")
    assert args[1:5] == (c.ctypes.data, inv.ctypes.data, 1e-9, 3)


def test_wavepacket_threshold_on_gpu_arrays(cpu, twin, monkeypatch):
    wp = seisgpu.WavepacketLayout(cpu, (16, 32))
    c0 = wp.forward(np.random.default_rng(3).standard_normal((16, 32)).astype(np.float32))
    value = 0.5 * float(np.abs(c0).max())
    want = wp.threshold(c0, value, mode="soft")
    assert 0 < np.count_nonzero(want) < want.size
    # In place: the coefficients' own address, mode and kind as the C call numbers them.
    c = c0.copy()
    g = FakeGpuArray(c)
    assert wp.threshold(g, value, mode="soft", out=g) is g
    assert same_bits(c, want)
    assert twin.only("sg_wavepacket_threshold_device_f32")[1][1:] == (c.ctypes.data, 1, 0,
                                                                      value)
    # A new array: the coefficients copied by their library, then thresholded in place.
    made = fake_cupy(monkeypatch)
    c = c0.copy()
    got = wp.threshold(CupyArray(c), value, mode="soft")
    assert len(made) == 1 and got is made[0] and same_bits(got.host, want)
    assert np.array_equal(c, c0)  # the input untouched
    assert twin.calls[-1][2][1] == got.host.ctypes.data and twin.calls[-1][1] == CUPY_STREAM
    # out= another array of the library: written once the thresholding succeeded.
    out = CupyArray(sentinel(c0.shape, c0.dtype))
    assert wp.threshold(CupyArray(c), value, mode="soft", out=out) is out
    assert same_bits(out.host, want) and np.array_equal(c, c0)
    # Refused: out= of another library, a copy of a library seisgpu cannot copy in.
    n = len(twin.calls)
    with pytest.raises(seisgpu.InvalidArgumentError, match="out=coeffs"):
        wp.threshold(CupyArray(c), value, out=FakeGpuArray(c.copy()))
    with pytest.raises(seisgpu.ArgumentTypeError, match="pass out=coeffs"):
        wp.threshold(FakeGpuArray(c), value)
    assert len(twin.calls) == n and np.array_equal(c, c0)


def test_wavepacket_refusals_reach_no_device_call(cpu, twin):
    wp = seisgpu.WavepacketLayout(cpu, (16, 32))
    x = np.zeros((16, 32), np.float32)
    c = np.zeros(wp.n_coefficients, np.complex64)
    with pytest.raises(seisgpu.InvalidArgumentError, match="data is in GPU memory but out"):
        wp.forward(FakeGpuArray(x), out=c)
    with pytest.raises(seisgpu.ArgumentTypeError, match="data: dtype float64"):
        wp.forward(FakeGpuArray(x.astype(np.float64)), out=FakeGpuArray(c))
    with pytest.raises(seisgpu.InvalidArgumentError, match="this layout takes"):
        wp.forward(FakeGpuArray(x.T.copy()), out=FakeGpuArray(c))
    with pytest.raises(seisgpu.InvalidArgumentError, match="data: .* not C-contiguous"):
        wp.forward(FakeGpuArray(np.zeros((32, 16), np.float32).T), out=FakeGpuArray(c))
    with pytest.raises(seisgpu.InvalidArgumentError, match="coefficients"):
        wp.adjoint(FakeGpuArray(c[:-1]), out=FakeGpuArray(x))
    with pytest.raises(seisgpu.ArgumentTypeError, match="coeffs: dtype complex128"):
        wp.inverse(FakeGpuArray(c.astype(np.complex128)), out=FakeGpuArray(x))
    with pytest.raises(seisgpu.InvalidArgumentError, match="coeffs is in host memory"):
        wp.threshold(c, 1.0, out=FakeGpuArray(c.copy()))
    assert twin.calls == []

