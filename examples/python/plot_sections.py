#!/usr/bin/env python3
"""plot_sections.py OUTDIR: the slide figure of `make demo`.

Reads what examples/c/demo_penobscot.c leaves in OUTDIR (sections.f32: the clean, noisy,
denoised and removed sections as little-endian float32, trace after trace; sections.txt:
their sizes, sample interval, display clip and SNRs) and draws them side by side with
titles, axes in trace number and seconds, and one shared amplitude scale, into
OUTDIR/penobscot_denoising.png. Needs matplotlib and NumPy (Debian: python3-matplotlib).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    out = Path(sys.argv[1])
    meta = dict(line.split(maxsplit=1) for line in (out / "sections.txt").read_text().splitlines())
    n_traces, n_samples = int(meta["n_traces"]), int(meta["n_samples"])
    dt, clip = float(meta["dt_s"]), float(meta["clip"])
    data = np.fromfile(out / "sections.f32", dtype="<f4").reshape(4, n_traces, n_samples)
    titles = [
        "Clean (Penobscot crossline 1155)",
        f"Noisy: {float(meta['snr_noisy_db']):.1f} dB SNR",
        f"Denoised (seisgpu DWT): {float(meta['snr_denoised_db']):.1f} dB",
        "Removed noise (noisy - denoised)",
    ]
    fig, axes = plt.subplots(1, 4, figsize=(16, 6), sharey=True, constrained_layout=True)
    extent = (0, n_traces - 1, (n_samples - 1) * dt, 0)  # time down, as seismic is shown
    for ax, section, title in zip(axes, data, titles):
        image = ax.imshow(section.T, cmap="gray_r", vmin=-clip, vmax=clip, aspect="auto",
                          extent=extent, interpolation="nearest")
        ax.set_title(title, fontsize=11)
        ax.set_xlabel("trace number")
    axes[0].set_ylabel("two-way time (s)")
    bar = fig.colorbar(image, ax=axes, shrink=0.8, pad=0.01)
    bar.set_label(f"amplitude (shared scale, clipped at ±{clip:.0f})")
    fig.suptitle(f"seisgpu wavelet denoising — {meta['backend']}", fontsize=13)
    fig.text(0.995, 0.995, "Data: Nova Scotia Department of Energy (CC BY-SA 3.0)",
             fontsize=8, color="0.4", ha="right", va="top")
    path = out / "penobscot_denoising.png"
    # Enough pixels that the finest, noise-only wavelet level still shows as texture.
    fig.savefig(path, dpi=150)
    print(f"  {path}")


if __name__ == "__main__":
    main()
