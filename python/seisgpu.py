"""seisgpu from Python: the C ABI through ctypes, no compiled extension.

Covers the context, the DWT (transform and denoise), F-X / F-XY decon (default options), the
USFFT (types 1 and 2, 1D-3D) and the wave packets (layouts: forward, adjoint, inverse, noise
thresholds; volumes in tiles). Arrays are any contiguous, writable buffer of the right
element type: NumPy arrays (float32/float64, C order), or ``array.array('f')`` / ``('d')``
without NumPy. Results come back as the same kind of array as the input. Every failing call
raises ``seisgpu.Error`` with the library's status name and message; nothing is written then.

The library is found through ``SEISGPU_LIB`` (a path), else ``target/release`` of this
source tree, else the system's loader (``libseisgpu.so`` installed by ``make install``).
"""

import array
import ctypes
import ctypes.util
import os

__all__ = ["Error", "Context", "Dwt", "FxDecon", "Usfft", "WavepacketLayout",
           "WavepacketVolume", "version"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load():
    candidates = [os.environ.get("SEISGPU_LIB"),
                  os.path.join(_HERE, "..", "target", "release", "libseisgpu.so"),
                  ctypes.util.find_library("seisgpu")]
    for path in candidates:
        if path and (os.path.sep not in path or os.path.exists(path)):
            return ctypes.CDLL(path)
    raise OSError("libseisgpu not found: build it (make lib), install it, or set SEISGPU_LIB")


_lib = _load()
_p, _sz, _i32, _f64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_double
_SIZE_P, _F64_P = ctypes.POINTER(_sz), ctypes.POINTER(_f64)


class _LayoutOptions(ctypes.Structure):
    _fields_ = [("directions", _sz), ("levels", _sz), ("alpha", _f64), ("beta", _f64),
                ("cutoff", _f64), ("tolerance", _f64)]


def _sig(name, args, res=_i32):
    f = getattr(_lib, name)
    f.argtypes, f.restype = args, res
    return f


_sig("sg_version", [], ctypes.c_char_p)
_sig("sg_status_string", [_i32], ctypes.c_char_p)
_sig("sg_last_error_message", [], ctypes.c_char_p)
_sig("sg_context_create", [_i32, _i32, ctypes.POINTER(_p)])
_sig("sg_context_describe", [_p, ctypes.c_char_p, _sz, _SIZE_P])
_sig("sg_context_destroy", [_p], None)
_PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, _p, ctypes.c_char_p, _f64)
_sig("sg_context_set_progress", [_p, _PROGRESS, _p])
_sig("sg_dwt_plan_create", [_p, _i32, _i32, _sz, ctypes.POINTER(_p)])
_sig("sg_dwt_plan_destroy", [_p], None)
for t in ("f32", "f64"):
    _sig("sg_dwt_execute_" + t, [_p, _i32, ctypes.c_uint32, _p, _p, _sz, _sz])
    _sig("sg_dwt_denoise_" + t, [_p, _p, _p, _p, _sz, _sz, _F64_P])
    _sig("sg_fxdecon_execute_2d_" + t, [_p, _p, _p, _sz])
    _sig("sg_fxdecon_execute_3d_" + t, [_p, _p, _p, _sz, _sz])
    _sig("sg_usfft_set_points_" + t, [_p, _sz, _p, _p, _p])
    _sig("sg_usfft_execute_" + t, [_p, _p, _p])
    for kind in ("sg_wavepacket", "sg_wavepacket_volume"):
        _sig(f"{kind}_forward_{t}", [_p, _p, _p])
        _sig(f"{kind}_adjoint_{t}", [_p, _p, _p])
        _sig(f"{kind}_inverse_{t}", [_p, _p, _p, _f64, _sz, _SIZE_P, _F64_P])
    _sig("sg_wavepacket_threshold_noise_" + t, [_p, _p, _i32, _f64, _f64])
    _sig("sg_wavepacket_estimate_noise_" + t, [_p, _p, _F64_P])
_sig("sg_wavepacket_layout_options_default", [], _LayoutOptions)
_sig("sg_wavepacket_layout_create_with_options",
     [_p, _i32, _SIZE_P, _i32, ctypes.POINTER(_LayoutOptions), ctypes.POINTER(_p)])
