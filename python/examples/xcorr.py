"""Ambient-noise cross-correlation of one day of three UnderVolc stations (Piton de la
Fournaise) at 1 Hz, with NoisePy's settings: linear, phase-weighted and robust stacks; and
the same from an ObsPy Stream when ObsPy is installed."""

import numpy as np

import seisgpu
from _data import undervolc

days, stations = undervolc()
settings = dict(sampling_rate=1.0, freqmin=0.05, freqmax=0.4, cc_len=1800, step=450,
                maxlag=200)

with seisgpu.Context() as ctx:
    for stack in ("linear", "pws", "robust"):
        with seisgpu.Xcorr(ctx, stack_method=stack, **settings) as plan:
            result = plan.run(days)
        for (i, j), c, n in zip(result.pairs, result.stacks, result.n_windows):
            peak = result.lags[np.argmax(np.abs(c))]
            print(f"{stack:>6} {stations[i]}–{stations[j]}: {n} windows, peak at {peak:+.0f} s")

try:
    import obspy
except ImportError:
    print("(ObsPy not installed: skipped seisgpu.xcorr.from_obspy)")
else:
    start = obspy.UTCDateTime("2010-09-01")
    stream = obspy.Stream([obspy.Trace(d, header=dict(network="YA", station=s, channel="HHZ",
                                                      sampling_rate=1.0, starttime=start))
                           for d, s in zip(days, stations)])
    result = seisgpu.xcorr.from_obspy(stream, **{k: v for k, v in settings.items()
                                                 if k != "sampling_rate"})
    print(f"from_obspy: {result.stations}, stacks {result.stacks.shape}")
