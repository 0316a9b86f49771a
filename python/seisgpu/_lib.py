"""Finding and loading libseisgpu, and the C functions' ctypes prototypes.

The library is looked for in this order, and the first one that exists is loaded (a file
that exists but does not load is an error, never skipped):

1. ``libseisgpu.so`` bundled in this package (what ``pip install`` puts there);
2. the file named by the environment variable ``SEISGPU_LIB``;
3. the system's loader (``ctypes.util.find_library("seisgpu")``, after ``make install``).

When the bundled library is used while ``SEISGPU_LIB`` names another file, a warning says
that ``SEISGPU_LIB`` was not used. ``seisgpu.describe()`` reports which file was loaded
and why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import warnings
from dataclasses import dataclass

# The ABI this package was written against: its major version must match the library's,
# and its minor version must not be newer (minor versions only add functions).
ABI_MAJOR, ABI_MINOR = 0, 1

_HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLED = os.path.join(_HERE, "libseisgpu.so")


@dataclass(frozen=True)
class LibraryInfo:
    """Which library file was loaded, and why that one."""

    path: str
    source: str  # "bundled", "SEISGPU_LIB" or "system"
    reason: str


def _open(path: str, what: str) -> ctypes.CDLL:
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        name = f"SEISGPU_LIB={path!r}" if what == "SEISGPU_LIB" else f"{what} {path!r}"
        raise ImportError(f"seisgpu: {name} could not be loaded: {e}") from e


def _find() -> tuple[ctypes.CDLL, LibraryInfo]:
    env = os.environ.get("SEISGPU_LIB")
    if os.path.exists(BUNDLED):
        if env and os.path.realpath(env) != os.path.realpath(BUNDLED):
            warnings.warn(
                f"SEISGPU_LIB={env!r} is not used: the library bundled with the package "
                f"({BUNDLED}) comes first; uninstall the package (or run from a source "
                "tree without one) to use another library",
                stacklevel=3,
            )
        reason = "the library bundled with the package"
        return _open(BUNDLED, "the bundled library"), LibraryInfo(BUNDLED, "bundled", reason)
    if env:
        # A path, or a bare file name for the dynamic loader to resolve.
        if os.path.sep in env and not os.path.exists(env):
            raise ImportError(
                f"seisgpu: SEISGPU_LIB={env!r} does not exist (and the package has no "
                "bundled library); point it at libseisgpu.so or unset it"
            )
        lib = _open(env, "SEISGPU_LIB")
        path = os.path.abspath(env) if os.path.sep in env else _loaded_path(lib, env)
        return lib, LibraryInfo(path, "SEISGPU_LIB", "no bundled library; SEISGPU_LIB names it")
    name = ctypes.util.find_library("seisgpu")
    if name is None:
        raise ImportError(
            "seisgpu: libseisgpu not found: the package has no bundled library, SEISGPU_LIB "
            "is not set and the system's loader knows none (pip install the package, set "
            "SEISGPU_LIB to target/release/libseisgpu.so, or make install)"
        )
    lib = _open(name, "the system's library")
    return lib, LibraryInfo(_loaded_path(lib, name), "system",
                            "no bundled library, SEISGPU_LIB unset; found by the system's loader")


def _loaded_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the dynamic loader mapped for `lib` (from dladdr), else `fallback`."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                    ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

    try:
        libc = ctypes.CDLL(None)
        info = DlInfo()
        addr = ctypes.cast(lib.sg_version, ctypes.c_void_p)
        if libc.dladdr(addr, ctypes.byref(info)) and info.fname:
            return os.path.realpath(info.fname.decode())
    except (AttributeError, OSError):
        pass
    return fallback


lib, info = _find()

# ---- types -------------------------------------------------------------------------------
p, sz, i32, u32, u64, f64 = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32,
                             ctypes.c_uint32, ctypes.c_uint64, ctypes.c_double)
P = ctypes.POINTER
PP = P(p)
PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, p, ctypes.c_char_p, f64)
DEVICE_ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, p, sz, u64, P(u64))
DEVICE_FREE = ctypes.CFUNCTYPE(None, p, u64, sz, u64)


class DwtDenoiseOptions(ctypes.Structure):
    _fields_ = [("threshold_rule", i32), ("threshold_mode", i32), ("noise_estimate", i32),
                ("n_levels", u32), ("fixed_threshold", f64), ("level_mask", u64)]


class EmlogOptions(ctypes.Structure):
    _fields_ = [("criterion", i32), ("level", f64), ("mode", i32), ("norm", i32),
                ("max_models", sz)]


class FxdeconOptions(ctypes.Structure):
    _fields_ = [("sample_interval_s", f64), ("fmin_hz", f64), ("fmax_hz", f64),
                ("time_window_s", f64), ("taper_s", f64), ("fft_length", i32),
                ("window_traces", i32), ("overlap_traces", i32), ("operator_traces", i32),
                ("window_inline", i32), ("window_crossline", i32), ("overlap_inline", i32),
                ("overlap_crossline", i32), ("operator_inline", i32),
                ("operator_crossline", i32), ("damping", f64), ("prediction", i32),
                ("out_of_band", i32), ("su_compatible", i32)]


class UsfftOptions(ctypes.Structure):
    _fields_ = [("kernel", i32), ("mode_order", i32), ("upsampling", f64)]


class PocsOptions(ctypes.Structure):
    _fields_ = [("iterations", sz), ("schedule", i32), ("first", f64), ("last", f64)]


class LayoutOptions(ctypes.Structure):
    _fields_ = [("directions", sz), ("levels", sz), ("alpha", f64), ("beta", f64),
                ("cutoff", f64), ("tolerance", f64)]


class SparseOptions(ctypes.Structure):
    _fields_ = [("stages", sz), ("refit_iterations", sz)]


class XcorrOptions(ctypes.Structure):
    _fields_ = [("sampling_rate", f64), ("cc_len", f64), ("step", f64), ("freqmin", f64),
                ("freqmax", f64), ("max_over_std", f64), ("maxlag", f64), ("pws_power", f64),
                ("robust_epsilon", f64), ("bandpass_corners", i32), ("detrend_taper", i32),
                ("time_norm", i32), ("smooth_n", i32), ("freq_norm", i32),
                ("smoothspect_n", i32), ("whiten_taper_bins", i32), ("stack_method", i32),
                ("autocorrelation", i32)]


STRUCTS = {
    "sg_dwt_denoise_options": DwtDenoiseOptions, "sg_emlog_options": EmlogOptions,
    "sg_fxdecon_options": FxdeconOptions, "sg_usfft_options": UsfftOptions,
    "sg_wavepacket_pocs_options": PocsOptions, "sg_wavepacket_layout_options": LayoutOptions,
    "sg_wavepacket_sparse_options": SparseOptions, "sg_xcorr_options": XcorrOptions,
}

# ---- prototypes --------------------------------------------------------------------------
_PROTOTYPES: dict[str, tuple[list, object]] = {
    "sg_version": ([], ctypes.c_char_p),
    "sg_version_number": ([], u32),
    "sg_status_string": ([i32], ctypes.c_char_p),
    "sg_last_error_message": ([], ctypes.c_char_p),
    "sg_context_create": ([i32, i32, PP], i32),
    "sg_context_create_on_cuda_context": ([ctypes.c_uint64, PP], i32),
    "sg_context_backend": ([p, P(i32)], i32),
    "sg_context_describe": ([p, ctypes.c_char_p, sz, P(sz)], i32),
    "sg_context_destroy": ([p], None),
    "sg_context_set_progress": ([p, PROGRESS, p], i32),
    "sg_context_set_stream": ([p, u64], i32),
    "sg_context_set_device_checks": ([p, i32], i32),
    "sg_context_synchronize": ([p], i32),
    "sg_context_set_device_allocator": ([p, DEVICE_ALLOC, DEVICE_FREE, p], i32),
    "sg_context_device_memory": ([p, P(sz), P(sz)], i32),
    "sg_dwt_denoise_options_default": ([], DwtDenoiseOptions),
    "sg_dwt_plan_create": ([p, i32, i32, sz, PP], i32),
    "sg_dwt_plan_destroy": ([p], None),
    "sg_dwt_plan_workspace_bytes": ([p, P(sz)], i32),
    "sg_dwt_plan_reserve": ([p, sz], i32),
    "sg_emlog_options_default": ([], EmlogOptions),
    "sg_emlog_plan_create": ([p, sz, sz, p, sz, sz, p, p, p, p, sz, p, PP], i32),
    "sg_emlog_plan_destroy": ([p], None),
    "sg_emlog_plan_workspace_bytes": ([p, P(sz)], i32),
    "sg_emlog_analytic": ([p, i32, f64, p, P(f64), P(i32), p, p, p, p], i32),
    "sg_emlog_search": ([p, p, p, p, p, p, sz, sz, p, P(EmlogOptions), PP], i32),
    "sg_emlog_result_destroy": ([p], None),
    "sg_emlog_result_summary": ([p, P(u64), P(u64), P(u64), p, P(f64), p, p, P(sz), P(i32)],
                                i32),
    "sg_emlog_result_marginal": ([p, sz, p, sz], i32),
    "sg_emlog_result_pair": ([p, sz, p, sz], i32),
    "sg_emlog_result_models": ([p, p, p, sz], i32),
    # Device calls: each bulk array a CUdeviceptr (u64).
    "sg_emlog_plan_create_device": ([p, sz, sz, u64, sz, sz, u64, u64, u64, u64, sz, p, PP],
                                    i32),
    "sg_emlog_search_device": ([p, p, p, p, p, p, sz, sz, p, P(EmlogOptions), PP], i32),
    "sg_emlog_result_marginal_device": ([p, sz, u64, sz], i32),
    "sg_emlog_result_pair_device": ([p, sz, u64, sz], i32),
    "sg_fxdecon_options_default": ([], FxdeconOptions),
    "sg_fxdecon_options_seismic_unix": ([], FxdeconOptions),
    "sg_fxdecon_plan_create_2d": ([p, P(FxdeconOptions), sz, sz, PP], i32),
    "sg_fxdecon_plan_create_3d": ([p, P(FxdeconOptions), sz, sz, sz, PP], i32),
    "sg_fxdecon_plan_destroy": ([p], None),
    "sg_fxdecon_plan_workspace_bytes": ([p, P(sz)], i32),
    "sg_usfft_options_default": ([], UsfftOptions),
    "sg_usfft_plan_create": ([p, i32, i32, P(sz), i32, f64, i32, sz, P(UsfftOptions), PP], i32),
    "sg_usfft_plan_destroy": ([p], None),
    "sg_usfft_plan_workspace_bytes": ([p, P(sz)], i32),
    "sg_wavepacket_layout_options_default": ([], LayoutOptions),
    "sg_wavepacket_pocs_options_default": ([], PocsOptions),
    "sg_wavepacket_sparse_options_default": ([], SparseOptions),
    "sg_wavepacket_layout_create_with_options": ([p, i32, P(sz), i32, P(LayoutOptions), PP],
                                                 i32),
    "sg_wavepacket_layout_create_capped": ([p, i32, P(sz), i32, P(LayoutOptions), sz, PP],
                                           i32),
    "sg_wavepacket_device_bytes": ([p, i32, P(sz), i32, P(LayoutOptions), sz, P(sz)], i32),
    "sg_wavepacket_layout_sizes": ([p, P(sz), P(sz), P(sz), P(sz), P(sz)], i32),
    "sg_wavepacket_layout_destroy": ([p], None),
    "sg_wavepacket_layout_workspace_bytes": ([p, P(sz)], i32),
    "sg_wavepacket_box_info": ([p, sz, P(i32), P(i32), p, p, P(sz)], i32),
    "sg_wavepacket_packet_norms": ([p, p, sz], i32),
    "sg_wavepacket_volume_create": ([p, i32, P(sz), P(sz), i32, P(LayoutOptions), PP], i32),
    "sg_wavepacket_volume_create_on_contexts": ([PP, sz, i32, P(sz), P(sz), i32,
                                                 P(LayoutOptions), PP], i32),
    "sg_wavepacket_volume_create_capped": ([PP, sz, i32, P(sz), P(sz), i32,
                                            P(LayoutOptions), sz, PP], i32),
    "sg_wavepacket_volume_sizes": ([p, P(sz), P(sz), p, P(sz)], i32),
    "sg_wavepacket_volume_box_info": ([p, sz, P(i32), P(i32), P(sz), P(sz)], i32),
    "sg_wavepacket_volume_destroy": ([p], None),
    "sg_wavepacket_volume_workspace_bytes": ([p, P(sz)], i32),
    "sg_xcorr_options_default": ([], XcorrOptions),
    "sg_xcorr_plan_create": ([p, P(XcorrOptions), PP], i32),
    "sg_xcorr_plan_destroy": ([p], None),
    "sg_xcorr_plan_workspace_bytes": ([p, P(sz)], i32),
    "sg_xcorr_plan_sizes": ([p, sz, P(sz), P(sz)], i32),
    "sg_xcorr_preprocess_f32": ([p, p, sz, sz, sz, p, PP], i32),
    "sg_xcorr_spectra_destroy": ([p], None),
    "sg_xcorr_spectra_sizes": ([p, P(sz), P(sz), P(sz), P(sz), P(sz)], i32),
    "sg_xcorr_spectra_copy": ([p, p, p], i32),
    "sg_xcorr_pair_count": ([p, sz, sz, sz, sz, sz, P(sz)], i32),
    "sg_xcorr_pair_stations": ([p, sz, sz, sz, sz, sz, sz, P(sz), P(sz)], i32),
    "sg_xcorr_correlate_f32": ([p, PP, sz, sz, sz, sz, sz, p, sz, p], i32),
    "sg_xcorr_preprocess_device_f32": ([p, u64, sz, sz, sz, u64, PP], i32),
    "sg_xcorr_correlate_device_f32": ([p, PP, sz, sz, sz, sz, sz, u64, sz, p], i32),
}
for _t in ("f32", "f64"):
    _PROTOTYPES.update({
        f"sg_dwt_execute_{_t}": ([p, i32, u32, p, p, sz, sz], i32),
        f"sg_dwt_denoise_{_t}": ([p, P(DwtDenoiseOptions), p, p, sz, sz, p], i32),
        # Device calls: each bulk array a CUdeviceptr (u64).
        f"sg_dwt_execute_device_{_t}": ([p, i32, u32, u64, u64, sz, sz], i32),
        f"sg_dwt_denoise_device_{_t}": ([p, P(DwtDenoiseOptions), u64, u64, sz, sz, p], i32),
        f"sg_usfft_set_points_device_{_t}": ([p, sz, u64, u64, u64], i32),
        f"sg_usfft_execute_device_{_t}": ([p, u64, u64], i32),
        f"sg_fxdecon_execute_2d_device_{_t}": ([p, u64, u64, sz], i32),
        f"sg_fxdecon_execute_3d_device_{_t}": ([p, u64, u64, sz, sz], i32),
        f"sg_wavepacket_forward_device_{_t}": ([p, u64, u64], i32),
        f"sg_wavepacket_adjoint_device_{_t}": ([p, u64, u64], i32),
        f"sg_wavepacket_inverse_device_{_t}": ([p, u64, u64, f64, sz, P(sz), P(f64)], i32),
        f"sg_wavepacket_threshold_device_{_t}": ([p, u64, i32, i32, f64], i32),
        f"sg_wavepacket_keep_largest_device_{_t}": ([p, u64, sz], i32),
        f"sg_wavepacket_threshold_noise_device_{_t}": ([p, u64, i32, f64, f64], i32),
        f"sg_wavepacket_estimate_noise_device_{_t}": ([p, u64, P(f64)], i32),
        f"sg_wavepacket_pocs_device_{_t}": ([p, u64, p, sz, P(PocsOptions)], i32),
        f"sg_wavepacket_sparse_approximation_device_{_t}": ([p, u64, u64, sz, P(SparseOptions),
                                                             P(sz), P(f64)], i32),
        f"sg_wavepacket_volume_forward_device_{_t}": ([p, u64, u64], i32),
        f"sg_wavepacket_volume_adjoint_device_{_t}": ([p, u64, u64], i32),
        f"sg_wavepacket_volume_inverse_device_{_t}": ([p, u64, u64, f64, sz, P(sz), P(f64)],
                                                      i32),
        f"sg_fxdecon_execute_2d_{_t}": ([p, p, p, sz], i32),
        f"sg_fxdecon_execute_3d_{_t}": ([p, p, p, sz, sz], i32),
        f"sg_usfft_set_points_{_t}": ([p, sz, p, p, p], i32),
        f"sg_usfft_set_points3_{_t}": ([p, sz, p, p, p, sz, p, p, p], i32),
        f"sg_usfft_execute_{_t}": ([p, p, p], i32),
        f"sg_wavepacket_keep_largest_{_t}": ([p, p, sz], i32),
        f"sg_wavepacket_threshold_{_t}": ([p, p, i32, i32, f64], i32),
        f"sg_wavepacket_threshold_noise_{_t}": ([p, p, i32, f64, f64], i32),
        f"sg_wavepacket_estimate_noise_{_t}": ([p, p, P(f64)], i32),
        f"sg_wavepacket_pocs_{_t}": ([p, p, p, sz, P(PocsOptions)], i32),
        f"sg_wavepacket_sparse_approximation_{_t}": ([p, p, p, sz, P(SparseOptions), P(sz),
                                                      P(f64)], i32),
    })
    for _kind in ("sg_wavepacket", "sg_wavepacket_volume"):
        _PROTOTYPES.update({
            f"{_kind}_forward_{_t}": ([p, p, p], i32),
            f"{_kind}_adjoint_{_t}": ([p, p, p], i32),
            f"{_kind}_inverse_{_t}": ([p, p, p, f64, sz, P(sz), P(f64)], i32),
        })


def _declare() -> None:
    what = f"SEISGPU_LIB={info.path!r}" if info.source == "SEISGPU_LIB" else info.path
    missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
    if missing:
        raise ImportError(
            f"seisgpu: {what} lacks {', '.join(missing[:4])}"
            f"{' …' if len(missing) > 4 else ''}: it is older than this package "
            f"(ABI {ABI_MAJOR}.{ABI_MINOR}); use the matching library")
    for name, (args, res) in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    number = lib.sg_version_number()
    major, minor = number // 10000, number // 100 % 100
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise ImportError(
            f"seisgpu: {what} is version {lib.sg_version().decode()}; this package "
            f"needs ABI {ABI_MAJOR}.{ABI_MINOR} or a later {ABI_MAJOR}.x")


_declare()