_sig("sg_wavepacket_layout_sizes", [_p, _SIZE_P, _SIZE_P, _SIZE_P, _SIZE_P, _SIZE_P])
_sig("sg_wavepacket_layout_destroy", [_p], None)
_sig("sg_wavepacket_volume_create", [_p, _i32, _SIZE_P, _SIZE_P, _i32,
                                     ctypes.POINTER(_LayoutOptions), ctypes.POINTER(_p)])
_sig("sg_wavepacket_volume_create_on_contexts",
     [ctypes.POINTER(_p), _sz, _i32, _SIZE_P, _SIZE_P, _i32, ctypes.POINTER(_LayoutOptions),
      ctypes.POINTER(_p)])
_sig("sg_wavepacket_volume_sizes", [_p, _SIZE_P, _SIZE_P, _SIZE_P, _SIZE_P])
_sig("sg_wavepacket_volume_destroy", [_p], None)
_sig("sg_usfft_plan_create", [_p, _i32, _i32, _SIZE_P, _i32, _f64, _i32, _sz, _p,
                              ctypes.POINTER(_p)])
_sig("sg_usfft_plan_destroy", [_p], None)
_sig("sg_fxdecon_plan_create_2d", [_p, _p, _sz, _sz, ctypes.POINTER(_p)])
_sig("sg_fxdecon_plan_create_3d", [_p, _p, _sz, _sz, _sz, ctypes.POINTER(_p)])
_sig("sg_fxdecon_plan_destroy", [_p], None)

BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
WAVELETS = {"daubechies": 1, "daubechies_centered": 2, "haar": 3, "haar_centered": 4,
            "bspline": 5, "bspline_centered": 6}
_PRECISIONS = {"f32": (1, "f"), "f64": (2, "d")}


class Error(Exception):
    """A failing seisgpu call: ``status`` (e.g. "SG_ERR_NON_FINITE") and the message."""

    def __init__(self, call, status):
        self.status = _lib.sg_status_string(status).decode()
        self.message = (_lib.sg_last_error_message() or b"").decode()
        super().__init__(f"{call}: {self.status}: {self.message}")


def _check(call, status):
    if status != 0:
        raise Error(call, status)


def version():
    return _lib.sg_version().decode()


def _buffer(x, code, count, name):
    """The address of `x` (a contiguous writable buffer of `count` elements of `code`)."""
    m = memoryview(x)
    if m.format != code or not m.c_contiguous or m.readonly:
        raise TypeError(f"{name}: expected a writable contiguous buffer of '{code}' "
                        f"(float32 'f' or float64 'd'), got format {m.format!r}")
    if m.nbytes != count * m.itemsize:
        raise ValueError(f"{name}: {m.nbytes // m.itemsize} elements; expected {count}")
    return ctypes.addressof(ctypes.c_char.from_buffer(m.cast("B")))


def _like(x, code, count):
    """A zeroed array of `count` elements of `code`, NumPy if `x` is one."""
    if type(x).__module__ == "numpy":
        import numpy
        return numpy.zeros(count, dtype=numpy.float32 if code == "f" else numpy.float64)
    return array.array(code, bytes(count * (4 if code == "f" else 8)))


class _Handle:
    _destroy = None

    def __init__(self):
        self._h = _p()

    def close(self):
        if self._h:
            self._destroy(self._h)
            self._h = _p()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Context(_Handle):
    """A backend: "auto" (the GPU when usable, else the CPU), "cpu" or "cuda"."""

    _destroy = staticmethod(_lib.sg_context_destroy)

    def __init__(self, backend="auto", device=0):
        super().__init__()
        _check("sg_context_create",
               _lib.sg_context_create(BACKENDS[backend], device, ctypes.byref(self._h)))

    def set_progress(self, callback):
        """`callback(stage, fraction)` is called during the long calls made with this
        context or its plans (on the calling thread, at most every 100 ms, fractions growing
        to exactly 1); a true return stops the call, which then raises Error
        (SG_ERR_CANCELLED) and writes nothing. An exception in the callback stops the call
        too. None removes the callback."""
        if callback is None:
            self._progress = None
            _check("sg_context_set_progress",
                   _lib.sg_context_set_progress(self._h, _PROGRESS(), None))
            return

        def trampoline(_user, stage, fraction):
            try:
                return 1 if callback(stage.decode(), fraction) else 0
            except Exception:  # noqa: BLE001 - no exception may unwind through C
                return 1
        # Kept on the context: the C library holds only the pointer.
        self._progress = _PROGRESS(trampoline)
        _check("sg_context_set_progress",
               _lib.sg_context_set_progress(self._h, self._progress, None))

    @property
    def description(self):
        needed = _sz()
        _lib.sg_context_describe(self._h, None, 0, ctypes.byref(needed))
        buf = ctypes.create_string_buffer(needed.value)
        _check("sg_context_describe", _lib.sg_context_describe(self._h, buf, needed, None))
        return buf.value.decode()


