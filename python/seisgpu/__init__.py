"""seisgpu: GPU (CUDA) and multi-core CPU kernels for seismic and well-log processing.

NumPy arrays in, new NumPy arrays out (or ``out=``): the DWT and wavelet denoising
(:class:`Dwt`), the non-uniform FFT (:class:`Usfft`), F-X / F-XY decon (:class:`FxDecon`),
ambient-noise cross-correlation (:class:`Xcorr`, :func:`seisgpu.xcorr.from_obspy`), Gaussian
wave packets (:class:`WavepacketLayout`, :class:`WavepacketVolume`) and the EM-logging
equivalence search (:class:`EmSearch`), all on a :class:`Context` (the GPU or all CPU
cores). The library is a ctypes binding of libseisgpu's C ABI; the GIL is released during
every call. Failures raise :class:`Error` subclasses (``ValueError``/``TypeError`` for bad
arguments) with the library's status and message. :func:`describe` says which library file
was loaded and which backend runs.

GPU arrays (CuPy, PyTorch, anything with ``__cuda_array_interface__``, DLPack producers on a
CUDA device) go to every capability's device calls where they are, with no copy, on their
stream; the results are arrays of the same library, or ``out=`` (docs/python.md, "Arrays on
the GPU"). Calls without device entry points in the C library copy CuPy arrays and
PyTorch tensors through host memory and return NumPy arrays.
"""

from __future__ import annotations

from . import _lib
from ._errors import (ArgumentTypeError, CancelledError, ClosedError, CudaError, Error,
                      InternalError, InvalidArgumentError, NonFiniteError, OutOfMemoryError,
                      UnsupportedError)
from .context import Context, describe
from .dwt import Dwt, levels_above
from .emlog import Axis, EmSearch, Ellipsoid, SearchResult
from .fxdecon import FxDecon
from .usfft import Usfft
from .usfft3 import Usfft3
from .wavepacket import Box, InverseResult, SparseResult, WavepacketLayout
from .wavepacket_volume import VolumeBox, WavepacketVolume
from .xcorr import Correlations, Spectra, Xcorr, from_obspy
from .xcorr_file import XcorrFile, read_xcorr_file

__all__ = [
    "ArgumentTypeError", "Axis", "Box", "CancelledError", "ClosedError", "Context",
    "Correlations", "CudaError", "Dwt", "Ellipsoid", "EmSearch", "Error", "FxDecon",
    "InternalError", "InvalidArgumentError", "InverseResult", "NonFiniteError",
    "OutOfMemoryError", "SearchResult", "Spectra", "SparseResult", "UnsupportedError",
    "Usfft", "Usfft3", "VolumeBox", "WavepacketLayout", "WavepacketVolume", "Xcorr",
    "XcorrFile",
    "__version__", "describe", "from_obspy", "levels_above", "library_path", "read_xcorr_file",
    "version",
]

__version__ = _lib.lib.sg_version().decode()


def version() -> str:
    """The loaded library's version, e.g. ``"0.1.0"``."""
    return _lib.lib.sg_version().decode()


def library_path() -> str:
    """The path of the libseisgpu file this package loaded."""
    return _lib.info.path
