"""Ownership of the library's handles: close(), context managers, the garbage collector."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from . import _lib
from ._errors import ClosedError

_LOCK = threading.Lock()


class Handle:
    """An object of the C library that this Python object owns.

    ``close()`` releases it (later calls raise :class:`seisgpu.ClosedError`); so do the end
    of a ``with`` block and the garbage collector. A handle that others still use (a
    context with live plans) is released when the last of them is.
    """

    _destroy: str = ""  # the C function that releases the handle

    def __init__(self) -> None:
        self._h = ctypes.c_void_p()
        self._users = 0
        self._closed = False
        self._uses: tuple[Handle, ...] = ()

    def _uses_handles(self, *others: Handle) -> None:
        """Keeps `others` (contexts) open while this handle lives."""
        with _LOCK:
            for o in others:
                o._users += 1
            self._uses = others

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed or not self._h

    def _ptr(self) -> ctypes.c_void_p:
        if self._closed or not self._h:
            raise ClosedError(f"this {type(self).__name__} is closed")
        return self._h

    def close(self) -> None:
        """Releases the library's object (idempotent)."""
        with _LOCK:
            self._closed = True
            if self._users:
                return
        self._release()

    def _release(self) -> None:
        h, self._h = self._h, ctypes.c_void_p()
        if h:
            getattr(_lib.lib, self._destroy)(h)
        with _LOCK:
            uses, self._uses = self._uses, ()
            ready = []
            for o in uses:
                o._users -= 1
                if o._users == 0 and o._closed:
                    ready.append(o)
        for o in ready:
            o._release()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing may escape a finaliser (interpreter exit)
            pass

    def __enter__(self) -> Any:
        self._ptr()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Plan(Handle):
    """A plan of the C library: a handle that may hold device memory on a CUDA context."""

    _workspace: str = ""  # the C function that reports it

    @property
    def workspace_bytes(self) -> int:
        """Device bytes the plan holds (``sg_<object>_workspace_bytes``; 0 on a CPU context):
        what it made at creation and the buffers its calls keep. See ``docs/device.md``."""
        bytes_ = ctypes.c_size_t()
        status = getattr(_lib.lib, self._workspace)(self._ptr(), ctypes.byref(bytes_))
        from ._errors import check
        check(self._workspace, status)
        return bytes_.value
