"""One FINUFFT 2.5 transform timed for the USFFT bench (bench/usfft/finufft.rs runs it).

argv[1]: JSON {"dir", "type", "dim", "n", "m", "prec", "tol", "threads", "reps"}. Reads
x0.bin … (coordinates, one file per dimension) and in.bin (strengths or modes) from dir,
raw in the bench's precision; writes out.bin; prints JSON {"set_ms", "exec_ms", "version"}:
set points once, one untimed execute, then the median of `reps` executes.
"""

import json
import sys
import time

import finufft
import numpy as np

a = json.loads(sys.argv[1])
real = np.float32 if a["prec"] == "f32" else np.float64
cplx = np.complex64 if a["prec"] == "f32" else np.complex128
dim, n, m = a["dim"], a["n"], a["m"]
xs = [np.fromfile(f"{a['dir']}/x{d}.bin", dtype=real) for d in range(dim)]
inp = np.fromfile(f"{a['dir']}/in.bin", dtype=cplx)
shape = (n,) * dim
# seisgpu's first dimension is the fastest, NumPy's last axis is: the coordinates go in
# reversed order so that the (cubic) mode arrays have the same layout.
plan = finufft.Plan(a["type"], shape, 1, a["tol"], 1, dtype=cplx, nthreads=a["threads"])
t = time.perf_counter()
plan.setpts(*reversed(xs))
set_ms = (time.perf_counter() - t) * 1e3
if a["type"] == 1:
    data, out = inp, np.zeros(shape, dtype=cplx)
else:
    data, out = inp.reshape(shape), np.zeros(m, dtype=cplx)
plan.execute(data, out=out)
times = []
for _ in range(a["reps"]):
    t = time.perf_counter()
    plan.execute(data, out=out)
    times.append((time.perf_counter() - t) * 1e3)
np.ascontiguousarray(out).ravel().tofile(f"{a['dir']}/out.bin")
print(json.dumps({"set_ms": set_ms, "exec_ms": float(np.median(times)), "version": finufft.__version__}))
