"""Stand-ins for GPU arrays and for the library's device calls, for the CPU tests of the
device paths (test_device.py, test_dlpack.py).

- `FakeGpuArray`: says it lives on the GPU (``__cuda_array_interface__`` v3) over a NumPy
  array's memory, so that what a call wrote (or did not write) can be read.
- `FakeDlpack`: a DLPack producer built with ctypes over a NumPy array's memory that says
  kDLCUDA; it records the streams it is exported for and its deleter's calls.
- `twin_library`: the real library with each device call recorded (name, stream, arguments)
  and then answered by its host twin on the same addresses (``sg_x_device_f32`` →
  ``sg_x_f32``; the fakes' memory is host memory), so a test checks the addresses, lengths
  and strides a method passes, and that its results equal the host call's.
- `fake_cupy`: a CuPy module whose arrays are FakeGpuArrays (``cupy.empty``, current stream
  0xC0), for results allocated by the inputs' library.
"""

from __future__ import annotations

import ctypes
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import seisgpu
from seisgpu import _dlpack, _lib

CUPY_STREAM = 0xC0


class FakeGpuArray:
    """Says it lives on the GPU (``__cuda_array_interface__`` v3) over a NumPy array's
    memory."""

    def __init__(self, a: np.ndarray, *, stream: int | None = None, readonly: bool = False):
        self.host = a
        cai = {"data": (a.ctypes.data, readonly), "shape": a.shape, "typestr": a.dtype.str,
               "strides": None if a.flags.c_contiguous else a.strides, "version": 3}
        if stream is not None:
            cai["stream"] = stream
        self.__cuda_array_interface__ = cai


