"""The unequally spaced FFT (non-uniform FFT), types 1 and 2, in 1, 2 or 3 dimensions
(type 3, points to frequencies: :mod:`seisgpu.usfft3`).

Type 1 (irregular points → regular modes): f[k] = Σ_j c_j exp(i·sign·k·x_j).
Type 2 (regular modes → irregular points): c_j = Σ_k f[k] exp(i·sign·k·x_j).
Type 1 with −sign is the adjoint of type 2; nothing is normalised. Coordinates are radians,
period 2π (points in [−π, π); any finite value is folded back). Modes are centred by
default: k_d = −N_d/2 … (N_d−1)/2 (integer division) along each dimension.

Mode arrays are indexed like FINUFFT's Python interface, ``f[k1, k2, k3]`` (dimension 1,
the x coordinate, on the first axis), with an extra leading axis for a batch of vectors.
In memory dimension 1 is fastest (the C library's layout), so the mode arrays returned
are Fortran-ordered within each vector; a type-2 input of any other layout is copied once.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _arrays, _device, _lib
from ._errors import ArgumentTypeError, InvalidArgumentError, check
from ._handle import Plan
from ._options import fill
from .context import Context, require

_KERNELS = {"es": 0, "gaussian": 1, "prolate": 2}
_ORDERS = {"centred": 0, "centered": 0, "fft": 1}
_PRECISIONS = {"f32": np.float32, "f64": np.float64}


def _precision(dtype: Any) -> np.dtype:
    if isinstance(dtype, str) and dtype in _PRECISIONS:
        return np.dtype(_PRECISIONS[dtype])
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise ArgumentTypeError(f"dtype: {dtype!r} is not a dtype") from e
    for real, cplx in _arrays.COMPLEX.items():
        if d in (real, cplx):
            return real
    raise ArgumentTypeError(
        f"dtype: {d} is not accepted; expected complex64/float32 (single precision) or "
        "complex128/float64 (double)")


class Usfft(Plan):
    """A USFFT plan: type, dimension, mode counts, sign, tolerance, precision, batch.

    Parameters
    ----------
    ctx:
        The context.
    type:
        1 (points → modes) or 2 (modes → points).
    n_modes:
        Modes per dimension, (N1,), (N1, N2) or (N1, N2, N3), each ≥ 1.
    dtype:
        ``numpy.complex128`` (default; float64 coordinates) or ``numpy.complex64``
        (float32 coordinates); ``"f64"``/``"f32"`` and the real dtypes are accepted too.
    sign:
        +1 or −1, the exponent's sign.
    tolerance:
        Relative ℓ2 accuracy of the whole output, from just below 1 down to 1e-14 (double)
        or 1e-6 (single).
    n_vectors:
        Vectors transformed by each ``execute`` (≥ 1), sharing the points.
    kernel:
        ``"prolate"`` (default: ES times a polynomial fitted to the prolate spheroidal
        function, half a digit more than ES at a width), ``"es"`` (exponential of
        semicircle) or ``"gaussian"``.
    mode_order:
        ``"centred"`` (default: −N/2 first) or ``"fft"`` (0, 1, …, then −N/2 … −1).
    upsampling:
        Fine-grid size over mode count; 2.0 is the only value supported.
    """

    _destroy = "sg_usfft_plan_destroy"
    _workspace = "sg_usfft_plan_workspace_bytes"

    def __init__(self, ctx: Context, type: int, n_modes: Any, *, dtype: Any = np.complex128,
                 sign: int = -1, tolerance: float = 1e-9, n_vectors: int = 1,
                 kernel: str = "prolate", mode_order: str = "centred",
                 upsampling: float = 2.0) -> None:
        super().__init__()
        if type not in (1, 2):
            raise InvalidArgumentError(f"type = {type!r}: expected 1 or 2")
        modes = _arrays.sizes(np.atleast_1d(np.asarray(n_modes, dtype=object)).tolist(),
                              "n_modes")
        if not 1 <= len(modes) <= 3:
            raise InvalidArgumentError(f"n_modes: {len(modes)} sizes; expected 1, 2 or 3")
        if sign not in (1, -1):
            raise InvalidArgumentError(f"sign = {sign!r}: expected +1 or -1")
        self.real_dtype = _precision(dtype)
        self.dtype = _arrays.COMPLEX[self.real_dtype]
        self.type, self.n_modes, self.sign = type, tuple(modes), sign
        self.n_vectors = _arrays.count(n_vectors, "n_vectors")
        self.tolerance = _arrays.number(tolerance, "tolerance")
        self.n_points = 0
        o = fill(_lib.lib.sg_usfft_options_default(),
                 {"kernel": kernel, "mode_order": mode_order, "upsampling": upsampling},
                 "Usfft", {"kernel": _KERNELS, "mode_order": _ORDERS})
        self._suffix = _arrays.SUFFIX[self.real_dtype]
        self._uses_handles(require(ctx))
        check("sg_usfft_plan_create", _lib.lib.sg_usfft_plan_create(
            ctx._ptr(), type, len(modes), _arrays.size_array(modes), sign, self.tolerance,
            1 if self._suffix == "f32" else 2, self.n_vectors, ctypes.byref(o),
            ctypes.byref(self._h)))
        self.ctx = ctx

    @property
    def dim(self) -> int:
        return len(self.n_modes)

    def set_points(self, x: Any, y: Any = None, z: Any = None) -> None:
        """Sets the points (replacing earlier ones): one 1-D coordinate array per dimension,
        radians, in the plan's real dtype (float64 or float32), all of one length M. They
        are sorted once here for every later ``execute``. Non-finite coordinates raise
        :class:`seisgpu.NonFiniteError` and keep the previous points."""
        coords = [x, y, z]
        given = [c is not None for c in coords]
        if given[:self.dim] != [True] * self.dim or any(given[self.dim:]):
            names = ", ".join("xyz"[:self.dim])
            raise InvalidArgumentError(f"a {self.dim}D plan takes coordinates {names}")
        on_gpu = _device.gather(**dict(zip("xyz", coords[:self.dim])))
        if on_gpu is not None:
            self._set_points_device(on_gpu)
            return
        arrays = []
        for name, c in zip("xyz", coords[:self.dim]):
            a = _arrays.same_dtype(c, name, self.real_dtype)
            if a.ndim != 1:
                raise InvalidArgumentError(f"{name}: shape {a.shape}; expected a 1-D array")
            arrays.append(_arrays.contiguous(a))
        m = arrays[0].shape[0]
        for name, a in zip("xyz", arrays):
            if a.shape[0] != m:
                raise InvalidArgumentError(f"{name}: {a.shape[0]} points; x has {m}")
        ptrs = [a.ctypes.data for a in arrays] + [None] * (3 - self.dim)
        fn = f"sg_usfft_set_points_{self._suffix}"
        check(fn, getattr(_lib.lib, fn)(self._ptr(), m, *ptrs))
        self.n_points = m

    def _set_points_device(self, arrays: _device.Gathered) -> None:
        """:meth:`set_points` with coordinates in GPU memory (sorted there; the call waits
        for the finiteness check)."""
        with _device.DeviceCall(self.ctx, arrays) as call:
            coords = [call.input(name, (self.real_dtype,)) for name in arrays]
            for a in coords:
                if len(a.shape) != 1:
                    raise InvalidArgumentError(
                        f"{a.name}: shape {a.shape}; expected a 1-D array")
                if a.shape[0] != coords[0].shape[0]:
                    raise InvalidArgumentError(f"{a.name}: {a.shape[0]} points; x has "
                                               f"{coords[0].shape[0]}")
            m = coords[0].shape[0]
            ptrs = [a.ptr for a in coords] + [0] * (3 - self.dim)
            call.run(f"sg_usfft_set_points_device_{self._suffix}", self._ptr(), m, *ptrs)
        self.n_points = m

    def _strength_shape(self) -> tuple[int, ...]:
        return (self.n_points,) if self.n_vectors == 1 else (self.n_vectors, self.n_points)

    def _check_strengths(self, shape: tuple[int, ...]) -> None:
        if shape != self._strength_shape():
            raise InvalidArgumentError(
                f"data: shape {shape}; expected {self._strength_shape()} "
                f"({self.n_points} points set)")

    def _mode_shape(self) -> tuple[int, ...]:
        lead = () if self.n_vectors == 1 else (self.n_vectors,)
        return lead + self.n_modes

    def _mode_axes(self) -> tuple[int, ...]:
        """The axes of a C-ordered ([n_vectors,] N3, N2, N1) array that give the mode
        array's axes ([n_vectors,] N1, N2, N3)."""
        d = 0 if self.n_vectors == 1 else 1
        n = d + self.dim
        return tuple(range(d)) + tuple(range(n - 1, d - 1, -1))

    def empty_modes(self, like: Any = None) -> Any:
        """An uninitialised mode array in the layout ``execute`` reads and writes without a
        copy: shape ([n_vectors,] N1[, N2[, N3]]), dimension 1 fastest in memory. With
        `like`, a CuPy array or PyTorch tensor, an array of its library on its device."""
        gpu = None if like is None else _device.view(like, "like")
        if gpu is not None:
            return _device.empty(gpu, self._mode_shape(), self.dtype, self._mode_axes())
        lead = () if self.n_vectors == 1 else (self.n_vectors,)
        a = np.empty(lead + self.n_modes[::-1], self.dtype)
        return a.transpose(self._mode_axes())

    def _modes_in(self, f: Any, name: str) -> np.ndarray:
        a = _arrays.same_dtype(f, name, self.dtype)
        if a.shape != self._mode_shape():
            raise InvalidArgumentError(f"{name}: shape {a.shape}; expected {self._mode_shape()}")
        want = self.empty_modes()
        if a.strides == want.strides and _arrays.aligned(a):
            return a
        want[...] = a
        return want

    def _modes_out(self, out: Any) -> np.ndarray:
        if out is None:
            return self.empty_modes()
        want = self.empty_modes()
        if not isinstance(out, np.ndarray) or out.dtype != self.dtype:
            raise ArgumentTypeError(f"out: expected a {self.dtype} array")
        if out.shape != want.shape:
            raise InvalidArgumentError(f"out: shape {out.shape}; this call writes {want.shape}")
        if not out.flags.writeable:
            raise InvalidArgumentError("out: the array is read-only")
        if out.strides != want.strides or not _arrays.aligned(out):
            raise InvalidArgumentError(
                f"out: strides {out.strides}; mode arrays must have dimension 1 fastest "
                f"(strides {want.strides}): make one with plan.empty_modes()")
        return out

    def execute(self, data: Any, out: Any = None) -> np.ndarray:
        """Type 1: strengths c, shape ([n_vectors,] M), → modes f, shape
        ([n_vectors,] N1[, N2[, N3]]). Type 2: modes → values at the points. Complex arrays
        of the plan's dtype. Non-finite values are not checked: they propagate."""
        on_gpu = _device.gather(data=data, out=out)
        if on_gpu is not None:
            return self._execute_device(on_gpu)
        fn = f"sg_usfft_execute_{self._suffix}"
        h = self._ptr()
        if self.type == 1:
            c = _arrays.same_dtype(data, "data", self.dtype)
            self._check_strengths(c.shape)
            c = _arrays.contiguous(c)
            f = self._modes_out(out)
            check(fn, getattr(_lib.lib, fn)(h, c.ctypes.data, f.ctypes.data))
            return f
        f = self._modes_in(data, "data")
        c, _ = _arrays.output(out, self._strength_shape(), self.dtype)
        check(fn, getattr(_lib.lib, fn)(h, c.ctypes.data, f.ctypes.data))
        return c

    def _execute_device(self, arrays: _device.Gathered) -> Any:
        """:meth:`execute` on GPU arrays: queued on their stream, returns without waiting. A
        type-2 mode array in another layout is copied once on the GPU by its library."""
        with _device.DeviceCall(self.ctx, arrays) as call:
            axes = self._mode_axes()
            if self.type == 1:
                c = call.input("data", (self.dtype,))
                self._check_strengths(c.shape)
                f_obj, f = call.output(c, self._mode_shape(), self.dtype, axes)
                result = f_obj
            else:
                f = call.input("data", (self.dtype,), contiguous=False)
                if f.shape != self._mode_shape():
                    raise InvalidArgumentError(
                        f"data: shape {f.shape}; expected {self._mode_shape()}")
                if not f.has_strides(_device.layout_strides(f.shape, self.dtype.itemsize,
                                                            axes)):
                    f = _device.relaid(f, axes)
                result, c = call.output(f, self._strength_shape(), self.dtype)
            call.run(f"sg_usfft_execute_device_{self._suffix}", self._ptr(), c.ptr, f.ptr)
        return result

    def __repr__(self) -> str:
        return (f"<seisgpu.Usfft type {self.type}, modes {self.n_modes}, {self.dtype}, "
                f"{self.n_points} points{' (closed)' if self.closed else ''}>")
