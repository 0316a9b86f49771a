"""The file the MPI example ``examples/mpi/xcorr_network`` writes: one network's pair
stacks (and substacks), every rank's pairs in one file (layout: ``examples/mpi/xcorr_file.h``).

>>> day = seisgpu.read_xcorr_file("day.xc")
>>> day.stacks[day.pair_index(0, 3)]       # stations 0 and 3, over day.lags (s)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ._errors import InvalidArgumentError

_MAGIC = b"SGXCORR\0"
_HEADER = struct.Struct("<8sII10Q7d6i")  # then reserved bytes up to 512
_HEADER_BYTES = 512
_NAME_BYTES = 32


@dataclass(frozen=True)
class XcorrFile:
    """A complete ``xcorr_network`` file, read whole."""

    stations: list[str]
    #: (n_pairs, 2) station indices (i, j), in the file's order (i < j, or i <= j with
    #: autocorrelation); positive lags: station j later than station i.
    pairs: np.ndarray
    #: Windows stacked per pair (0: the stack is zeros).
    n_windows: np.ndarray
    #: (n_lags,) seconds.
    lags: np.ndarray
    #: (n_pairs, n_lags) float32.
    stacks: np.ndarray
    #: (n_groups, n_pairs) windows per substack group and pair (n_groups 0: none).
    substack_windows: np.ndarray
    #: (n_groups, n_pairs, n_lags) float32.
    substacks: np.ndarray
    #: The run's settings: sampling_rate, maxlag, cc_len, step, freqmin, freqmax,
    #: substack_len (floats); cc_method, stack_method, time_norm, freq_norm (the C codes),
    #: autocorrelation (bool), n_samples.
    settings: dict

    def pair_index(self, i: int, j: int) -> int:
        """The row of pair (i, j), i < j (i <= j with autocorrelation)."""
        n, auto = len(self.stations), self.settings["autocorrelation"]
        if not (0 <= i < n and 0 <= j < n and (i <= j if auto else i < j)):
            raise InvalidArgumentError(f"no pair ({i}, {j}) among {n} stations")
        return i * n - i * (i - 1) // 2 + (j - i) if auto else i * n - i * (i + 1) // 2 + (j - i - 1)


def read_xcorr_file(path: str) -> XcorrFile:
    """Reads an ``xcorr_network`` file; refuses one that is not complete (still being
    written, or left by a failed run) or not of this layout."""
    with open(path, "rb") as f:
        head = f.read(_HEADER_BYTES)
        if len(head) < _HEADER_BYTES:
            raise InvalidArgumentError(f"{path}: {len(head)} bytes, shorter than the header")
        (magic, version, complete, n_sta, n_pairs, n_lags, n_groups, sta_at, index_at,
         stacks_at, sub_index_at, subs_at, n_samples, *rest) = _HEADER.unpack_from(head)
        if magic != _MAGIC or version != 1:
            raise InvalidArgumentError(f"{path}: not an xcorr_network file of version 1")
        if complete != 1:
            raise InvalidArgumentError(f"{path}: incomplete (its ranks did not all finish)")
        floats, ints = rest[:7], rest[7:]

        def block(at: int, dtype: str, count: int) -> np.ndarray:
            f.seek(at)
            out = np.fromfile(f, dtype=dtype, count=count)
            if out.size != count:
                raise InvalidArgumentError(f"{path}: truncated at byte {at}")
            return out

        names = block(sta_at, f"S{_NAME_BYTES}", n_sta)
        index = block(index_at, "<u4", 4 * n_pairs).reshape(n_pairs, 4)
        stacks = block(stacks_at, "<f4", n_pairs * n_lags).reshape(n_pairs, n_lags)
        sub_windows = block(sub_index_at, "<u4", n_groups * n_pairs).reshape(n_groups, n_pairs)
        subs = block(subs_at, "<f4", n_groups * n_pairs * n_lags).reshape(
            n_groups, n_pairs, n_lags)
    keys = ("sampling_rate", "maxlag", "cc_len", "step", "freqmin", "freqmax", "substack_len")
    settings = dict(zip(keys, floats))
    settings.update(zip(("cc_method", "stack_method", "time_norm", "freq_norm"), ints[:4]))
    settings.update(autocorrelation=bool(ints[4]), n_samples=n_samples)
    lags = (np.arange(n_lags) - (n_lags - 1) / 2) / settings["sampling_rate"]
    return XcorrFile([n.split(b"\0")[0].decode() for n in names], index[:, :2].astype(np.int64),
                     index[:, 2].astype(np.int64), lags, stacks, sub_windows, subs, settings)
