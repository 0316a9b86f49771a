"""The exceptions: every failure raises a subclass of :class:`Error`.

A failing library call raises the class of its status, with ``status`` (the status name,
e.g. ``"SG_ERR_NON_FINITE"``), ``code`` (its number), ``call`` (the C function) and the
library's ``message``. Arguments refused before any call (a wrong dtype, a wrong shape, an
unknown option) raise :class:`ArgumentTypeError` (a ``TypeError``) or
:class:`InvalidArgumentError` (a ``ValueError``) with a message naming the argument;
their ``status`` and ``code`` are ``None``. Whatever the failure, no ``out=`` array has
been written.
"""

from __future__ import annotations

from . import _lib


class Error(Exception):
    """Base class of every seisgpu exception."""

    status: str | None
    code: int | None
    call: str | None
    message: str

    def __init__(self, message: str, *, status: str | None = None, code: int | None = None,
                 call: str | None = None):
        self.status, self.code, self.call, self.message = status, code, call, message
        text = message if call is None else f"{call}: {status}: {message}"
        super().__init__(text)


class InvalidArgumentError(Error, ValueError):
    """A value the call does not accept (``SG_ERR_INVALID_ARGUMENT``, a wrong shape, …)."""


class NonFiniteError(InvalidArgumentError):
    """The input holds NaN or infinity (``SG_ERR_NON_FINITE``); nothing was written."""


class UnsupportedError(InvalidArgumentError):
    """Valid in general but not for this plan (``SG_ERR_UNSUPPORTED``)."""


class ClosedError(InvalidArgumentError):
    """A call on a plan or context after its ``close()``."""


class ArgumentTypeError(Error, TypeError):
    """An argument of the wrong type or dtype, or an unknown keyword option."""


class CancelledError(Error):
    """The progress callback stopped the call (``SG_ERR_CANCELLED``); nothing was written."""


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory ran out (``SG_ERR_OUT_OF_MEMORY``, ``_DEVICE_OUT_OF_MEMORY``)."""


class CudaError(Error, RuntimeError):
    """No usable GPU, a CUDA driver error or a kernel that did not compile."""


class InternalError(Error, RuntimeError):
    """A bug in seisgpu (``SG_ERR_INTERNAL``) or a status this package does not know."""


_BY_STATUS = {
    1: InvalidArgumentError,  # SG_ERR_INVALID_ARGUMENT
    2: InvalidArgumentError,  # SG_ERR_NULL_POINTER
    3: UnsupportedError,  # SG_ERR_UNSUPPORTED
    4: OutOfMemoryError,  # SG_ERR_OUT_OF_MEMORY
    5: OutOfMemoryError,  # SG_ERR_DEVICE_OUT_OF_MEMORY
    6: CudaError,  # SG_ERR_CUDA_UNAVAILABLE
    7: CudaError,  # SG_ERR_CUDA_DRIVER
    8: CudaError,  # SG_ERR_KERNEL_COMPILE
    9: NonFiniteError,  # SG_ERR_NON_FINITE
    10: InvalidArgumentError,  # SG_ERR_BUFFER_TOO_SMALL
    11: InternalError,  # SG_ERR_INTERNAL
    12: CancelledError,  # SG_ERR_CANCELLED
}


def check(call: str, status: int) -> None:
    """Raises the exception of `status` (with this thread's last message) unless it is 0."""
    if status == 0:
        return
    message = (_lib.lib.sg_last_error_message() or b"").decode("utf-8", "replace")
    name = _lib.lib.sg_status_string(status).decode()
    raise _BY_STATUS.get(status, InternalError)(message, status=name, code=status, call=call)

