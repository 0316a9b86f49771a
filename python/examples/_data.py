"""Readers of the repository's real data sets (data/, tests/data/) for the examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _ibm_to_float(words: np.ndarray) -> np.ndarray:
    """IBM System/360 single precision (big-endian words) to float64, exactly."""
    u = words.astype(np.uint64)
    mantissa = (u & 0x00FFFFFF).astype(np.float64) / float(1 << 24)
    exponent = ((u >> 24) & 0x7F).astype(np.int64) - 64
    return np.where(u >> 31, -1.0, 1.0) * mantissa * np.power(16.0, exponent)


def penobscot() -> np.ndarray:
    """Penobscot crossline 1155: (601 traces, 1501 samples) float32, dt 4 ms (CC BY-SA 3.0,
    Nova Scotia Department of Energy / dGB Earth Sciences; data/penobscot-xl1155)."""
    raw = np.fromfile(ROOT / "data/penobscot-xl1155/penobscot_xl1155.sgy", dtype=np.uint8)
    n_traces, n_samples = 601, 1501
    rows = raw[3600:].reshape(n_traces, 240 + 4 * n_samples)[:, 240:].copy()
    return _ibm_to_float(rows.view(">u4")).astype(np.float32)


def f3() -> np.ndarray:
    """A tiny F3 cube: (23 inlines, 18 crosslines, 75 samples) float32, dt 4 ms (CC BY-SA 3.0,
    dGB Earth Sciences / TNO; data/f3-tiny-cube)."""
    raw = np.fromfile(ROOT / "data/f3-tiny-cube/f3.sgy", dtype=np.uint8)
    n_il, n_xl, n = 23, 18, 75
    rows = raw[3600:].reshape(n_il * n_xl, 240 + 2 * n)[:, 240:].copy()
    return rows.view(">i2").astype(np.float32).reshape(n_il, n_xl, n)


def real3d() -> np.ndarray:
    """The aaspip "real3d" field cube: (10 lines, 100 traces, 300 samples) float32, dt 4 ms
    (MIT; data/aaspip-real3d)."""
    v = np.fromfile(ROOT / "data/aaspip-real3d/real3d.bin", dtype="<f4")
    return v.reshape(10, 100, 300)


def undervolc() -> tuple[np.ndarray, list[str]]:
    """One day (2010-09-01) of three UnderVolc stations (YA.UV05, UV06, UV10, HHZ) at 1 Hz:
    (3, 86400) float32 (EUPL-1.1 via MSNoise, RESIF open data; tests/data/README.md)."""
    v = np.fromfile(ROOT / "tests/data/xcorr_undervolc.bin", dtype="<f4")
    return v[:3 * 86400].reshape(3, 86400), ["UV05", "UV06", "UV10"]


def snr_db(x: np.ndarray, clean: np.ndarray) -> float:
    return float(10 * np.log10((clean ** 2).sum() / ((x - clean) ** 2).sum()))
