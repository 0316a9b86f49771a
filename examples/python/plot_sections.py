#!/usr/bin/env python3
"""plot_sections.py OUTDIR: the figures of `make demo` for the Penobscot section.

Reads what examples/c/demo_penobscot.c leaves in OUTDIR (section.*: the clean, noisy,
DWT-denoised and F-X-filtered crossline; wp_section.*: a window of it denoised and
compressed with wave packets; see plot_common.py for the format) and draws, with axes in
inline number and two-way time, one colour scale per figure and the SNR in every title:

  fig_dwt_section.png         clean | noisy | DWT | removed noise, the whole section
  fig_fx_section.png          clean | noisy | F-X | removed noise, the whole section
  fig_wavepacket_section.png  the window: clean | noisy | wave packets | 5 % of the samples
  fig_compare_window.png      the window: clean | noisy | DWT | F-X | wave packets, SNRs
                              over the window

With `--small PATH` it also writes a compact version of fig_compare_window.png (the one in
docs/ for the README: 256 colours, under 200 KB).

Needs matplotlib and NumPy (`make demo` installs them into .tools/plot).
"""
import sys
from pathlib import Path

import numpy as np
from plot_common import PENOBSCOT_CREDIT, Raw, colour_bar, finish, panel, plt, snr_db, title


def section_step(out, sec, name, what, filename):
    """Clean, noisy, one method's result and what it removed, the whole section."""
    inline, time = sec.coords(0), sec.coords(1)
    clean, noisy, result = sec.arrays["clean"], sec.arrays["noisy"], sec.arrays[name]
    snr_noisy = sec.snr("noisy")
    panels = [
        (clean, "clean (Penobscot crossline 1155)"),
        (noisy, title("noisy: white noise added", snr_noisy)),
        (result, title(sec.info[name]["label"], sec.snr(name), snr_noisy)),
        (noisy - result, "removed (noisy − result)"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(18, 8.5), sharex=True, sharey=True,
                             constrained_layout=True)
    for k, (ax, (image, label)) in enumerate(zip(axes, panels)):
        artist = panel(ax, image.T, inline, time, sec.clip, sec.label(0),
                       sec.label(1) if k == 0 else None)
        ax.set_title(label, fontsize=11)
    colour_bar(fig, artist, axes, sec.clip)
    finish(fig, out / filename, f"{what} of a field section — seisgpu on {sec.meta['backend']}",
           PENOBSCOT_CREDIT)


def window_of(sec, win, name):
    """The part of a whole-section array that the wave-packet window covers."""
    i0 = int(round((win.coords(0)[0] - sec.coords(0)[0]) / sec.axes[0]["step"]))
    t0 = int(round((win.axes[1]["first"] - sec.axes[1]["first"]) / sec.axes[1]["step"]))
    n_x, n_t = win.meta["shape"]
    return sec.arrays[name][i0:i0 + n_x, t0:t0 + n_t]


def row(path, win, panels, suptitle, width=4.1, dpi=None):
    inline, time = win.coords(0), win.coords(1)
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels) + 1.2, width * 1.37),
                             sharex=True, sharey=True, constrained_layout=True)
    for k, (ax, (image, label)) in enumerate(zip(axes, panels)):
        artist = panel(ax, image.T, inline, time, win.clip, win.label(0),
                       win.label(1) if k == 0 else None)
        ax.set_title(label, fontsize=11)
    colour_bar(fig, artist, axes, win.clip)
    finish(fig, path, suptitle, PENOBSCOT_CREDIT, dpi)


def small_copy(path, win, panels, suptitle):
    """The comparison at README size, reduced to 256 colours (Pillow comes with matplotlib)."""
    from PIL import Image

    row(path, win, panels, suptitle, width=2.9, dpi=75)
    Image.open(path).convert("RGB").quantize(256).save(path, optimize=True)


def main():
    out = Path(sys.argv[1])
    sec, win = Raw(out, "section"), Raw(out, "wp_section")
    section_step(out, sec, "dwt", "Wavelet denoising", "fig_dwt_section.png")
    section_step(out, sec, "fx", "F-X prediction filtering", "fig_fx_section.png")

    clean, noisy = win.arrays["clean"], win.arrays["noisy"]
    reference = win.snr("noisy")
    row(out / "fig_wavepacket_section.png", win, [
        (clean, "clean"),
        (noisy, title("noisy", reference)),
        (win.arrays["denoised"], title(win.info["denoised"]["label"], win.snr("denoised"),
                                       reference)),
        (win.arrays["compressed"], title(win.info["compressed"]["label"],
                                         win.snr("compressed"))),
    ], f"Gaussian wave packets on a window of the section — seisgpu on {win.meta['backend']}")

    results = [("DWT", window_of(sec, win, "dwt")), ("F-X", window_of(sec, win, "fx")),
               ("wave packets", win.arrays["denoised"])]
    if not np.array_equal(window_of(sec, win, "clean"), clean):
        sys.exit("plot_sections.py: the window does not match the section")
    panels = [(clean, "clean"), (noisy, title("noisy", reference))] + [
        (x, title(label, snr_db(clean, x), reference)) for label, x in results]
    suptitle = "Three denoisers on the same noisy data (SNR over this window)"
    row(out / "fig_compare_window.png", win, panels, suptitle)
    if "--small" in sys.argv:
        small_copy(Path(sys.argv[sys.argv.index("--small") + 1]), win, panels, suptitle)


if __name__ == "__main__":
    main()
