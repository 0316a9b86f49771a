"""The non-uniform FFT on a Penobscot window: its 2D Fourier series evaluated at points off
the sample grid (type 2), i.e. band-limited interpolation, checked at the grid nodes; and the
spectrum of irregularly placed traces (type 1)."""

import numpy as np

import seisgpu
from _data import penobscot

window = penobscot()[200:264, 500:628].astype(np.float64)  # 64 traces × 128 samples
n_tr, n_s = window.shape
# Centred Fourier coefficients, f[k_trace, k_sample] (FINUFFT's indexing).
modes = np.fft.fftshift(np.fft.fft2(window)) / window.size
to_radians = lambda i, n: 2 * np.pi * np.asarray(i, float) / n  # noqa: E731

with seisgpu.Context() as ctx:
    interp = seisgpu.Usfft(ctx, 2, modes.shape, sign=+1, tolerance=1e-9)
    # Grid nodes first: the series must give the samples back.
    ti, si = np.meshgrid(np.arange(n_tr), np.arange(n_s), indexing="ij")
    interp.set_points(to_radians(ti.ravel(), n_tr), to_radians(si.ravel(), n_s))
    back = interp.execute(modes).real.reshape(window.shape)
    # Then halfway between traces: a trace interpolated at x + 0.5.
    mid = np.arange(n_tr - 1) + 0.5
    ti, si = np.meshgrid(mid, np.arange(n_s), indexing="ij")
    interp.set_points(to_radians(ti.ravel(), n_tr), to_radians(si.ravel(), n_s))
    between = interp.execute(modes).real.reshape(n_tr - 1, n_s)

    # Type 1: the spectrum of 40 traces at irregular positions (f32 this time).
    rng = np.random.default_rng(1)
    keep = np.sort(rng.choice(n_tr, 40, replace=False))
    xt, xs = np.meshgrid(keep, np.arange(n_s), indexing="ij")
    spectrum = seisgpu.Usfft(ctx, 1, (n_tr, n_s), dtype=np.complex64, sign=-1, tolerance=1e-5)
    spectrum.set_points(to_radians(xt.ravel(), n_tr).astype(np.float32),
                        to_radians(xs.ravel(), n_s).astype(np.float32))
    f = spectrum.execute(window[keep].ravel().astype(np.complex64))

err = np.abs(back - window).max() / np.abs(window).max()
print(f"type 2 at the grid nodes: max error {err:.1e} of the window's maximum")
neighbours = (window[:-1] + window[1:]) / 2
print(f"interpolated halfway between traces: {between.shape}, correlation with the mean "
      f"of the neighbours {np.corrcoef(between.ravel(), neighbours.ravel())[0, 1]:.3f}")
full = np.fft.fftshift(np.fft.fft2(window))
print(f"type 1 of 40 of 64 traces: {f.shape} {f.dtype}; correlation of |spectrum| with the "
      f"full section's {np.corrcoef(np.abs(f).ravel(), np.abs(full).ravel())[0, 1]:.3f}")
