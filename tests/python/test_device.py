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
from device_fakes import CupyDevice, FakeGpuArray, fake_library
from seisgpu import _device


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
    with pytest.raises(seisgpu.UnsupportedError, match="sg_context_set_device_checks"):
        cpu.set_device_checks(True)


def test_a_context_on_an_application_cuda_context_checks_its_handle(cpu):
    for bad in (-1, "1", 1.5, True, None):
        with pytest.raises(seisgpu.InvalidArgumentError, match="cu_context"):
            seisgpu.Context.on_cuda_context(bad)
    with pytest.raises(seisgpu.InvalidArgumentError, match="cu_context is 0"):
        seisgpu.Context.on_cuda_context(0)


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


def test_without_a_named_stream_the_library_current_stream(monkeypatch):
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=0xC0)))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    CupyArray = fake_library("cupy._core.core", device=CupyDevice())
    asked = []

    def current_stream(device):
        asked.append(device)
        return types.SimpleNamespace(cuda_stream=0x70)

    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_stream=current_stream))
    monkeypatch.setitem(sys.modules, "torch", torch)
    TorchTensor = fake_library("torch", device="cuda:1")
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
    CupyArray = fake_library("cupy._core.core", device=CupyDevice())
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


# ---- F-X, cross-correlation, EM, wave packets: the device calls answer on a CPU context ----

def test_fxdecon_device_calls_on_a_cpu_context_write_nothing(cpu):
    rng = np.random.default_rng(6)
    for shape, call in [((6, 100), "sg_fxdecon_execute_2d_device"),
                        ((4, 5, 100), "sg_fxdecon_execute_3d_device")]:
        fx = seisgpu.FxDecon(cpu, shape)
        for dtype, t in [(np.float32, "f32"), (np.float64, "f64")]:
            x = rng.standard_normal(shape).astype(dtype)
            kept, out = x.copy(), sentinel(shape, dtype)
            with unsupported(f"{call}_{t}"):
                fx.filter(FakeGpuArray(x), out=FakeGpuArray(out))
            assert (out == 7).all() and np.array_equal(x, kept)
            with unsupported(f"{call}_{t}"):  # in place
                g = FakeGpuArray(x)
                fx.filter(g, out=g)
            assert np.array_equal(x, kept)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wavepacket_device_calls_on_a_cpu_context_write_nothing(cpu, dtype):
    wp = seisgpu.WavepacketLayout(cpu, (16, 32), dtype)
    t = "f32" if dtype == np.float32 else "f64"
    x = np.random.default_rng(7).standard_normal((16, 32)).astype(dtype)
    c = wp.forward(x)
    kept_x, kept_c = x.copy(), c.copy()
    out_c, out_x = sentinel(c.shape, c.dtype), sentinel(x.shape, dtype)
    with unsupported(f"sg_wavepacket_forward_device_{t}"):
        wp.forward(FakeGpuArray(x), out=FakeGpuArray(out_c))
    with unsupported(f"sg_wavepacket_adjoint_device_{t}"):
        wp.adjoint(FakeGpuArray(c), out=FakeGpuArray(out_x))
    with unsupported(f"sg_wavepacket_inverse_device_{t}"):
        wp.inverse(FakeGpuArray(c), out=FakeGpuArray(out_x))
    with unsupported(f"sg_wavepacket_threshold_device_{t}"):
        g = FakeGpuArray(c)
        wp.threshold(g, 0.1, out=g)
    assert (out_c == 7).all() and (out_x == 7).all()
    assert np.array_equal(x, kept_x) and np.array_equal(c, kept_c)


def test_xcorr_device_calls_on_a_cpu_context_write_nothing(cpu):
    plan = seisgpu.Xcorr(cpu, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=256.0,
                         step=128.0, maxlag=20.0)
    days = np.random.default_rng(8).standard_normal((3, 1500)).astype(np.float32)
    with unsupported("sg_xcorr_preprocess_device_f32"):
        plan.preprocess(FakeGpuArray(days))
    with unsupported("sg_xcorr_preprocess_device_f32"):
        plan.preprocess(FakeGpuArray(days), FakeGpuArray(np.ones(days.shape, bool)))
    with plan.preprocess(days) as spectra:
        out = sentinel((3, plan.n_lags), np.float32)
        with unsupported("sg_xcorr_correlate_device_f32"):
            plan.correlate(spectra, out=FakeGpuArray(out))
        assert (out == 7).all()


def em_problem(seed: int = 9):
    """A small linearised problem whose search finds equivalent models."""
    rng = np.random.default_rng(seed)
    n, m = 8, 5
    a = rng.standard_normal((n, m))
    sigma0, f0 = np.full(m, 0.5), rng.standard_normal(n) + 3
    truth = sigma0.copy()
    truth[[0, 2]] = 0.6, 0.4
    return dict(a=a, sigma0=sigma0, f0=f0, f_exp=f0 + a @ (truth - sigma0),
                delta=np.full(n, 0.05))


def test_emlog_device_calls_on_a_cpu_context_write_nothing(cpu):
    p = em_problem()
    with unsupported("sg_emlog_plan_create_device"):
        seisgpu.EmSearch(cpu, **{k: FakeGpuArray(v) for k, v in p.items()}, searched=[0, 2])
    plan = seisgpu.EmSearch(cpu, **p, searched=[0, 2])
    axes = [seisgpu.emlog.Axis.linear(0.3, 0.9, 13), seisgpu.emlog.Axis.linear(0.2, 0.8, 11)]
    result = plan.search(axes, pairs=[(0, 1)])
    out = sentinel(13, np.uint64)
    with unsupported("sg_emlog_result_marginal_device"):
        result.marginal(0, out=FakeGpuArray(out))
    pair = sentinel((11, 13), np.uint64)
    with unsupported("sg_emlog_result_pair_device"):
        result.pair(0, out=FakeGpuArray(pair.T))
    assert (out == 7).all() and (pair == 7).all()
