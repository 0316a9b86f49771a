#!/usr/bin/env python3
"""plot_emlog.py OUTDIR: the EM-logging picture of `make demo`.

Reads OUTDIR/emlog_region.txt (written by examples/c/emlog.c: the search grid, the analytic
region and the exhaustive search's 2D marginals) and draws one panel per parameter pair:
the number of equivalent models (F <= 1) per grid cell, with the analytic ellipsoid's
projection on that pair drawn over it, into OUTDIR/fig_emlog_region.png. The ellipsoid is
(x - x*)^T G (x - x*) <= c with G = V S^2 V^T from the SVD of the weighted matrix; its
shadow on a pair (a, b) is y^T (G^-1)_ab^-1 y <= c, and c follows from the half-widths.
Needs matplotlib and NumPy (`make demo` installs them into .tools/plot).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def read_region(path):
    values, pairs = {}, []
    for line in path.read_text().splitlines():
        key, *rest = line.split()
        if key == "names":
            values[key] = [name.replace("_", " ") for name in rest]
        elif key == "pair":
            pairs.append((int(rest[0]), int(rest[1]), np.array(rest[2:], dtype=np.int64)))
        else:
            values[key] = np.array(rest, dtype=float)
    return values, pairs


def main():
    out = Path(sys.argv[1])
    v, pairs = read_region(out / "emlog_region.txt")
    p, count = int(v["p"][0]), int(v["count"][0])
    star, upper = v["sigma_star"], v["upper"]
    s, vec = v["singular_values"], v["right_vectors"].reshape(p, p)  # vector c in column c
    g_inv = vec @ np.diag(1.0 / s**2) @ vec.T
    c = (upper[0] - star[0]) ** 2 / g_inv[0, 0]  # half-width_k = sqrt(c (G^-1)_kk)
    t = np.linspace(0.0, 2.0 * np.pi, 400)
    fig, axes = plt.subplots(1, len(pairs), figsize=(5 * len(pairs), 4.6), constrained_layout=True)
    for ax, (a, b, counts) in zip(np.atleast_1d(axes), pairs):
        grid = counts.reshape(count, count)  # [i_b, i_a]
        image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto", interpolation="nearest",
                          extent=(v["lo"][a], v["hi"][a], v["lo"][b], v["hi"][b]))
        # Cell centres sit on the grid values: widen the extent by half a step each side.
        step_a = (v["hi"][a] - v["lo"][a]) / (count - 1)
        step_b = (v["hi"][b] - v["lo"][b]) / (count - 1)
        image.set_extent((v["lo"][a] - step_a / 2, v["hi"][a] + step_a / 2,
                          v["lo"][b] - step_b / 2, v["hi"][b] + step_b / 2))
        block = g_inv[np.ix_([a, b], [a, b])]
        root = np.linalg.cholesky(c * block)
        ring = root @ np.vstack([np.cos(t), np.sin(t)])
        ax.plot(star[a] + ring[0], star[b] + ring[1], color="white", lw=1.5, ls="--",
                label="analytic ellipsoid (projection)")
        ax.plot(star[a], star[b], "w+", ms=10, label="σ* (least squares)")
        names = v["names"]
        ax.set_xlabel(f"σ {names[a]} (S/m)")
        ax.set_ylabel(f"σ {names[b]} (S/m)")
        ax.set_title(f"{names[a]} × {names[b]}")
        bar = fig.colorbar(image, ax=ax, label="models with F ≤ 1")
        bar.locator = MaxNLocator(integer=True)  # counts
        bar.update_ticks()
    np.atleast_1d(axes)[0].legend(loc="upper right", fontsize=8, framealpha=0.5)
    fig.suptitle(f"EM-logging quasi-solution region: {p} conductivities × {count} values, 2D marginals")
    target = out / "fig_emlog_region.png"
    fig.savefig(target, dpi=120)
    print(f"  {target}")


if __name__ == "__main__":
    main()
