"""Arrays in GPU memory (CuPy, PyTorch, Numba, …), passed to the library's device calls.

An array is in GPU memory when it has ``__cuda_array_interface__`` (version 2 or 3): its
address, dtype, shape and strides go to the ``sg_*_device_*`` call as they are, with no
copy. A call takes all of its data arrays on the GPU or all in host memory, never a mix.

The stream a call is ordered on: the one the arrays' interface names (``stream``, version
3; 1, the legacy default stream, is the library's 0), else the current stream of the
array's library on the array's device (CuPy's ``get_current_stream()``, PyTorch's
``current_stream(device)``), else the legacy default stream. CuPy and PyTorch are imported
only when one of their arrays is passed; the package needs neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._errors import ArgumentTypeError, InvalidArgumentError

# The interface's stream values with a meaning of their own (CUDA's CU_STREAM_LEGACY and
# CU_STREAM_PER_THREAD); the library takes 0 for the legacy default stream.
CAI_LEGACY_STREAM, CAI_PER_THREAD_STREAM = 1, 2


@dataclass(frozen=True)
class DeviceArray:
    """What the library needs of a caller's GPU array; `obj` is the array itself."""

    obj: Any
    name: str
    ptr: int
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes
    readonly: bool
    stream: int | None  # the stream the interface names, as the library takes it

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def library(self) -> str:
        """The top-level module of the array's type: ``"cupy"``, ``"torch"``, …"""
        return type(self.obj).__module__.split(".")[0]

    def has_strides(self, strides: Sequence[int]) -> bool:
        """Whether the array is laid out with `strides` (axes of length ≤ 1 aside)."""
        return all(n <= 1 or s == w for n, s, w in zip(self.shape, self.strides, strides))

    @property
    def c_contiguous(self) -> bool:
        return self.size == 0 or self.has_strides(c_strides(self.shape, self.dtype.itemsize))


def c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """The byte strides of a C-ordered array of `shape`."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def interface(x: Any, name: str) -> Mapping[str, Any] | None:
    """`x`'s ``__cuda_array_interface__``, or None when it has none."""
    if isinstance(x, np.ndarray):
        return None
    try:
        cai = x.__cuda_array_interface__
    except AttributeError:  # none, or a CPU tensor of a library that defines the property
        return None
    except Exception as e:  # noqa: BLE001 - e.g. PyTorch's refusal for a tensor with grad
        raise ArgumentTypeError(
            f"{name}: its __cuda_array_interface__ cannot be read: {e}") from e
    if not isinstance(cai, Mapping):
        raise ArgumentTypeError(f"{name}: __cuda_array_interface__ is not a dict")
    return cai


def stream_value(stream: Any) -> int | None:
    """An interface's ``stream`` entry as the library takes it (None: none named)."""
    if stream is None:
        return None
    s = int(stream)
    return 0 if s == CAI_LEGACY_STREAM else s


def view(x: Any, name: str) -> DeviceArray | None:
    """`x` described for a device call, or None when it is not in GPU memory."""
    cai = interface(x, name)
    if cai is None:
        return None
    try:
        ptr, readonly = cai["data"]
        shape = tuple(int(n) for n in cai["shape"])
        dtype = np.dtype(cai["typestr"])
        raw = cai.get("strides")
        strides = (c_strides(shape, dtype.itemsize) if raw is None
                   else tuple(int(s) for s in raw))
        stream = stream_value(cai.get("stream"))
    except (KeyError, TypeError, ValueError) as e:
        raise ArgumentTypeError(
            f"{name}: a {type(x).__name__} whose __cuda_array_interface__ is incomplete "
            f"or malformed ({e!r})") from e
    if _lazy_sign(x):
        raise InvalidArgumentError(
            f"{name}: a PyTorch tensor with a pending conjugation or negation (its memory "
            "does not hold its values): pass x.resolve_conj().resolve_neg()")
    if cai.get("mask") is not None:
        raise InvalidArgumentError(f"{name}: masked GPU arrays are not accepted")
    if not dtype.isnative:
        raise ArgumentTypeError(f"{name}: dtype {dtype} is not in the machine's byte order")
    return DeviceArray(x, name, int(ptr or 0), dtype, shape, strides, bool(readonly), stream)


