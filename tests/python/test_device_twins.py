"""F-X decon, cross-correlation, the EM search and wave packets on GPU arrays, on the CPU: each
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
from seisgpu.emlog import Axis


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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wavepacket_coefficient_operations_on_gpu_arrays(cpu, twin, monkeypatch, dtype):
    wp = seisgpu.WavepacketLayout(cpu, (16, 32), dtype)
    t = "f32" if dtype == np.float32 else "f64"
    c0 = wp.forward(np.random.default_rng(4).standard_normal((16, 32)).astype(dtype))
    # Keep-largest in place: the coefficients' own address and s.
    want = wp.keep_largest(c0, 40)
    c = c0.copy()
    g = FakeGpuArray(c)
    assert wp.keep_largest(g, 40, out=g) is g
    assert same_bits(c, want) and np.count_nonzero(c) == 40
    assert twin.only(f"sg_wavepacket_keep_largest_device_{t}")[1][1:] == (c.ctypes.data, 40)
    # The noise threshold on a copy made by the coefficients' library.
    sigma = wp.estimate_noise(c0)
    want = wp.threshold_noise(c0, 2.5, sigma, mode="soft")
    made = fake_cupy(monkeypatch)
    c = c0.copy()
    got = wp.threshold_noise(CupyArray(c), 2.5, sigma, mode="soft")
    assert len(made) == 1 and got is made[0] and same_bits(got.host, want)
    assert np.array_equal(c, c0)
    _, args = twin.only(f"sg_wavepacket_threshold_noise_device_{t}")
    assert args[1:] == (got.host.ctypes.data, 1, 2.5, sigma)
    # The estimate: σ (a host value) of the coefficients where they are.
    assert wp.estimate_noise(FakeGpuArray(c)) == sigma > 0
    _, args = twin.only(f"sg_wavepacket_estimate_noise_device_{t}")
    assert args[1] == c.ctypes.data
    # Refused before any call: another library's out=, a copy seisgpu cannot make, a
    # negative s, the wrong dtype.
    n = len(twin.calls)
    with pytest.raises(seisgpu.InvalidArgumentError, match="out=coeffs"):
        wp.keep_largest(CupyArray(c), 3, out=FakeGpuArray(c.copy()))
    with pytest.raises(seisgpu.ArgumentTypeError, match="pass out=coeffs to compress"):
        wp.keep_largest(FakeGpuArray(c), 3)
    with pytest.raises(seisgpu.ArgumentTypeError, match="pass out=coeffs to threshold"):
        wp.threshold_noise(FakeGpuArray(c), 2.5, sigma)
    with pytest.raises(seisgpu.InvalidArgumentError):
        wp.keep_largest(FakeGpuArray(c), -1, out=FakeGpuArray(c))
    other = np.complex128 if dtype == np.float32 else np.complex64
    with pytest.raises(seisgpu.ArgumentTypeError, match="coeffs: dtype"):
        wp.estimate_noise(FakeGpuArray(c.astype(other)))
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


# ---- cross-correlation ----------------------------------------------------------------------

def xcorr_plan(ctx) -> seisgpu.Xcorr:
    return seisgpu.Xcorr(ctx, sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=256.0,
                         step=128.0, maxlag=20.0)


def test_xcorr_on_gpu_station_days(cpu, twin, monkeypatch):
    plan = xcorr_plan(cpu)
    rng = np.random.default_rng(4)
    days = rng.standard_normal((3, 1500)).astype(np.float32)
    valid = np.ones(days.shape, bool)
    valid[1, 300:420] = False  # a gap: the windows it touches are rejected
    host = plan.preprocess(days, valid)
    spectra = plan.preprocess(FakeGpuArray(days, stream=0x42), FakeGpuArray(valid))
    stream, args = twin.only("sg_xcorr_preprocess_device_f32")
    assert stream == 0x42
    assert args[1:6] == (days.ctypes.data, 3, 1500, 1500, valid.ctypes.data)
    assert same_bits(spectra.values, host.values)
    assert np.array_equal(spectra.kept, host.kept) and not spectra.kept.all()
    want = plan.correlate(host)
    # Spectra of GPU arrays of a library seisgpu cannot allocate in: out= is needed.
    with pytest.raises(seisgpu.ArgumentTypeError, match="days: .* pass out="):
        plan.correlate(spectra)
    stacks = sentinel(want.stacks.shape, np.float32)
    got = plan.correlate(spectra, out=FakeGpuArray(stacks))
    assert got.stacks.host is stacks and same_bits(stacks, want.stacks)
    assert np.array_equal(got.n_windows, want.n_windows) and got.n_windows.sum() > 0
    assert np.array_equal(got.pairs, want.pairs) and np.array_equal(got.lags, want.lags)
    stream, args = twin.only("sg_xcorr_correlate_device_f32")
    assert stream == 0 and args[2:9] == (1, 0, 3, 0, 3, stacks.ctypes.data, plan.n_lags)
    # CuPy station-days: the stacks are a new CuPy array, on CuPy's current stream; no gaps
    # is address 0.
    made = fake_cupy(monkeypatch)
    result = plan.run(CupyArray(days))
    assert result.stacks is made[-1] and same_bits(result.stacks.host, plan.run(days).stacks)
    assert [c[1] for c in twin.calls[-2:]] == [CUPY_STREAM, CUPY_STREAM]
    assert twin.calls[-2][2][5] == 0
    # A day of NumPy station-days among them: the host call, NumPy stacks.
    n = len(twin.calls)
    mixed = plan.correlate([spectra, host])
    assert isinstance(mixed.stacks, np.ndarray) and len(twin.calls) == n
    assert same_bits(mixed.stacks, plan.correlate([host, host]).stacks)


def test_xcorr_refusals_reach_no_device_call(cpu, twin):
    plan = xcorr_plan(cpu)
    days = np.zeros((3, 1500), np.float32)
    with pytest.raises(seisgpu.ArgumentTypeError, match="days: dtype float64"):
        plan.preprocess(FakeGpuArray(days.astype(np.float64)))
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"days: shape \(4500,\)"):
        plan.preprocess(FakeGpuArray(days.ravel()))
    with pytest.raises(seisgpu.InvalidArgumentError, match="days: .* not C-contiguous"):
        plan.preprocess(FakeGpuArray(np.zeros((3, 3000), np.float32)[:, ::2]))
    with pytest.raises(seisgpu.ArgumentTypeError, match="valid: dtype int32"):
        plan.preprocess(FakeGpuArray(days), FakeGpuArray(np.ones(days.shape, np.int32)))
    with pytest.raises(seisgpu.InvalidArgumentError, match="valid: shape"):
        plan.preprocess(FakeGpuArray(days), FakeGpuArray(np.ones((3, 1499), bool)))
    with pytest.raises(seisgpu.InvalidArgumentError, match="valid is in host memory"):
        plan.preprocess(FakeGpuArray(days), np.ones(days.shape, bool))
    with plan.preprocess(days) as spectra:
        with pytest.raises(seisgpu.InvalidArgumentError, match=r"out: shape \(2, 41\)"):
            plan.correlate(spectra, out=FakeGpuArray(np.zeros((2, 41), np.float32)))
    assert twin.calls == []


# ---- the EM search --------------------------------------------------------------------------

def em_problem(seed: int = 9) -> dict:
    rng = np.random.default_rng(seed)
    n, m = 8, 5
    a = rng.standard_normal((n, m))
    sigma0, f0 = np.full(m, 0.5), rng.standard_normal(n) + 3
    truth = sigma0.copy()
    truth[[0, 2]] = 0.6, 0.4
    return dict(a=a, sigma0=sigma0, f0=f0, f_exp=f0 + a @ (truth - sigma0),
                delta=np.full(n, 0.05))


AXES = [Axis.linear(0.3, 0.9, 13), Axis.log(0.2, 0.8, 11)]


@pytest.mark.parametrize("order", ["C", "F"])
def test_emlog_plan_and_search_of_gpu_arrays(cpu, twin, monkeypatch, order):
    p = em_problem()
    p["a"] = np.asarray(p["a"], order=order)
    host = seisgpu.EmSearch(cpu, **p, searched=[0, 2])
    made = fake_cupy(monkeypatch)
    plan = seisgpu.EmSearch(cpu, **{k: CupyArray(v) for k, v in p.items()}, searched=[0, 2])
    stream, args = twin.only("sg_emlog_plan_create_device")
    rows, cols = (5, 1) if order == "C" else (1, 8)
    assert stream == CUPY_STREAM
    assert args[1:10] == (8, 5, p["a"].ctypes.data, rows, cols, p["sigma0"].ctypes.data,
                          p["f0"].ctypes.data, p["f_exp"].ctypes.data, p["delta"].ctypes.data)
    assert args[10] == 2
    for got, want in zip(plan.analytic(), host.analytic()):
        assert np.array_equal(got, want)
    kw = dict(pairs=[(0, 1)], max_models=4)
    want, result = host.search(AXES, **kw), plan.search(AXES, **kw)
    assert twin.only("sg_emlog_search_device")[0] == CUPY_STREAM
    assert (result.total, result.count, result.best_index, result.best_misfit) == \
        (want.total, want.count, want.best_index, want.best_misfit) and want.count > 0
    assert np.array_equal(result.model_indices, want.model_indices)
    assert isinstance(result.model_values, np.ndarray)  # the summary stays on the host
    # The marginals: arrays of the plan's library, i_a fastest for a pair.
    m0 = result.marginal(0)
    assert m0 is made[-1] and np.array_equal(m0.host, want.marginal(0))
    stream, args = twin.only("sg_emlog_result_marginal_device")
    assert stream == CUPY_STREAM and args[1:] == (0, m0.host.ctypes.data, 13)
    pair = result.pair((0, 1))
    assert np.array_equal(pair.host, want.pair(0)) and pair.host.strides == (8, 8 * 13)
    assert twin.only("sg_emlog_result_pair_device")[1][1:] == (0, pair.host.ctypes.data, 143)
    assert want.pair(0).sum() == want.count


def test_emlog_results_into_out(cpu, twin):
    p = em_problem()
    plan = seisgpu.EmSearch(cpu, **{k: FakeGpuArray(v) for k, v in p.items()}, searched=[0, 2])
    result = plan.search(AXES, pairs=[(0, 1)])
    want = seisgpu.EmSearch(cpu, **p, searched=[0, 2]).search(AXES, pairs=[(0, 1)])
    with pytest.raises(seisgpu.ArgumentTypeError, match="a: .* pass out="):
        result.marginal(1)  # a library seisgpu cannot allocate in
    out = sentinel(11, np.uint64)
    assert result.marginal(1, out=FakeGpuArray(out)).host is out
    assert np.array_equal(out, want.marginal(1))
    with pytest.raises(seisgpu.InvalidArgumentError,
                       match=r"out: strides \(88, 8\) .* writes strides \(8, 104\)"):
        result.pair(0, out=FakeGpuArray(sentinel((13, 11), np.uint64)))  # C order
    pair = sentinel((11, 13), np.uint64)
    result.pair(0, out=FakeGpuArray(pair.T))
    assert np.array_equal(pair.T, want.pair(0))
    # The host result's marginals into NumPy out=, the same layouts.
    host_out = sentinel(11, np.uint64)
    assert want.marginal(1, out=host_out) is host_out
    assert np.array_equal(host_out, out)
    host_pair = sentinel((11, 13), np.uint64)
    assert want.pair(0, out=host_pair.T).base is host_pair
    assert np.array_equal(host_pair, pair)
    with pytest.raises(seisgpu.InvalidArgumentError, match="numpy.empty"):
        want.pair(0, out=np.zeros((13, 11), np.uint64))


def test_emlog_refusals_reach_no_device_call(cpu, twin):
    p = em_problem()
    gpu = {k: FakeGpuArray(v) for k, v in p.items()}
    with pytest.raises(seisgpu.ArgumentTypeError, match="a: dtype float32"):
        seisgpu.EmSearch(cpu, **{**gpu, "a": FakeGpuArray(p["a"].astype(np.float32))},
                         searched=[0])
    broadcast = np.broadcast_to(p["a"][:1], p["a"].shape)  # row stride 0
    with pytest.raises(seisgpu.InvalidArgumentError, match="strides must be positive"):
        seisgpu.EmSearch(cpu, **{**gpu, "a": FakeGpuArray(broadcast)}, searched=[0])
    with pytest.raises(seisgpu.InvalidArgumentError, match=r"f0: shape \(7,\)"):
        seisgpu.EmSearch(cpu, **{**gpu, "f0": FakeGpuArray(p["f0"][:-1])}, searched=[0])
    with pytest.raises(seisgpu.InvalidArgumentError, match="delta is in host memory"):
        seisgpu.EmSearch(cpu, **{**gpu, "delta": p["delta"]}, searched=[0])
    with pytest.raises(seisgpu.InvalidArgumentError, match="searched: no column"):
        seisgpu.EmSearch(cpu, **gpu, searched=[])
    assert twin.calls == []
