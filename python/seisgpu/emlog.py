"""Equivalent-model search for EM well logging: every model of a grid of conductivities is
tested against the measurements of a linearised problem f_syn = f0 + A(σ − σ0).

The misfit of a model is F = √(Σ r_i²/n) (L2; L1: Σ|r_i|/n; max: max|r_i|), with
r_i = (f_exp − f_syn)_i / (f_exp_i·δ_i). A model is equivalent when F ≤ 1 (within the
errors, the default), F ≤ level, or F² ≤ F²_min + level (Δχ², least squares only).
Grid axis 0 varies fastest: model index = i0 + n0·(i1 + n1·(i2 + …)).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import _arrays, _lib
from ._errors import ArgumentTypeError, InvalidArgumentError, check
from ._handle import Handle
from ._options import choice
from .context import Context, require

CRITERIA = {"within_errors": 0, "max_misfit": 1, "delta_chi_square": 2}
_MODES = {"fast": 0, "direct": 1}
_NORMS = {"l2": 0, "l1": 1, "max": 2}


@dataclass(frozen=True)
class Axis:
    """One searched parameter's values: use ``Axis.linear``, ``Axis.log`` or
    ``Axis.list``."""

    kind: int
    min: float
    max: float
    count: int
    listed: tuple[float, ...] = ()

    @staticmethod
    def linear(min: float, max: float, count: int) -> "Axis":
        """`count` values evenly spaced from `min` to `max` (both included)."""
        return Axis(0, float(min), float(max), _arrays.count(count, "count", 1))

    @staticmethod
    def log(min: float, max: float, count: int) -> "Axis":
        """`count` values evenly spaced in log10 from `min` to `max` (both > 0)."""
        return Axis(1, float(min), float(max), _arrays.count(count, "count", 1))

    @staticmethod
    def list(values: Sequence[float]) -> "Axis":
        """The values themselves, strictly increasing."""
        v = tuple(float(x) for x in values)
        return Axis(2, 0.0, 0.0, len(v), v)

    @property
    def values(self) -> np.ndarray:
        """The axis's values, computed as the library does."""
        if self.kind == 2:
            return np.array(self.listed)
        lo, hi = (self.min, self.max) if self.kind == 0 else (np.log10(self.min),
                                                             np.log10(self.max))
        step = (hi - lo) / (self.count - 1) if self.count > 1 else 0.0
        v = lo + step * np.arange(self.count)
        if self.kind == 1:
            v = 10.0 ** v
            v[0] = self.min
        v[-1] = self.max if self.count > 1 else self.min
        return v


class Ellipsoid(NamedTuple):
    """The closed-form least-squares answer: ``sigma_star`` (the least-squares model of
    the searched parameters), ``f_min`` (its misfit), ``empty`` (the criterion cannot be
    met), ``lower``/``upper`` (the equivalence ellipsoid's extent per parameter; NaN when
    empty), ``singular_values`` (decreasing) and ``right_vectors`` (p × p, row k the k-th
    right singular vector) of the weighted matrix."""

    sigma_star: np.ndarray
    f_min: float
    empty: bool
    lower: np.ndarray
    upper: np.ndarray
    singular_values: np.ndarray
    right_vectors: np.ndarray


def _vector(x: Any, name: str, n: int) -> np.ndarray:
    a = np.ascontiguousarray(_arrays.real(x, name), dtype=np.float64)
    if a.shape != (n,):
        raise InvalidArgumentError(f"{name}: shape {a.shape}; expected ({n},)")
    return a