def _lazy_sign(x: Any) -> bool:
    """Whether `x` is a PyTorch view whose conjugation or negation is not yet applied."""
    return any(callable(getattr(x, f, None)) and bool(getattr(x, f)())
               for f in ("is_conj", "is_neg"))


def gather(**arrays: Any) -> dict[str, DeviceArray] | None:
    """The arrays of one call (None entries left out) described, when they are in GPU memory;
    None when they are all host arrays. A mix of both is refused."""
    views = {n: view(a, n) for n, a in arrays.items() if a is not None}
    on_gpu = [n for n, v in views.items() if v is not None]
    if not on_gpu:
        return None
    on_host = [n for n, v in views.items() if v is None]
    if on_host:
        raise InvalidArgumentError(
            f"{_names(on_gpu)} in GPU memory but {_names(on_host)} in host memory: pass "
            "every array of a call on the GPU (CuPy, PyTorch, …) or every one as NumPy")
    return {n: v for n, v in views.items() if v is not None}


def _names(names: list[str]) -> str:
    return f"{names[0]} is" if len(names) == 1 else f"{', '.join(names)} are"


def current_stream(a: DeviceArray) -> int:
    """The current stream of `a`'s library on `a`'s device (0, the legacy default stream,
    for a library this package does not know)."""
    if a.library == "cupy":
        import cupy  # type: ignore[import-not-found]

        with a.obj.device:
            return int(cupy.cuda.get_current_stream().ptr)
    if a.library == "torch":
        import torch  # type: ignore[import-not-found]

        return int(torch.cuda.current_stream(a.obj.device).cuda_stream)
    return 0


def choose_stream(arrays: Iterable[DeviceArray]) -> int:
    """The stream a call on `arrays` is ordered on: the one their interfaces name (they must
    agree), else the current stream of the first one's library."""
    arrays = list(arrays)
    named = {a.stream: a.name for a in arrays if a.stream is not None}
    if len(named) > 1:
        which = ", ".join(f"{n} on 0x{s:x}" for s, n in named.items())
        raise InvalidArgumentError(
            f"the arrays name different CUDA streams ({which}): make them on one stream")
    if named:
        return next(iter(named))
    return current_stream(arrays[0])


def stream_handle(stream: Any) -> int:
    """A stream given as an integer (``CUstream``), a CuPy stream (``.ptr``) or a PyTorch
    stream (``.cuda_stream``), as the integer the library takes."""
    if not isinstance(stream, (int, np.integer)):
        for attr in ("ptr", "cuda_stream"):
            if hasattr(stream, attr):
                stream = getattr(stream, attr)
                break
    if isinstance(stream, (bool, np.bool_)) or not isinstance(stream, (int, np.integer)) \
            or stream < 0:
        raise ArgumentTypeError(
            f"stream: expected a CUstream as an integer, a cupy.cuda.Stream or a "
            f"torch.cuda.Stream, got {stream!r}")
    return int(stream)


def empty(like: DeviceArray, shape: tuple[int, ...], dtype: np.dtype,
          axes: tuple[int, ...] | None = None) -> Any:
    """A new array of `shape` of `like`'s library on `like`'s device: C-ordered, or with
    `axes` a view of a C-ordered array with its axes permuted (see `layout_strides`)."""
    base = _unpermute(shape, axes)
    if like.library == "cupy":
        import cupy  # type: ignore[import-not-found]

        with like.obj.device:
            a = cupy.empty(base, dtype)
        return a if axes is None else a.transpose(axes)
    if like.library == "torch":
        import torch  # type: ignore[import-not-found]

        t = torch.empty(base, dtype=_torch_dtype(torch, dtype), device=like.obj.device)
        return t if axes is None else t.permute(*axes)
    raise ArgumentTypeError(
        f"{like.name}: seisgpu allocates results for CuPy arrays and PyTorch tensors, not "
        f"for a {type(like.obj).__name__}: pass out=, a GPU array of the result's shape")


def _torch_dtype(torch: Any, dtype: np.dtype) -> Any:
    return {"float32": torch.float32, "float64": torch.float64,
            "complex64": torch.complex64, "complex128": torch.complex128}[np.dtype(dtype).name]


