"""Wavelet denoising of the Penobscot crossline: Donoho-Johnstone shrinkage of every trace,
all levels against the levels above the signal band only (seisgpu.levels_above)."""

import numpy as np

import seisgpu
from _data import penobscot, snr_db

section = penobscot()[:, 400:1424]  # 601 traces × 1024 samples (a power of two), dt 4 ms
rng = np.random.default_rng(0)
noisy = section + 0.5 * section.std() * rng.standard_normal(section.shape).astype(np.float32)

with seisgpu.Context() as ctx:
    dwt = seisgpu.Dwt(ctx, 1024, "daubechies", 8)  # GSL's daubechies 8 = PyWavelets' db4
    every_level = dwt.denoise(noisy)
    # Reflections lie below ~60 Hz here: threshold only the levels wholly above that.
    levels = seisgpu.levels_above(60.0, 0.004, 1024)
    above_band, thresholds = dwt.denoise(noisy, thresholded_levels=levels, mode="soft",
                                         return_thresholds=True)

print(f"traces {noisy.shape}, {noisy.dtype}; input SNR {snr_db(noisy, section):.1f} dB")
print(f"every level thresholded:      {snr_db(every_level, section):.1f} dB")
print(f"levels {levels} (≥ 60 Hz) only: {snr_db(above_band, section):.1f} dB; "
      f"mean threshold {thresholds[:, 0].mean():.1f}")
