#!/usr/bin/env python3
"""Writes tests/data/xcorr_undervolc.{txt,bin}: NoisePy's own stacks of one real day
(MSNoise UnderVolc, 2010-09-01, YA.UV05/UV06/UV10 HHZ), for tests/capabilities/xcorr_noisepy.rs.

Input: the three 100 Hz miniSEED days in /work/shared/data/msnoise-undervolc/ (or
$UNDERVOLC_DIR), each decimated here to 1 Hz with ObsPy (`Trace.decimate(10)` twice, its
automatic Chebyshev anti-alias filter each time) and stored as float32: the library gets
exactly these 3 x 86,400 samples.

Reference: NoisePy (noisepy-seis 0.9.93, PyPI) run as its documented pipeline does it
(`noisepy.seis.correlate.cc_timespan` -> `preprocess` -> `compute_fft` ->
`cross_correlation` -> `noise_module.correlate`; `stack.stack_pair` ->
`noise_module.stacking`), calling NoisePy's functions for every numerical step:
  noise_module.preprocess_raw   detrend, taper, 4-corner zero-phase Butterworth bandpass
  noise_module.cut_trace_make_stat  windows, max/std statistic, demean, detrend, taper
  noise_module.noise_processing time normalisation (one-bit / rma), whitening, FFT
  noise_module.correlate        conj(S_i) S_j, mean over windows, inverse FFT, trim
  noise_module.stacking         linear / pws / robust over per-window correlations
Only the glue of correlate.py (which needs NoisePy's data stores) is repeated here, line
for line in meaning: windows kept where max/std < max_over_std in both stations, source
spectrum conjugated, receiver spectrum as is.

NoisePy >= 0.9.71 declares Python < 3.11 although its numerical modules run on 3.11; it is
installed with --no-deps and its noise_module is imported without the package __init__
(which pulls in download and storage code). See tests/reference/README.md.

Output layout: NoisePy's stacks are written as NoisePy returns them (its lag axis,
t = arange(-Nfft2+1, Nfft2)*dt trimmed to |t| <= maxlag, labels sample k with a lag one
sample too large for even Nfft: the value at its t = 0 is the correlation at lag -1).
tests/capabilities/xcorr_noisepy.rs states and applies the shift.

Usage: /tmp/venv/bin/python tests/reference/make_xcorr_reference.py
"""

import os
import sys
import types

import numpy as np
import obspy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("UNDERVOLC_DIR", "/work/shared/data/msnoise-undervolc")
OUT_TXT = os.path.join(ROOT, "tests", "data", "xcorr_undervolc.txt")
OUT_BIN = os.path.join(ROOT, "tests", "data", "xcorr_undervolc.bin")
STATIONS = ["UV05", "UV06", "UV10"]


def import_noisepy():
    """noise_module and ConfigParameters without noisepy.seis.__init__."""
    import noisepy

    base = os.path.join(list(noisepy.__path__)[0], "seis")
    pkg = types.ModuleType("noisepy.seis")
    pkg.__path__ = [base]
    sys.modules["noisepy.seis"] = pkg
    from noisepy.seis import noise_module
    from noisepy.seis.io import datatypes

    return noise_module, datatypes


nm, dt_ = import_noisepy()
ConfigParameters = dt_.ConfigParameters


class ChannelData:
    """The three fields of noisepy.seis.io.datatypes.ChannelData that compute_fft reads."""

    def __init__(self, tr):
        self.data = tr.data
        self.sampling_rate = tr.stats.sampling_rate
        self.start_timestamp = tr.stats.starttime.timestamp


def decimated_day():
    traces = []
    for sta in STATIONS:
        st = obspy.read(os.path.join(DATA, f"YA.{sta}.00.HHZ.D.2010.244"))
        st.merge()
        tr = st[0]
        tr.data = tr.data.astype(np.float64)
        tr.decimate(10)
        tr.decimate(10)
        assert tr.stats.sampling_rate == 1.0 and tr.stats.npts == 86400, tr.stats
        tr.data = tr.data.astype(np.float32)
        traces.append(tr)
    return traces


def config(**kw):
    base = dict(
        sampling_rate=1.0,
        cc_len=1800,
        step=450.0,
        freqmin=0.05,
        freqmax=0.4,
        maxlag=200,
        inc_hours=24,
        max_over_std=10,
        smooth_N=10,
        smoothspect_N=10,
        rm_resp="no",
    )
    base.update(kw)
    return ConfigParameters(**base)


