#!/usr/bin/env python3
"""plot_cube.py OUTDIR: the figure of `make demo` for the 3D cube.

Reads OUTDIR/wp_cube.* (written by examples/c/demo_wavepackets.c: an F3 crop, inline ×
crossline × time, clean, noisy, denoised with wave packets and compressed to 5 % of its
samples; format in plot_common.py) and draws fig_wavepacket_cube.png: one column per
version, three rows of cuts through the cube — an inline (crossline × time), a crossline
(inline × time) and a time slice (crossline × inline) — on one colour scale, with the cut
positions marked on the clean panels and the SNR over the whole cube in the titles.

Needs matplotlib and NumPy (`make demo` installs them into .tools/plot).
"""
import sys
from pathlib import Path

import numpy as np
from plot_common import F3_CREDIT, Raw, colour_bar, finish, panel, plt, title


def main():
    out = Path(sys.argv[1])
    cube = Raw(out, "wp_cube")
    inline, crossline, time = cube.coords(0), cube.coords(1), cube.coords(2)
    clean = cube.arrays["clean"]
    # The cuts: the middle inline and crossline, and the time slice with the most lateral
    # variation (a slice through one trough or peak is nearly uniform).
    i, j = len(inline) // 2, len(crossline) // 2
    k = int(np.argmax(np.var(clean.astype(np.float64), axis=(0, 1))))
    names = ["clean", "noisy", "denoised", "compressed"]
    reference = cube.snr("noisy")
    fig, axes = plt.subplots(3, 4, figsize=(16, 12), constrained_layout=True,
                             gridspec_kw={"height_ratios": [1.25, 1.25, 1]})
    for c, name in enumerate(names):
        x = cube.arrays[name]
        label = "clean" if name == "clean" else cube.info[name]["label"]
        snr = cube.snr(name)
        axes[0, c].set_title(title(label, snr, reference if name == "denoised" else None),
                             fontsize=11)
        first = c == 0
        artist = panel(axes[0, c], x[i].T, crossline, time, cube.clip, cube.label(1),
                       f"inline {inline[i]:.0f}\n{cube.label(2)}" if first else None)
        panel(axes[1, c], x[:, j].T, inline, time, cube.clip, cube.label(0),
              f"crossline {crossline[j]:.0f}\n{cube.label(2)}" if first else None)
        panel(axes[2, c], x[:, :, k], crossline, inline, cube.clip, "crossline number",
              f"time slice {time[k]:.0f} ms\ninline number" if first else None)
        axes[2, c].invert_yaxis()  # a map: inline numbers grow upwards
    # Where the cuts lie, on the clean column.
    axes[0, 0].axhline(time[k], color="k", lw=0.8, ls="--")
    axes[0, 0].axvline(crossline[j], color="k", lw=0.8, ls="--")
    axes[1, 0].axhline(time[k], color="k", lw=0.8, ls="--")
    axes[1, 0].axvline(inline[i], color="k", lw=0.8, ls="--")
    axes[2, 0].axhline(inline[i], color="k", lw=0.8, ls="--")
    axes[2, 0].axvline(crossline[j], color="k", lw=0.8, ls="--")
    colour_bar(fig, artist, axes, cube.clip)
    n_il, n_xl, n_t = cube.meta["shape"]
    finish(fig, out / "fig_wavepacket_cube.png",
           f"Gaussian wave packets on a 3D field cube ({n_il} inlines × {n_xl} crosslines × "
           f"{n_t} samples) — seisgpu on {cube.meta['backend']}\n"
           "an inline, a crossline and a time slice of each version; SNR over the whole cube",
           F3_CREDIT)


if __name__ == "__main__":
    main()
