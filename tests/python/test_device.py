"""Arrays in GPU memory (``__cuda_array_interface__``): recognised, checked and passed to the
library's device calls by address.

On the CPU (CI): objects that describe themselves as GPU arrays (their memory is really a
NumPy array's, so that "nothing written" can be checked) are refused by the library on a
CPU context with SG_ERR_UNSUPPORTED naming the device call; a call that mixes host and GPU
arrays, or passes a non-contiguous one, is refused in Python; the stream a call is ordered
on is chosen from the interface or from the array library's current stream (fakes of CuPy
and PyTorch). On a GPU, test_device_gpu.py runs the same calls on CuPy arrays and PyTorch
tensors against the host calls, bit for bit.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import seisgpu
from seisgpu import _device


class FakeGpuArray:
    """Says it lives on the GPU (``__cuda_array_interface__`` v3) over a NumPy array's
    memory."""

    def __init__(self, a: np.ndarray, *, stream: int | None = None, readonly: bool = False):
        self.host = a
        cai = {"data": (a.ctypes.data, readonly), "shape": a.shape, "typestr": a.dtype.str,
               "strides": None if a.flags.c_contiguous else a.strides, "version": 3}
        if stream is not None:
            cai["stream"] = stream
        self.__cuda_array_interface__ = cai


def sentinel(shape, dtype) -> np.ndarray:
    return np.full(shape, 7, dtype)


@pytest.fixture(scope="module")
def cpu() -> seisgpu.Context:
    with seisgpu.Context("cpu") as c:
        yield c


def unsupported(call: str):
    """pytest.raises for the library's SG_ERR_UNSUPPORTED from the device call `call`."""
    return pytest.raises(seisgpu.UnsupportedError, match=f"^{call}: SG_ERR_UNSUPPORTED")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dwt_device_calls_on_a_cpu_context_write_nothing(cpu, dtype):
    dwt = seisgpu.Dwt(cpu, 64)
    t = "f32" if dtype == np.float32 else "f64"
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(dtype)
    kept = x.copy()
    for method, call in [(dwt.forward, f"sg_dwt_execute_device_{t}"),
                         (dwt.inverse, f"sg_dwt_execute_device_{t}"),
                         (dwt.denoise, f"sg_dwt_denoise_device_{t}")]:
        out = sentinel(x.shape, dtype)
        with unsupported(call) as e:
            method(FakeGpuArray(x), out=FakeGpuArray(out))
        assert e.value.status == "SG_ERR_UNSUPPORTED" and e.value.call == call
        assert (out == 7).all() and np.array_equal(x, kept)
    # In place (out= the traces themselves): the same refusal.
    with unsupported(f"sg_dwt_execute_device_{t}"):
        g = FakeGpuArray(x)
        dwt.forward(g, out=g)
    assert np.array_equal(x, kept)


def test_usfft_device_calls_on_a_cpu_context_write_nothing(cpu):
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-np.pi, np.pi, (2, 50))
    p1 = seisgpu.Usfft(cpu, 1, (8, 6))
    with unsupported("sg_usfft_set_points_device_f64"):
        p1.set_points(FakeGpuArray(x), FakeGpuArray(y))
    assert p1.n_points == 0
    p1.set_points(x, y)
    c = (rng.standard_normal(50) + 1j * rng.standard_normal(50)).astype(np.complex128)
    f = p1.empty_modes()
    f[...] = 7
    with unsupported("sg_usfft_execute_device_f64"):
        p1.execute(FakeGpuArray(c), out=FakeGpuArray(f))
    assert (f == 7).all()
    p2 = seisgpu.Usfft(cpu, 2, (8, 6), dtype=np.complex64, tolerance=1e-5)
    p2.set_points(x.astype(np.float32), y.astype(np.float32))
    modes = p2.empty_modes()
    modes[...] = 1
    out = sentinel(50, np.complex64)
    with unsupported("sg_usfft_execute_device_f32"):
        p2.execute(FakeGpuArray(modes), out=FakeGpuArray(out))
    assert (out == 7).all()


def test_host_and_gpu_arrays_are_not_mixed(cpu):
    dwt = seisgpu.Dwt(cpu, 64)
    x = np.zeros((2, 64))
    out = sentinel(x.shape, x.dtype)
    with pytest.raises(seisgpu.InvalidArgumentError,
                       match="traces is in GPU memory but out is in host memory"):
        dwt.forward(FakeGpuArray(x), out=out)
    with pytest.raises(seisgpu.InvalidArgumentError,
                       match="out is in GPU memory but traces is in host memory"):
        dwt.denoise(x, out=FakeGpuArray(out))
    assert (out == 7).all()
    usfft = seisgpu.Usfft(cpu, 2, (8, 6))
    with pytest.raises(seisgpu.InvalidArgumentError, match="x is in GPU memory but y is"):
        usfft.set_points(FakeGpuArray(np.zeros(5)), np.zeros(5))
    usfft.set_points(np.zeros(5), np.zeros(5))
    with pytest.raises(seisgpu.InvalidArgumentError, match="data is in host memory"):
        usfft.execute(usfft.empty_modes(), out=FakeGpuArray(np.zeros(5, np.complex128)))


