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

from . import _arrays, _device, _lib
from ._errors import ArgumentTypeError, InvalidArgumentError, check
from ._handle import Handle, Plan
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


class EmSearch(Plan):
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

    Arrays in GPU memory (CuPy, PyTorch, DLPack; all of them, float64: no copy is made,
    A of any positive strides, the vectors C-contiguous) are read there: the searched
    columns are gathered on the GPU and only they and the vectors reach the host; the
    call waits for them. The plan equals the host one bit for bit. Its searches then run
    on the GPU (:meth:`search` waits for them) and keep their histograms there:
    :meth:`SearchResult.marginal` and :meth:`SearchResult.pair` return arrays of the
    same library (docs/python.md).
    """

    _destroy = "sg_emlog_plan_destroy"
    _workspace = "sg_emlog_plan_workspace_bytes"

    def __init__(self, ctx: Context, a: Any, sigma0: Any, f0: Any, f_exp: Any, delta: Any,
                 searched: Sequence[int]) -> None:
        super().__init__()
        # The library and device of the GPU arrays the plan was made from (None: NumPy).
        self._home: _device.Home | None = None
        on_gpu = _device.gather(a=a, sigma0=sigma0, f0=f0, f_exp=f_exp, delta=delta)
        if on_gpu is not None:
            self._create_device(require(ctx), on_gpu, searched)
            return
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
        cols_searched = self._searched(searched, n, m)
        self._uses_handles(require(ctx))
        check("sg_emlog_plan_create", _lib.lib.sg_emlog_plan_create(
            ctx._ptr(), n, m, mat.ctypes.data, rows, cols, *[v.ctypes.data for v in vectors],
            self.p, cols_searched.ctypes.data, ctypes.byref(self._h)))
        self.ctx = ctx

    def _searched(self, searched: Sequence[int], n: int, m: int) -> np.ndarray:
        """The searched columns as the C call takes them; sets the plan's sizes."""
        cols_searched = np.array(_arrays.sizes(searched, "searched"), dtype=np.int32)
        if cols_searched.size == 0:
            raise InvalidArgumentError("searched: no column given")
        self.n, self.m, self.p = n, m, int(cols_searched.size)
        self.searched = tuple(int(c) for c in cols_searched)
        return cols_searched

    def _create_device(self, ctx: Context, arrays: _device.Gathered,
                       searched: Sequence[int]) -> None:
        """The plan of GPU arrays (``sg_emlog_plan_create_device``, which waits)."""
        with _device.DeviceCall(ctx, arrays) as call:
            mat = call.input("a", (np.dtype(np.float64),), contiguous=False)
            if len(mat.shape) != 2:
                raise InvalidArgumentError(f"a: shape {mat.shape}; expected (n, m)")
            n, m = mat.shape
            rows, cols = _matrix_strides(mat)
            vectors = [call.input(name, (np.dtype(np.float64),)) for name in
                       ("sigma0", "f0", "f_exp", "delta")]
            for v, length in zip(vectors, (m, n, n, n)):
                if v.shape != (length,):
                    raise InvalidArgumentError(f"{v.name}: shape {v.shape}; expected ({length},)")
            cols_searched = self._searched(searched, n, m)
            self._uses_handles(ctx)
            call.run("sg_emlog_plan_create_device", ctx._ptr(), n, m, mat.ptr, rows, cols,
                     *[v.ptr for v in vectors], self.p, cols_searched.ctypes.data,
                     ctypes.byref(self._h))
        self.ctx = ctx
        self._home = mat.home

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
        args = (self._ptr(), kinds.ctypes.data, counts.ctypes.data, lo.ctypes.data,
                hi.ctypes.data, listed.ctypes.data if listed.size else None, listed.size,
                len(pair_array), pair_array.ctypes.data if len(pair_array) else None,
                ctypes.byref(o), ctypes.byref(result._h))
        if self._home is None:
            check("sg_emlog_search", _lib.lib.sg_emlog_search(*args))
        else:
            # A plan of GPU arrays: the search runs after the work on their library's
            # current stream, waits, and keeps its histograms on the GPU.
            with _device.DeviceCall(self.ctx, {}, self._home) as call:
                call.run("sg_emlog_search_device", *args)
            result._home = self._home
        result._summary()
        return result


