#!/usr/bin/env python3
"""Writes tests/data/xcorr_undervolc_methods.{txt,bin}: NoisePy's own correlations of the
UnderVolc day (the input of tests/data/xcorr_undervolc.bin) with its other correlation
methods, `deconv` and `coherency`, and its substacks, for tests/xcorr_noisepy.rs.

The day and NoisePy's preprocessing come from make_xcorr_reference.py (imported: the same
decimation, `preprocess_raw`, `cut_trace_make_stat`, `noise_processing`); the script
checks that the input it derives equals the committed one, bit for bit.

Correlation methods, with NoisePy's functions (noisepy-seis 0.9.93):
  deconv     the source spectrum through `noise_module.smooth_source_spect` (conj(S) /
             moving_ave(|S|)^2 on the station's flattened spectra, all windows), the
             receiver as is, then `noise_module.correlate` -- what `correlate.cross_correlation`
             does for `CCMethod.DECONV`.
  coherency  both spectra divided by their smoothed amplitude. NoisePy defines it so
             (`smooth_source_spect` for `COHERENCY`: conj(S) / moving_ave(|S|); the
             receiver divided by moving_ave(|S|) in `correlate`), and its pipeline ran it so
             until 0.9.7x: `cross_correlation` now calls `smooth_source_spect` only for
             deconv, and 0.9.93's `correlate` has the receiver's division commented out,
             so its "coherency" returns the xcorr result. Here both sides go through
             0.9.93's own `smooth_source_spect(COHERENCY)` (the receiver as its conjugate,
             S / moving_ave(|S|)), then `noise_module.correlate`.
  substacks  `noise_module.correlate` with substack=True, substack_windows=2 (substack_len
             3600 s): NoisePy's groups of windows starting within each 3600 s from the first
             kept window; every group's stack and window count, and the group's index.

Usage: .tools/noisepy/bin/python tests/reference/make_xcorr_methods_reference.py
(installation: tests/reference/README.md).
"""

import os
import sys

import numpy as np
import obspy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_xcorr_reference as base  # noqa: E402

nm, dt_ = base.nm, base.dt_
ROOT = base.ROOT
OUT_TXT = os.path.join(ROOT, "tests", "data", "xcorr_undervolc_methods.txt")
OUT_BIN = os.path.join(ROOT, "tests", "data", "xcorr_undervolc_methods.bin")
COMMITTED = os.path.join(ROOT, "tests", "data", "xcorr_undervolc.bin")
CC = dt_.CCMethod


def spectra(p, traces, start):
    """NoisePy's preprocessing and window spectra of each station (make_xcorr_reference)."""
    out = []
    for tr in traces:
        st = obspy.Stream([tr.copy()])
        pre = nm.preprocess_raw(st, None, p, start, start + 86399.0)
        assert len(pre) == 1 and pre[0].stats.npts == 86400
        out.append(base.compute_fft(p, pre[0]))
    return out


def divided(q, fft):
    """smooth_source_spect on a station's flattened spectra. Where whitening zeroed a run
    of bins (outside the band) the smoothed amplitude is 0 too and NumPy gives 0/0 = NaN,
    which would spread to the whole correlation: those values, and only those, are set
    to 0, the limit (and what seisgpu gives)."""
    flat = fft.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = nm.smooth_source_spect(q, flat)
    bad = ~np.isfinite(s)
    assert np.all(flat[bad] == 0), "a non-finite division of a non-zero bin"
    s[bad] = 0
    return s.reshape(fft.shape), int(bad.sum())


def method_pair(p, src, rec, method):
    """Source and receiver spectra as the method divides them, then NoisePy's correlate."""
    bb = np.intersect1d(base.good(p, src["std"]), base.good(p, rec["std"]))
    if method == "deconv":
        q = p.model_copy(update=dict(cc_method=CC.DECONV))
        s1, _ = divided(q, src["fft"])
        s2 = rec["fft"]
    else:
        q = p.model_copy(update=dict(cc_method=CC.COHERENCY))
        s1, _ = divided(q, src["fft"])
        s2 = np.conj(divided(q, rec["fft"])[0])
    corr, tcorr, ncorr = nm.correlate(s1[bb, :], s2[bb, :], q, src["nfft"], rec["t"][bb])
    return corr, tcorr, ncorr, bb