class Dwt(_Handle):
    """A DWT plan for traces of `n_samples` (a power of two), GSL's wavelets."""

    _destroy = staticmethod(_lib.sg_dwt_plan_destroy)

    def __init__(self, ctx, n_samples, wavelet="daubechies", member=8):
        super().__init__()
        self.ctx, self.n_samples = ctx, n_samples
        _check("sg_dwt_plan_create", _lib.sg_dwt_plan_create(
            ctx._h, WAVELETS[wavelet], member, n_samples, ctypes.byref(self._h)))

    def _traces(self, x):
        code = memoryview(x).format
        t = {"f": "f32", "d": "f64"}.get(code)
        if t is None:
            raise TypeError(f"expected float32 or float64 samples, got format {code!r}")
        n_traces, rest = divmod(len(memoryview(x).cast("B")) // memoryview(x).itemsize,
                                self.n_samples)
        if rest or not n_traces:
            raise ValueError(f"{len(x)} samples is not a whole number of "
                             f"{self.n_samples}-sample traces")
        return t, code, n_traces

    def transform(self, traces, inverse=False, levels=0):
        """Forward (GSL's coefficient order) or inverse transform of every trace."""
        t, code, n = self._traces(traces)
        out = _like(traces, code, n * self.n_samples)
        _check("sg_dwt_execute_" + t, getattr(_lib, "sg_dwt_execute_" + t)(
            self._h, -1 if inverse else 1, levels, _buffer(traces, code, n * self.n_samples,
                                                           "traces"),
            _buffer(out, code, n * self.n_samples, "output"), n, self.n_samples))
        return out

    def denoise(self, traces):
        """Donoho-Johnstone shrinkage of every trace with the library's default options."""
        t, code, n = self._traces(traces)
        out = _like(traces, code, n * self.n_samples)
        _check("sg_dwt_denoise_" + t, getattr(_lib, "sg_dwt_denoise_" + t)(
            self._h, None, _buffer(traces, code, n * self.n_samples, "traces"),
            _buffer(out, code, n * self.n_samples, "output"), n, self.n_samples, None))
        return out


class FxDecon(_Handle):
    """F-X prediction filtering of sections of `n_traces` traces of `n_samples` samples
    (trace after trace), or F-XY of volumes of `n_traces` inlines x `n_crosslines`
    crosslines (inline fastest after the samples), with the library's default options."""

    _destroy = staticmethod(_lib.sg_fxdecon_plan_destroy)

    def __init__(self, ctx, n_samples, n_traces, n_crosslines=None):
        super().__init__()
        self.ctx, self.n_samples, self.n_traces = ctx, n_samples, n_traces
        self.n_crosslines = n_crosslines
        if n_crosslines is None:
            _check("sg_fxdecon_plan_create_2d", _lib.sg_fxdecon_plan_create_2d(
                ctx._h, None, n_samples, n_traces, ctypes.byref(self._h)))
        else:
            _check("sg_fxdecon_plan_create_3d", _lib.sg_fxdecon_plan_create_3d(
                ctx._h, None, n_samples, n_traces, n_crosslines, ctypes.byref(self._h)))

    def filter(self, data):
        """The filtered section or volume (float32 or float64)."""
        code = memoryview(data).format
        t = {"f": "f32", "d": "f64"}.get(code)
        if t is None:
            raise TypeError(f"expected float32 or float64 samples, got format {code!r}")
        n = self.n_samples * self.n_traces * (self.n_crosslines or 1)
        out = _like(data, code, n)
        a, b = _buffer(data, code, n, "data"), _buffer(out, code, n, "output")
        if self.n_crosslines is None:
            f = "sg_fxdecon_execute_2d_" + t
            _check(f, getattr(_lib, f)(self._h, a, b, self.n_samples))
        else:
            f = "sg_fxdecon_execute_3d_" + t
            _check(f, getattr(_lib, f)(self._h, a, b, self.n_samples,
                                       self.n_samples * self.n_traces))
        return out


