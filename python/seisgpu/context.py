"""The context (a backend: all CPU cores, or one GPU), progress reports, describe()."""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Optional

from . import _device, _lib
from ._errors import check
from ._handle import Handle
from ._options import choice

BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
_BACKEND_NAMES = {1: "cpu", 2: "cuda"}

ProgressCallback = Callable[[str, float], Optional[bool]]


class Context(Handle):
    """A backend that plans run on.

    Parameters
    ----------
    backend:
        ``"auto"`` (the GPU when the CUDA driver, NVRTC, cuFFT and a device are present,
        else all CPU cores; ``SEISGPU_BACKEND=cpu|cuda`` overrides it), ``"cpu"`` or
        ``"cuda"`` (fails with :class:`seisgpu.CudaError` rather than falling back).
    device:
        The GPU's ordinal for ``"cuda"`` (0 for the first).

    Several threads may use one context (and one plan) at once; the GIL is released
    during every library call. ``SEISGPU_NUM_THREADS`` sets the CPU backend's threads.
    """

    _destroy = "sg_context_destroy"

    def __init__(self, backend: str = "auto", device: int = 0) -> None:
        super().__init__()
        code = choice(backend, "backend", BACKENDS)
        if isinstance(device, bool) or not isinstance(device, int) or device < 0:
            from ._errors import InvalidArgumentError
            raise InvalidArgumentError(f"device = {device!r}: expected a GPU ordinal ≥ 0")
        self._state()
        check("sg_context_create", _lib.lib.sg_context_create(code, device,
                                                             ctypes.byref(self._h)))

    @classmethod
    def on_cuda_context(cls, cu_context: int) -> "Context":
        """A CUDA context on the application's own CUDA context ``cu_context`` (a
        ``CUcontext`` as an integer, e.g. from ``cuCtxCreate`` through ``cuda-python``):
        the library's kernels, streams and memory live there, and its streams are accepted
        by :meth:`set_stream`. The library never destroys ``cu_context``: keep it alive
        until this context and its plans are gone."""
        if isinstance(cu_context, bool) or not isinstance(cu_context, int) or cu_context < 0:
            from ._errors import InvalidArgumentError
            raise InvalidArgumentError(
                f"cu_context = {cu_context!r}: expected a CUcontext handle as an int")
        self = cls.__new__(cls)
        Handle.__init__(self)
        self._state()
        check("sg_context_create_on_cuda_context",
              _lib.lib.sg_context_create_on_cuda_context(cu_context, ctypes.byref(self._h)))
        return self

    def _state(self) -> None:
        self._progress: Any = None
        # Device calls set the library context's stream, then queue their work: one at a
        # time, so that each is ordered on its own arrays' stream.
        self._device_lock = threading.Lock()
        self._stream: int | None = None  # the stream last set; None: the library's default
        # The stream set_stream chose: calls whose arrays name no stream and belong to no
        # library this package knows (DLPack arrays, …) are ordered on it.
        self._default_stream = 0
        self._cuda: bool | None = None

    @property
    def backend(self) -> str:
        """``"cpu"`` or ``"cuda"``: the backend this context runs on (never ``"auto"``)."""
        b = ctypes.c_int32()
        check("sg_context_backend", _lib.lib.sg_context_backend(self._ptr(), ctypes.byref(b)))
        return _BACKEND_NAMES.get(b.value, str(b.value))

    @property
    def description(self) -> str:
        """The library's description: the backend and why it was chosen; for CUDA the device,
        its memory and the CUDA libraries loaded; for the CPU the thread count."""
        h = self._ptr()
        needed = ctypes.c_size_t()
        _lib.lib.sg_context_describe(h, None, 0, ctypes.byref(needed))
        buf = ctypes.create_string_buffer(needed.value)
        check("sg_context_describe", _lib.lib.sg_context_describe(h, buf, needed, None))
        return buf.value.decode("utf-8", "replace")

    def set_progress(self, callback: ProgressCallback | None) -> None:
        """Calls ``callback(stage, fraction)`` during the long calls of this context and of
        its plans: on the calling thread, after the first chunk of work and then at most
        every 100 ms, with fractions that only grow, and a last time with exactly 1.0.
        A true return stops the call, which then raises :class:`seisgpu.CancelledError`
        and writes nothing; so does an exception raised by the callback. ``None`` removes
        the callback. Change it only while no call runs on this context."""
        if callback is None:
            check("sg_context_set_progress",
                  _lib.lib.sg_context_set_progress(self._ptr(), _lib.PROGRESS(), None))
            self._progress = None
            return
        if not callable(callback):
            from ._errors import ArgumentTypeError
            raise ArgumentTypeError(f"callback: expected a callable or None, got {callback!r}")

        def trampoline(_user: object, stage: bytes, fraction: float) -> int:
            try:
                return 1 if callback(stage.decode(), fraction) else 0
            except BaseException:  # noqa: BLE001 - nothing may unwind through C: stop instead
                return 1

        progress = _lib.PROGRESS(trampoline)
        check("sg_context_set_progress",
              _lib.lib.sg_context_set_progress(self._ptr(), progress, None))
        # Kept alive here: the library holds only the function pointer, and plans keep
        # their context object alive.
        self._progress = progress

    def set_stream(self, stream: Any) -> None:
        """Orders the library's device calls on `stream`: a ``CUstream`` as an integer (0,
        the legacy default stream, is the default), a ``cupy.cuda.Stream`` or a
        ``torch.cuda.Stream`` of this context's device. The calls of this package that take
        GPU arrays set it themselves to their arrays' stream (the one their
        ``__cuda_array_interface__`` names, or their library's current stream); arrays
        that name none and whose library this package does not know (DLPack arrays such as
        JAX's, …) are used on `stream` (exported for it). It is also the stream of
        :meth:`synchronize` and of device calls made through the C library directly.
        Raises :class:`seisgpu.UnsupportedError` on a CPU context."""
        s = _device.stream_handle(stream)
        with self._device_lock:
            check("sg_context_set_stream", _lib.lib.sg_context_set_stream(self._ptr(), s))
            self._stream = self._default_stream = s

    def set_device_checks(self, on: bool) -> None:
        """With `on`, each device call made on this context scans its inputs on the GPU (one
        more read of each) and :meth:`synchronize` raises :class:`seisgpu.NonFiniteError`
        naming the first call that met a NaN or an infinity since the last report. Off by
        default. Raises :class:`seisgpu.UnsupportedError` on a CPU context (host calls always
        check their inputs)."""
        check("sg_context_set_device_checks",
              _lib.lib.sg_context_set_device_checks(self._ptr(), 1 if on else 0))

    def set_device_allocator(self, alloc: Optional[Callable[[int, int], int]],
                             free: Optional[Callable[[int, int, int], None]]) -> None:
        """Makes ``alloc(nbytes, stream) -> address`` and ``free(address, nbytes, stream)``
        the source of the device memory this context's plans and calls allocate from now on
        (a memory pool's, e.g. ``cupy.cuda.alloc``'s or PyTorch's caching allocator's):
        `stream` is the ``CUstream`` the memory is first (and last) used on, the address a
        ``CUdeviceptr`` aligned to 256 bytes; an exception in `alloc` (or an address of 0)
        refuses, and the call that asked raises :class:`seisgpu.OutOfMemoryError`. Both
        None restore the default allocator. The hooks run on the library's calling threads
        (the GIL is taken for them) and must stay valid until every plan made while they
        were set is closed: this context keeps them. Raises
        :class:`seisgpu.UnsupportedError` on a CPU context."""
        if (alloc is None) != (free is None):
            from ._errors import InvalidArgumentError
            raise InvalidArgumentError("give both alloc and free, or neither")
        if alloc is None:
            hooks: Any = (ctypes.cast(None, _lib.DEVICE_ALLOC),
                          ctypes.cast(None, _lib.DEVICE_FREE))
        else:
            def c_alloc(_user: Any, nbytes: int, stream: int, out: Any) -> int:
                try:
                    out[0] = int(alloc(int(nbytes), int(stream)))
                    return 0
                except Exception:  # noqa: BLE001 - any failure is a refusal
                    return 1

            def c_free(_user: Any, ptr: int, nbytes: int, stream: int) -> None:
                try:
                    free(int(ptr), int(nbytes), int(stream))
                except Exception:  # noqa: BLE001 - nothing to report to
                    pass

            hooks = (_lib.DEVICE_ALLOC(c_alloc), _lib.DEVICE_FREE(c_free))
        check("sg_context_set_device_allocator",
              _lib.lib.sg_context_set_device_allocator(self._ptr(), hooks[0], hooks[1], None))
        # Buffers made with earlier hooks give their memory back through them: keep them all.
        self._allocators = getattr(self, "_allocators", []) + [hooks]

    def device_memory(self) -> tuple[int, int]:
        """(bytes held now, most held at once): device memory the library holds for this
        context and its plans; (0, 0) on a CPU context."""
        in_use, peak = ctypes.c_size_t(), ctypes.c_size_t()
        check("sg_context_device_memory", _lib.lib.sg_context_device_memory(
            self._ptr(), ctypes.byref(in_use), ctypes.byref(peak)))
        return in_use.value, peak.value

    def synchronize(self) -> None:
        """Waits until the device calls made on this context so far have run (on the stream
        of the last one, or the one :meth:`set_stream` set; it must still exist). A kernel
        fault in that work raises :class:`seisgpu.CudaError` here; with device checks on
        (:meth:`set_device_checks`), a non-finite input of a device call raises
        :class:`seisgpu.NonFiniteError`. Nothing to wait for on a CPU context."""
        check("sg_context_synchronize", _lib.lib.sg_context_synchronize(self._ptr()))

    def _is_cuda(self) -> bool:
        if self._cuda is None:
            self._cuda = self.backend == "cuda"
        return self._cuda

    def _device_call(self, fn: str, stream: int, *args: Any) -> None:
        """Runs the library's device call `fn(*args)` ordered on `stream`. On a CPU context
        the call itself answers (``SG_ERR_UNSUPPORTED``, naming it)."""
        with self._device_lock:
            if self._stream != stream and self._is_cuda():
                # The library's handle, alive while a plan uses it even after close().
                check("sg_context_set_stream", _lib.lib.sg_context_set_stream(self._h, stream))
                self._stream = stream
            check(fn, getattr(_lib.lib, fn)(*args))

    def __repr__(self) -> str:
        if self.closed:
            return "<seisgpu.Context (closed)>"
        return f"<seisgpu.Context backend={self.backend!r}>"


def describe(ctx: Context | None = None) -> str:
    """Which library file was loaded and why, its version, and which backend `ctx` runs on
    and why (a new ``Context("auto")`` when `ctx` is None)."""
    info = _lib.info
    lines = [
        f"seisgpu {_lib.lib.sg_version().decode()}",
        f"library: {info.path}",
        f"  ({info.source}: {info.reason})",
    ]
    own = ctx is None
    c = ctx if ctx is not None else Context("auto")
    try:
        lines.append(f"context backend: {c.backend}")
        lines.extend("  " + line for line in c.description.splitlines())
    finally:
        if own:
            c.close()
    return "\n".join(lines)


def require(ctx: object, name: str = "ctx") -> Context:
    """`ctx` checked: an open Context."""
    if not isinstance(ctx, Context):
        from ._errors import ArgumentTypeError
        raise ArgumentTypeError(f"{name}: expected a seisgpu.Context, got {type(ctx).__name__}")
    ctx._ptr()
    return ctx
