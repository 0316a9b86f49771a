"""The reader of the MPI example's file (tests/data/xcorr_network_6.xc: 6 synthetic stations,
2 hours at 1 Hz, hourly substacks, written by `mpirun -np 2 xcorr_network --synthetic 6
--samples 7200 --substack-len 3600`). The example's synthetic field reaches station s
(13·s mod 41) s late, so each pair's stack must peak at the difference of its stations'
delays: an independent check of the reader's pair order, lag axis and sign."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu


@pytest.fixture(scope="module")
def day(source):
    return seisgpu.read_xcorr_file(str(source / "tests" / "data" / "xcorr_network_6.xc"))


def test_header_pairs_and_lags(day):
    assert day.stations == [f"S{s:05d}" for s in range(6)]
    assert day.pairs.tolist() == [[i, j] for i in range(6) for j in range(i + 1, 6)]
    assert day.settings["sampling_rate"] == 1.0 and day.settings["maxlag"] == 200.0
    np.testing.assert_array_equal(day.lags, np.arange(-200.0, 201.0))
    assert day.stacks.shape == (15, 401) and day.substacks.shape == (2, 15, 401)
    # 2 hours of 1800 s windows every 450 s: 13 windows, 12 of them taken whole.
    assert set(day.n_windows.tolist()) == {12}
    assert (day.substack_windows.sum(axis=0) == day.n_windows).all()


def test_each_pair_peaks_at_its_stations_delay(day):
    delay = [(13 * s) % 41 for s in range(6)]
    for i, j in day.pairs:
        row = day.pair_index(i, j)
        peak = day.lags[np.argmax(day.stacks[row])]
        assert peak == delay[j] - delay[i], f"pair ({i}, {j})"
    with pytest.raises(seisgpu.InvalidArgumentError):
        day.pair_index(3, 3)


def test_an_incomplete_file_is_refused(day, source, tmp_path):
    data = bytearray((source / "tests" / "data" / "xcorr_network_6.xc").read_bytes())
    data[12:16] = (0).to_bytes(4, "little")  # the `complete` flag the last rank sets
    (tmp_path / "partial.xc").write_bytes(bytes(data))
    with pytest.raises(seisgpu.InvalidArgumentError, match="incomplete"):
        seisgpu.read_xcorr_file(str(tmp_path / "partial.xc"))
    data[12:16] = (1).to_bytes(4, "little")
    (tmp_path / "short.xc").write_bytes(bytes(data[:600]))
    with pytest.raises(seisgpu.InvalidArgumentError, match="truncated"):
        seisgpu.read_xcorr_file(str(tmp_path / "short.xc"))