def substack_pair(p, src, rec):
    """make_xcorr_reference's pair glue (source conjugated, receiver as is), substacks on."""
    bb = np.intersect1d(base.good(p, src["std"]), base.good(p, rec["std"]))
    corr, tcorr, ncorr = nm.correlate(np.conj(src["fft"])[bb, :], rec["fft"][bb, :], p, src["nfft"], rec["t"][bb])
    return corr, tcorr, ncorr, bb


def main():
    traces = base.decimated_day()
    start = traces[0].stats.starttime
    inputs = np.stack([tr.data for tr in traces]).astype("<f4")
    committed = np.fromfile(COMMITTED, dtype="<f4", count=inputs.size)
    assert np.array_equal(committed, inputs.reshape(-1)), "input differs from xcorr_undervolc.bin"

    cases = [
        # name, ConfigParameters overrides, method ("deconv" / "coherency" / "substack")
        ("deconv_rma_linear", dict(time_norm="no", freq_norm="rma"), "deconv"),
        ("deconv_onebit_no_whitening", dict(time_norm="one_bit", freq_norm="no"), "deconv"),
        ("coherency_rma_linear", dict(time_norm="no", freq_norm="rma"), "coherency"),
        ("coherency_no_whitening", dict(time_norm="no", freq_norm="no"), "coherency"),
        ("xcorr_rma_substack_3600", dict(time_norm="no", freq_norm="rma", substack=True,
                                         substack_windows=2), "substack"),
    ]
    lines = [
        "# seisgpu ambient-noise correlation reference, other methods and substacks;"
        " written by tests/reference/make_xcorr_methods_reference.py",
        "# NoisePy (noisepy-seis %s), ObsPy %s, NumPy %s" % (base.nm_version(), obspy.__version__, np.__version__),
        "# input: the first 3 x 86400 float32 of xcorr_undervolc.bin; offsets count float32 values in xcorr_undervolc_methods.bin",
        "format seisgpu-xcorr-reference 1",
    ]
    values, off = [], 0
    for name, kw, method in cases:
        p = base.config(**kw)
        ffts = spectra(p, traces, start)
        lines.append(
            "case name=%s time_norm=%s freq_norm=%s smooth_n=%d smoothspect_n=%d cc_method=%s"
            " substack_len=%d nfft=%d n_windows=%d"
            % (name, p.time_norm.value, p.freq_norm.value, p.smooth_N, p.smoothspect_N,
               "xcorr" if method == "substack" else method,
               p.substack_len if method == "substack" else 0, ffts[0]["nfft"], ffts[0]["fft"].shape[0])
        )
        for i in range(len(traces)):
            for j in range(i, len(traces)):
                if method == "substack":
                    corr, tcorr, ncorr, bb = substack_pair(p, ffts[i], ffts[j])
                else:
                    corr, tcorr, ncorr, bb = method_pair(p, ffts[i], ffts[j], method)
                if method != "substack":
                    stack = np.asarray(corr[0], dtype=np.float32)
                    lines.append("pair i=%d j=%d n_windows=%d n_lags=%d offset=%d"
                                 % (i, j, len(bb), stack.size, off))
                    values.append(stack)
                    off += stack.size
                    print(name, i, j, "windows", len(bb), "max", np.abs(stack).max())
                    continue
                t0 = ffts[j]["t"][bb][0]
                for k in range(corr.shape[0]):
                    group = int(round((tcorr[k] - t0) / p.substack_len))
                    row = np.asarray(corr[k], dtype=np.float32)
                    lines.append("substack i=%d j=%d group=%d n_windows=%d n_lags=%d offset=%d"
                                 % (i, j, group, ncorr[k], row.size, off))
                    values.append(row)
                    off += row.size
                print(name, i, j, "substacks", corr.shape[0], "windows", [int(n) for n in ncorr])
    blob = np.concatenate(values).astype("<f4").tobytes()
    with open(OUT_BIN, "wb") as f:
        f.write(blob)
    with open(OUT_TXT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", OUT_TXT, OUT_BIN, len(blob), "bytes")


if __name__ == "__main__":
    main()
