"""Arrays in GPU memory that offer DLPack only (``__dlpack__`` and ``__dlpack_device__``, no
``__cuda_array_interface__``): JAX arrays and other DLPack producers.

An array is taken as in GPU memory when ``__dlpack_device__()`` names a CUDA device
(kDLCUDA, or kDLCUDAManaged for managed memory). It is exported with
``__dlpack__(stream=s)``, s the stream the call is ordered on, so that the producer makes
its pending work visible there (DLPack's stream values: 1 the legacy default stream, 2 the
per-thread one; the library's 0 is passed as 1). The capsule's ``DLManagedTensor`` (or
``DLManagedTensorVersioned``, DLPack 1.x) is read with ctypes: address ``data +
byte_offset``, dtype, shape and strides (elements; none means C order). Consuming it
renames the capsule ``"used_dltensor"`` (``"used_dltensor_versioned"``), as the protocol
asks; the consumer then owns the tensor and calls its deleter once done with it
(:class:`Managed`).
"""

from __future__ import annotations

import ctypes
from typing import Any, Iterable

import numpy as np

from ._errors import ArgumentTypeError, InvalidArgumentError

KDL_CUDA, KDL_CUDA_MANAGED = 2, 13
GPU_DEVICES = (KDL_CUDA, KDL_CUDA_MANAGED)
# DLPack's stream value for the legacy default stream (0 is not allowed for CUDA).
LEGACY_STREAM = 1
FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY of a versioned tensor
MAX_VERSION = (1, 0)  # the newest DLPack ABI read here


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# DLPack's type codes (kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool) and bits → NumPy.
_DTYPES = {(0, 8): "i1", (0, 16): "i2", (0, 32): "i4", (0, 64): "i8",
           (1, 8): "u1", (1, 16): "u2", (1, 32): "u4", (1, 64): "u8",
           (2, 16): "f2", (2, 32): "f4", (2, 64): "f8", (5, 64): "c8", (5, 128): "c16",
           (6, 8): "?"}

# The deleter is called with the GIL held (a PYFUNCTYPE): a producer that needs the GIL
# takes it again without harm, one that does not ignores it.
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def _capsule_api(name: str, args: list, res: Any) -> Any:
    # Indexing makes a function object of our own, so that other users of
    # ctypes.pythonapi who declare these functions differently are not affected.
    f = ctypes.pythonapi[name]
    f.argtypes, f.restype = args, res
    return f


_get_name = _capsule_api("PyCapsule_GetName", [ctypes.py_object], ctypes.c_char_p)
_get_pointer = _capsule_api("PyCapsule_GetPointer", [ctypes.py_object, ctypes.c_char_p],
                            ctypes.c_void_p)
_set_name = _capsule_api("PyCapsule_SetName", [ctypes.py_object, ctypes.c_char_p],
                         ctypes.c_int)
_is_capsule = _capsule_api("PyCapsule_IsValid", [ctypes.py_object, ctypes.c_char_p],
                           ctypes.c_int)

# PyCapsule_SetName keeps the pointer, not a copy: the names live as long as the module.
_USED = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")


