"""What the demo's figure scripts share: reading the raw arrays the C demo writes, and
drawing seismic panels with axes in the data's units on one colour scale.

A raw output NAME is two files in the demo's output folder: NAME.json (the grid: shape,
slowest axis first, each axis's name, unit, first value and step; the arrays' names,
labels and SNRs; the display clip; the backend) and NAME.f32 (the arrays one after
another, little-endian float32, each in that shape).
"""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)
import numpy as np  # noqa: E402

CMAP = "RdBu_r"  # reflections red (positive) and blue (negative), zero white
DPI = 110
PENOBSCOT_CREDIT = "Data: Nova Scotia Department of Energy (CC BY-SA 3.0)"
F3_CREDIT = "Data: dGB Earth Sciences / TNO-NLOG, F3 Netherlands (CC BY-SA 3.0)"


class Raw:
    """One raw output: `arrays` maps each name to its samples, `meta` is the JSON."""

    def __init__(self, folder, name):
        folder = Path(folder)
        self.meta = json.loads((folder / f"{name}.json").read_text())
        shape = tuple(self.meta["shape"])
        data = np.fromfile(folder / self.meta["file"], dtype=self.meta["dtype"])
        data = data.reshape((len(self.meta["arrays"]),) + shape)
        self.arrays = {a["name"]: data[k] for k, a in enumerate(self.meta["arrays"])}
        self.info = {a["name"]: a for a in self.meta["arrays"]}
        self.axes = self.meta["axes"]
        self.clip = float(self.meta["clip"])

    def _in_ms(self, axis):
        """Times are shown in ms when the whole axis spans less than 2 s."""
        a = self.axes[axis]
        return a["unit"] == "s" and a["step"] * self.meta["shape"][axis] < 2.0

    def coords(self, axis):
        """The values along `axis`, in the unit label() names."""
        a = self.axes[axis]
        values = a["first"] + a["step"] * np.arange(self.meta["shape"][axis])
        return values * 1e3 if self._in_ms(axis) else values

    def label(self, axis):
        a = self.axes[axis]
        if a["unit"] == "s":
            return "two-way time (ms)" if self._in_ms(axis) else "two-way time (s)"
        return f"{a['name']} number"

    def snr(self, name):
        return self.info[name]["snr_db"]


def snr_db(clean, x):
    """10 log10(|clean|² / |x − clean|²), over the arrays given."""
    clean = clean.astype(np.float64)
    return 10.0 * np.log10(np.sum(clean**2) / np.sum((x - clean) ** 2))


def title(label, snr, reference=None):
    """A panel title: the label, and the SNR (with the gain over `reference`)."""
    if snr is None:
        return label
    if reference is None:
        return f"{label}\nSNR {snr:.2f} dB"
    return f"{label}\nSNR {snr:.2f} dB ({snr - reference:+.2f} dB)"


def panel(ax, image, x, y, clip, xlabel=None, ylabel=None):
    """Draws image[len(y), len(x)] with cell edges at the coordinates' half steps; time
    (y) grows downwards, as seismic is shown. Returns the image artist."""
    dx = (x[1] - x[0]) / 2 if len(x) > 1 else 0.5
    dy = (y[1] - y[0]) / 2 if len(y) > 1 else 0.5
    artist = ax.imshow(image, cmap=CMAP, vmin=-clip, vmax=clip, aspect="auto",
                       interpolation="nearest",
                       extent=(x[0] - dx, x[-1] + dx, y[-1] + dy, y[0] - dy))
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    return artist


def colour_bar(fig, artist, axes, clip):
    bar = fig.colorbar(artist, ax=axes, shrink=0.85, pad=0.015, aspect=30)
    bar.set_label(f"amplitude, all panels (clipped at ±{clip:,.0f})")
    return bar


def finish(fig, path, suptitle, credit, dpi=None):
    fig.suptitle(suptitle, fontsize=14)
    # As a supxlabel, which the constrained layout keeps clear of the panels.
    fig.supxlabel(credit, x=0.995, ha="right", fontsize=8, color="0.35")
    fig.savefig(path, dpi=dpi or DPI)
    plt.close(fig)
    print(f"  {path}")