def test_non_contiguous_gpu_arrays_are_refused(cpu):
    dwt = seisgpu.Dwt(cpu, 64)
    wide = np.zeros((3, 128))
    out = sentinel((3, 64), np.float64)
    with pytest.raises(seisgpu.InvalidArgumentError, match="traces: .* not C-contiguous"):
        dwt.forward(FakeGpuArray(wide[:, ::2]), out=FakeGpuArray(out))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"out: strides \(8, 24\)"):
        dwt.forward(FakeGpuArray(np.zeros((3, 64))), out=FakeGpuArray(np.zeros((64, 3)).T))
    usfft = seisgpu.Usfft(cpu, 1, (8,))
    with pytest.raises(seisgpu.InvalidArgumentError, match="x: .* not C-contiguous"):
        usfft.set_points(FakeGpuArray(np.zeros(10)[::2]))
    # A type-2 mode array in another layout than the library's: copied on the GPU for CuPy
    # and PyTorch only; anything else is refused.
    p2 = seisgpu.Usfft(cpu, 2, (8, 6))
    p2.set_points(np.zeros(5), np.zeros(5))
    with pytest.raises(seisgpu.InvalidArgumentError, match="seisgpu copies only CuPy"):
        p2.execute(FakeGpuArray(np.zeros((8, 6), np.complex128)),
                   out=FakeGpuArray(np.zeros(5, np.complex128)))
    # Type 1's out= must have the layout empty_modes() makes.
    p1 = seisgpu.Usfft(cpu, 1, (8, 6))
    p1.set_points(np.zeros(5), np.zeros(5))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"out: strides \(96, 16\)"):
        p1.execute(FakeGpuArray(np.zeros(5, np.complex128)),
                   out=FakeGpuArray(np.zeros((8, 6), np.complex128)))


def test_gpu_arrays_are_checked_like_host_arrays(cpu):
    dwt = seisgpu.Dwt(cpu, 64)
    with pytest.raises(seisgpu.ArgumentTypeError, match="dtype float16"):
        dwt.forward(FakeGpuArray(np.zeros((2, 64), np.float16)),
                    out=FakeGpuArray(np.zeros((2, 64), np.float16)))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"shape \(2, 32\)"):
        dwt.forward(FakeGpuArray(np.zeros((2, 32))), out=FakeGpuArray(np.zeros((2, 32))))
    with pytest.raises(seisgpu.InvalidArgumentError, match="out: shape"):
        dwt.forward(FakeGpuArray(np.zeros((2, 64))), out=FakeGpuArray(np.zeros((3, 64))))
    with pytest.raises(seisgpu.ArgumentTypeError, match="out: dtype float32"):
        dwt.forward(FakeGpuArray(np.zeros((2, 64))),
                    out=FakeGpuArray(np.zeros((2, 64), np.float32)))
    with pytest.raises(seisgpu.InvalidArgumentError, match="read-only"):
        dwt.forward(FakeGpuArray(np.zeros((2, 64))),
                    out=FakeGpuArray(np.zeros((2, 64)), readonly=True))
    # A result of a library this package cannot allocate in: out= is asked for.
    with pytest.raises(seisgpu.ArgumentTypeError, match="pass out="):
        dwt.forward(FakeGpuArray(np.zeros((2, 64))))
    # An interface that cannot be read (PyTorch's refusal for a tensor that needs grad),
    # and one that lacks its address.
    class Grad:
        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires "
                               "grad. If gradients aren't required, use var.detach()")

    with pytest.raises(seisgpu.ArgumentTypeError, match="cannot be read: .*detach"):
        dwt.forward(Grad())
    bare = FakeGpuArray(np.zeros((2, 64)))
    del bare.__cuda_array_interface__["data"]
    with pytest.raises(seisgpu.ArgumentTypeError, match="incomplete or malformed"):
        dwt.forward(bare)


def test_context_stream_and_synchronize_on_a_cpu_context(cpu):
    cpu.synchronize()  # nothing to wait for
    with pytest.raises(seisgpu.UnsupportedError, match="sg_context_set_stream"):
        cpu.set_stream(0)
    for bad in (-1, "0", 1.5, True, None):
        with pytest.raises(seisgpu.ArgumentTypeError, match="stream"):
            cpu.set_stream(bad)