def gpu_device(x: Any, name: str) -> tuple[int, int] | None:
    """`x`'s ``(device_type, device_id)`` when it is a DLPack producer on a CUDA device;
    None when it is not one (no DLPack, or host memory)."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return None
    describe = getattr(x, "__dlpack_device__", None)
    if describe is None:
        return None
    try:
        kind, index = (int(v) for v in describe())
    except Exception as e:  # noqa: BLE001 - the producer's failure is the argument's fault
        raise ArgumentTypeError(f"{name}: its __dlpack_device__() failed or is malformed "
                                f"({e!r})") from e
    return (kind, index) if kind in GPU_DEVICES else None


class Managed:
    """A consumed DLPack tensor: its deleter runs once, at :meth:`release` (or when this
    object is collected, if nothing released it before)."""

    def __init__(self, address: int, deleter: int, capsule: Any) -> None:
        self._address, self._deleter, self._capsule = address, deleter, capsule

    def release(self) -> None:
        address, self._address = self._address, 0
        if address and self._deleter:
            _DELETER(self._deleter)(address)
        self._capsule = None

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001 - nothing may escape a finaliser
            pass


def export(x: Any, name: str, stream: int) -> tuple[dict[str, Any], Managed]:
    """`x` exported for use on `stream` (the library's value; 0 the legacy default
    stream): its description (``ptr``, ``dtype``, ``shape``, byte ``strides``,
    ``readonly``) and the consumed tensor, whose deleter the caller runs when done."""
    capsule = _capsule(x, name, LEGACY_STREAM if stream == 0 else stream)
    versioned = bool(_is_capsule(capsule, b"dltensor_versioned"))
    if not versioned and not _is_capsule(capsule, b"dltensor"):
        raise ArgumentTypeError(
            f"{name}: __dlpack__() returned {type(capsule).__name__} "
            f"{_capsule_name(capsule)!r}, not an unused DLPack capsule")
    address = _get_pointer(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    if versioned:
        m: Any = DLManagedTensorVersioned.from_address(address)
        if m.version.major > MAX_VERSION[0]:
            # Not consumed: the capsule's own destructor releases the tensor.
            raise ArgumentTypeError(
                f"{name}: DLPack {m.version.major}.{m.version.minor}; seisgpu reads DLPack "
                f"{MAX_VERSION[0]}.x")
    else:
        m = DLManagedTensor.from_address(address)
    _set_name(capsule, _USED_VERSIONED if versioned else _USED)
    owner = Managed(address, m.deleter or 0, capsule)
    try:
        readonly = versioned and bool(m.flags & FLAG_READ_ONLY)
        return describe(m.dl_tensor, name, readonly), owner
    except BaseException:
        owner.release()
        raise


def _capsule(x: Any, name: str, stream: int) -> Any:
    try:
        try:
            return x.__dlpack__(stream=stream, max_version=MAX_VERSION)
        except TypeError:  # a producer older than DLPack 1.0 takes no max_version
            return x.__dlpack__(stream=stream)
    except Exception as e:  # noqa: BLE001 - the producer's refusal is the argument's fault
        raise ArgumentTypeError(f"{name}: __dlpack__(stream={stream}) failed: {e}") from e


def _capsule_name(capsule: Any) -> bytes | None:
    try:
        return _get_name(capsule)
    except (ValueError, ctypes.ArgumentError):  # not a capsule
        return None


def describe(t: DLTensor, name: str, readonly: bool) -> dict[str, Any]:
    """A DLTensor's address, dtype, shape, byte strides and writability."""
    if t.device.device_type not in GPU_DEVICES:
        raise InvalidArgumentError(
            f"{name}: a DLPack tensor of device type {t.device.device_type}, not CUDA "
            f"memory ({KDL_CUDA})")
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _DTYPES:
        raise ArgumentTypeError(
            f"{name}: DLPack dtype code {t.dtype.code}, {t.dtype.bits} bits, "
            f"{t.dtype.lanes} lanes is not accepted")
    dtype = np.dtype(_DTYPES[key])
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    strides = (None if not t.strides
               else tuple(int(t.strides[i]) * dtype.itemsize for i in range(t.ndim)))
    return {"ptr": (t.data or 0) + int(t.byte_offset), "dtype": dtype, "shape": shape,
            "strides": strides, "readonly": readonly}


def release_all(owners: Iterable[Managed | None]) -> None:
    """Runs the deleters of `owners` (each once), the first failure raised after all ran."""
    error: BaseException | None = None
    for o in owners:
        if o is None:
            continue
        try:
            o.release()
        except BaseException as e:  # noqa: BLE001 - release the others first
            error = error or e
    if error is not None:
        raise error