class Usfft(_Handle):
    """A non-uniform FFT plan: `kind` 1 (strengths at points -> modes) or 2 (modes -> values
    at points), `n_modes` (1-3 sizes, dimension 1 fastest; modes centred, -N/2 ... N/2-1),
    f(k) = sum_j c_j exp(sign i k.x_j) for type 1 and its transpose for type 2, to relative
    accuracy `tolerance`; `n_vectors` vectors per execute share the points."""

    _destroy = staticmethod(_lib.sg_usfft_plan_destroy)

    def __init__(self, ctx, kind, n_modes, precision="f64", sign=-1, tolerance=1e-9,
                 n_vectors=1):
        super().__init__()
        self.ctx, self.kind, self.n_vectors = ctx, kind, n_vectors
        self._prec, self._code = precision, _PRECISIONS[precision][1]
        self.dim, self.n_modes = len(n_modes), 1
        for n in n_modes:
            self.n_modes *= n
        self.m = 0
        dims = (_sz * self.dim)(*n_modes)
        _check("sg_usfft_plan_create", _lib.sg_usfft_plan_create(
            ctx._h, kind, self.dim, dims, sign, tolerance, _PRECISIONS[precision][0],
            n_vectors, None, ctypes.byref(self._h)))

    def set_points(self, x, y=None, z=None):
        """The points' coordinates in radians (period 2 pi), one array per dimension."""
        coords = [x, y, z][:self.dim]
        if any(c is None for c in coords):
            raise ValueError(f"a {self.dim}D plan needs {self.dim} coordinate arrays")
        m = len(x)
        ptrs = [_buffer(c, self._code, m, "xyz"[i]) for i, c in enumerate(coords)]
        ptrs += [None] * (3 - self.dim)
        _check(f"sg_usfft_set_points_{self._prec}",
               getattr(_lib, f"sg_usfft_set_points_{self._prec}")(self._h, m, *ptrs))
        self.m = m

    def execute(self, data):
        """Type 1: strengths (n_vectors x M complex, interleaved) -> modes; type 2: modes
        (n_vectors x N1N2N3 complex) -> values at the points."""
        n_in, n_out = self.m, self.n_modes
        if self.kind == 2:
            n_in, n_out = n_out, n_in
        out = _like(data, self._code, 2 * n_out * self.n_vectors)
        a = _buffer(data, self._code, 2 * n_in * self.n_vectors, "input")
        b = _buffer(out, self._code, 2 * n_out * self.n_vectors, "output")
        c, f = (a, b) if self.kind == 1 else (b, a)
        _check(f"sg_usfft_execute_{self._prec}",
               getattr(_lib, f"sg_usfft_execute_{self._prec}")(self._h, c, f))
        return out


class _Wavepackets(_Handle):
    """What layouts and volumes share: C, C* and the inverse over `_kind`'s calls."""

    _kind = None

    def _options(self, precision, options):
        self._prec, self._code = precision, _PRECISIONS[precision][1]
        o = _lib.sg_wavepacket_layout_options_default()
        for k, v in options.items():
            if k not in dict(_LayoutOptions._fields_):
                raise TypeError(f"unknown layout option {k!r}")
            setattr(o, k, v)
        return o

    def _call(self, name, *args):
        f = f"{self._kind}_{name}_{self._prec}"
        _check(f, getattr(_lib, f)(self._h, *args))

    def _data(self, x):
        return _buffer(x, self._code, self.n_samples, "data")

    def _coeffs(self, c):
        return _buffer(c, self._code, 2 * self.n_coefficients, "coeffs")

    def forward(self, data):
        """C: data -> coefficients (interleaved re, im; box after box)."""
        c = _like(data, self._code, 2 * self.n_coefficients)
        self._call("forward", self._data(data), self._coeffs(c))
        return c

    def adjoint(self, coeffs):
        """C*: coefficients -> data (the real part of the exact adjoint)."""
        d = _like(coeffs, self._code, self.n_samples)
        self._call("adjoint", self._coeffs(coeffs), self._data(d))
        return d

    def inverse(self, coeffs, tolerance=1e-6, max_iterations=30):
        """The data whose coefficients are closest to `coeffs`; returns (data, iterations,
        residual)."""
        d = _like(coeffs, self._code, self.n_samples)
        it, res = _sz(), _f64()
        self._call("inverse", self._coeffs(coeffs), self._data(d), tolerance, max_iterations,
                   ctypes.byref(it), ctypes.byref(res))
        return d, it.value, res.value