def test_stream_values():
    # The interface's 1 is the legacy default stream, the library's 0; 2 (per-thread
    # default) and real streams pass as they are; None names none.
    assert _device.stream_value(None) is None
    assert _device.stream_value(1) == 0
    assert _device.stream_value(2) == 2
    assert _device.stream_value(0x7F001234) == 0x7F001234
    assert _device.stream_handle(5) == 5
    assert _device.stream_handle(types.SimpleNamespace(ptr=0x10)) == 0x10  # CuPy
    assert _device.stream_handle(types.SimpleNamespace(cuda_stream=0x20)) == 0x20  # PyTorch


def view(a: FakeGpuArray, name: str = "a") -> _device.DeviceArray:
    v = _device.view(a, name)
    assert v is not None
    return v


def test_the_stream_the_interface_names_wins():
    x = np.zeros(4)
    assert _device.choose_stream([view(FakeGpuArray(x, stream=1))]) == 0
    assert _device.choose_stream([view(FakeGpuArray(x, stream=0xABC))]) == 0xABC
    # One array naming a stream, the other none: the named one.
    assert _device.choose_stream([view(FakeGpuArray(x)), view(FakeGpuArray(x, stream=9))]) == 9
    with pytest.raises(seisgpu.InvalidArgumentError, match="different CUDA streams"):
        _device.choose_stream([view(FakeGpuArray(x, stream=9), "a"),
                               view(FakeGpuArray(x, stream=10), "b")])
    # A library this package does not know, naming no stream: the legacy default stream.
    assert _device.choose_stream([view(FakeGpuArray(x))]) == 0


class _Device:
    """A CuPy device: a context manager."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _fake_library(module: str, **attrs) -> type:
    """A FakeGpuArray subclass whose type says it comes from `module`."""
    return type("ndarray", (FakeGpuArray,), {"__module__": module, **attrs})


def test_without_a_named_stream_the_library_current_stream(monkeypatch):
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=0xC0)))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    CupyArray = _fake_library("cupy._core.core", device=_Device())
    asked = []

    def current_stream(device):
        asked.append(device)
        return types.SimpleNamespace(cuda_stream=0x70)

    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_stream=current_stream))
    monkeypatch.setitem(sys.modules, "torch", torch)
    TorchTensor = _fake_library("torch", device="cuda:1")
    x = np.zeros(4)
    assert _device.choose_stream([view(CupyArray(x))]) == 0xC0
    assert _device.choose_stream([view(TorchTensor(x))]) == 0x70
    assert asked == ["cuda:1"]
    # The interface's own stream still comes first.
    assert _device.choose_stream([view(TorchTensor(x, stream=1))]) == 0


def test_results_are_allocated_by_the_inputs_library(cpu, monkeypatch):
    made = []

    def empty(shape, dtype):
        a = FakeGpuArray(np.full(shape, 7, dtype))
        made.append(a)
        return a

    cupy = types.SimpleNamespace(empty=empty, cuda=types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=0)))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    CupyArray = _fake_library("cupy._core.core", device=_Device())
    dwt = seisgpu.Dwt(cpu, 64)
    with unsupported("sg_dwt_execute_device_f32"):
        dwt.forward(CupyArray(np.zeros((2, 64), np.float32)))
    assert len(made) == 1 and made[0].host.shape == (2, 64)
    assert made[0].host.dtype == np.float32 and (made[0].host == 7).all()


def test_layouts():
    # Mode arrays: a C-ordered (n_vectors, N3, N2, N1) array with its last axes reversed.
    axes = (0, 3, 2, 1)
    assert _device._unpermute((2, 4, 5, 6), axes) == (2, 6, 5, 4)
    assert _device.layout_strides((2, 4, 5, 6), 16, axes) == (1920, 16, 64, 320)
    want = np.empty((2, 6, 5, 4), np.complex128).transpose(axes)
    assert _device.layout_strides(want.shape, 16, axes) == want.strides
    assert view(FakeGpuArray(np.zeros((3, 1, 4)))).c_contiguous
    assert not view(FakeGpuArray(np.zeros((3, 4)).T)).c_contiguous
    assert view(FakeGpuArray(np.zeros((3, 8))[:1])).c_contiguous  # a length-1 axis
    assert not view(FakeGpuArray(np.zeros((3, 8))[:, :1])).c_contiguous


def test_a_lazily_conjugated_tensor_is_refused(cpu):
    class Conjugated(FakeGpuArray):
        def is_conj(self):
            return True

    usfft = seisgpu.Usfft(cpu, 2, (8,))
    usfft.set_points(np.zeros(5))
    with pytest.raises(seisgpu.InvalidArgumentError, match="resolve_conj"):
        usfft.execute(Conjugated(np.zeros(8, np.complex128)),
                      out=FakeGpuArray(np.zeros(5, np.complex128)))


def test_foreign_byte_order_is_refused(cpu):
    dwt = seisgpu.Dwt(cpu, 64)
    x = np.zeros((2, 64), ">f8")
    with pytest.raises(seisgpu.ArgumentTypeError, match="byte order"):
        dwt.forward(FakeGpuArray(x), out=FakeGpuArray(x.copy()))
