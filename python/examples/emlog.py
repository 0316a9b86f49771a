"""The equivalence region of a VIKIZ-like EM log (as examples/c/emlog.c): five probes over a
1.2 m reservoir layer with invasion zone, annulus and formation; Doll's geometric factors;
2 % errors; the three zone conductivities searched on a 21³ grid around the truth."""

import numpy as np

import seisgpu
from seisgpu import Axis

lengths = np.array([0.5, 0.71, 1.0, 1.41, 2.0])  # probe lengths, m
depths = np.linspace(-1.0, 2.2, 40)  # m; the layer spans 0 … 1.2 m
radii = [0.0, 0.3, 0.5, np.inf]  # invasion zone, annulus, formation
# Upper shoulder, invasion zone, annulus, formation, lower shoulder (S/m).
truth = np.array([0.25, 0.2, 0.5, 0.1, 0.3])


def radial(r, h):
    return 1.0 if np.isinf(r) else r * r / (r * r + h * h)


rows = []
for length in lengths:
    h = length / 2
    for z in depths:
        up = np.arctan((0.0 - z) / h) / np.pi + 0.5
        down = 0.5 - np.arctan((1.2 - z) / h) / np.pi
        layer = 1 - up - down
        rows.append([up] + [layer * (radial(radii[k + 1], h) - radial(radii[k], h))
                            for k in range(3)] + [down])
a = np.array(rows)
f = a @ truth
delta = np.full(len(f), 0.02)

with seisgpu.Context() as ctx:
    plan = seisgpu.EmSearch(ctx, a, truth, f, f, delta, searched=[1, 2, 3])
    e = plan.analytic()
    axes = [Axis.linear(t - 1.5 * (u - s), t + 1.5 * (u - s), 21)
            for t, s, u in zip(truth[1:4], e.sigma_star, e.upper)]
    r = plan.search(axes, pairs=[(0, 1), (0, 2), (1, 2)])

print(f"analytic: σ* {np.round(e.sigma_star, 4)} S/m, F_min {e.f_min:.1e}, condition "
      f"{e.singular_values[0] / e.singular_values[-1]:.0f}")
print(f"{r.count} of {r.total} models within the errors; best {r.best_model} "
      f"(F {r.best_misfit:.1e})")
for k, name in enumerate(["invasion zone", "annulus", "formation"]):
    print(f"  {name:<13} grid region {r.value_min[k]:.4f} … {r.value_max[k]:.4f}, ellipsoid "
          f"{e.lower[k]:.4f} … {e.upper[k]:.4f} S/m; marginal peak at "
          f"{r.axes[k][np.argmax(r.marginal(k))]:.4f}")
pair = r.pair((0, 1))
print(f"2D marginal (invasion, annulus): {pair.shape}, {int(pair.sum())} models")
