"""cuFINUFFT's type 3 on the case of bench/usfft/type3.rs, for a side-by-side row.

3D, M points uniform in [-pi, pi)^3 and N = M frequencies uniform in [-S, S)^3 with
S = M^(1/3)/2, complex strengths with parts uniform in [-1, 1); set points and execute
timed with CUDA events on cupy arrays (device-resident), execute the median of the reps
after one untimed call; the error against direct sums at 12 random frequencies, in f64
over the coordinates and strengths as passed. The random numbers are cupy's, not the
Rust bench's: the case is the same in distribution, not in values.

usage (on the GPU machine, cuFINUFFT unpacked by ../shared/tools/cufinufft/prepare.sh):
    PYTHONPATH=.cufinufft LD_LIBRARY_PATH=.cufinufft/lib:$LD_LIBRARY_PATH \
        python3 bench/usfft/cufinufft_type3.py [M] [reps]
"""
import math
import sys

import cupy as cp
import numpy as np

import cufinufft

M = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
HALF_S = 0.5 * M ** (1.0 / 3.0)
rng = cp.random.default_rng(3)
x64 = [rng.uniform(-math.pi, math.pi, M, dtype=cp.float64) for _ in range(3)]
s64 = [rng.uniform(-HALF_S, HALF_S, M, dtype=cp.float64) for _ in range(3)]
c64 = (rng.uniform(-1, 1, M) + 1j * rng.uniform(-1, 1, M)).astype(cp.complex128)


def events_ms(fn, reps):
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(times))


def error(out, x, s, c, isign, samples=12):
    """Relative error at `samples` random frequencies against the direct sum."""
    pick = np.random.default_rng(4).integers(0, M, samples)
    xs = [v.astype(cp.float64) for v in x]
    cc = c.astype(cp.complex128)
    ref, got = [], []
    for k in pick:
        k = int(k)
        phase = sum(float(s[d][k]) * xs[d] for d in range(3))
        ref.append(complex(cp.sum(cc * cp.exp(1j * isign * phase))))
        got.append(complex(out[k]))
    ref, got = np.array(ref), np.array(got)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


print(f"cufinufft type 3; {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; "
      f"M=N={M} S={HALF_S:.1f}")
print("| lib | prec | tol | type | setpts ms | execute ms (median) | rel err |")
print("|---|---|---|---|---|---|---|")
for prec, tol in (("f32", 1e-6), ("f32", 1e-5), ("f64", 1e-9), ("f64", 1e-6)):
    cdt = cp.complex64 if prec == "f32" else cp.complex128
    rdt = cp.float32 if prec == "f32" else cp.float64
    x = [v.astype(rdt) for v in x64]
    s = [v.astype(rdt) for v in s64]
    c = c64.astype(cdt)
    try:
        plan = cufinufft.Plan(3, 3, eps=tol, isign=-1, dtype=np.dtype(cdt).name)
        t_set = events_ms(lambda: plan.setpts(*x, *s), 1)
        out = cp.empty(M, dtype=cdt)
        plan.execute(c, out=out)
        t_ex = events_ms(lambda: plan.execute(c, out=out), REPS)
        err = error(out, x, s, c, -1)
        print(f"| cufinufft | {prec} | {tol:g} | 3 | {t_set:.2f} | {t_ex:.2f} | {err:.2e} |", flush=True)
        del plan, out
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"| cufinufft | {prec} | {tol:g} | 3 | error: {str(e)[:160]} | | |", flush=True)
    cp.get_default_memory_pool().free_all_blocks()