def compute_fft(p, tr):
    """correlate.compute_fft: windows, statistics, normalisation, first Nfft/2 bins."""
    trace_std, data_t, data = nm.cut_trace_make_stat(p, ChannelData(tr))
    white = nm.noise_processing(p, data)
    nfft = white.shape[1]
    return dict(fft=white[:, : nfft // 2], std=trace_std, t=data_t, nfft=nfft)


def good(p, std):
    return np.where((std < p.max_over_std) & (std > 0) & (np.isnan(std) == 0))[0]


def pair_correlation(p, src, rec):
    """correlate.cross_correlation + cross_corr for one pair (src = i, rec = j)."""
    bb = np.intersect1d(good(p, src["std"]), good(p, rec["std"]))
    sfft1 = np.conj(src["fft"])
    corr, tcorr, ncorr = nm.correlate(sfft1[bb, :], rec["fft"][bb, :], p, src["nfft"], rec["t"][bb])
    return corr, ncorr, bb


def nonlinear_kept(corr_rows):
    """The windows noise_module.stacking keeps (amplitude rule), for the record."""
    ampmax = np.max(corr_rows, axis=1)
    return np.where((ampmax < 20 * np.median(ampmax)) & (ampmax > 0))[0]


def main():
    traces = decimated_day()
    start = traces[0].stats.starttime
    for tr in traces:
        assert tr.stats.starttime == start
    # Preprocessing input = what the library gets: the decimated day as float32.
    inputs = np.stack([tr.data for tr in traces]).astype(np.float32)

    cases = [
        # name, ConfigParameters overrides, stack method, substack per window
        ("rma_whiten_linear", dict(time_norm="no", freq_norm="rma"), "linear"),
        ("onebit_linear", dict(time_norm="one_bit", freq_norm="rma"), "linear"),
        ("rma_time_phase_only_linear", dict(time_norm="rma", freq_norm="rma", smoothspect_N=1), "linear"),
        ("rma_whiten_pws", dict(time_norm="no", freq_norm="rma", substack=True, substack_windows=1), "pws"),
        ("rma_whiten_robust", dict(time_norm="no", freq_norm="rma", substack=True, substack_windows=1), "robust"),
    ]
    values = []
    lines = [
        "# seisgpu ambient-noise correlation reference; written by tests/reference/make_xcorr_reference.py",
        "# NoisePy (noisepy-seis %s), ObsPy %s, NumPy %s" % (nm_version(), obspy.__version__, np.__version__),
        "# offsets count float32 values (little-endian) in xcorr_undervolc.bin",
        "format seisgpu-xcorr-reference 1",
    ]
    off = 0
    values.append(inputs.reshape(-1))
    lines.append(
        "input stations=%s n_stations=%d n_samples=%d sampling_rate=1 offset=%d start=%s"
        % (",".join(STATIONS), inputs.shape[0], inputs.shape[1], off, start.isoformat())
    )
    off += inputs.size
    for name, kw, method in cases:
        p = config(**kw)
        pre = []
        for tr in traces:
            st = obspy.Stream([tr.copy()])
            out = nm.preprocess_raw(st, None, p, start, start + 86399.0)
            assert len(out) == 1 and out[0].stats.npts == 86400
            pre.append(out[0])
        ffts = [compute_fft(p, tr) for tr in pre]
        nfft = ffts[0]["nfft"]
        lines.append(
            "case name=%s time_norm=%s freq_norm=%s smooth_n=%d smoothspect_n=%d stack=%s nfft=%d n_windows=%d"
            % (name, p.time_norm.value, p.freq_norm.value, p.smooth_N, p.smoothspect_N, method, nfft, ffts[0]["fft"].shape[0])
        )
        for i in range(len(traces)):
            for j in range(i, len(traces)):
                if method != "linear" and i == j:
                    continue
                corr, ncorr, bb = pair_correlation(p, ffts[i], ffts[j])
                if method == "linear":
                    stack = corr[0]
                    # correlate's own amplitude rule on the complex products (NumPy orders
                    # complex numbers lexicographically); recorded, not reproduced
                    prod = np.conj(ffts[i]["fft"][bb]) * ffts[j]["fft"][bb]
                    kept_amp = len(nonlinear_kept(prod))
                else:
                    # per-window correlations -> noise_module.stacking, as stack.stack_pair does
                    params = dict(sampling_rate=p.sampling_rate, stack_method=dt_.StackMethod(method))
                    kept_amp = corr.shape[0]
                    assert len(nonlinear_kept(corr)) == corr.shape[0]
                    _, _, _, s1, _, _, _ = nm.stacking(corr, np.arange(corr.shape[0]), np.ones(corr.shape[0]), params)
                    stack = s1
                stack = np.asarray(stack, dtype=np.float32)
                lines.append(
                    "pair i=%d j=%d n_windows=%d amplitude_kept=%d n_lags=%d offset=%d"
                    % (i, j, len(bb), kept_amp, stack.size, off)
                )
                values.append(stack)
                off += stack.size
                print(name, i, j, "windows", len(bb), "amp-kept", kept_amp, "max", np.abs(stack).max())
    blob = np.concatenate(values).astype("<f4").tobytes()
    with open(OUT_BIN, "wb") as f:
        f.write(blob)
    with open(OUT_TXT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", OUT_TXT, OUT_BIN, len(blob), "bytes")


def nm_version():
    try:
        from importlib.metadata import version

        return version("noisepy-seis")
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
