"""F-X (2D) and F-XY (3D) prediction filtering: random-noise attenuation of sections and
volumes, float32 and float64 (a CUDA context filters float64 on its CPU threads)."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _arrays, _device, _lib
from ._errors import InvalidArgumentError, check
from ._handle import Plan
from ._options import as_dict, choice, fill
from .context import Context, require
from .dwt import run_traces

_ENUMS = {
    "prediction": {"two_sided": 0, "forward_backward": 1},
    "out_of_band": {"pass": 0, "zero": 1},
}
_PRESETS = {"default": "sg_fxdecon_options_default",
            "seismic_unix": "sg_fxdecon_options_seismic_unix"}


class FxDecon(Plan):
    """An F-X / F-XY decon plan for one data shape and one set of options.

    Parameters
    ----------
    ctx:
        The context.
    shape:
        The data's shape: ``(n_traces, n_samples)`` for a 2D section (trace after trace),
        or ``(n_inline, n_crossline, n_samples)`` for a 3D volume.
    preset:
        ``"default"`` or ``"seismic_unix"`` (reproduces Seismic Unix ``sufxdecon``, 2D
        only: its blocks of ``window_traces`` traces, forward/backward filters of
        ``operator_traces`` traces, zeroed out-of-band, no damping); the options below
        change the preset's values.
    **options:
        The fields of ``sg_fxdecon_options`` (None keeps the preset's value):
        ``sample_interval_s`` (s, 0.004), ``fmin_hz`` (Hz, 6), ``fmax_hz`` (Hz; 0 means
        0.6 × Nyquist), ``time_window_s`` (s, tapers included; 0: the whole trace),
        ``taper_s`` (s, 0.1), ``fft_length`` (samples, even; 0: the next power of two),
        2D ``window_traces`` (20), ``overlap_traces`` (3), ``operator_traces`` (L, 4: traces
        on each side), 3D ``window_inline``, ``window_crossline`` (20, 20),
        ``overlap_inline``, ``overlap_crossline`` (3, 3), ``operator_inline``,
        ``operator_crossline`` (7, 7; odd), ``damping`` (fraction of the zero-lag
        autocorrelation, 0.01), ``prediction`` (``"two_sided"`` or ``"forward_backward"``),
        ``out_of_band`` (``"pass"`` or ``"zero"``), ``su_compatible`` (bool).

    Several threads may filter with one plan at once. A C-contiguous float32 section or
    volume in GPU memory (CuPy, PyTorch, DLPack; ``out=`` too) is filtered where it is, on
    its stream, without waiting (but for a plan's first call, which makes its FFT plans);
    the result is an array of the same library (docs/python.md). float64 GPU arrays are
    refused (``UnsupportedError``): the GPU filter runs float32 only, float64 runs on the
    CPU from NumPy arrays.
    """

    _destroy = "sg_fxdecon_plan_destroy"
    _workspace = "sg_fxdecon_plan_workspace_bytes"

    def __init__(self, ctx: Context, shape: Any, *, preset: str = "default",
                 **options: Any) -> None:
        super().__init__()
        self.shape = tuple(_arrays.sizes(shape, "shape"))
        if len(self.shape) not in (2, 3):
            raise InvalidArgumentError(
                f"shape: {len(self.shape)} axes; expected (n_traces, n_samples) or "
                "(n_inline, n_crossline, n_samples)")
        name = _PRESETS[list(_PRESETS)[choice(preset, "preset", {k: i for i, k in
                                                                 enumerate(_PRESETS)})]]
        o = fill(getattr(_lib.lib, name)(), options, "FxDecon", _ENUMS, ("su_compatible",))
        self.options = as_dict(o, _ENUMS)
        self._uses_handles(require(ctx))
        if len(self.shape) == 2:
            n_traces, n = self.shape
            check("sg_fxdecon_plan_create_2d", _lib.lib.sg_fxdecon_plan_create_2d(
                ctx._ptr(), ctypes.byref(o), n, n_traces, ctypes.byref(self._h)))
        else:
            n_il, n_xl, n = self.shape
            check("sg_fxdecon_plan_create_3d", _lib.lib.sg_fxdecon_plan_create_3d(
                ctx._ptr(), ctypes.byref(o), n, n_il, n_xl, ctypes.byref(self._h)))
        self.ctx = ctx

    def filter(self, data: Any, *, out: Any = None) -> np.ndarray:
        """The filtered section or volume: an array of the plan's shape, float32 or float64,
        into a new array of the same shape and dtype (or `out`). Any layout with contiguous
        samples is read without a copy. Non-finite input raises
        :class:`seisgpu.NonFiniteError` and writes nothing (GPU arrays: not looked for;
        equal to the host call on the same GPU to rounding, as overlapping windows add
        their predictions with atomic additions)."""
        on_gpu = _device.gather(data=data, out=out)
        if on_gpu is not None:
            return self._filter_device(on_gpu)
        a = _arrays.real(data, "data")
        if a.shape != self.shape:
            raise InvalidArgumentError(f"data: shape {a.shape}; this plan filters {self.shape}")
        h, t = self._ptr(), _arrays.SUFFIX[a.dtype]
        if len(self.shape) == 2:
            fn = f"sg_fxdecon_execute_2d_{t}"

            def run(i: np.ndarray, o: np.ndarray, _n: int, stride: int) -> None:
                check(fn, getattr(_lib.lib, fn)(h, i.ctypes.data, o.ctypes.data, stride))

            return run_traces(a, self.shape[-1], out, run)
        return self._filter_3d(a, out, h, f"sg_fxdecon_execute_3d_{t}")

    def _filter_3d(self, a: np.ndarray, out: Any, h: Any, fn: str) -> np.ndarray:
        result, callers = _arrays.output(out, a.shape, a.dtype)
        if a.size == 0:
            return result
        f = getattr(_lib.lib, fn)

        def run(i: np.ndarray, o: np.ndarray) -> None:
            il, xl = (s // i.itemsize for s in i.strides[:2])
            check(fn, f(h, i.ctypes.data, o.ctypes.data, il, xl))

        if a.strides == result.strides and _arrays.aligned(a):
            run(a, result)
        elif not callers:
            # Our own output: the input copied into it, then filtered in place.
            np.copyto(result, a)
            run(result, result)
        else:
            run(_arrays.contiguous(a), result)
        return result

    def _filter_device(self, arrays: _device.Gathered) -> Any:
        """:meth:`filter` on GPU arrays: C-ordered, queued on their stream (in place when
        `out` is `data`)."""
        with _device.DeviceCall(self.ctx, arrays) as call:
            a = call.input("data", _arrays.REAL)
            if a.shape != self.shape:
                raise InvalidArgumentError(
                    f"data: shape {a.shape}; this plan filters {self.shape}")
            result, o = call.output(a, a.shape, a.dtype)
            if a.size:
                t, n = _arrays.SUFFIX[a.dtype], self.shape[-1]
                if len(self.shape) == 2:
                    call.run(f"sg_fxdecon_execute_2d_device_{t}", self._ptr(), a.ptr, o.ptr, n)
                else:
                    call.run(f"sg_fxdecon_execute_3d_device_{t}", self._ptr(), a.ptr, o.ptr,
                             self.shape[1] * n, n)
        return result

    def __repr__(self) -> str:
        return f"<seisgpu.FxDecon {self.shape}{' (closed)' if self.closed else ''}>"

