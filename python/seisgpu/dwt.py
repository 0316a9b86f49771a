"""The discrete wavelet transform and wavelet denoising of traces (GSL's wavelets).

Coefficients are in GSL's layout: after L levels of an n-sample trace,
``[a_L | d_L | d_(L-1) | … | d_1]``, level j's details (j = 1 the finest) at offset n/2^j.
This is PyWavelets' ``wavedec`` order (``[cA_L, cD_L, …, cD_1]``, ``mode="periodization"``);
``Dwt.split`` cuts an array into those pieces. See docs/python.md for the mapping of GSL's
wavelets to PyWavelets' names and the sign and shift conventions.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Callable, Iterable

import numpy as np

from . import _arrays, _device, _lib
from ._errors import InvalidArgumentError, check
from ._handle import Plan
from ._options import choice
from .context import Context, require

WAVELETS = {"daubechies": 1, "daubechies_centered": 2, "haar": 3, "haar_centered": 4,
            "bspline": 5, "bspline_centered": 6}
_MODES = {"soft": 0, "hard": 1}
_NOISE = {"finest_level": 0, "per_level": 1}


def run_traces(x: np.ndarray, n_samples: int, out: Any,
               run: Callable[[np.ndarray, np.ndarray, int, int], None]) -> np.ndarray:
    """Runs `run(input, output, n_traces, trace_stride)` over the traces of `x`
    (..., n_samples) into a new array of `x`'s shape, or into `out`.

    A strided batch of traces is used as it is when `out` has the same layout; with a new
    output it is copied into the output, which is then transformed in place (one copy, no
    temporary). `out` is not written unless the call succeeds.
    """
    result, callers = _arrays.output(out, x.shape, x.dtype)
    n_traces = x.size // n_samples if n_samples else 0
    if n_traces == 0:
        return result
    stride = _arrays.trace_stride(x, n_samples)
    if stride == n_samples:
        run(x, result, n_traces, n_samples)
    elif not callers:
        np.copyto(result, x)
        run(result, result, n_traces, n_samples)
    else:
        run(_arrays.contiguous(x), result, n_traces, n_samples)
    return result


def _checked_traces(x: Any, name: str, n_samples: int) -> np.ndarray:
    a = _arrays.real(x, name)
    _check_trace_shape(a.shape, name, n_samples)
    return a


def _check_trace_shape(shape: tuple[int, ...], name: str, n_samples: int) -> None:
    if len(shape) == 0 or shape[-1] != n_samples:
        got = "a scalar" if len(shape) == 0 else f"shape {shape}"
        raise InvalidArgumentError(
            f"{name}: {got}; expected traces of {n_samples} samples along the last axis "
            f"(shape (..., {n_samples}))")


def _device_traces(call: _device.DeviceCall, name: str, n_samples: int
                   ) -> tuple[_device.DeviceArray, Any, _device.DeviceArray, int]:
    """A device call's C-contiguous traces, its output (`out` or a new array of the
    traces' library) and the trace count."""
    a = call.input(name, _arrays.REAL)
    _check_trace_shape(a.shape, name, n_samples)
    obj, o = call.output(a, a.shape, a.dtype)
    return a, obj, o, (a.size // n_samples if n_samples else 0)


class Dwt(Plan):
    """A DWT plan: one wavelet, one trace length, on one context.

    Parameters
    ----------
    ctx:
        The context.
    n_samples:
        Samples per trace: a power of two ≥ 2 (the transform is periodic).
    wavelet, member:
        GSL's family and member: ``"daubechies"`` 4, 6, …, 20 (member = taps; GSL's
        ``daubechies`` 8 is PyWavelets' ``db4``), ``"haar"`` 2, ``"bspline"`` 103, 105,
        202, 204, 206, 208, 301, 303, 305, 307, 309, and the ``*_centered`` variants.

    Traces are arrays of shape (..., n_samples), float32 or float64 (the dtype chooses
    the precision); results keep the input's shape and dtype. C-contiguous traces in GPU
    memory (CuPy, PyTorch, DLPack; ``out=`` too) are transformed where they are, on their
    stream, without waiting; the results are arrays of the same library (docs/python.md).
    """

    _destroy = "sg_dwt_plan_destroy"
    _workspace = "sg_dwt_plan_workspace_bytes"

    def __init__(self, ctx: Context, n_samples: int, wavelet: str = "daubechies",
                 member: int = 8) -> None:
        super().__init__()
        self.n_samples = _arrays.count(n_samples, "n_samples")
        self.wavelet, self.member = wavelet, _arrays.count(member, "member")
        family = choice(wavelet, "wavelet", WAVELETS)
        self._uses_handles(require(ctx))
        check("sg_dwt_plan_create", _lib.lib.sg_dwt_plan_create(
            ctx._ptr(), family, self.member, self.n_samples, ctypes.byref(self._h)))
        self.ctx = ctx

    def reserve(self, n_traces: int) -> None:
        """Makes room on the device for calls of up to ``n_traces`` traces on GPU arrays
        (``sg_dwt_plan_reserve``), so that they allocate nothing: call it before capturing
        them into a CUDA graph. Does nothing on a CPU context."""
        n = _arrays.count(n_traces, "n_traces")
        check("sg_dwt_plan_reserve", _lib.lib.sg_dwt_plan_reserve(self._ptr(), n))

    @property
    def max_levels(self) -> int:
        """log2(n_samples): the depth of a full transform."""
        return int(math.log2(self.n_samples))

    def _levels(self, levels: int) -> int:
        lv = _arrays.count(levels, "levels")
        if lv > self.max_levels:
            raise InvalidArgumentError(
                f"levels = {lv}: a {self.n_samples}-sample trace has at most "
                f"{self.max_levels} levels (0 means all)")
        return lv

    def _execute(self, x: Any, name: str, direction: int, levels: int, out: Any) -> Any:
        on_gpu = _device.gather(**{name: x, "out": out})
        if on_gpu is not None:
            return self._execute_device(on_gpu, name, direction, self._levels(levels))
        a = _checked_traces(x, name, self.n_samples)
        lv = self._levels(levels)
        fn = f"sg_dwt_execute_{_arrays.SUFFIX[a.dtype]}"
        h = self._ptr()

        def run(i: np.ndarray, o: np.ndarray, n: int, stride: int) -> None:
            check(fn, getattr(_lib.lib, fn)(h, direction, lv, i.ctypes.data, o.ctypes.data,
                                            n, stride))

        return run_traces(a, self.n_samples, out, run)

    def _execute_device(self, arrays: _device.Gathered, name: str, direction: int,
                        lv: int) -> Any:
        with _device.DeviceCall(self.ctx, arrays) as call:
            a, result, o, n = _device_traces(call, name, self.n_samples)
            if n:
                call.run(f"sg_dwt_execute_device_{_arrays.SUFFIX[a.dtype]}", self._ptr(),
                         direction, lv, a.ptr, o.ptr, n, self.n_samples)
        return result

    def forward(self, traces: Any, *, levels: int = 0, out: Any = None) -> np.ndarray:
        """The forward transform of every trace (GSL's ``gsl_wavelet_transform_forward``):
        coefficients ``[a_L | d_L | … | d_1]`` along the last axis. `levels`: the depth,
        0 for all (log2 n_samples)."""
        return self._execute(traces, "traces", 1, levels, out)

    def inverse(self, coeffs: Any, *, levels: int = 0, out: Any = None) -> np.ndarray:
        """The inverse transform (GSL's ``gsl_wavelet_transform_inverse``) of coefficients
        laid out as :meth:`forward` writes them, with the same `levels`."""
        return self._execute(coeffs, "coeffs", -1, levels, out)

    def denoise(self, traces: Any, *, threshold: str | float = "universal",
                mode: str = "soft", noise: str = "finest_level", levels: int = 0,
                thresholded_levels: Iterable[int] | None = None,
                return_thresholds: bool = False, out: Any = None) -> Any:
        """Wavelet shrinkage of every trace: forward transform, thresholding of the chosen
        detail levels, inverse transform, in one call.

        Parameters
        ----------
        threshold:
            ``"universal"``: σ·√(2 ln n), n the trace length (VisuShrink); or a number,
            the same threshold (in the traces' units) for every thresholded level.
        mode:
            ``"soft"`` (sign(d)·max(|d| − λ, 0)) or ``"hard"`` (d where |d| > λ, else 0).
        noise:
            How σ is estimated, as median(|d|)/0.6745: ``"finest_level"`` (from level 1,
            for all levels) or ``"per_level"`` (each level from its own coefficients).
        levels:
            Transform depth, 0 for all (log2 n_samples).
        thresholded_levels:
            The detail levels thresholded (1 = finest); None for all. On band-limited
            seismic data, keep to the levels above the signal band
            (:func:`levels_above` picks them from the sample interval).
        return_thresholds:
            Also return the threshold applied to each level of each trace, an array of
            shape (..., levels) (finest first; 0 for levels left alone).

        Non-finite input raises :class:`seisgpu.NonFiniteError` and writes nothing.
        """
        on_gpu = _device.gather(traces=traces, out=out)
        a = _checked_traces(traces, "traces", self.n_samples) if on_gpu is None else None
        o, depth = self._denoise_options(threshold, mode, noise, levels, thresholded_levels)
        if on_gpu is not None:
            return self._denoise_device(on_gpu, o, depth, return_thresholds)
        assert a is not None
        n_traces = a.size // self.n_samples if self.n_samples else 0
        thresholds = np.zeros((n_traces, depth)) if return_thresholds else None
        fn = f"sg_dwt_denoise_{_arrays.SUFFIX[a.dtype]}"
        h = self._ptr()

        def run(i: np.ndarray, r: np.ndarray, n: int, stride: int) -> None:
            t = None if thresholds is None else thresholds.ctypes.data_as(ctypes.POINTER(
                ctypes.c_double))
            check(fn, getattr(_lib.lib, fn)(h, ctypes.byref(o), i.ctypes.data, r.ctypes.data,
                                            n, stride, t))

        result = run_traces(a, self.n_samples, out, run)
        if thresholds is None:
            return result
        return result, thresholds.reshape(a.shape[:-1] + (depth,))

    def _denoise_options(self, threshold: str | float, mode: str, noise: str, levels: int,
                         thresholded_levels: Iterable[int] | None) -> tuple[Any, int]:
        """The C options of :meth:`denoise`'s arguments, and the transform's depth."""
        o = _lib.lib.sg_dwt_denoise_options_default()
        o.n_levels = self._levels(levels)
        depth = o.n_levels or self.max_levels
        if isinstance(threshold, str):
            o.threshold_rule = choice(threshold, "threshold", {"universal": 0})
        else:
            value = _arrays.number(threshold, "threshold")
            if not (math.isfinite(value) and value >= 0):
                raise InvalidArgumentError(f"threshold = {value}: expected a finite value ≥ 0")
            o.threshold_rule, o.fixed_threshold = 1, value
        o.threshold_mode = choice(mode, "mode", _MODES)
        o.noise_estimate = choice(noise, "noise", _NOISE)
        if thresholded_levels is not None:
            o.level_mask = level_mask(thresholded_levels, depth)
        return o, depth

    def _denoise_device(self, arrays: _device.Gathered, o: Any, depth: int,
                        return_thresholds: bool) -> Any:
        """:meth:`denoise` of GPU traces; the thresholds, when asked for, are a NumPy array
        (the call then waits for them)."""
        with _device.DeviceCall(self.ctx, arrays) as call:
            a, result, r, n = _device_traces(call, "traces", self.n_samples)
            thresholds = np.zeros((n, depth)) if return_thresholds else None
            if n:
                t = None if thresholds is None else thresholds.ctypes.data_as(
                    ctypes.POINTER(ctypes.c_double))
                call.run(f"sg_dwt_denoise_device_{_arrays.SUFFIX[a.dtype]}", self._ptr(),
                         ctypes.byref(o), a.ptr, r.ptr, n, self.n_samples, t)
        if thresholds is None:
            return result
        return result, thresholds.reshape(a.shape[:-1] + (depth,))

    def split(self, coeffs: np.ndarray, levels: int = 0) -> list[np.ndarray]:
        """Views of `coeffs` (..., n_samples) as ``[a_L, d_L, …, d_1]`` (PyWavelets'
        ``wavedec`` order) for a transform of `levels` levels (0: all)."""
        depth = self._levels(levels) or self.max_levels
        n = self.n_samples
        cuts = [n >> depth] + [n >> j for j in range(depth, 0, -1)]
        pieces, start = [], 0
        for length in cuts:
            pieces.append(coeffs[..., start:start + length])
            start += length
        return pieces

    def __repr__(self) -> str:
        return (f"<seisgpu.Dwt {self.wavelet} {self.member}, {self.n_samples} samples"
                f"{' (closed)' if self.closed else ''}>")


def level_mask(levels: Iterable[int], depth: int) -> int:
    """The bit mask of detail levels (1 = finest, ≤ `depth`)."""
    mask = 0
    for j in levels:
        j = _arrays.count(j, "thresholded_levels", 1)
        if j > depth:
            raise InvalidArgumentError(
                f"thresholded_levels: level {j}; the transform has {depth} levels")
        mask |= 1 << (j - 1)
    if mask == 0:
        raise InvalidArgumentError("thresholded_levels: no level given")
    return mask


def levels_above(frequency_hz: float, sample_interval_s: float, n_samples: int) -> list[int]:
    """The detail levels whose whole band lies at or above `frequency_hz`: level j covers
    1/(2^(j+1)·dt) … 1/(2^j·dt) Hz. For denoising band-limited traces, pass the top of
    the signal band."""
    dt = _arrays.number(sample_interval_s, "sample_interval_s")
    f = _arrays.number(frequency_hz, "frequency_hz")
    if not dt > 0:
        raise InvalidArgumentError(f"sample_interval_s = {dt}: expected a value > 0")
    depth = int(math.log2(_arrays.count(n_samples, "n_samples", 2)))
    return [j for j in range(1, depth + 1) if 1.0 / (2 ** (j + 1) * dt) >= f]
