"""Cross-correlation against NoisePy's own stacks (tests/data/xcorr_undervolc.*, the fixture
tests/xcorr_noisepy.rs uses): one real day of three UnderVolc stations at 1 Hz, five cases
(linear stacks after rma whitening, one-bit, running-mean time normalisation with phase-only
whitening; phase-weighted and robust stacks). Every pair correlates with NoisePy's at
≥ 0.999 and differs by at most 1e-5 (linear) / 1e-3 (PWS, robust) of its maximum. NoisePy
labels lag τ as τ + dt (its element m is our element m − 1). The ObsPy bridge gives the same
stacks from a Stream."""

from __future__ import annotations

import numpy as np
import pytest

import seisgpu
from conftest import BACKEND


def words(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


@pytest.fixture(scope="module")
def noisepy(source):
    text = (source / "tests/data/xcorr_undervolc.txt").read_text()
    values = np.fromfile(source / "tests/data/xcorr_undervolc.bin", dtype="<f4")
    days, cases = None, []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        w = words(line)
        if line.startswith("input "):
            n_sta, n = int(w["n_stations"]), int(w["n_samples"])
            days = values[int(w["offset"]):][:n_sta * n].reshape(n_sta, n)
            stations = w["stations"].split(",")
        elif line.startswith("case "):
            cases.append((w, []))
        elif line.startswith("pair "):
            ref = values[int(w["offset"]):][:int(w["n_lags"])]
            cases[-1][1].append((int(w["i"]), int(w["j"]), int(w["n_windows"]), ref))
    return days, stations, cases


def options(w):
    smoothspect = int(w["smoothspect_n"])
    freq = {"no": "none", "rma": "phase_only" if smoothspect <= 1 else "running_mean"}
    return dict(sampling_rate=1.0, cc_len=1800.0, step=450.0, freqmin=0.05, freqmax=0.4,
                maxlag=200.0, time_norm={"no": "none", "one_bit": "one_bit",
                                         "rma": "running_mean"}[w["time_norm"]],
                smooth_n=int(w["smooth_n"]), freq_norm=freq[w["freq_norm"]],
                smoothspect_n=smoothspect, stack_method=w["stack"], autocorrelation=True)


def compare(ours, ref):
    """Pearson correlation and max|a − b|/max|b| with NoisePy's one-sample label shift."""
    a, b = ours[:-1].astype(np.float64), ref[1:].astype(np.float64)
    r = np.corrcoef(a, b)[0, 1]
    return float(r), float(np.abs(a - b).max() / np.abs(b).max())


def check_against_noisepy(result, case, label):
    w, pairs = case
    linear = w["stack"] == "linear"
    worst = (1.0, 0.0)
    for i, j, n_windows, ref in pairs:
        p = np.flatnonzero((result.pairs[:, 0] == i) & (result.pairs[:, 1] == j))[0]
        assert result.n_windows[p] == n_windows
        r, rel = compare(result.stacks[p], ref)
        worst = (min(worst[0], r), max(worst[1], rel))
        assert r >= 0.999, (label, i, j, r)
        assert rel <= (1e-5 if linear else 1e-3), (label, i, j, rel)
    print(f"{label:<28} {w['name']:<28} correlation ≥ {worst[0]:.7f}, "
          f"max|diff|/max ≤ {worst[1]:.1e}")


def test_stacks_match_noisepy(ctx, noisepy):
    days, _, cases = noisepy
    for case in cases:
        with seisgpu.Xcorr(ctx, **options(case[0])) as plan:
            assert plan.n_windows(days.shape[1]) == int(case[0]["n_windows"])
            with plan.preprocess(days) as spectra:
                assert spectra.nfft == int(case[0]["nfft"])
                assert spectra.kept.all()
                result = plan.correlate(spectra)
            assert result.stacks.shape == (6, 401) and result.stacks.dtype == np.float32
            np.testing.assert_array_equal(result.lags, np.arange(-200, 201, dtype=float))
            check_against_noisepy(result, case, "Xcorr")


def test_blocks_days_and_gaps(ctx, noisepy):
    days, _, cases = noisepy
    plan = seisgpu.Xcorr(ctx, **options(cases[0][0]))
    full = plan.run(days)
    # An off-diagonal block (station 0 × stations 1, 2) gives those pairs' stacks.
    block = plan.run(days, block=(0, 1, 1, 2))
    np.testing.assert_array_equal(block.pairs, [[0, 1], [0, 2]])
    np.testing.assert_allclose(block.stacks, full.stacks[[1, 2]], rtol=0, atol=1e-6)
    # Two identical days stack to the same mean.
    with plan.preprocess(days) as a, plan.preprocess(days) as b:
        two = plan.correlate([a, b])
    np.testing.assert_allclose(two.stacks, full.stacks, atol=1e-6 * np.abs(full.stacks).max())
    assert (two.n_windows == 2 * full.n_windows).all()
    # A gap: the windows that touch it are rejected.
    valid = np.ones(days.shape, bool)
    valid[1, 40000:41000] = False
    gapped = plan.run(days, valid)
    assert gapped.n_windows[gapped.pairs.tolist().index([0, 1])] < full.n_windows[1]
    with pytest.raises(seisgpu.NonFiniteError):
        bad = days.copy()
        bad[2, 5] = np.inf
        plan.preprocess(bad)


def test_from_obspy_matches_noisepy(noisepy):
    obspy = pytest.importorskip("obspy")
    days, stations, cases = noisepy
    start = obspy.UTCDateTime("2010-09-01T00:00:00")
    stream = obspy.Stream([
        obspy.Trace(days[k].copy(), header=dict(network="YA", station=s, channel="HHZ",
                                                sampling_rate=1.0, starttime=start))
        for k, s in enumerate(stations)])
    ctx = seisgpu.Context(BACKEND)
    for case in cases:
        o = options(case[0])
        for k in ("sampling_rate",):
            o.pop(k)
        result = seisgpu.xcorr.from_obspy(stream, ctx=ctx, **o)
        assert result.stations == [f"YA.{s}..HHZ" for s in stations]
        check_against_noisepy(result, case, "from_obspy")
    # A gap in one trace (two traces of one id) equals the library's gap mask.
    o = options(cases[0][0])
    o.pop("sampling_rate")
    split = stream.copy()
    tr = split[1]
    split.remove(tr)
    split += tr.slice(start, start + 40000 - 1)
    split += tr.slice(start + 41000, tr.stats.endtime)
    gapped = seisgpu.xcorr.from_obspy(split, ctx=ctx, **o)
    valid = np.ones(days.shape, bool)
    valid[1, 40000:41000] = False
    want = seisgpu.Xcorr(ctx, sampling_rate=1.0, **o).run(days, valid)
    np.testing.assert_array_equal(gapped.stacks, want.stacks)
    np.testing.assert_array_equal(gapped.n_windows, want.n_windows)
