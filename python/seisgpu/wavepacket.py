"""Gaussian wave packets: the frame's analysis C, its exact adjoint C*, the inverse, and
coefficient operations (thresholds, compression, POCS interpolation), for 2D sections and 3D
volumes (tiled volumes, for data too large for one layout: :mod:`seisgpu.wavepacket_volume`).

Axes are in NumPy order: a section is an array of shape (n_traces, n_samples), a volume
(n3, n2, n1); the last axis (samples) is the one the C library calls axis 1. Coefficients
are a 1-D complex array (complex64 for float32 data, complex128 for float64), box after
box; ``Box.view`` gives one box's grid.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from . import _arrays, _device, _lib
from . import _wavepacket_device as _on_gpu
from ._errors import ArgumentTypeError, InvalidArgumentError, check
from ._handle import Plan
from ._options import choice, fill
from .context import Context, require

_MODES = {"hard": 0, "soft": 1}
_KINDS = {"value": 0, "sigma": 1}
_SCHEDULES = {"linear": 0, "exponential": 1}
_AXIS_MIN, _AXIS_MAX = 8, 1 << 20


class InverseResult(NamedTuple):
    data: np.ndarray
    iterations: int
    residual: float


class SparseResult(NamedTuple):
    coeffs: np.ndarray
    kept: int
    residual: float


@dataclass(frozen=True)
class Box:
    """One box of a layout: ``level`` (0 the low-pass box, 1 … levels coarse to fine),
    ``direction`` (index of its stored direction, −1 for the low-pass box), ``centre``
    (its centre frequency in cycles per sample along the data's axes, NumPy order),
    ``shape`` (its coefficient grid, NumPy order) and ``offset`` (where its coefficients
    start in the coefficient array)."""

    level: int
    direction: int
    centre: tuple[float, ...]
    shape: tuple[int, ...]
    offset: int

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def view(self, coeffs: np.ndarray) -> np.ndarray:
        """This box's coefficients of `coeffs` as an array of its grid's shape (a view)."""
        return coeffs[self.offset:self.offset + self.size].reshape(self.shape)


def _precision(dtype: Any) -> np.dtype:
    if isinstance(dtype, str) and dtype in ("f32", "f64"):
        return np.dtype(np.float32 if dtype == "f32" else np.float64)
    d = np.dtype(dtype)
    if d not in _arrays.REAL:
        raise ArgumentTypeError(f"dtype: {d}; expected float32 or float64")
    return d


def _shape(shape: Any, name: str) -> tuple[int, ...]:
    s = tuple(_arrays.sizes(shape, name))
    if len(s) not in (2, 3):
        raise InvalidArgumentError(f"{name}: {len(s)} axes; expected 2 or 3")
    return s


def _layout_options(options: dict[str, Any]) -> ctypes.Structure:
    return fill(_lib.lib.sg_wavepacket_layout_options_default(), options, "layout options")


class _Frame(Plan):
    """What layouts and volumes share: C, C* and the inverse."""

    _kind = ""
    _device_calls = False  # whether the C library has device calls for this object
    shape: tuple[int, ...]
    real_dtype: np.dtype
    n_samples: int
    n_coefficients: int

    @property
    def dtype(self) -> np.dtype:
        """The coefficients' dtype (complex64 or complex128)."""
        return _arrays.COMPLEX[self.real_dtype]

    def _call(self, name: str, *args: Any) -> None:
        fn = f"{self._kind}_{name}_{_arrays.SUFFIX[self.real_dtype]}"
        check(fn, getattr(_lib.lib, fn)(self._ptr(), *args))

    def _data(self, x: Any, name: str = "data") -> np.ndarray:
        a = _arrays.same_dtype(x, name, self.real_dtype)
        if a.shape != self.shape:
            raise InvalidArgumentError(f"{name}: shape {a.shape}; this layout takes {self.shape}")
        return _arrays.contiguous(a)

    def _coeffs(self, c: Any, name: str = "coeffs") -> np.ndarray:
        a = _arrays.same_dtype(c, name, self.dtype)
        if a.shape != (self.n_coefficients,):
            raise InvalidArgumentError(
                f"{name}: shape {a.shape}; expected ({self.n_coefficients},) coefficients")
        return _arrays.contiguous(a)

    def _gpu_arrays(self, **arrays: Any) -> _device.Gathered | None:
        """The call's arrays when they are in GPU memory and this object has device calls
        (layouts and volumes); None for host arrays."""
        return _device.gather(**arrays) if self._device_calls else None

    def forward(self, data: Any, *, out: Any = None) -> np.ndarray:
        """C: the coefficients of `data` (an array of the layout's shape and dtype).
        Non-finite data raises :class:`seisgpu.NonFiniteError` (GPU arrays of a layout:
        not looked for; the call returns without waiting, bit for bit the host call's
        coefficients on the same GPU; of a volume on one context likewise, the tiles cut
        and added on the device; of a volume over several contexts: the call waits and
        runs the host call's steps, bit for bit the host call's coefficients)."""
        on_gpu = self._gpu_arrays(data=data, out=out)
        if on_gpu is not None:
            return _on_gpu.forward(self, on_gpu)
        d = self._data(data)
        c, _ = _arrays.output(out, (self.n_coefficients,), self.dtype)
        self._call("forward", d.ctypes.data, c.ctypes.data)
        return c

    def adjoint(self, coeffs: Any, *, out: Any = None) -> np.ndarray:
        """C*: the real data synthesised from `coeffs` (the real part of the exact adjoint,
        ⟨C f, c⟩ = ⟨f, C* c⟩ for real f). GPU arrays of a layout or a volume: the call
        returns without waiting (of a volume over several contexts: it waits); equal to the
        host call on the same GPU to rounding (its non-uniform FFT adds with atomic
        additions)."""
        on_gpu = self._gpu_arrays(coeffs=coeffs, out=out)
        if on_gpu is not None:
            return _on_gpu.adjoint(self, on_gpu)
        c = self._coeffs(coeffs)
        d, _ = _arrays.output(out, self.shape, self.real_dtype)
        self._call("adjoint", c.ctypes.data, d.ctypes.data)
        return d

    def inverse(self, coeffs: Any, *, tolerance: float = 1e-6, max_iterations: int = 30,
                out: Any = None) -> InverseResult:
        """The data whose coefficients are closest to `coeffs` (least squares): C* and the
        correction filter, refined by conjugate gradients on C*C until the relative
        residual is ≤ `tolerance` or `max_iterations` were made (0: the filter alone).
        Returns ``(data, iterations, residual)``. GPU arrays: the data are written on
        the GPU, but the call **waits** (each iteration's stopping test reads the residual
        on the host); equal to the host call on the same GPU to rounding."""
        max_it = _arrays.count(max_iterations, "max_iterations")
        on_gpu = self._gpu_arrays(coeffs=coeffs, out=out)
        if on_gpu is not None:
            return InverseResult(*_on_gpu.inverse(
                self, on_gpu, _arrays.number(tolerance, "tolerance"), max_it))
        c = self._coeffs(coeffs)
        d, _ = _arrays.output(out, self.shape, self.real_dtype)
        it, res = ctypes.c_size_t(), ctypes.c_double()
        self._call("inverse", c.ctypes.data, d.ctypes.data,
                   _arrays.number(tolerance, "tolerance"), max_it, ctypes.byref(it),
                   ctypes.byref(res))
        return InverseResult(d, it.value, res.value)


class WavepacketLayout(_Frame):
    """A wave-packet box layout for data of one shape, with its transforms in one precision.

    Parameters
    ----------
    ctx:
        The context.
    shape:
        The data's shape, NumPy order: (n_traces, n_samples) or (n3, n2, n1); each axis
        8 … 2^20 samples.
    dtype:
        ``numpy.float32`` (default) or ``numpy.float64`` data; coefficients are complex64
        or complex128.
    **options:
        ``directions`` (2D: an even count 2 … 4096; 3D: a Lebedev rule's size, 6 … 590;
        0: 32 in 2D, 350 in 3D), ``levels`` (1 … 12; 0: from the shape), ``alpha``
        (radial sharpness 0.5 … 20, 3), ``beta`` (radial over lateral width; 0: from the
        directions), ``cutoff`` (box edge as a fraction of the window's peak, in (0, 0.5),
        1e-3) and ``tolerance`` (the USFFT's accuracy; ≥ 1e-6 in single precision).
    max_device_bytes:
        On a CUDA context, the most device memory the transform may hold (0: no cap): a
        layout that needs more (``device_bytes``) raises ``OutOfMemoryError`` before
        anything is allocated, and no later call allocates past it. Ignored on a CPU
        context.
    """

    _destroy = "sg_wavepacket_layout_destroy"
    _workspace = "sg_wavepacket_layout_workspace_bytes"
    _kind = "sg_wavepacket"
    _device_calls = True

    @staticmethod
    def device_bytes(ctx: Context, shape: Any, dtype: Any = np.float32,
                     max_device_bytes: int = 0, **options: Any) -> int:
        """The most device memory a layout of these arguments would hold at once on
        ``ctx``, without making it (cuFFT's work areas asked of cuFFT on a CUDA context,
        estimated on a CPU one). Raises ``OutOfMemoryError``, naming each part, where that
        exceeds ``max_device_bytes`` (0: no cap)."""
        dims = _shape(shape, "shape")
        o = _layout_options(options)
        out = ctypes.c_size_t()
        check("sg_wavepacket_device_bytes",
              _lib.lib.sg_wavepacket_device_bytes(
                  require(ctx)._ptr(), len(dims), _arrays.size_array(dims[::-1]),
                  1 if _precision(dtype) == np.float32 else 2, ctypes.byref(o),
                  max_device_bytes, ctypes.byref(out)))
        return out.value

    def __init__(self, ctx: Context, shape: Any, dtype: Any = np.float32,
                 max_device_bytes: int = 0, **options: Any) -> None:
        super().__init__()
        self.shape = _shape(shape, "shape")
        for i, n in enumerate(self.shape):
            if not _AXIS_MIN <= n <= _AXIS_MAX:
                raise InvalidArgumentError(
                    f"shape[{i}] = {n}: each axis needs {_AXIS_MIN} … {_AXIS_MAX} samples")
        self.real_dtype = _precision(dtype)
        o = _layout_options(options)
        self._uses_handles(require(ctx))
        c_shape = _arrays.size_array(self.shape[::-1])
        check("sg_wavepacket_layout_create_capped",
              _lib.lib.sg_wavepacket_layout_create_capped(
                  ctx._ptr(), len(self.shape), c_shape,
                  1 if self.real_dtype == np.float32 else 2, ctypes.byref(o),
                  max_device_bytes, ctypes.byref(self._h)))
        self.ctx = ctx
        s = [ctypes.c_size_t() for _ in range(5)]
        check("sg_wavepacket_layout_sizes",
              _lib.lib.sg_wavepacket_layout_sizes(self._h, *[ctypes.byref(v) for v in s]))
        (self.n_samples, self.n_coefficients, self.n_boxes, self.levels,
         self.n_directions) = (v.value for v in s)
        self._boxes: list[Box] | None = None

    @property
    def boxes(self) -> list[Box]:
        """Every box: the low-pass box, then per stored direction its levels, coarse to
        fine."""
        if self._boxes is None:
            self._boxes = [self._box(b) for b in range(self.n_boxes)]
        return self._boxes

    def _box(self, b: int) -> Box:
        level, direction = ctypes.c_int32(), ctypes.c_int32()
        centre, shape, offset = (ctypes.c_double * 3)(), (ctypes.c_size_t * 3)(), ctypes.c_size_t()
        check("sg_wavepacket_box_info", _lib.lib.sg_wavepacket_box_info(
            self._ptr(), b, ctypes.byref(level), ctypes.byref(direction), centre, shape,
            ctypes.byref(offset)))
        d = len(self.shape)
        return Box(level.value, direction.value, tuple(centre[:d][::-1]),
                   tuple(shape[:d][::-1]), offset.value)

    def packet_norms(self) -> np.ndarray:
        """‖ψ_b‖ of every box: a coefficient of white noise of variance σ² has
        E|c|² = σ²‖ψ_b‖², so |c|/‖ψ_b‖ compares coefficients across boxes."""
        norms = np.empty(self.n_boxes)
        check("sg_wavepacket_packet_norms", _lib.lib.sg_wavepacket_packet_norms(
            self._ptr(), norms.ctypes.data, self.n_boxes))
        return norms

    def _in_place(self, coeffs: Any, out: Any, name: str, *args: Any) -> np.ndarray:
        """Runs an in-place coefficient operation on a copy of `coeffs` (or on `out`, which
        may be `coeffs` itself); `out` is written only on success."""
        c = self._coeffs(coeffs)
        if out is not None:
            target = _arrays.check_out(out, c.shape, c.dtype)
            if target is c or target.ctypes.data == c.ctypes.data:
                self._call(name, target.ctypes.data, *args)
                return target
            work = c.copy()
            self._call(name, work.ctypes.data, *args)
            target[...] = work
            return target
        work = c.copy()
        self._call(name, work.ctypes.data, *args)
        return work

    def keep_largest(self, coeffs: Any, s: int, *, out: Any = None) -> np.ndarray:
        """Compression: the `s` coefficients of largest magnitude kept, the others 0 (a new
        array, or `out`; ``out=coeffs`` works in place).

        GPU coefficients: the rank is found on the GPU; ``out=coeffs`` works in place,
        otherwise the coefficients' library (CuPy, PyTorch) copies them first. Returns
        without waiting, bit for bit the host call's."""
        n = _arrays.count(s, "s")
        on_gpu = self._gpu_arrays(coeffs=coeffs, out=out)
        if on_gpu is not None:
            return _on_gpu.keep_largest(self, on_gpu, n)
        return self._in_place(coeffs, out, "keep_largest", n)

    def threshold(self, coeffs: Any, value: float, *, mode: str = "hard",
                  kind: str = "value", out: Any = None) -> np.ndarray:
        """Thresholding, ``mode`` ``"hard"`` or ``"soft"``, at ``value`` itself
        (``kind="value"``) or at ``value``·σ of each level (``kind="sigma"``, σ =
        median(|c|)/0.6745 over the level).

        GPU coefficients: ``kind="value"`` only (``"sigma"`` raises
        :class:`seisgpu.UnsupportedError`: its medians are not computed on the GPU);
        ``out=coeffs`` thresholds in place, otherwise the coefficients' library (CuPy,
        PyTorch) copies them first. Returns without waiting; float32 bit for bit the host
        call's, float64 may differ by an ulp of a magnitude (the GPU's ``hypot``)."""
        mode_, kind_ = choice(mode, "mode", _MODES), choice(kind, "kind", _KINDS)
        v = _arrays.number(value, "value")
        on_gpu = self._gpu_arrays(coeffs=coeffs, out=out)
        if on_gpu is not None:
            return _on_gpu.threshold(self, on_gpu, mode_, kind_, v)
        return self._in_place(coeffs, out, "threshold", mode_, kind_, v)

    def threshold_noise(self, coeffs: Any, k: float, sigma: float, *, mode: str = "hard",
                        out: Any = None) -> np.ndarray:
        """Denoising of white noise of standard deviation `sigma` (in the data's units):
        each box thresholded at k·σ·‖ψ_b‖ (k ≈ 2.5, hard, removes all but 0.2 % of the
        noise's coefficients).

        GPU coefficients: as :meth:`threshold` (in place with ``out=coeffs``, else on a copy
        by their library); returns without waiting."""
        args = (choice(mode, "mode", _MODES), _arrays.number(k, "k"),
                _arrays.number(sigma, "sigma"))
        on_gpu = self._gpu_arrays(coeffs=coeffs, out=out)
        if on_gpu is not None:
            return _on_gpu.threshold_noise(self, on_gpu, *args)
        return self._in_place(coeffs, out, "threshold_noise", *args)

    def estimate_noise(self, coeffs: Any) -> float:
        """σ of white noise in the data whose coefficients these are (from the finest
        level's coefficients inside the data); 0 when there are none.

        GPU coefficients: the median is selected on the GPU, after the work queued on their
        stream; the call waits for σ (float32 bit for bit the host call's)."""
        on_gpu = self._gpu_arrays(coeffs=coeffs)
        if on_gpu is not None:
            return _on_gpu.estimate_noise(self, on_gpu)
        c = self._coeffs(coeffs)
        sigma = ctypes.c_double()
        self._call("estimate_noise", c.ctypes.data, ctypes.byref(sigma))
        return sigma.value

    def sparse_approximation(self, data: Any, s: int, *, stages: int | None = None,
                             refit_iterations: int | None = None,
                             out: Any = None) -> SparseResult:
        """At most `s` non-zero coefficients whose synthesis C*c approximates `data`
        (support grown in `stages` stages with least-squares refits of `refit_iterations`
        CGLS iterations, then two exchange rounds). Returns ``(coeffs, kept, residual)``,
        residual = ‖f − C*c‖/‖f‖. GPU arrays: the coefficients are written on the GPU,
        but the call **waits** (the support is chosen on the host); equal to the host call
        on the same GPU to rounding."""
        on_gpu = self._gpu_arrays(data=data, out=out)
        d = self._data(data) if on_gpu is None else None
        o = fill(_lib.lib.sg_wavepacket_sparse_options_default(),
                 {"stages": stages, "refit_iterations": refit_iterations},
                 "sparse_approximation")
        if on_gpu is not None:
            return SparseResult(*_on_gpu.sparse_approximation(
                self, on_gpu, _arrays.count(s, "s"), o))
        assert d is not None
        c, _ = _arrays.output(out, (self.n_coefficients,), self.dtype)
        kept, res = ctypes.c_size_t(), ctypes.c_double()
        self._call("sparse_approximation", d.ctypes.data, c.ctypes.data,
                   _arrays.count(s, "s"), ctypes.byref(o), ctypes.byref(kept),
                   ctypes.byref(res))
        return SparseResult(c, kept.value, res.value)

    def pocs(self, data: Any, live: Any, *, iterations: int | None = None,
             schedule: str | None = None, first: float | None = None,
             last: float | None = None, out: Any = None) -> np.ndarray:
        """Interpolation of missing traces by POCS. `data` has the layout's shape; `live`
        (bool, shape ``data.shape[:-1]``) is True where a trace was recorded (the samples of
        the others are not read). Options: ``iterations`` (40), ``schedule``
        (``"exponential"`` or ``"linear"``), ``first``, ``last`` (thresholds as fractions
        of the largest |c|/‖ψ_b‖, 0 < last ≤ first ≤ 1; 0.003). Returns the interpolated
        data (a new array, or `out`; ``out=data`` works in place); recorded traces come
        out unchanged. GPU data (`live` may be a host or GPU array): the result is written
        on the GPU, but the call **waits** (each iteration's correction filter runs on the
        host); equal to the host call on the same GPU to rounding."""
        on_gpu = self._gpu_arrays(data=data, out=out)
        d = self._data(data) if on_gpu is None else None
        mask = _arrays.host(live, "live")
        if mask.shape != self.shape[:-1]:
            raise InvalidArgumentError(
                f"live: shape {mask.shape}; expected {self.shape[:-1]} (one flag per trace)")
        flags = np.ascontiguousarray(mask != 0, dtype=np.int32)
        o = fill(_lib.lib.sg_wavepacket_pocs_options_default(),
                 {"iterations": iterations, "schedule": schedule, "first": first,
                  "last": last}, "pocs", {"schedule": _SCHEDULES})
        n_traces = int(np.prod(self.shape[:-1]))
        if on_gpu is not None:
            return _on_gpu.pocs(self, on_gpu, flags, n_traces, o)
        assert d is not None
        args = (flags.ctypes.data, n_traces, ctypes.byref(o))
        if out is not None:
            target = _arrays.check_out(out, self.shape, self.real_dtype)
            if target.ctypes.data == d.ctypes.data:
                self._call("pocs", target.ctypes.data, *args)
                return target
            work = d.copy()
            self._call("pocs", work.ctypes.data, *args)
            target[...] = work
            return target
        work = d.copy()
        self._call("pocs", work.ctypes.data, *args)
        return work

    def __repr__(self) -> str:
        return (f"<seisgpu.WavepacketLayout {self.shape} {self.real_dtype}, "
                f"{self.n_boxes} boxes, {self.n_coefficients} coefficients"
                f"{' (closed)' if self.closed else ''}>")