def relaid(a: DeviceArray, axes: tuple[int, ...] | None) -> DeviceArray:
    """`a` copied on the GPU, by its own library on its current stream, into a new array
    laid out as `layout_strides(a.shape, …, axes)` says."""
    if a.library not in ("cupy", "torch"):
        raise InvalidArgumentError(
            f"{a.name}: strides {a.strides} (bytes); the call reads strides "
            f"{layout_strides(a.shape, a.dtype.itemsize, axes)}, and seisgpu copies only CuPy "
            f"arrays and PyTorch tensors, not a {type(a.obj).__name__}")
    copy = empty(a, a.shape, a.dtype, axes)
    if a.library == "cupy":
        copy[...] = a.obj
    else:
        copy.copy_(a.obj)
    described = view(copy, a.name)
    assert described is not None
    return described


class DeviceCall:
    """One call's GPU arrays: their checks, the outputs, and the library call on their
    stream. A method maps its host call to the device call through it::

        arrays = _device.gather(data=data, out=out)
        if arrays is not None:                      # every array on the GPU
            call = _device.DeviceCall(self.ctx, arrays)
            a = call.input("data", _arrays.REAL)    # dtype, C-contiguous, aligned
            result, o = call.output(a, a.shape, a.dtype)
            call.run("sg_<object>_<verb>_device_f32", self._ptr(), a.ptr, o.ptr, ...)
            return result
        ...                                         # the host call, unchanged
    """

    def __init__(self, ctx: Any, arrays: dict[str, DeviceArray]) -> None:
        self.ctx, self.arrays = ctx, arrays
        self.stream = choose_stream(arrays.values())

    def input(self, name: str, dtypes: Iterable[np.dtype], contiguous: bool = True
              ) -> DeviceArray:
        """The input `name`, checked: a dtype of `dtypes`, C-contiguous unless the caller
        checks its layout itself."""
        a = self.arrays[name]
        allowed = tuple(np.dtype(d) for d in dtypes)
        if a.dtype not in allowed:
            raise ArgumentTypeError(
                f"{name}: dtype {a.dtype} is not accepted; expected "
                f"{' or '.join(str(d) for d in allowed)}")
        if contiguous and not a.c_contiguous:
            raise InvalidArgumentError(
                f"{name}: a GPU array with strides {a.strides} (bytes) is not C-contiguous; "
                "device calls read GPU arrays in place and copy none: pass a C-contiguous "
                "array (e.g. cupy.ascontiguousarray(x), x.contiguous())")
        if a.ptr % a.dtype.alignment:
            raise InvalidArgumentError(f"{name}: address 0x{a.ptr:x} is not aligned")
        return a

    def output(self, like: DeviceArray, shape: tuple[int, ...], dtype: np.dtype,
               axes: tuple[int, ...] | None = None, name: str = "out") -> tuple[Any, DeviceArray]:
        """The caller's `out` checked (shape, dtype, writable, layout), or a new array of
        `like`'s library; with its description."""
        if name not in self.arrays:
            obj = empty(like, shape, dtype, axes)
            described = view(obj, name)
            assert described is not None
            return obj, described
        o = self.arrays[name]
        if o.dtype != dtype:
            raise ArgumentTypeError(f"{name}: dtype {o.dtype}; this call writes {dtype}")
        if o.shape != tuple(shape):
            raise InvalidArgumentError(f"{name}: shape {o.shape}; this call writes {shape}")
        if o.readonly:
            raise InvalidArgumentError(f"{name}: the GPU array is read-only")
        want = layout_strides(shape, dtype.itemsize, axes)
        if not o.has_strides(want) or o.ptr % dtype.alignment:
            raise InvalidArgumentError(
                f"{name}: strides {o.strides} (bytes); this call writes strides {want}")
        return o.obj, o

    def run(self, fn: str, *args: Any) -> None:
        """Calls the library's device call `fn` ordered on the arrays' stream."""
        self.ctx._device_call(fn, self.stream, *args)


def _unpermute(shape: Sequence[int], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    """The C-ordered shape whose axes, permuted by `axes`, give `shape`."""
    if axes is None:
        return tuple(shape)
    base = [0] * len(shape)
    for i, a in enumerate(axes):
        base[a] = shape[i]
    return tuple(base)


def layout_strides(shape: Sequence[int], itemsize: int,
                   axes: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The byte strides of an array of `shape` that is a C-ordered array with its axes
    permuted by `axes` (C order itself when None)."""
    base = c_strides(_unpermute(shape, axes), itemsize)
    return base if axes is None else tuple(base[a] for a in axes)

