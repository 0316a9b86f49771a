"""CuPy arrays and PyTorch CUDA tensors through the device calls, on a CUDA context: the DWT
(forward, inverse, denoise) and the USFFT (points, types 1 and 2) equal the host calls on
the same GPU bit for bit, the results are arrays of the input's library on its device, and
the work is ordered on the library's current stream. Skipped where CuPy or PyTorch is
missing or no CUDA context can be made (CI); test_device.py covers the rest on the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import seisgpu


class Lib:
    """The few things the tests do with CuPy or PyTorch."""

    def __init__(self, name: str, mod: Any) -> None:
        self.name, self.mod = name, mod

    def gpu(self, a: np.ndarray) -> Any:
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.from_numpy(np.ascontiguousarray(a)).cuda()

    def host(self, a: Any) -> np.ndarray:
        return self.mod.asnumpy(a) if self.name == "cupy" else a.cpu().numpy()

    def native(self, a: Any) -> bool:
        if self.name == "cupy":
            return isinstance(a, self.mod.ndarray)
        return isinstance(a, self.mod.Tensor) and a.is_cuda

    def fill(self, dst: Any, src: np.ndarray) -> None:
        if self.name == "cupy":
            dst[...] = self.mod.asarray(src)
        else:
            dst.copy_(self.mod.from_numpy(src))

    def new_stream(self) -> Any:
        if self.name == "cupy":
            return self.mod.cuda.Stream(non_blocking=True)
        return self.mod.cuda.Stream()

    def using(self, stream: Any) -> Any:
        return stream if self.name == "cupy" else self.mod.cuda.stream(stream)

    def handle(self, stream: Any) -> int:
        return stream.ptr if self.name == "cupy" else stream.cuda_stream


def _has_gpu(name: str, mod: Any) -> bool:
    try:
        if name == "cupy":
            return mod.cuda.runtime.getDeviceCount() > 0
        return bool(mod.cuda.is_available())
    except Exception:  # noqa: BLE001 - no driver, no device: no GPU for this library
        return False


@pytest.fixture(params=["cupy", "torch"])
def xp(request) -> Lib:
    mod = pytest.importorskip(request.param)
    if not _has_gpu(request.param, mod):
        pytest.skip(f"{request.param} sees no GPU")
    return Lib(request.param, mod)


@pytest.fixture(scope="module")
def gpu() -> seisgpu.Context:
    try:
        c = seisgpu.Context("cuda")
    except seisgpu.Error as e:
        pytest.skip(f"no CUDA context: {e}")
    with c:
        yield c


def bits(a: np.ndarray) -> np.ndarray:
    """The values' bit patterns (complex as pairs), C-ordered."""
    a = np.ascontiguousarray(a)
    if np.iscomplexobj(a):
        a = a.view(a.real.dtype)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def same_bits(device_result: Any, host_result: np.ndarray, xp: Lib) -> None:
    assert xp.native(device_result), type(device_result)
    got = xp.host(device_result)
    assert got.shape == host_result.shape and got.dtype == host_result.dtype
    assert np.array_equal(bits(got), bits(host_result))


def close(device_result: Any, host_result: np.ndarray, xp: Lib, rtol: float) -> None:
    """A type-1 USFFT: its spreading sums in atomically added, timing-ordered steps, so runs
    agree to rounding (relative to the largest mode), not bit for bit."""
    assert xp.native(device_result), type(device_result)
    got = xp.host(device_result)
    assert got.shape == host_result.shape and got.dtype == host_result.dtype
    err = np.max(np.abs(got - host_result)) / np.max(np.abs(host_result))
    assert err < rtol, err


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dwt_on_gpu_arrays_equals_the_host_calls(xp, gpu, dtype):
    x = np.random.default_rng(3).standard_normal((2, 3, 512)).astype(dtype)
    dwt = seisgpu.Dwt(gpu, 512, "daubechies", 8)
    d = xp.gpu(x)
    same_bits(dwt.forward(d), dwt.forward(x), xp)
    same_bits(dwt.forward(d, levels=4), dwt.forward(x, levels=4), xp)
    coeffs = dwt.forward(x)
    same_bits(dwt.inverse(xp.gpu(coeffs)), dwt.inverse(coeffs), xp)
    same_bits(dwt.denoise(d), dwt.denoise(x), xp)
    options = dict(threshold=0.4, mode="hard", noise="per_level", thresholded_levels=[1, 2])
    same_bits(dwt.denoise(d, **options), dwt.denoise(x, **options), xp)
    got, thresholds = dwt.denoise(d, return_thresholds=True)
    want, want_thresholds = dwt.denoise(x, return_thresholds=True)
    same_bits(got, want, xp)
    assert isinstance(thresholds, np.ndarray)
    assert np.array_equal(bits(thresholds), bits(want_thresholds))
    assert np.array_equal(xp.host(d), x)  # the input untouched
    # out=, and in place: the caller's array, written on the GPU.
    out = xp.gpu(np.zeros_like(x))
    assert dwt.forward(d, out=out) is out
    same_bits(out, dwt.forward(x), xp)
    assert dwt.denoise(d, out=d) is d
    same_bits(d, dwt.denoise(x), xp)


