"""The USFFT of type 3 (irregular points → irregular frequencies), in 1, 2 or 3 dimensions.

f[k] = Σ_j c_j exp(i·sign·(s_k·x_j + t_k·y_j + u_k·z_j)) for M points (x, y, z) and N
frequencies (s, t, u), both any finite reals; nothing is normalised. The plan's grid is
sized from both sets' spans when they are set: per dimension about 4·X·S/π cells plus the
kernel's width (X, S the half-widths of the points and of the frequencies), so the cost
grows with X·S. Points and frequencies are given as host arrays (NumPy or anything
``numpy.asarray`` takes); ``execute`` takes and returns NumPy arrays.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from . import _arrays, _lib
from ._errors import InvalidArgumentError, check
from ._handle import Plan
from ._options import fill
from .context import Context, require
from .usfft import _KERNELS, _precision


class Usfft3(Plan):
    """A type-3 USFFT plan: dimension, sign, tolerance, precision, batch.

    Parameters
    ----------
    ctx:
        The context.
    dim:
        1, 2 or 3.
    dtype:
        ``numpy.complex128`` (default; float64 points and frequencies) or
        ``numpy.complex64`` (float32); ``"f64"``/``"f32"`` and the real dtypes are accepted.
    sign:
        +1 or −1, the exponent's sign.
    tolerance:
        Relative ℓ2 accuracy of the whole output, from just below 1 down to 1e-14 (double)
        or 1e-6 (single).
    n_vectors:
        Vectors transformed by each ``execute`` (≥ 1), sharing the points and frequencies.
    kernel:
        ``"prolate"`` (default: ES times a polynomial fitted to the prolate spheroidal
        function, half a digit more than ES at a width), ``"es"`` (exponential of
        semicircle) or ``"gaussian"``.
    """

    _destroy = "sg_usfft_plan_destroy"
    _workspace = "sg_usfft_plan_workspace_bytes"

    def __init__(self, ctx: Context, dim: int, *, dtype: Any = np.complex128, sign: int = -1,
                 tolerance: float = 1e-9, n_vectors: int = 1, kernel: str = "prolate") -> None:
        super().__init__()
        if dim not in (1, 2, 3):
            raise InvalidArgumentError(f"dim = {dim!r}: expected 1, 2 or 3")
        if sign not in (1, -1):
            raise InvalidArgumentError(f"sign = {sign!r}: expected +1 or -1")
        self.real_dtype = _precision(dtype)
        self.dtype = _arrays.COMPLEX[self.real_dtype]
        self.dim, self.sign = dim, sign
        self.n_vectors = _arrays.count(n_vectors, "n_vectors")
        self.tolerance = _arrays.number(tolerance, "tolerance")
        self.n_points = 0
        self.n_targets = 0
        o = fill(_lib.lib.sg_usfft_options_default(), {"kernel": kernel}, "Usfft3",
                 {"kernel": _KERNELS})
        self._suffix = _arrays.SUFFIX[self.real_dtype]
        self._uses_handles(require(ctx))
        check("sg_usfft_plan_create", _lib.lib.sg_usfft_plan_create(
            ctx._ptr(), 3, dim, None, sign, self.tolerance,
            1 if self._suffix == "f32" else 2, self.n_vectors, ctypes.byref(o),
            ctypes.byref(self._h)))
        self.ctx = ctx

    def _arrays(self, given: list[Any], names: str, what: str) -> list[np.ndarray]:
        present = [a is not None for a in given]
        if present[:self.dim] != [True] * self.dim or any(present[self.dim:]):
            raise InvalidArgumentError(
                f"a {self.dim}D plan takes {what} {', '.join(names[:self.dim])}")
        out = []
        for name, a in zip(names, given[:self.dim]):
            a = _arrays.same_dtype(a, name, self.real_dtype)
            if a.ndim != 1:
                raise InvalidArgumentError(f"{name}: shape {a.shape}; expected a 1-D array")
            if out and a.shape[0] != out[0].shape[0]:
                raise InvalidArgumentError(
                    f"{name}: {a.shape[0]} values; {names[0]} has {out[0].shape[0]}")
            out.append(_arrays.contiguous(a))
        return out

    def set_points(self, x: Any, y: Any = None, z: Any = None, *, s: Any, t: Any = None,
                   u: Any = None) -> None:
        """Sets the M points (x[, y[, z]]) and the N frequencies (s[, t[, u]]), replacing
        earlier ones: 1-D arrays of the plan's real dtype. Non-finite values raise
        :class:`seisgpu.NonFiniteError`, spans whose grid cannot be held
        :class:`seisgpu.UnsupportedError` or :class:`seisgpu.OutOfMemoryError`; the previous
        points stay."""
        xs = self._arrays([x, y, z], "xyz", "points")
        ss = self._arrays([s, t, u], "stu", "frequencies")
        m, n = xs[0].shape[0], ss[0].shape[0]
        pad = [None] * (3 - self.dim)
        fn = f"sg_usfft_set_points3_{self._suffix}"
        check(fn, getattr(_lib.lib, fn)(self._ptr(), m, *[a.ctypes.data for a in xs], *pad,
                                        n, *[a.ctypes.data for a in ss], *pad))
        self.n_points, self.n_targets = m, n

    def execute(self, data: Any, out: Any = None) -> np.ndarray:
        """Strengths c, shape ([n_vectors,] M), → values at the frequencies, shape
        ([n_vectors,] N), complex arrays of the plan's dtype. Non-finite strengths are not
        checked: they propagate."""
        lead = () if self.n_vectors == 1 else (self.n_vectors,)
        c = _arrays.same_dtype(data, "data", self.dtype)
        if c.shape != lead + (self.n_points,):
            raise InvalidArgumentError(
                f"data: shape {c.shape}; expected {lead + (self.n_points,)} "
                f"({self.n_points} points set)")
        c = _arrays.contiguous(c)
        f, _ = _arrays.output(out, lead + (self.n_targets,), self.dtype)
        fn = f"sg_usfft_execute_{self._suffix}"
        check(fn, getattr(_lib.lib, fn)(self._ptr(), c.ctypes.data, f.ctypes.data))
        return f

    def __repr__(self) -> str:
        return (f"<seisgpu.Usfft3 {self.dim}D, {self.dtype}, {self.n_points} points, "
                f"{self.n_targets} frequencies{' (closed)' if self.closed else ''}>")
