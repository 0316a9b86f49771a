"""Ambient-noise cross-correlation: NoisePy's pipeline on station-days (preprocessing,
whitening, correlation, linear / phase-weighted / robust stacks).

Lag convention: element k of a correlation is lag τ = (k − maxlag·fs)/fs seconds (the
``lags`` array); c_ij(τ) = Σ_t x_i(t)·x_j(t + τ), so a wave that reaches station j after
station i shows at positive lags. Amplitudes are NoisePy's. ``from_obspy`` takes an ObsPy
``Stream`` (ObsPy is imported only there).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import _arrays, _device, _lib
from ._errors import ArgumentTypeError, InvalidArgumentError, check
from ._handle import Handle, Plan
from ._options import as_dict, fill
from .context import Context, require

_ENUMS = {
    "time_norm": {"none": 0, "one_bit": 1, "running_mean": 2},
    "freq_norm": {"none": 0, "running_mean": 1, "phase_only": 2},
    "stack_method": {"linear": 0, "pws": 1, "robust": 2},
}
_FLAGS = ("detrend_taper", "autocorrelation")


@dataclass
class Correlations:
    """Stacked correlations: ``stacks`` (n_pairs, n_lags) float32, ``pairs`` (n_pairs, 2)
    station indices (i, j), ``n_windows`` (n_pairs,) the windows stacked per pair (0: the
    stack is zeros), ``lags`` (n_lags,) seconds, and, from ``from_obspy``, ``stations``
    (the trace ids, in station-index order)."""

    stacks: np.ndarray
    pairs: np.ndarray
    n_windows: np.ndarray
    lags: np.ndarray
    stations: list[str] | None = field(default=None)

    def pair(self, i: int, j: int) -> np.ndarray:
        """The stack of stations (i, j)."""
        hit = np.flatnonzero((self.pairs[:, 0] == i) & (self.pairs[:, 1] == j))
        if hit.size == 0:
            raise InvalidArgumentError(f"no pair ({i}, {j}) in these correlations")
        return self.stacks[hit[0]]


class Spectra(Handle):
    """One day of window spectra of a set of stations (on the GPU for a CUDA context)."""

    _destroy = "sg_xcorr_spectra_destroy"

    def __init__(self) -> None:
        super().__init__()
        self.n_stations = self.n_windows = self.band_start = self.band_len = self.nfft = 0
        # The library and device of the GPU station-days they were made from (None: NumPy
        # ones): where `Xcorr.correlate` puts its stacks.
        self._home: _device.Home | None = None

    def _sizes(self) -> None:
        s = [ctypes.c_size_t() for _ in range(5)]
        check("sg_xcorr_spectra_sizes",
              _lib.lib.sg_xcorr_spectra_sizes(self._ptr(), *[ctypes.byref(v) for v in s]))
        (self.n_stations, self.n_windows, self.band_start, self.band_len,
         self.nfft) = (v.value for v in s)

    @property
    def values(self) -> np.ndarray:
        """The stored bins [band_start, band_start + band_len) of every window's nfft-point
        FFT: complex64, shape (band_len, n_stations, n_windows) (a host copy)."""
        v = np.empty((self.band_len, self.n_stations, self.n_windows), np.complex64)
        check("sg_xcorr_spectra_copy",
              _lib.lib.sg_xcorr_spectra_copy(self._ptr(), v.ctypes.data, None))
        return v

    @property
    def kept(self) -> np.ndarray:
        """bool (n_stations, n_windows): True where the window is used."""
        k = np.empty((self.n_stations, self.n_windows), np.uint8)
        check("sg_xcorr_spectra_copy",
              _lib.lib.sg_xcorr_spectra_copy(self._ptr(), None, k.ctypes.data))
        return k.astype(bool)


class Xcorr(Plan):
    """A correlation plan: options and sizes, on one context.

    Parameters
    ----------
    ctx:
        The context.
    sampling_rate, freqmin, freqmax:
        Samples per second of the station-days; the whitening band in Hz (the day's
        Butterworth bandpass runs from 0.9·freqmin to min(1.1·freqmax, 0.45·fs)).
    **options:
        The other fields of ``sg_xcorr_options`` (NoisePy's defaults): ``cc_len`` (s, 1800)
        and ``step`` (s, 450), whole samples; ``max_over_std`` (10); ``maxlag`` (s, 200);
        ``time_norm`` (``"none"``, ``"one_bit"``, ``"running_mean"``) with ``smooth_n``
        (samples, 10); ``freq_norm`` (``"running_mean"``, ``"phase_only"``, ``"none"``) with
        ``smoothspect_n`` (bins, 10) and ``whiten_taper_bins`` (100); ``stack_method``
        (``"linear"``, ``"pws"``, ``"robust"``) with ``pws_power`` (2) and
        ``robust_epsilon`` (0.001); ``bandpass_corners`` (4; 0: no bandpass);
        ``detrend_taper`` (True); ``autocorrelation`` (False: pairs i < j; True: i ≤ j).

    Station-days in GPU memory (CuPy, PyTorch, DLPack) are preprocessed where they are;
    the correlations of spectra made from them are stacked into an array of the same
    library (docs/python.md).
    """

    _destroy = "sg_xcorr_plan_destroy"
    _workspace = "sg_xcorr_plan_workspace_bytes"

    def __init__(self, ctx: Context, *, sampling_rate: float, freqmin: float, freqmax: float,
                 **options: Any) -> None:
        super().__init__()
        o = fill(_lib.lib.sg_xcorr_options_default(),
                 dict(sampling_rate=sampling_rate, freqmin=freqmin, freqmax=freqmax,
                      **options), "Xcorr", _ENUMS, _FLAGS)
        self.options = as_dict(o, _ENUMS)
        self._uses_handles(require(ctx))
        check("sg_xcorr_plan_create",
              _lib.lib.sg_xcorr_plan_create(ctx._ptr(), ctypes.byref(o), ctypes.byref(self._h)))
        self.ctx = ctx
        fs = self.options["sampling_rate"]
        # The library's sizes for a day of exactly one window.
        lags = ctypes.c_size_t()
        check("sg_xcorr_plan_sizes", _lib.lib.sg_xcorr_plan_sizes(
            self._h, int(round(self.options["cc_len"] * fs)), None, ctypes.byref(lags)))
        self.n_lags = lags.value
        self.lags = (np.arange(self.n_lags) - (self.n_lags - 1) // 2) / fs

    def n_windows(self, n_samples: int) -> int:
        """Windows in a day of `n_samples` samples (NoisePy's count)."""
        w, lags = ctypes.c_size_t(), ctypes.c_size_t()
        check("sg_xcorr_plan_sizes", _lib.lib.sg_xcorr_plan_sizes(
            self._ptr(), _arrays.count(n_samples, "n_samples"), ctypes.byref(w),
            ctypes.byref(lags)))
        return w.value

    def preprocess(self, days: Any, valid: Any = None) -> Spectra:
        """The window spectra of one day of every station: `days` (n_stations, n_samples)
        float32 (float64 is converted, one copy); `valid` None (no gaps) or a bool array of
        the same shape, False for a missing sample. Non-finite samples raise
        :class:`seisgpu.NonFiniteError`.

        GPU arrays: `days` C-contiguous float32 (float64 is refused: no copy is made),
        `valid` a bool or uint8 array of the same shape, on the GPU too. The work is queued
        on their stream and the call **waits** for it (the spectra keep which windows were
        kept on the host); non-finite samples are not looked for. The spectra equal the
        host call's on the same GPU bit for bit."""
        on_gpu = _device.gather(days=days, valid=valid)
        if on_gpu is not None:
            return self._preprocess_device(on_gpu)
        a = _arrays.real(days, "days")
        if a.dtype != np.float32:
            a = a.astype(np.float32)
        if a.ndim != 2:
            raise InvalidArgumentError(f"days: shape {a.shape}; expected (n_stations, n_samples)")
        n_sta, n = a.shape
        mask = None
        if valid is not None:
            v = _arrays.host(valid, "valid")
            if v.shape != a.shape:
                raise InvalidArgumentError(f"valid: shape {v.shape}; days has {a.shape}")
            mask = np.ascontiguousarray(v != 0, dtype=np.uint8)
        stride = _arrays.trace_stride(a, n) if mask is None else None
        if stride is None:
            a, stride = _arrays.contiguous(a), n
        s = Spectra()
        s._uses_handles(self.ctx)
        check("sg_xcorr_preprocess_f32", _lib.lib.sg_xcorr_preprocess_f32(
            self._ptr(), a.ctypes.data, n_sta, n, stride, _arrays.ptr(mask),
            ctypes.byref(s._h)))
        s._sizes()
        return s

    def _preprocess_device(self, arrays: _device.Gathered) -> Spectra:
        with _device.DeviceCall(self.ctx, arrays) as call:
            a = call.input("days", (np.dtype(np.float32),))
            if len(a.shape) != 2:
                raise InvalidArgumentError(
                    f"days: shape {a.shape}; expected (n_stations, n_samples)")
            mask = 0
            if "valid" in call.arrays:
                v = call.input("valid", (np.dtype(np.bool_), np.dtype(np.uint8)))
                if v.shape != a.shape:
                    raise InvalidArgumentError(f"valid: shape {v.shape}; days has {a.shape}")
                mask = v.ptr
            n_sta, n = a.shape
            s = Spectra()
            s._uses_handles(self.ctx)
            call.run("sg_xcorr_preprocess_device_f32", self._ptr(), a.ptr, n_sta, n, n, mask,
                     ctypes.byref(s._h))
        s._sizes()
        s._home = a.home
        return s

    def _block(self, n_sta: int, block: Any) -> tuple[int, int, int, int]:
        if block is None:
            return 0, n_sta, 0, n_sta
        b = _arrays.sizes(block, "block")
        if len(b) != 4:
            raise InvalidArgumentError("block: expected (i0, ni, j0, nj)")
        return b[0], b[1], b[2], b[3]

    def pairs(self, n_stations: int, block: Any = None) -> np.ndarray:
        """The station pairs (i, j) of a block (i0, ni, j0, nj) of `n_stations` stations,
        in output order; None: all pairs (i < j, or i ≤ j with autocorrelation)."""
        n_sta = _arrays.count(n_stations, "n_stations")
        i0, ni, j0, nj = self._block(n_sta, block)
        h = self._ptr()
        n = ctypes.c_size_t()
        check("sg_xcorr_pair_count", _lib.lib.sg_xcorr_pair_count(
            h, n_sta, i0, ni, j0, nj, ctypes.byref(n)))
        out = np.empty((n.value, 2), np.int64)
        i, j = ctypes.c_size_t(), ctypes.c_size_t()
        for p in range(n.value):
            check("sg_xcorr_pair_stations", _lib.lib.sg_xcorr_pair_stations(
                h, n_sta, i0, ni, j0, nj, p, ctypes.byref(i), ctypes.byref(j)))
            out[p] = i.value, j.value
        return out

    def correlate(self, spectra: Spectra | Sequence[Spectra], *, block: Any = None,
                  out: Any = None) -> Correlations:
        """Correlates and stacks the pairs of `block` (default: all pairs) over every kept
        window of the days given (one Spectra, or a list of them: they stack together).
        `out`: a float32 array (n_pairs, n_lags) for the stacks.

        The stacks stay on the GPU when `out` is a GPU array (C-contiguous), or when every
        day was preprocessed from GPU arrays (a new array of their library, CuPy or
        PyTorch; DLPack ones need `out=`): queued on that array's stream (or the library's
        current stream) without waiting, bit for bit the host call's stacks on the same
        GPU. ``pairs``, ``n_windows`` and ``lags`` are NumPy arrays either way."""
        days = [spectra] if isinstance(spectra, Spectra) else list(spectra)
        if not days or not all(isinstance(d, Spectra) for d in days):
            raise ArgumentTypeError("spectra: expected a Spectra or a non-empty list of them")
        n_sta = days[0].n_stations
        i0, ni, j0, nj = self._block(n_sta, block)
        pairs = self.pairs(n_sta, (i0, ni, j0, nj))
        on_gpu = _device.gather(out=out)
        homes = [d._home for d in days]
        if on_gpu is not None or (out is None and None not in homes):
            return self._correlate_device(days, on_gpu or {}, homes[0], (i0, ni, j0, nj),
                                          pairs)
        stacks, _ = _arrays.output(out, (len(pairs), self.n_lags), np.dtype(np.float32))
        counts = np.zeros(len(pairs), np.uint32)
        handles = (ctypes.c_void_p * len(days))(*[d._ptr() for d in days])
        check("sg_xcorr_correlate_f32", _lib.lib.sg_xcorr_correlate_f32(
            self._ptr(), handles, len(days), i0, ni, j0, nj, stacks.ctypes.data, self.n_lags,
            counts.ctypes.data))
        return Correlations(stacks, pairs, counts, self.lags.copy())

    def _correlate_device(self, days: list[Spectra], arrays: _device.Gathered,
                          home: _device.Home | None, block: tuple[int, int, int, int],
                          pairs: np.ndarray) -> Correlations:
        with _device.DeviceCall(self.ctx, arrays, home) as call:
            stacks, o = call.output(None, (len(pairs), self.n_lags), np.dtype(np.float32))
            counts = np.zeros(len(pairs), np.uint32)
            handles = (ctypes.c_void_p * len(days))(*[d._ptr() for d in days])
            call.run("sg_xcorr_correlate_device_f32", self._ptr(), handles, len(days), *block,
                     o.ptr, self.n_lags, counts.ctypes.data)
        return Correlations(stacks, pairs, counts, self.lags.copy())

    def run(self, days: Any, valid: Any = None, *, block: Any = None) -> Correlations:
        """``preprocess`` then ``correlate``, for one day (GPU station-days give GPU
        stacks)."""
        with self.preprocess(days, valid) as s:
            return self.correlate(s, block=block)

    def __repr__(self) -> str:
        return f"<seisgpu.Xcorr {self.options['stack_method']}{' (closed)' if self.closed else ''}>"


def from_obspy(stream: Any, *, freqmin: float, freqmax: float, ctx: Context | None = None,
               starttime: Any = None, endtime: Any = None, **options: Any) -> Correlations:
    """Correlations of the station-days of an ObsPy ``Stream``.

    Traces are grouped by id (network.station.location.channel) and merged; all must have
    one sampling rate. The day runs from `starttime` to `endtime` (ObsPy ``UTCDateTime``;
    default: the earliest start and the latest end), on the sample grid of the earliest
    trace; samples no trace covers, and masked samples, are gaps. Returns
    :class:`Correlations` with ``stations`` the ids in station-index order. `options` are
    :class:`Xcorr`'s; `ctx` defaults to ``Context("auto")``.
    """
    days, valid, ids, fs = _station_days(stream, starttime, endtime)
    own = ctx is None
    c = ctx if ctx is not None else Context("auto")
    try:
        with Xcorr(c, sampling_rate=fs, freqmin=freqmin, freqmax=freqmax, **options) as plan:
            result = plan.run(days, None if valid.all() else valid)
    finally:
        if own:
            c.close()
    result.stations = ids
    return result


def _station_days(stream: Any, starttime: Any, endtime: Any
                  ) -> tuple[np.ndarray, np.ndarray, list[str], float]:
    traces = list(stream)
    if not traces:
        raise InvalidArgumentError("stream: no traces")
    rates = {float(t.stats.sampling_rate) for t in traces}
    if len(rates) != 1:
        raise InvalidArgumentError(
            f"stream: sampling rates {sorted(rates)}; resample to one rate first")
    fs = rates.pop()
    t0 = starttime if starttime is not None else min(t.stats.starttime for t in traces)
    t1 = endtime if endtime is not None else max(t.stats.endtime for t in traces)
    n = int(round((t1 - t0) * fs)) + (0 if endtime is not None else 1)
    if n <= 0:
        raise InvalidArgumentError(f"stream: the time span {t0} … {t1} holds no samples")
    ids = sorted({t.id for t in traces})
    days = np.zeros((len(ids), n), np.float32)
    valid = np.zeros((len(ids), n), bool)
    for t in traces:
        s = ids.index(t.id)
        offset = (t.stats.starttime - t0) * fs
        k = int(round(offset))
        if abs(offset - k) > 0.01:
            raise InvalidArgumentError(
                f"stream: trace {t.id} starts {offset - k:+.3f} samples off the sample grid "
                f"of {t0}; align the traces (e.g. Trace.interpolate) first")
        data = np.ma.getdata(t.data)
        ok = ~np.ma.getmaskarray(t.data)
        lo, hi = max(k, 0), min(k + len(data), n)
        if lo >= hi:
            continue
        seg, seg_ok = data[lo - k:hi - k], ok[lo - k:hi - k]
        if (valid[s, lo:hi] & seg_ok).any():
            raise InvalidArgumentError(f"stream: traces of {t.id} overlap; merge them first")
        days[s, lo:hi] = np.where(seg_ok, seg, days[s, lo:hi])
        valid[s, lo:hi] |= seg_ok
    return days, valid, ids, fs
