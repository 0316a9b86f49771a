"""NumPy arguments: GPU arrays, dtypes, strides, ``out=``.

Inputs are used in place when their memory layout is one the C call accepts (any strides
that the C call's own stride arguments can express); otherwise they are copied once.
Outputs are new C-ordered arrays unless ``out=`` is given, which must have the result's
shape and dtype and be writable, aligned and C-contiguous.
"""

from __future__ import annotations

import ctypes
from typing import Any, Iterable

import numpy as np

from ._errors import ArgumentTypeError, InvalidArgumentError

REAL: tuple[np.dtype, ...] = (np.dtype(np.float32), np.dtype(np.float64))
COMPLEX: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64),
                                     np.dtype(np.float64): np.dtype(np.complex128)}
SUFFIX: dict[np.dtype, str] = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
          np.dtype(np.complex64): "f32", np.dtype(np.complex128): "f64"}


def host(x: Any, name: str) -> np.ndarray:
    """`x` as a NumPy array, without a copy when it is one.

    GPU arrays (CuPy, PyTorch on CUDA) are copied to host memory: this is for the calls
    without device entry points in the C ABI (the others go through `_device`).
    """
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__") or _is_torch(x):
        if callable(getattr(x, "get", None)):  # CuPy
            return np.asarray(x.get())
        if callable(getattr(x, "cpu", None)):  # PyTorch
            t = x.detach() if callable(getattr(x, "detach", None)) else x
            return np.asarray(t.cpu().numpy())
        raise ArgumentTypeError(
            f"{name}: a GPU array of type {type(x).__name__} cannot be read: seisgpu's "
            "Python calls take host arrays (copy it to a NumPy array first)")
    try:
        return np.asarray(x)
    except Exception as e:  # noqa: BLE001 - any conversion failure is the argument's fault
        raise ArgumentTypeError(f"{name}: expected an array, got {type(x).__name__}") from e


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def native(a: np.ndarray) -> np.ndarray:
    """`a` in the machine's byte order (a copy only when it is not)."""
    if a.dtype.byteorder not in ("=", "|") and a.dtype.byteorder != _NATIVE:
        return a.astype(a.dtype.newbyteorder("="))
    return a


_NATIVE = "<" if np.little_endian else ">"


def real(x: Any, name: str, dtypes: Iterable[np.dtype] = REAL) -> np.ndarray:
    """A float32 or float64 array (or one of `dtypes`)."""
    a = native(host(x, name))
    allowed = tuple(np.dtype(d) for d in dtypes)
    if a.dtype.newbyteorder("=") not in allowed:
        raise ArgumentTypeError(
            f"{name}: dtype {a.dtype} is not accepted; expected "
            f"{' or '.join(str(d) for d in allowed)} (convert with .astype(...))")
    return a


def same_dtype(x: Any, name: str, dtype: np.dtype) -> np.ndarray:
    return real(x, name, (dtype,))


def ptr(a: np.ndarray | None) -> int | None:
    return None if a is None else a.ctypes.data


def aligned(a: np.ndarray) -> bool:
    return a.ctypes.data % a.dtype.alignment == 0


def contiguous(a: np.ndarray) -> np.ndarray:
    """`a` itself when C-contiguous and aligned, else a C-ordered aligned copy."""
    if a.flags.c_contiguous and aligned(a):
        return a
    return np.array(a, order="C", copy=True)


def trace_stride(a: np.ndarray, n_samples: int) -> int | None:
    """The element stride between consecutive traces when `a` (..., n_samples) is a batch of
    traces with contiguous samples, equally spaced, each after the previous one; else None."""
    item = a.itemsize
    if not aligned(a) or (n_samples > 1 and a.strides[-1] != item):
        return None
    stride = None
    span = None
    for size, st in zip(reversed(a.shape[:-1]), reversed(a.strides[:-1])):
        if size == 1:
            continue
        if stride is None:
            stride, span = st, st * size
        elif st != span:
            return None
        else:
            span = st * size
    if stride is None:
        return n_samples
    if stride % item or stride // item < n_samples:
        return None
    return stride // item


def check_out(out: Any, shape: tuple[int, ...], dtype: np.dtype, name: str = "out"
              ) -> np.ndarray:
    """`out` checked: a writable, aligned, C-contiguous array of `shape` and `dtype`."""
    if not isinstance(out, np.ndarray):
        raise ArgumentTypeError(f"{name}: expected a NumPy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise ArgumentTypeError(f"{name}: dtype {out.dtype}; this call writes {dtype}")
    if out.shape != tuple(shape):
        raise InvalidArgumentError(f"{name}: shape {out.shape}; this call writes {tuple(shape)}")
    if not out.flags.writeable:
        raise InvalidArgumentError(f"{name}: the array is read-only")
    if not (out.flags.c_contiguous and aligned(out)):
        raise InvalidArgumentError(
            f"{name}: the array is not C-contiguous (strides {out.strides}); pass a "
            "C-ordered array, e.g. numpy.empty(shape, dtype)")
    return out


def output(out: Any, shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """A new C-ordered array, or `out` checked; and whether it is the caller's."""
    if out is None:
        return np.empty(shape, dtype), False
    return check_out(out, shape, dtype), True


def sizes(values: Iterable[int], name: str) -> list[int]:
    """Non-negative integers (a shape), refused with the argument's name otherwise."""
    result = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ArgumentTypeError(f"{name}[{i}]: expected an integer, got {v!r}")
        if v < 0:
            raise InvalidArgumentError(f"{name}[{i}] = {v}: expected a size ≥ 0")
        result.append(int(v))
    return result


def count(v: Any, name: str, minimum: int = 0) -> int:
    """A non-negative integer argument (so that -1 is refused, not wrapped to 2^64 - 1)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ArgumentTypeError(f"{name}: expected an integer, got {v!r}")
    if v < minimum:
        raise InvalidArgumentError(f"{name} = {v}: expected an integer ≥ {minimum}")
    return int(v)


def number(v: Any, name: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{name}: expected a number, got {v!r}") from e


def size_array(values: Iterable[int]) -> ctypes.Array:
    vals = list(values)
    return (ctypes.c_size_t * len(vals))(*vals)
