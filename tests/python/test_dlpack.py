"""Arrays that offer DLPack only (``__dlpack__`` / ``__dlpack_device__`` naming a CUDA device),
on the CPU: a fake producer built with ctypes over NumPy memory (`device_fakes.FakeDlpack`),
device calls answered by their host twins (`device_fakes.twin_library`). Checked: the
address passed is the DLTensor's data + byte_offset, the stream the tensor is exported for
is the call's, the capsule is renamed "used_dltensor" and its deleter runs exactly once
(after the call, or when a check refuses the array), and refusals (layout, dtype, version,
read-only out, a mix with host arrays) name the argument. test_device_gpu.py runs PyTorch
tensors wrapped as DLPack-only objects on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from device_fakes import FakeDlpack, FakeGpuArray, capsule_name, twin_library
from seisgpu import _device


@pytest.fixture
def cpu() -> seisgpu.Context:
    with seisgpu.Context("cpu") as c:
        yield c


@pytest.fixture
def twin(monkeypatch):
    return twin_library(monkeypatch)


def traces(dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(11).standard_normal((3, 64)).astype(dtype)


def test_a_dlpack_array_is_passed_at_data_plus_byte_offset(cpu, twin):
    dwt = seisgpu.Dwt(cpu, 64)
    x = traces()
    want = dwt.forward(x)
    out = np.full_like(x, 7)
    src, dst = FakeDlpack(x, offset=24), FakeDlpack(out, versioned=True, strides=True)
    assert dwt.forward(src, out=dst) is dst
    assert np.array_equal(out, want)
    stream, args = twin.only("sg_dwt_execute_device_f32")
    assert args[3:] == (x.ctypes.data, out.ctypes.data, 3, 64)
    assert x.ctypes.data == src.address()  # data (24 bytes before) + byte_offset 24
    # Exported for the call's stream: the context's, the legacy default (DLPack's 1).
    assert stream == 0 and src.streams == [1] and dst.streams == [1]
    # Consumed: renamed as the protocol asks, each deleter run once, after the call.
    assert capsule_name(src.capsules[0]) == b"used_dltensor"
    assert capsule_name(dst.capsules[0]) == b"used_dltensor_versioned"
    assert src.deleted == 1 and dst.deleted == 1


def test_dlpack_arrays_use_the_calls_stream(cpu, twin, monkeypatch):
    dwt = seisgpu.Dwt(cpu, 64)
    x = traces()
    # Alone: the context's stream (what set_stream chose).
    monkeypatch.setattr(cpu, "_default_stream", 0x77)
    src, dst = FakeDlpack(x), FakeDlpack(np.zeros_like(x))
    dwt.forward(src, out=dst)
    assert twin.calls[-1][1] == 0x77 and src.streams == [0x77] and dst.streams == [0x77]
    # With an array that names a stream: that one, for the DLPack array too.
    dst = FakeDlpack(np.zeros_like(x))
    dwt.forward(FakeGpuArray(x, stream=0xABC), out=dst)
    assert twin.calls[-1][1] == 0xABC and dst.streams == [0xABC]
    # The interface's legacy default stream is the library's 0, DLPack's 1 (0 is not a
    # DLPack stream).
    dst = FakeDlpack(np.zeros_like(x))
    dwt.forward(FakeGpuArray(x, stream=1), out=dst)
    assert twin.calls[-1][1] == 0 and dst.streams == [1]


def test_producers_before_dlpack_1_and_managed_memory(cpu, twin):
    dwt = seisgpu.Dwt(cpu, 64)
    x = traces(np.float64)
    out = np.zeros_like(x)
    old, managed = FakeDlpack(x, old=True), FakeDlpack(out, device=(13, 0), versioned=True)
    dwt.denoise(old, out=managed)
    assert np.array_equal(out, dwt.denoise(x))
    assert old.streams == [1] and capsule_name(old.capsules[0]) == b"used_dltensor"
    assert old.deleted == 1 and managed.deleted == 1


def refused(fake: FakeDlpack, error, match: str, call=None) -> None:
    """`call(fake)` raises `error`, and the consumed tensor was released by the call itself
    (checked while the exception, and so the call's frames, are still alive)."""
    dwt = seisgpu.Dwt(seisgpu.Context("cpu"), 64)
    run = call or (lambda f: dwt.forward(f, out=FakeGpuArray(np.zeros((3, 64), np.float32))))
    with pytest.raises(error, match=match) as e:
        run(fake)
    assert e.value.__traceback__ is not None
    assert fake.deleted == 1 and capsule_name(fake.capsules[0]).startswith(b"used_")


def test_refused_dlpack_arrays_are_released(twin):
    wide = np.zeros((3, 128), np.float32)
    refused(FakeDlpack(wide[:, ::2]), seisgpu.InvalidArgumentError, "traces: .*not C-contig")
    refused(FakeDlpack(traces(np.float16)), seisgpu.ArgumentTypeError, "dtype float16")
    bf16 = FakeDlpack(np.zeros((3, 64), np.uint16), dtype=(4, 16, 1))
    refused(bf16, seisgpu.ArgumentTypeError, "DLPack dtype code 4, 16 bits, 1 lanes")
    vec = FakeDlpack(traces(), dtype=(2, 32, 4))
    refused(vec, seisgpu.ArgumentTypeError, "4 lanes")
    readonly = FakeDlpack(np.zeros((3, 64), np.float32), versioned=True, readonly=True)
    dwt = seisgpu.Dwt(seisgpu.Context("cpu"), 64)
    refused(readonly, seisgpu.InvalidArgumentError, "out: the GPU array is read-only",
            lambda f: dwt.forward(FakeGpuArray(traces()), out=f))
    # A result seisgpu cannot allocate for a DLPack producer: out= is asked for.
    refused(FakeDlpack(traces()), seisgpu.ArgumentTypeError, r"FakeDlpack \(DLPack\): pass out=",
            lambda f: dwt.forward(f))
    assert twin.calls == []


def test_unknown_versions_are_not_consumed(cpu, twin):
    fake = FakeDlpack(traces(), versioned=True, version=(2, 0))
    with pytest.raises(seisgpu.ArgumentTypeError, match="DLPack 2.0; seisgpu reads DLPack 1.x"):
        seisgpu.Dwt(cpu, 64).forward(fake, out=FakeGpuArray(traces()))
    # Not consumed: the name unchanged and the deleter left to the producer's destructor.
    assert capsule_name(fake.capsules[0]) == b"dltensor_versioned" and fake.deleted == 0
    assert twin.calls == []


def test_broken_producers_are_refused(cpu, twin):
    dwt = seisgpu.Dwt(cpu, 64)

    class Raises(FakeDlpack):
        def __dlpack__(self, stream=None, **kwargs):
            raise BufferError("cannot export")

    class NotACapsule(FakeDlpack):
        def __dlpack__(self, stream=None, **kwargs):
            return 42

    class Used(FakeDlpack):
        def __dlpack__(self, stream=None, **kwargs):
            capsule = super().__dlpack__(stream, **kwargs)
            seisgpu._dlpack._set_name(capsule, seisgpu._dlpack._USED)
            return capsule

    with pytest.raises(seisgpu.ArgumentTypeError, match=r"__dlpack__\(stream=1\) failed: "
                                                        "cannot export"):
        dwt.forward(Raises(traces()), out=FakeGpuArray(traces()))
    with pytest.raises(seisgpu.ArgumentTypeError, match="int None, not an unused DLPack"):
        dwt.forward(NotACapsule(traces()), out=FakeGpuArray(traces()))
    with pytest.raises(seisgpu.ArgumentTypeError, match="b'used_dltensor', not an unused"):
        dwt.forward(Used(traces()), out=FakeGpuArray(traces()))
    # The first array exported, the second refused: the first released.
    first = FakeDlpack(traces())
    with pytest.raises(seisgpu.ArgumentTypeError, match="out: __dlpack__") as e:
        dwt.forward(first, out=Raises(traces()))
    assert e.value.__traceback__ is not None and first.deleted == 1
    assert twin.calls == []


def test_host_dlpack_producers_and_mixes(cpu, twin):
    on_host = FakeDlpack(traces(), device=(1, 0))
    assert _device.gather(x=on_host) is None and on_host.streams == []
    gpu = FakeDlpack(traces())
    with pytest.raises(seisgpu.InvalidArgumentError,
                       match="traces is in GPU memory but out is in host memory"):
        seisgpu.Dwt(cpu, 64).forward(gpu, out=np.zeros((3, 64), np.float32))
    assert gpu.streams == [] and gpu.capsules == []  # refused before any export

    class Broken(FakeDlpack):
        def __dlpack_device__(self):
            raise RuntimeError("no device")

    with pytest.raises(seisgpu.ArgumentTypeError, match="x: its __dlpack_device__"):
        _device.gather(x=Broken(traces()))


def test_every_capability_takes_dlpack_arrays(cpu, twin):
    rng = np.random.default_rng(12)
    # F-X.
    fx = seisgpu.FxDecon(cpu, (6, 100))
    x = rng.standard_normal((6, 100)).astype(np.float32)
    out = np.zeros_like(x)
    fakes = [FakeDlpack(x, offset=8), FakeDlpack(out)]
    fx.filter(fakes[0], out=fakes[1])
    assert np.array_equal(out, fx.filter(x))
    assert twin.calls[-1][2][1:3] == (x.ctypes.data, out.ctypes.data)
    # Wave packets.
    wp = seisgpu.WavepacketLayout(cpu, (16, 32))
    d = rng.standard_normal((16, 32)).astype(np.float32)
    c = np.zeros(wp.n_coefficients, np.complex64)
    fakes += [FakeDlpack(d), FakeDlpack(c, versioned=True)]
    wp.forward(fakes[2], out=fakes[3])
    assert np.array_equal(c, wp.forward(d))
    assert twin.calls[-1][2][1:] == (d.ctypes.data, c.ctypes.data)
    # Cross-correlation: the spectra of DLPack station-days stack into out=.
    plan = seisgpu.Xcorr(cpu, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=256.0,
                         step=128.0, maxlag=20.0)
    days = rng.standard_normal((3, 1500)).astype(np.float32)
    fakes.append(FakeDlpack(days))
    spectra = plan.preprocess(fakes[-1])
    assert twin.calls[-1][2][1] == days.ctypes.data
    stacks = np.zeros((3, plan.n_lags), np.float32)
    fakes.append(FakeDlpack(stacks))
    plan.correlate(spectra, out=fakes[-1])
    assert np.array_equal(stacks, plan.run(days).stacks)
    # The EM plan.
    n, m = 8, 5
    a = rng.standard_normal((n, m))
    vectors = dict(sigma0=np.full(m, 0.5), f0=rng.standard_normal(n) + 3,
                   f_exp=rng.standard_normal(n) + 3, delta=np.full(n, 0.05))
    em = [FakeDlpack(a)] + [FakeDlpack(v) for v in vectors.values()]
    fakes += em
    plan_em = seisgpu.EmSearch(cpu, em[0], *em[1:], searched=[1, 3])
    want = seisgpu.EmSearch(cpu, a, *vectors.values(), searched=[1, 3])
    assert np.array_equal(plan_em.analytic().sigma_star, want.analytic().sigma_star)
    assert twin.calls[-1][0] == "sg_emlog_plan_create_device"
    assert twin.calls[-1][2][3] == a.ctypes.data
    assert [f.deleted for f in fakes] == [1] * len(fakes)
    assert [f.streams for f in fakes] == [[1]] * len(fakes)
