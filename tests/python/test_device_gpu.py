"""CuPy arrays and PyTorch CUDA tensors through the device calls, on a CUDA context: the DWT
(forward, inverse, denoise), the USFFT (points, types 1 and 2), F-X decon, wave packets
(C, C*, the inverse, thresholds, keep-largest, the noise estimate), cross-correlation
(preprocessing, stacks) and the EM search (plan, search, marginals) equal the host calls on
the same GPU: bit for bit where the C header says so, else to rounding (F-X decon, the
wave-packet adjoint and inverse, the type-1 USFFT: atomic sums); the results are arrays of
the input's library on its device, and the work is ordered on the library's current
stream. PyTorch tensors seen through DLPack only (no __cuda_array_interface__) go the same
way. Skipped where CuPy or PyTorch is missing or no CUDA context can be made (CI);
test_device.py, test_device_twins.py and test_dlpack.py cover the rest on the CPU.
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
        if self.name == "cupy":
            return self.mod.asnumpy(a)
        if a.dtype == getattr(self.mod, "uint64", None):  # not every PyTorch reads it out
            return a.view(self.mod.int64).cpu().numpy().view(np.uint64)
        return a.cpu().numpy()

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
    """Results whose sums are atomically added in timing-ordered steps (a type-1 USFFT's
    spreading, F-X decon's overlapping windows, the wave-packet adjoint): runs agree to
    rounding (relative to the largest value), not bit for bit."""
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


# ---- F-X decon ------------------------------------------------------------------------------

def dipping_events(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Ricker events dipping across the traces, with noise: (..., n_samples) float32."""
    rng = np.random.default_rng(seed)
    *lead, n = shape
    grid = np.meshgrid(*[np.arange(k) for k in lead], indexing="ij")
    t = np.arange(n)
    out = np.zeros(shape)
    for t0, dip in ((0.3 * n, 0.8), (0.6 * n, -1.5)):
        a = (0.15 * (t - t0 - dip * sum(grid)[..., None])) ** 2
        out += (1 - 2 * a) * np.exp(-a)
    return (out + 0.3 * rng.standard_normal(shape)).astype(np.float32)


@pytest.mark.parametrize("shape", [(40, 500), (12, 14, 300)])
def test_fxdecon_on_gpu_arrays_equals_the_host_call(xp, gpu, shape):
    x = dipping_events(shape, 5)
    fx = seisgpu.FxDecon(gpu, shape)
    want = fx.filter(x)
    assert np.abs(want - x).max() > 0.01 * np.abs(x).max()  # the filter did something
    d = xp.gpu(x)
    # Overlapping windows add their predictions atomically: equal to rounding.
    close(fx.filter(d), want, xp, 1e-5)
    out = xp.gpu(np.zeros_like(x))
    assert fx.filter(d, out=out) is out
    close(out, want, xp, 1e-5)
    assert fx.filter(d, out=d) is d  # in place
    close(d, want, xp, 1e-5)
    # float64: the GPU filter runs float32 only.
    with pytest.raises(seisgpu.UnsupportedError,
                       match=f"sg_fxdecon_execute_{len(shape)}d_device_f64"):
        fx.filter(xp.gpu(x.astype(np.float64)))


# ---- wave packets ---------------------------------------------------------------------------

def section(dtype: Any) -> np.ndarray:
    """Dipping events and a little texture, (48 traces, 64 samples)."""
    x, t = np.meshgrid(np.arange(48.0), np.arange(64.0), indexing="ij")
    a = 0.3 * (t - 20.0 - 0.4 * x)
    return (np.exp(-a * a) * (1 - 2 * a * a) + 0.05 * np.sin(0.7 * t + 1.3 * x)).astype(dtype)


def thresholds_agree(got: np.ndarray, want: np.ndarray, t: Any, exact: bool) -> None:
    """Bit for bit (float32); float64 magnitudes are the GPU's hypot: each coefficient
    within 1e-14 of the host's, and one zeroed by one side only where |c| is within
    1e-14 of the threshold (`t`: one value, or one per coefficient)."""
    if exact:
        assert np.array_equal(bits(got), bits(want))
        return
    m_got, m_want = np.abs(got), np.abs(want)
    t = np.broadcast_to(np.asarray(t, np.float64), got.shape)
    one_sided = (m_got == 0) != (m_want == 0)
    assert np.all(np.abs(np.maximum(m_got, m_want)[one_sided] - t[one_sided])
                  <= 1e-14 * t[one_sided])
    both = ~one_sided
    assert np.all(np.abs(got[both] - want[both]) <= 1e-14 * np.maximum(m_want[both], t[both]))


WAVEPACKET_CASES = [  # (dtype, the layout's USFFT tolerance, rounding of atomic sums)
    (np.float32, 1e-6, 1e-5),
    (np.float64, 1e-12, 1e-12),
]


@pytest.mark.parametrize("dtype,tolerance,rounding", WAVEPACKET_CASES)
def test_wavepackets_on_gpu_arrays_equal_the_host_calls(xp, gpu, dtype, tolerance, rounding):
    wp = seisgpu.WavepacketLayout(gpu, (48, 64), dtype, directions=12, tolerance=tolerance)
    x = section(dtype)
    c = wp.forward(x)
    same_bits(wp.forward(xp.gpu(x)), c, xp)
    out = xp.gpu(np.zeros_like(c))
    assert wp.forward(xp.gpu(x), out=out) is out
    same_bits(out, c, xp)
    # C*: its non-uniform FFT spreads with atomic sums.
    close(wp.adjoint(xp.gpu(c)), wp.adjoint(c), xp, rounding)
    t = 0.05 * float(np.abs(c).max())
    for mode in ("hard", "soft"):
        want = wp.threshold(c, t, mode=mode)
        g = xp.gpu(c)
        assert wp.threshold(g, t, mode=mode, out=g) is g  # in place
        thresholds_agree(xp.host(g), want, t, dtype == np.float32)
        copy = wp.threshold(xp.gpu(c), t, mode=mode)  # a copy made by the library
        assert xp.native(copy)
        thresholds_agree(xp.host(copy), want, t, dtype == np.float32)
    # The inverse waits: its outputs are there when it returns.
    want_inv = wp.inverse(c, tolerance=1e-4, max_iterations=6)
    got_inv = wp.inverse(xp.gpu(c), tolerance=1e-4, max_iterations=6)
    close(got_inv.data, want_inv.data, xp, 100 * rounding)
    assert got_inv.iterations == want_inv.iterations
    assert abs(got_inv.residual - want_inv.residual) <= 1e-3 * abs(want_inv.residual)
    # Keep-largest and the noise estimate bit for bit; the noise threshold as the threshold.
    g = xp.gpu(c)
    assert wp.keep_largest(g, 200, out=g) is g
    same_bits(g, wp.keep_largest(c, 200), xp)
    sigma = wp.estimate_noise(c)
    got_sigma = wp.estimate_noise(xp.gpu(c))
    if dtype == np.float32:
        assert got_sigma == sigma
    else:
        assert abs(got_sigma - sigma) <= 1e-14 * sigma
    per_box = np.concatenate([np.full(b.size, 2.5 * sigma * nb)
                              for b, nb in zip(wp.boxes, wp.packet_norms())])
    for mode in ("hard", "soft"):
        want = wp.threshold_noise(c, 2.5, sigma, mode=mode)
        got = wp.threshold_noise(xp.gpu(c), 2.5, sigma, mode=mode)
        assert xp.native(got)
        thresholds_agree(xp.host(got), want, per_box, dtype == np.float32)
    g = xp.gpu(c)
    with pytest.raises(seisgpu.UnsupportedError, match="sg_wavepacket_threshold_device"):
        wp.threshold(g, 1.0, kind="sigma", out=g)
    same_bits(g, c, xp)  # nothing written


POCS_ROUNDING = {np.float32: 1e-3, np.float64: 1e-9}  # relative to the largest sample


@pytest.mark.parametrize("dtype,tolerance,rounding", WAVEPACKET_CASES)
def test_wavepacket_pocs_and_sparse_on_gpu_arrays_equal_the_host_calls(xp, gpu, dtype,
                                                                        tolerance, rounding):
    """They run the host algorithms between one read and one write of the GPU arrays (the
    calls wait): equal to the host calls to rounding."""
    wp = seisgpu.WavepacketLayout(gpu, (48, 64), dtype, directions=12, tolerance=tolerance)
    x = section(dtype)
    live = np.arange(48) % 4 != 2
    x[~live] = np.nan  # not read
    want = wp.pocs(x, live, iterations=5)
    got = wp.pocs(xp.gpu(x), live, iterations=5)
    close(got, want, xp, POCS_ROUNDING[dtype])
    assert np.array_equal(bits(xp.host(got)[live]), bits(x[live]))  # recorded traces kept
    g = xp.gpu(x)
    assert wp.pocs(g, xp.gpu(live), iterations=5, out=g) is g  # in place, a GPU mask
    close(g, want, xp, POCS_ROUNDING[dtype])
    s = wp.n_coefficients // 50
    want_s = wp.sparse_approximation(section(dtype), s, stages=3, refit_iterations=4)
    got_s = wp.sparse_approximation(xp.gpu(section(dtype)), s, stages=3, refit_iterations=4)
    assert xp.native(got_s.coeffs)
    assert got_s.kept == want_s.kept == s
    assert abs(got_s.residual - want_s.residual) <= 1e-2 * want_s.residual
    assert np.count_nonzero(xp.host(got_s.coeffs)) == s


@pytest.mark.parametrize("dtype,tolerance,rounding", WAVEPACKET_CASES)
def test_wavepacket_volumes_on_gpu_arrays_equal_the_host_calls(xp, gpu, dtype, tolerance,
                                                               rounding):
    """C bit for bit, C* and the inverse to rounding (on one context C and C* run on the
    device without waiting; the inverse waits)."""
    v = seisgpu.WavepacketVolume(gpu, (70, 100), (48, 64), dtype, directions=12,
                                 tolerance=tolerance)
    x, t = np.meshgrid(np.arange(70.0), np.arange(100.0), indexing="ij")
    a = 0.3 * (t - 20.0 - 0.4 * x)
    data = (np.exp(-a * a) * (1 - 2 * a * a) + 0.05 * np.sin(0.7 * t + 1.3 * x)).astype(dtype)
    c = v.forward(data)
    same_bits(v.forward(xp.gpu(data)), c, xp)
    close(v.adjoint(xp.gpu(c)), v.adjoint(c), xp, rounding)
    want = v.inverse(c, tolerance=1e-4, max_iterations=4)
    got = v.inverse(xp.gpu(c), tolerance=1e-4, max_iterations=4)
    close(got.data, want.data, xp, 100 * rounding)
    assert got.iterations == want.iterations


# ---- cross-correlation ----------------------------------------------------------------------

def station_days(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three stations recording one source with delays, and a gap in station 1."""
    rng = np.random.default_rng(seed)
    source = rng.standard_normal(3000)
    days = np.stack([np.roll(source, d)[:2000] + 0.5 * rng.standard_normal(2000)
                     for d in (0, 7, -12)]).astype(np.float32)
    valid = np.ones(days.shape, bool)
    valid[1, 500:640] = False
    return days, valid


def test_xcorr_on_gpu_arrays_equals_the_host_calls(xp, gpu):
    plan = seisgpu.Xcorr(gpu, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=256.0,
                         step=128.0, maxlag=20.0)
    days, valid = station_days(6)
    host = plan.preprocess(days, valid)
    spectra = plan.preprocess(xp.gpu(days), xp.gpu(valid))  # waits
    assert np.array_equal(bits(spectra.values), bits(host.values))
    assert np.array_equal(spectra.kept, host.kept) and not host.kept.all()
    want = plan.correlate(host)
    got = plan.correlate(spectra)  # a new array of the station-days' library
    same_bits(got.stacks, want.stacks, xp)
    assert np.array_equal(got.n_windows, want.n_windows) and want.n_windows.min() > 0
    # The host spectra's stacks into a GPU out=; and the whole run from GPU arrays.
    out = xp.gpu(np.zeros_like(want.stacks))
    assert plan.correlate(host, out=out).stacks is out
    same_bits(out, want.stacks, xp)
    same_bits(plan.run(xp.gpu(days)).stacks, plan.run(days).stacks, xp)


# ---- the EM search ------------------------------------------------------------------------

def em_problem(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, m = 12, 6
    a = rng.standard_normal((n, m))
    sigma0, f0 = np.full(m, 0.5), rng.standard_normal(n) + 3
    truth = sigma0.copy()
    truth[[1, 4]] = 0.62, 0.41
    return dict(a=a, sigma0=sigma0, f0=f0, f_exp=f0 + a @ (truth - sigma0),
                delta=np.full(n, 0.04))


def same_summary(got: Any, want: Any) -> None:
    assert (got.total, got.count, got.best_index, got.more_models) == \
        (want.total, want.count, want.best_index, want.more_models)
    assert want.count > 0
    for name in ("best_model", "value_min", "value_max", "model_indices", "model_values"):
        assert np.array_equal(bits(getattr(got, name)), bits(getattr(want, name))), name
    assert np.array_equal(bits(np.float64(got.best_misfit)), bits(np.float64(want.best_misfit)))


@pytest.mark.parametrize("mode", ["fast", "direct"])
def test_emlog_on_gpu_arrays_equals_the_host_calls(xp, gpu, mode):
    from seisgpu.emlog import Axis

    p = em_problem(7)
    host = seisgpu.EmSearch(gpu, **p, searched=[1, 4])
    on_gpu = {k: xp.gpu(v) for k, v in p.items()}
    on_gpu["a"] = xp.gpu(np.ascontiguousarray(p["a"].T)).T  # Fortran order, read in place
    plan = seisgpu.EmSearch(gpu, **on_gpu, searched=[1, 4])  # waits
    for got, want in zip(plan.analytic(), host.analytic()):
        assert np.array_equal(bits(np.asarray(got, np.float64)),
                              bits(np.asarray(want, np.float64)))
    axes = [Axis.linear(0.3, 0.9, 61), Axis.log(0.2, 0.8, 47)]
    kw = dict(pairs=[(0, 1)], mode=mode, max_models=10)
    want, got = host.search(axes, **kw), plan.search(axes, **kw)  # the search waits
    same_summary(got, want)
    for k in range(2):
        m = got.marginal(k)
        assert xp.native(m)
        assert np.array_equal(xp.host(m), want.marginal(k))
    pair = got.pair((0, 1))
    assert xp.native(pair) and tuple(pair.shape) == (61, 47)
    assert np.array_equal(xp.host(pair), want.pair(0))


# ---- DLPack only ----------------------------------------------------------------------------

class DlpackOnly:
    """A PyTorch tensor seen through DLPack only: no __cuda_array_interface__. `legacy`:
    exported by torch.utils.dlpack.to_dlpack (a pre-1.0 capsule, no stream argument)."""

    def __init__(self, tensor: Any, legacy: bool = False) -> None:
        self.tensor, self.legacy = tensor, legacy
        self.streams: list = []

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        if self.legacy:
            import torch.utils.dlpack

            capsule = torch.utils.dlpack.to_dlpack(self.tensor)
        else:
            # A PyTorch without DLPack 1.0 refuses max_version: seisgpu asks again without.
            capsule = self.tensor.__dlpack__(stream=stream, **kwargs)
        self.streams.append(stream)
        return capsule

    def __dlpack_device__(self) -> Any:
        return self.tensor.__dlpack_device__()


@pytest.fixture
def torch_lib() -> Lib:
    mod = pytest.importorskip("torch")
    if not _has_gpu("torch", mod):
        pytest.skip("torch sees no GPU")
    return Lib("torch", mod)


@pytest.mark.parametrize("legacy", [False, True])
def test_dlpack_only_arrays_equal_the_host_calls(torch_lib, gpu, legacy):
    xp = torch_lib

    def wrap(a: np.ndarray) -> DlpackOnly:
        return DlpackOnly(xp.gpu(a), legacy)

    x = np.random.default_rng(8).standard_normal((4, 256)).astype(np.float32)
    dwt = seisgpu.Dwt(gpu, 256)
    src, dst = wrap(x), wrap(np.zeros_like(x))
    assert dwt.forward(src, out=dst) is dst
    gpu.synchronize()
    same_bits(dst.tensor, dwt.forward(x), xp)
    assert src.streams == [1] and dst.streams == [1]  # the legacy default stream
    with pytest.raises(seisgpu.ArgumentTypeError, match=r"\(DLPack\): pass out="):
        dwt.forward(wrap(x))
    # F-X decon in place, wave packets, cross-correlation, the EM plan.
    section_ = dipping_events((40, 500), 9)
    fx = seisgpu.FxDecon(gpu, section_.shape)
    d = wrap(section_)
    fx.filter(d, out=d)
    gpu.synchronize()
    close(d.tensor, fx.filter(section_), xp, 1e-5)
    wp = seisgpu.WavepacketLayout(gpu, (48, 64), np.float32, directions=12, tolerance=1e-6)
    c = wrap(np.zeros(wp.n_coefficients, np.complex64))
    wp.forward(wrap(section(np.float32)), out=c)
    gpu.synchronize()
    same_bits(c.tensor, wp.forward(section(np.float32)), xp)
    plan = seisgpu.Xcorr(gpu, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=256.0,
                         step=128.0, maxlag=20.0)
    days, valid = station_days(10)
    want = plan.correlate(plan.preprocess(days, valid))
    stacks = wrap(np.zeros_like(want.stacks))
    plan.correlate(plan.preprocess(wrap(days), wrap(valid)), out=stacks)
    gpu.synchronize()
    same_bits(stacks.tensor, want.stacks, xp)
    p = em_problem(11)
    em = seisgpu.EmSearch(gpu, **{k: wrap(v) for k, v in p.items()}, searched=[0, 3])
    host = seisgpu.EmSearch(gpu, **p, searched=[0, 3])
    assert np.array_equal(bits(em.analytic().sigma_star), bits(host.analytic().sigma_star))


def test_dlpack_only_arrays_use_the_contexts_stream(torch_lib, gpu):
    xp = torch_lib
    x = np.random.default_rng(12).standard_normal((64, 1024)).astype(np.float32)
    dwt = seisgpu.Dwt(gpu, 1024)
    want = dwt.denoise(x)
    stream = xp.new_stream()
    try:
        gpu.set_stream(stream)
        with xp.using(stream):
            src = DlpackOnly(xp.gpu(x) * 1)  # made on the stream: the call must wait for it
            dst = DlpackOnly(xp.mod.empty_like(src.tensor))
            dwt.denoise(src, out=dst)
        assert src.streams == [xp.handle(stream)] and gpu._stream == xp.handle(stream)
        stream.synchronize()
        same_bits(dst.tensor, want, xp)
    finally:
        gpu.set_stream(0)


def test_a_context_on_the_runtimes_own_context():
    """The CUDA runtime's context as CuPy holds it, given by its handle: the library runs
    there, recognises it as the device's primary context, and a DWT on CuPy arrays equals
    the host call."""
    cp = pytest.importorskip("cupy")
    if not _has_gpu("cupy", cp):
        pytest.skip("cupy sees no GPU")
    cp.cuda.Device(0).use()
    cp.zeros(1)  # the runtime's context is made and current
    handle = int(cp.cuda.driver.ctxGetCurrent())
    with seisgpu.Context.on_cuda_context(handle) as ctx:
        assert "primary context, given by the application" in ctx.description
        x = np.random.default_rng(13).standard_normal((16, 512)).astype(np.float32)
        dwt = seisgpu.Dwt(ctx, 512)
        want = dwt.denoise(x)
        got = dwt.denoise(cp.asarray(x))
        ctx.synchronize()
        assert np.array_equal(bits(cp.asnumpy(got)), bits(want))