class CupyDevice:
    """A CuPy device: a context manager."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def fake_library(module: str, **attrs) -> type:
    """A FakeGpuArray subclass whose type says it comes from `module`."""
    return type("ndarray", (FakeGpuArray,), {"__module__": module, **attrs})


def _cupy_transpose(self, axes):
    return type(self)(self.host.transpose(axes))


def _cupy_setitem(self, key, value):
    self.host[key] = value.host if isinstance(value, FakeGpuArray) else value


CupyArray = fake_library("cupy._core.core", device=CupyDevice(), transpose=_cupy_transpose,
                         __setitem__=_cupy_setitem)


def fake_cupy(monkeypatch) -> list:
    """Installs a CuPy whose arrays are `CupyArray`s over NumPy memory (new ones filled with
    7); returns the list of the arrays ``cupy.empty`` made."""
    made: list = []

    def empty(shape, dtype):
        a = CupyArray(np.full(shape, 7, dtype))
        made.append(a)
        return a

    cupy = types.SimpleNamespace(empty=empty, cuda=types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=CUPY_STREAM)))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    return made


@dataclass
class Twin:
    """The device calls made: (name, stream, arguments)."""

    calls: list = field(default_factory=list)

    def only(self, name: str) -> tuple[int, tuple]:
        """The stream and arguments of the one call of `name`."""
        hits = [(s, a) for n, s, a in self.calls if n == name]
        assert len(hits) == 1, (name, [n for n, _, _ in self.calls])
        return hits[0]

    @property
    def names(self) -> list[str]:
        return [n for n, _, _ in self.calls]


class _TwinLib:
    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        f = getattr(self._real, name)
        if "_device" not in name:
            return f
        return getattr(self._real, name.replace("_device", ""))


def twin_library(monkeypatch) -> Twin:
    """Device calls recorded, then run by their host twins (see the module's doc)."""
    twin = Twin()
    monkeypatch.setattr(_lib, "lib", _TwinLib(_lib.lib))
    real = seisgpu.Context._device_call

    def recorded(self, fn, stream, *args):
        twin.calls.append((fn, stream, args))
        return real(self, fn, stream, *args)

    monkeypatch.setattr(seisgpu.Context, "_device_call", recorded)
    return twin


# ---- DLPack ---------------------------------------------------------------------------------
_new_capsule = ctypes.pythonapi["PyCapsule_New"]
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_new_capsule.restype = ctypes.py_object
_name_of = ctypes.pythonapi["PyCapsule_GetName"]
_name_of.argtypes = [ctypes.py_object]
_name_of.restype = ctypes.c_char_p

_DLTENSOR = ctypes.create_string_buffer(b"dltensor")
_DLTENSOR_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
# The ctypes objects capsules point into (tensors, deleter thunks), kept for the whole run:
# a capsule, and the consumer's hold on its tensor, may outlive its FakeDlpack.
_ALIVE: list = []


def capsule_name(capsule: Any) -> bytes:
    return _name_of(capsule)


class FakeDlpack:
    """A DLPack producer over `a`'s memory (kDLCUDA unless `device` says otherwise).

    `offset`: bytes the tensor's ``data`` lies before `a` (``byte_offset`` makes it up);
    `strides`: give the DLTensor explicit strides (elements) instead of NULL; `versioned`:
    answer ``max_version`` with a ``DLManagedTensorVersioned`` (`version`, `readonly`);
    `old`: a producer before DLPack 1.0, whose ``__dlpack__`` takes no ``max_version``."""

    def __init__(self, a: np.ndarray, *, offset: int = 0, strides: bool = False,
                 versioned: bool = False, version: tuple[int, int] = (1, 0),
                 readonly: bool = False, old: bool = False, device: tuple[int, int] = (2, 0),
                 dtype: tuple[int, int, int] | None = None) -> None:
        self.host, self.offset, self.strides = a, offset, strides
        self.versioned, self.version, self.readonly, self.old = versioned, version, readonly, old
        self.device, self.dtype = device, dtype
        self.streams: list = []  # the `stream` of each __dlpack__ call
        self.deleted = 0  # deleter calls (by the consumer)
        self.capsules: list = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        if self.old and "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.streams.append(stream)
        versioned = self.versioned and kwargs.get("max_version") is not None
        capsule = self._capsule(versioned)
        self.capsules.append(capsule)
        return capsule

    def _tensor(self) -> _dlpack.DLTensor:
        a = self.host
        ndim = a.ndim
        shape = (ctypes.c_int64 * max(ndim, 1))(*a.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(*[s // a.itemsize for s in a.strides])
        _ALIVE.extend([shape, strides])
        code, bits, lanes = self.dtype or (_CODES[a.dtype.kind], 8 * a.itemsize, 1)
        t = _dlpack.DLTensor()
        t.data = a.ctypes.data - self.offset
        t.device = _dlpack.DLDevice(*self.device)
        t.ndim = ndim
        t.dtype = _dlpack.DLDataType(code, bits, lanes)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides or not a.flags.c_contiguous:
            t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = self.offset
        return t

    def _capsule(self, versioned: bool) -> Any:
        deleter = _DELETER(self._delete)
        if versioned:
            m: Any = _dlpack.DLManagedTensorVersioned()
            m.version = _dlpack.DLPackVersion(*self.version)
            m.flags = _dlpack.FLAG_READ_ONLY if self.readonly else 0
            name = _DLTENSOR_VERSIONED
        else:
            m = _dlpack.DLManagedTensor()
            name = _DLTENSOR
        m.dl_tensor = self._tensor()
        m.deleter = ctypes.cast(deleter, ctypes.c_void_p).value
        _ALIVE.extend([m, deleter])
        # No capsule destructor: a real producer's frees an unconsumed tensor, but a Python
        # one may run while the interpreter tears ctypes down. An unconsumed fake leaks.
        return _new_capsule(ctypes.addressof(m), name, None)

    def _delete(self, address: int) -> None:
        self.deleted += 1

    def address(self) -> int:
        """Where the array's first element is: the DLTensor's data + byte_offset."""
        return self.host.ctypes.data