class WavepacketLayout(_Wavepackets):
    """A wave-packet box layout of data `shape` (2 or 3 sizes, axis 1 fastest) and its
    transforms in `precision` ("f32" or "f64"); the options as in
    ``sg_wavepacket_layout_options`` (directions, levels, alpha, beta, cutoff, tolerance)."""

    _destroy = staticmethod(_lib.sg_wavepacket_layout_destroy)
    _kind = "sg_wavepacket"

    def __init__(self, ctx, shape, precision="f32", **options):
        super().__init__()
        self.ctx = ctx
        o = self._options(precision, options)
        dims = (_sz * len(shape))(*shape)
        _check("sg_wavepacket_layout_create_with_options",
               _lib.sg_wavepacket_layout_create_with_options(
                   ctx._h, len(shape), dims, _PRECISIONS[precision][0], ctypes.byref(o),
                   ctypes.byref(self._h)))
        s = [_sz() for _ in range(5)]
        _check("sg_wavepacket_layout_sizes",
               _lib.sg_wavepacket_layout_sizes(self._h, *[ctypes.byref(v) for v in s]))
        self.n_samples, self.n_coefficients, self.n_boxes, self.levels, self.n_directions = (
            v.value for v in s)

    def estimate_noise(self, coeffs):
        """sigma of white noise in the data whose coefficients these are."""
        sigma = _f64()
        self._call("estimate_noise", self._coeffs(coeffs), ctypes.byref(sigma))
        return sigma.value

    def threshold_noise(self, coeffs, k, sigma, soft=False):
        """In place: thresholds at k * sigma * |psi_b| per box (hard, or soft)."""
        self._call("threshold_noise", self._coeffs(coeffs), int(soft), k, sigma)


class WavepacketVolume(_Wavepackets):
    """A volume of `shape` cut into tiles of `tile` (each a layout of `options`), every
    tile's box grids shifted onto one common grid (``sg_wavepacket_volume_*``). `ctx` may
    be a list of contexts (e.g. one per GPU): the tiles are dealt out over them, all at once
    (``sg_wavepacket_volume_create_on_contexts``)."""

    _destroy = staticmethod(_lib.sg_wavepacket_volume_destroy)
    _kind = "sg_wavepacket_volume"

    def __init__(self, ctx, shape, tile, precision="f32", **options):
        super().__init__()
        self.ctx = ctx
        o = self._options(precision, options)
        if len(tile) != len(shape):
            raise ValueError("the tile needs as many sizes as the volume")
        dims, tiles = (_sz * len(shape))(*shape), (_sz * len(tile))(*tile)
        p = _PRECISIONS[precision][0]
        if isinstance(ctx, (list, tuple)):
            handles = (_p * len(ctx))(*[c._h for c in ctx])
            _check("sg_wavepacket_volume_create_on_contexts",
                   _lib.sg_wavepacket_volume_create_on_contexts(
                       handles, len(ctx), len(shape), dims, tiles, p, ctypes.byref(o),
                       ctypes.byref(self._h)))
        else:
            _check("sg_wavepacket_volume_create", _lib.sg_wavepacket_volume_create(
                ctx._h, len(shape), dims, tiles, p, ctypes.byref(o), ctypes.byref(self._h)))
        n, m, counts, boxes = _sz(), _sz(), (_sz * 3)(), _sz()
        _check("sg_wavepacket_volume_sizes", _lib.sg_wavepacket_volume_sizes(
            self._h, ctypes.byref(n), ctypes.byref(m), counts, ctypes.byref(boxes)))
        self.n_samples, self.n_coefficients, self.n_boxes = n.value, m.value, boxes.value
        self.tiles = tuple(counts)