class SearchResult(Handle):
    """The outcome of a search: ``total`` models, ``count`` equivalent ones, the grid's best
    model (``best_index``, ``best_model``, ``best_misfit``), per parameter the range of the
    equivalent models (``value_min``, ``value_max``; NaN when none), the listed models
    (``models``: indices and values) and ``more_models`` (True when more were equivalent
    than listed); marginals by :meth:`marginal` and :meth:`pair`.

    The summary and the listed models are host values (NumPy arrays) whatever the plan's
    arrays: the search lists them on the host. The marginals of a search of a plan made
    from GPU arrays are arrays of that library, copied on the GPU from the histograms the
    search kept there; with ``out=`` a GPU array, any result's marginals go there."""

    _destroy = "sg_emlog_result_destroy"

    def __init__(self, plan: EmSearch, axes: list[Axis], pairs: list[tuple[int, int]]) -> None:
        super().__init__()
        self._uses_handles(plan)
        self.axes = [a.values for a in axes]
        self.pairs = pairs
        self._ctx = plan.ctx
        self._home: _device.Home | None = None  # the GPU arrays' library, for marginals

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

    def _on_gpu(self, out: Any) -> _device.Gathered | None:
        """`out` described when the marginal goes to the GPU (`out` there, or none given
        for a result of GPU arrays); None for the host call."""
        on_gpu = _device.gather(out=out)
        if on_gpu is None and out is None and self._home is not None:
            return {}
        return on_gpu

    def marginal(self, parameter: int, *, out: Any = None) -> np.ndarray:
        """Equivalent models per value of axis `parameter` (uint64, the axis's length), into
        a new array or `out`. On the GPU (see the class): queued on the stream of `out` or
        of the plan's library, without waiting."""
        k = _arrays.count(parameter, "parameter")
        if k >= len(self.axes):
            raise InvalidArgumentError(f"parameter = {k}: the search has {len(self.axes)}")
        n = len(self.axes[k])
        on_gpu = self._on_gpu(out)
        if on_gpu is not None:
            with _device.DeviceCall(self._ctx, on_gpu, self._home) as call:
                result, o = call.output(None, (n,), np.dtype(np.uint64))
                call.run("sg_emlog_result_marginal_device", self._ptr(), k, o.ptr, n)
            return result
        counts, _ = _arrays.output(out, (n,), np.dtype(np.uint64))
        check("sg_emlog_result_marginal", _lib.lib.sg_emlog_result_marginal(
            self._ptr(), k, counts.ctypes.data, counts.size))
        return counts

    def pair(self, which: int | tuple[int, int], *, out: Any = None) -> np.ndarray:
        """Equivalent models per (i_a, i_b) of a requested pair (its index in ``pairs``, or
        the pair (a, b) itself): uint64, indexed ``[i_a, i_b]``, i_a fastest in memory (a
        new array, or `out`: shape (n_a, n_b) laid out so, e.g.
        ``numpy.empty((n_b, n_a), numpy.uint64).T``). On the GPU as :meth:`marginal`."""
        if isinstance(which, tuple):
            key = tuple(int(v) for v in which)
            index = self.pairs.index(key) if key in self.pairs else -1
        else:
            index = _arrays.count(which, "pair")
        if not 0 <= index < len(self.pairs):
            raise InvalidArgumentError(f"pair {which!r} was not requested (pairs {self.pairs})")
        a, b = self.pairs[index]
        na, nb = len(self.axes[a]), len(self.axes[b])
        on_gpu = self._on_gpu(out)
        if on_gpu is not None:
            with _device.DeviceCall(self._ctx, on_gpu, self._home) as call:
                result, o = call.output(None, (na, nb), np.dtype(np.uint64), axes=(1, 0))
                call.run("sg_emlog_result_pair_device", self._ptr(), index, o.ptr, na * nb)
            return result
        counts = np.empty((nb, na), np.uint64) if out is None else _pair_out(out, na, nb)
        check("sg_emlog_result_pair", _lib.lib.sg_emlog_result_pair(
            self._ptr(), index, counts.ctypes.data, counts.size))
        return counts.T


def _matrix_strides(mat: _device.DeviceArray) -> tuple[int, int]:
    """A GPU matrix's row and column strides in elements (any positive ones: it is read
    where it is); an axis of length 1 takes 1."""
    item = mat.dtype.itemsize
    strides = []
    for size, s in zip(mat.shape, mat.strides):
        if size <= 1:
            strides.append(1)
        elif s <= 0 or s % item:
            raise InvalidArgumentError(
                f"a: strides {mat.strides} (bytes); a GPU matrix is read where it is: its "
                f"strides must be positive multiples of {item} (C or Fortran order, a slice)")
        else:
            strides.append(s // item)
    return strides[0], strides[1]


def _pair_out(out: Any, na: int, nb: int) -> np.ndarray:
    """`out` (n_a, n_b), i_a fastest, checked; its transpose, the C-ordered (n_b, n_a)."""
    if not isinstance(out, np.ndarray):
        raise ArgumentTypeError(f"out: expected a NumPy array, got {type(out).__name__}")
    if out.shape != (na, nb):
        raise InvalidArgumentError(f"out: shape {out.shape}; this call writes {(na, nb)}")
    if not out.T.flags.c_contiguous:
        raise InvalidArgumentError(
            f"out: strides {out.strides}; this call writes i_a fastest (strides "
            f"{(8, 8 * na)}): pass numpy.empty(({nb}, {na}), numpy.uint64).T")
    return _arrays.check_out(out.T, (nb, na), np.dtype(np.uint64), "out.T")
