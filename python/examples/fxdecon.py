"""F-X decon of the Penobscot crossline (noise added), Seismic Unix's sufxdecon reproduced,
and F-XY decon of the F3 cube."""

import numpy as np

import seisgpu
from _data import f3, penobscot, snr_db

section = penobscot()  # 601 traces × 1501 samples
rng = np.random.default_rng(0)
noisy = section + 0.5 * section.std() * rng.standard_normal(section.shape).astype(np.float32)
cube = f3()  # 23 inlines × 18 crosslines × 75 samples

with seisgpu.Context() as ctx:
    two_sided = seisgpu.FxDecon(ctx, noisy.shape, sample_interval_s=0.004, fmin_hz=3,
                                fmax_hz=110, operator_traces=4).filter(noisy)
    su = seisgpu.FxDecon(ctx, noisy.shape, preset="seismic_unix", fft_length=3080).filter(noisy)
    volume = seisgpu.FxDecon(ctx, cube.shape, window_inline=12, window_crossline=12,
                             operator_inline=5, operator_crossline=5).filter(cube)

print(f"section {noisy.shape}: input SNR {snr_db(noisy, section):.1f} dB, two-sided F-X "
      f"{snr_db(two_sided, section):.1f} dB, sufxdecon's {snr_db(su, section):.1f} dB")
removed = np.linalg.norm(cube - volume) / np.linalg.norm(cube)
print(f"F3 cube {cube.shape}: F-XY removed {100 * removed:.1f} % of the energy (the "
      "unpredictable part)")