CASES = [  # (type, modes, points, n_vectors, dtype, tolerance)
    (1, (40, 33), 900, 1, np.complex128, 1e-9),
    (2, (40, 33), 900, 1, np.complex128, 1e-9),
    (1, (64,), 300, 3, np.complex64, 1e-5),
    (2, (64,), 300, 3, np.complex64, 1e-5),
    (1, (12, 16, 9), 800, 2, np.complex128, 1e-9),
    (2, (12, 16, 9), 800, 2, np.complex128, 1e-9),
]


@pytest.mark.parametrize("kind,modes,m,nv,dtype,tol", CASES)
def test_usfft_on_gpu_arrays_equals_the_host_calls(xp, gpu, kind, modes, m, nv, dtype, tol):
    rng = np.random.default_rng(m)
    real = np.float64 if dtype == np.complex128 else np.float32
    xyz = [rng.uniform(-np.pi, np.pi, m).astype(real) for _ in modes]
    on_host, on_gpu = (seisgpu.Usfft(gpu, kind, modes, dtype=dtype, n_vectors=nv, tolerance=tol)
                       for _ in range(2))
    on_host.set_points(*xyz)
    on_gpu.set_points(*[xp.gpu(c) for c in xyz])
    assert on_gpu.n_points == m
    lead = () if nv == 1 else (nv,)
    if kind == 1:
        c = (rng.standard_normal(lead + (m,)) + 1j * rng.standard_normal(lead + (m,)))
        c = c.astype(dtype)
        want = on_host.execute(c)
        got = on_gpu.execute(xp.gpu(c))
        assert got.shape == want.shape
        rtol = 1e-5 if dtype == np.complex64 else 1e-12
        close(got, want, xp, rtol)
        out = on_gpu.empty_modes(like=xp.gpu(c))
        assert on_gpu.execute(xp.gpu(c), out=out) is out
        close(out, want, xp, rtol)
        return
    f = (rng.standard_normal(lead + modes) + 1j * rng.standard_normal(lead + modes))
    f = f.astype(dtype)
    want = on_host.execute(f)
    # The library's layout (empty_modes), read in place; and a C-ordered array, copied
    # once on the GPU.
    laid = on_gpu.empty_modes(like=xp.gpu(xyz[0]))
    xp.fill(laid, f)
    same_bits(on_gpu.execute(laid), want, xp)
    same_bits(on_gpu.execute(xp.gpu(f)), want, xp)
    out = xp.gpu(np.zeros(lead + (m,), dtype))
    assert on_gpu.execute(laid, out=out) is out
    same_bits(out, want, xp)


def test_work_is_ordered_on_the_current_stream(xp, gpu):
    x = np.random.default_rng(4).standard_normal((64, 1024)).astype(np.float32)
    dwt = seisgpu.Dwt(gpu, 1024)
    want = dwt.denoise(x)
    usfft = seisgpu.Usfft(gpu, 1, (128,), dtype=np.complex64, tolerance=1e-5)
    pts = np.linspace(-3, 3, 4096, dtype=np.float32)
    usfft.set_points(pts)
    spectrum = usfft.execute(x.ravel()[:4096].astype(np.complex64))
    stream = xp.new_stream()
    with xp.using(stream):
        d = xp.gpu(x) * 1  # made on the stream: the call must wait for it
        got = dwt.denoise(d)
        assert gpu._stream == xp.handle(stream)
        usfft.set_points(xp.gpu(pts))
        f = usfft.execute(xp.gpu(x.ravel()[:4096].astype(np.complex64)))
        assert gpu._stream == xp.handle(stream)
    stream.synchronize()
    same_bits(got, want, xp)
    close(f, spectrum, xp, 1e-5)
    # Back on the default stream (the interface's legacy stream, the library's 0).
    got = dwt.denoise(xp.gpu(x))
    assert gpu._stream == 0
    gpu.synchronize()
    same_bits(got, want, xp)


def test_context_set_stream_takes_the_libraries_streams(xp, gpu):
    stream = xp.new_stream()
    gpu.set_stream(stream)
    assert gpu._stream == xp.handle(stream)
    gpu.synchronize()
    gpu.set_stream(0)
    assert gpu._stream == 0


def test_refusals_on_the_gpu(xp, gpu):
    dwt = seisgpu.Dwt(gpu, 64)
    x = np.zeros((4, 64), np.float32)
    with pytest.raises(seisgpu.InvalidArgumentError, match="out is in host memory"):
        dwt.forward(xp.gpu(x), out=np.zeros_like(x))
    wide = xp.gpu(np.zeros((4, 128), np.float32))
    with pytest.raises(seisgpu.InvalidArgumentError, match="not C-contiguous"):
        dwt.forward(wide[:, ::2])
    if xp.name == "torch":
        grad = xp.mod.zeros((4, 64), device="cuda", requires_grad=True)
        with pytest.raises(seisgpu.ArgumentTypeError, match="cannot be read"):
            dwt.forward(grad)