class EmSearch(Handle):
    """A sensitivity-matrix plan: the linearised problem and the searched columns.

    Parameters
    ----------
    ctx:
        The context.
    a:
        The sensitivity matrix A, (n measurements, m conductivities), float64 (float32 is
        converted); any strides (C or Fortran order read in place).
    sigma0:
        (m,) the reference model (S/m).
    f0:
        (n,) its synthetic data.
    f_exp:
        (n,) the measured data (non-zero).
    delta:
        (n,) their relative errors (> 0).
    searched:
        The searched conductivities: 1 to 16 distinct column indices of A, in grid-axis
        order; the other columns stay at σ0.
    """

    _destroy = "sg_emlog_plan_destroy"

    def __init__(self, ctx: Context, a: Any, sigma0: Any, f0: Any, f_exp: Any, delta: Any,
                 searched: Sequence[int]) -> None:
        super().__init__()
        mat = _arrays.real(a, "a")
        if mat.ndim != 2:
            raise InvalidArgumentError(f"a: shape {mat.shape}; expected (n, m)")
        if mat.dtype != np.float64:
            mat = mat.astype(np.float64)
        n, m = mat.shape
        item = mat.itemsize
        if not (_arrays.aligned(mat) and all(s > 0 and s % item == 0 for s in mat.strides)):
            mat = np.ascontiguousarray(mat)
        rows, cols = (s // item for s in mat.strides)
        vectors = [_vector(sigma0, "sigma0", m), _vector(f0, "f0", n),
                   _vector(f_exp, "f_exp", n), _vector(delta, "delta", n)]
        cols_searched = np.array(_arrays.sizes(searched, "searched"), dtype=np.int32)
        if cols_searched.size == 0:
            raise InvalidArgumentError("searched: no column given")
        self.n, self.m, self.p = n, m, int(cols_searched.size)
        self.searched = tuple(int(c) for c in cols_searched)
        self._uses_handles(require(ctx))
        check("sg_emlog_plan_create", _lib.lib.sg_emlog_plan_create(
            ctx._ptr(), n, m, mat.ctypes.data, rows, cols, *[v.ctypes.data for v in vectors],
            self.p, cols_searched.ctypes.data, ctypes.byref(self._h)))
        self.ctx = ctx

    def analytic(self, criterion: str = "within_errors", level: float = 1.0) -> Ellipsoid:
        """The least-squares model and the ellipsoid of equivalent models (least squares),
        for `criterion` (see :meth:`search`)."""
        p = self.p
        star, lower, upper, sv = (np.empty(p) for _ in range(4))
        vectors = np.empty((p, p))
        f_min, empty = ctypes.c_double(), ctypes.c_int32()
        check("sg_emlog_analytic", _lib.lib.sg_emlog_analytic(
            self._ptr(), choice(criterion, "criterion", CRITERIA),
            _arrays.number(level, "level"), star.ctypes.data, ctypes.byref(f_min),
            ctypes.byref(empty), lower.ctypes.data, upper.ctypes.data, sv.ctypes.data,
            vectors.ctypes.data))
        return Ellipsoid(star, f_min.value, bool(empty.value), lower, upper, sv, vectors)

    def search(self, axes: Sequence[Axis], *, pairs: Sequence[tuple[int, int]] = (),
               criterion: str = "within_errors", level: float = 1.0, mode: str = "fast",
               norm: str = "l2", max_models: int = 0) -> "SearchResult":
        """Tests every model of the grid of `axes` (one :class:`Axis` per searched
        parameter, axis 0 fastest).

        Parameters
        ----------
        pairs:
            Parameter pairs (a, b) whose 2D marginals are wanted.
        criterion, level:
            ``"within_errors"`` (F ≤ 1), ``"max_misfit"`` (F ≤ level) or
            ``"delta_chi_square"`` (F² ≤ F²_min + level; level = χ²_p(α)/n gives the joint
            confidence region of probability α when δ are standard deviations).
        mode:
            ``"fast"`` (the centred quadratic form, O(1) per model; L2 only) or
            ``"direct"`` (the full residual of every model).
        norm:
            ``"l2"``, ``"l1"`` or ``"max"`` (the last two in direct mode).
        max_models:
            List the first this many equivalent models, in index order.
        """
        axes = list(axes)
        if not all(isinstance(x, Axis) for x in axes):
            raise ArgumentTypeError("axes: expected a list of seisgpu.emlog.Axis")
        if len(axes) != self.p:
            raise InvalidArgumentError(
                f"axes: {len(axes)} axes for {self.p} searched parameters")
        kinds = np.array([x.kind for x in axes], np.int32)
        counts = np.array([x.count for x in axes], np.uintp)
        lo = np.array([x.min for x in axes])
        hi = np.array([x.max for x in axes])
        listed = np.array([v for x in axes for v in x.listed], dtype=np.float64)
        pair_array = np.array([_arrays.sizes(ab, "pairs") for ab in pairs],
                              np.int32).reshape(-1, 2)
        for ab in pair_array:
            if ab[0] >= self.p or ab[1] >= self.p:
                raise InvalidArgumentError(
                    f"pairs: ({ab[0]}, {ab[1]}) names a parameter ≥ {self.p}")
        o = _lib.lib.sg_emlog_options_default()
        o.criterion = choice(criterion, "criterion", CRITERIA)
        o.level = _arrays.number(level, "level")
        o.mode, o.norm = choice(mode, "mode", _MODES), choice(norm, "norm", _NORMS)
        o.max_models = _arrays.count(max_models, "max_models")
        result = SearchResult(self, axes, [(int(ab[0]), int(ab[1])) for ab in pair_array])
        check("sg_emlog_search", _lib.lib.sg_emlog_search(
            self._ptr(), kinds.ctypes.data, counts.ctypes.data, lo.ctypes.data, hi.ctypes.data,
            listed.ctypes.data if listed.size else None, listed.size, len(pair_array),
            pair_array.ctypes.data if len(pair_array) else None, ctypes.byref(o),
            ctypes.byref(result._h)))
        result._summary()
        return result


class SearchResult(Handle):
    """The outcome of a search: ``total`` models, ``count`` equivalent ones, the grid's best
    model (``best_index``, ``best_model``, ``best_misfit``), per parameter the range of the
    equivalent models (``value_min``, ``value_max``; NaN when none), the listed models
    (``models``: indices and values) and ``more_models`` (True when more were equivalent
    than listed); marginals by :meth:`marginal` and :meth:`pair`."""

    _destroy = "sg_emlog_result_destroy"

    def __init__(self, plan: EmSearch, axes: list[Axis], pairs: list[tuple[int, int]]) -> None:
        super().__init__()
        self._uses_handles(plan)
        self.axes = [a.values for a in axes]
        self.pairs = pairs

    def _summary(self) -> None:
        p = len(self.axes)
        total, count, best = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        best_model, vmin, vmax = np.empty(p), np.empty(p), np.empty(p)
        misfit, n_models, more = ctypes.c_double(), ctypes.c_size_t(), ctypes.c_int32()
        check("sg_emlog_result_summary", _lib.lib.sg_emlog_result_summary(
            self._ptr(), ctypes.byref(total), ctypes.byref(count), ctypes.byref(best),
            best_model.ctypes.data, ctypes.byref(misfit), vmin.ctypes.data, vmax.ctypes.data,
            ctypes.byref(n_models), ctypes.byref(more)))
        self.total, self.count, self.best_index = total.value, count.value, best.value
        self.best_model, self.best_misfit = best_model, misfit.value
        self.value_min, self.value_max = vmin, vmax
        self.more_models = bool(more.value)
        indices = np.empty(n_models.value, np.uint64)
        values = np.empty((n_models.value, p))
        if n_models.value:
            check("sg_emlog_result_models", _lib.lib.sg_emlog_result_models(
                self._ptr(), indices.ctypes.data, values.ctypes.data, n_models.value))
        self.model_indices, self.model_values = indices, values

    def marginal(self, parameter: int) -> np.ndarray:
        """Equivalent models per value of axis `parameter` (uint64, the axis's length)."""
        k = _arrays.count(parameter, "parameter")
        if k >= len(self.axes):
            raise InvalidArgumentError(f"parameter = {k}: the search has {len(self.axes)}")
        counts = np.empty(len(self.axes[k]), np.uint64)
        check("sg_emlog_result_marginal", _lib.lib.sg_emlog_result_marginal(
            self._ptr(), k, counts.ctypes.data, counts.size))
        return counts

    def pair(self, which: int | tuple[int, int]) -> np.ndarray:
        """Equivalent models per (i_a, i_b) of a requested pair (its index in ``pairs``, or
        the pair (a, b) itself): uint64, indexed ``[i_a, i_b]``."""
        if isinstance(which, tuple):
            key = tuple(int(v) for v in which)
            index = self.pairs.index(key) if key in self.pairs else -1
        else:
            index = _arrays.count(which, "pair")
        if not 0 <= index < len(self.pairs):
            raise InvalidArgumentError(f"pair {which!r} was not requested (pairs {self.pairs})")
        a, b = self.pairs[index]
        na, nb = len(self.axes[a]), len(self.axes[b])
        counts = np.empty((nb, na), np.uint64)
        check("sg_emlog_result_pair", _lib.lib.sg_emlog_result_pair(
            self._ptr(), index, counts.ctypes.data, counts.size))
        return counts.T
