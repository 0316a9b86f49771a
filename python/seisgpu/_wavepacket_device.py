"""A wave-packet layout's or tiled volume's calls on arrays in GPU memory
(``sg_wavepacket_*_device_*``, ``sg_wavepacket_volume_*_device_*``): the data C-ordered in
the object's shape, the coefficients a 1-D complex array, both read and written where they
are."""

from __future__ import annotations

import ctypes
from typing import Any

from . import _arrays, _device
from ._errors import InvalidArgumentError

_NOT_COPIED = "pass out=coeffs to {} the coefficients in place"


def _fn(layout: Any, verb: str) -> str:
    return f"{layout._kind}_{verb}_device_{_arrays.SUFFIX[layout.real_dtype]}"


def _data(layout: Any, call: _device.DeviceCall, name: str) -> _device.DeviceArray:
    a = call.input(name, (layout.real_dtype,))
    if a.shape != layout.shape:
        raise InvalidArgumentError(f"{name}: shape {a.shape}; this layout takes {layout.shape}")
    return a


def _coeffs(layout: Any, call: _device.DeviceCall, name: str) -> _device.DeviceArray:
    a = call.input(name, (layout.dtype,))
    if a.shape != (layout.n_coefficients,):
        raise InvalidArgumentError(
            f"{name}: shape {a.shape}; expected ({layout.n_coefficients},) coefficients")
    return a


def forward(layout: Any, arrays: _device.Gathered) -> Any:
    """C on the GPU: queued on the arrays' stream, returns without waiting."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        d = _data(layout, call, "data")
        result, c = call.output(d, (layout.n_coefficients,), layout.dtype)
        call.run(_fn(layout, "forward"), layout._ptr(), d.ptr, c.ptr)
    return result


def adjoint(layout: Any, arrays: _device.Gathered) -> Any:
    """C* on the GPU: queued on the arrays' stream, returns without waiting."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        c = _coeffs(layout, call, "coeffs")
        result, d = call.output(c, layout.shape, layout.real_dtype)
        call.run(_fn(layout, "adjoint"), layout._ptr(), c.ptr, d.ptr)
    return result


def inverse(layout: Any, arrays: _device.Gathered, tolerance: float, max_iterations: int
            ) -> tuple[Any, int, float]:
    """The inverse on the GPU; the call waits (its iterations read the residual)."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        c = _coeffs(layout, call, "coeffs")
        result, d = call.output(c, layout.shape, layout.real_dtype)
        it, res = ctypes.c_size_t(), ctypes.c_double()
        call.run(_fn(layout, "inverse"), layout._ptr(), c.ptr, d.ptr, tolerance,
                 max_iterations, ctypes.byref(it), ctypes.byref(res))
    return result, it.value, res.value


def pocs(layout: Any, arrays: _device.Gathered, flags: Any, n_traces: int, options: Any
         ) -> Any:
    """POCS on the GPU (`flags` and `options` host values), in place when `out` is `data`;
    otherwise on a copy made by the data's library (then copied into `out`). The call
    waits (each iteration's correction filter runs on the host)."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        d = _data(layout, call, "data")
        args = (flags.ctypes.data, n_traces, ctypes.byref(options))
        target = call.arrays.get("out")
        if target is not None:
            result, o = call.output(d, d.shape, d.dtype)
            if o.ptr == d.ptr:
                call.run(_fn(layout, "pocs"), layout._ptr(), o.ptr, *args)
                return result
            if o.library != d.library:
                raise InvalidArgumentError(
                    f"out: a {type(o.obj).__name__}, data a {type(d.obj).__name__}: pass "
                    "out= of the data's library, or out=data (in place)")
        work = _device.duplicate(d, "pass out=data to interpolate the data in place")
        call.run(_fn(layout, "pocs"), layout._ptr(), work.ptr, *args)
        if target is None:
            return work.obj
        _device.copy_into(target.obj, work.obj, d.library)
        return target.obj


def sparse_approximation(layout: Any, arrays: _device.Gathered, s: int, options: Any
                         ) -> tuple[Any, int, float]:
    """The sparse approximation on the GPU (`options` a host value); the call waits (the
    support is chosen on the host)."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        d = _data(layout, call, "data")
        result, c = call.output(d, (layout.n_coefficients,), layout.dtype)
        kept, res = ctypes.c_size_t(), ctypes.c_double()
        call.run(_fn(layout, "sparse_approximation"), layout._ptr(), d.ptr, c.ptr, s,
                 ctypes.byref(options), ctypes.byref(kept), ctypes.byref(res))
    return result, kept.value, res.value


def threshold(layout: Any, arrays: _device.Gathered, mode: int, kind: int, value: float
              ) -> Any:
    """Thresholding on the GPU, in place when `out` is `coeffs`; otherwise on a copy made by
    the coefficients' library (then copied into `out`, so that `out` is written only once
    the call succeeded). Queued on the arrays' stream, returns without waiting."""
    return in_place(layout, arrays, "threshold", "threshold", mode, kind, value)


def keep_largest(layout: Any, arrays: _device.Gathered, s: int) -> Any:
    """Keep-largest on the GPU (its rank found there), in place or on a copy as
    `threshold`. Queued on the arrays' stream, returns without waiting."""
    return in_place(layout, arrays, "keep_largest", "compress", s)


def threshold_noise(layout: Any, arrays: _device.Gathered, mode: int, k: float, sigma: float
                    ) -> Any:
    """The white-noise threshold on the GPU, in place or on a copy as `threshold`. Queued
    on the arrays' stream, returns without waiting."""
    return in_place(layout, arrays, "threshold_noise", "threshold", mode, k, sigma)


def estimate_noise(layout: Any, arrays: _device.Gathered) -> float:
    """σ from GPU coefficients (the median selected on the GPU); the call waits for it."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        c = _coeffs(layout, call, "coeffs")
        sigma = ctypes.c_double()
        call.run(_fn(layout, "estimate_noise"), layout._ptr(), c.ptr, ctypes.byref(sigma))
    return sigma.value


def in_place(layout: Any, arrays: _device.Gathered, verb: str, doing: str, *args: Any) -> Any:
    """The device call `verb` on the coefficients in place when `out` is `coeffs`;
    otherwise on a copy made by the coefficients' library (then copied into `out`, so that
    `out` is written only once the call succeeded). `doing` words the refusal of a copy
    seisgpu cannot make."""
    with _device.DeviceCall(layout.ctx, arrays) as call:
        c = _coeffs(layout, call, "coeffs")
        target = call.arrays.get("out")
        if target is not None:
            result, o = call.output(c, c.shape, c.dtype)
            if o.ptr == c.ptr:
                call.run(_fn(layout, verb), layout._ptr(), o.ptr, *args)
                return result
            if o.library != c.library:
                raise InvalidArgumentError(
                    f"out: a {type(o.obj).__name__}, coeffs a {type(c.obj).__name__}: pass "
                    "out= of the coefficients' library, or out=coeffs (in place)")
        work = _device.duplicate(c, _NOT_COPIED.format(doing))
        call.run(_fn(layout, verb), layout._ptr(), work.ptr, *args)
        if target is None:
            return work.obj
        _device.copy_into(target.obj, work.obj, c.library)
        return target.obj
