"""Shared fixtures of the Python package's tests: the context, the repository's data.

The suite runs against whichever `seisgpu` is importable: `make test` runs it from outside
the source tree against the wheel installed in a fresh virtual environment
(tests/python/run.sh), which sets SEISGPU_SOURCE to the repository for the data files.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import seisgpu

SOURCE = Path(os.environ.get("SEISGPU_SOURCE", Path(__file__).resolve().parents[2]))

if os.environ.get("SEISGPU_EXPECT_WHEEL"):
    # tests/python/run.sh installs every reference package: none of their tests may skip.
    import finufft  # noqa: F401
    import obspy  # noqa: F401
    import pywt  # noqa: F401
PENOBSCOT_SAMPLES, PENOBSCOT_TRACES = 1501, 601
# The backend the suite's contexts run on: "cpu" in CI, "cuda" on a GPU machine.
BACKEND = os.environ.get("SEISGPU_TEST_BACKEND", "cpu")


@pytest.fixture(scope="session")
def ctx() -> seisgpu.Context:
    with seisgpu.Context(BACKEND) as c:
        yield c


@pytest.fixture(scope="session")
def source() -> Path:
    assert (SOURCE / "tests" / "data").is_dir(), f"no tests/data under {SOURCE}"
    return SOURCE


def ibm_to_float(words: np.ndarray) -> np.ndarray:
    """IBM System/360 single precision (big-endian uint32) to float64, exactly."""
    u = words.astype(np.uint64)
    mantissa = (u & 0x00FFFFFF).astype(np.float64) / float(1 << 24)
    exponent = ((u >> 24) & 0x7F).astype(np.int64) - 64
    sign = np.where(u >> 31, -1.0, 1.0)
    return sign * mantissa * np.power(16.0, exponent)


@pytest.fixture(scope="session")
def penobscot(source: Path) -> np.ndarray:
    """The Penobscot crossline 1155, (601 traces, 1501 samples) float32, dt 4 ms."""
    raw = np.fromfile(source / "data/penobscot-xl1155/penobscot_xl1155.sgy", dtype=np.uint8)
    row = 240 + 4 * PENOBSCOT_SAMPLES
    assert raw.size == 3600 + PENOBSCOT_TRACES * row
    traces = raw[3600:].reshape(PENOBSCOT_TRACES, row)[:, 240:]
    words = traces.copy().view(">u4").reshape(PENOBSCOT_TRACES, PENOBSCOT_SAMPLES)
    return ibm_to_float(words).astype(np.float32)


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel()))
