#!/usr/bin/env bash
# On the device machine, from the repository root: the USFFT's rows and cuFINUFFT's on the
# same case in one call (3D, N = 256 modes a side, M = N³ points, device-resident), merged by
# bench/usfft/peers.py into one table and the pairs at equal accuracy.
#
# Needs a bench_usfft executable (BENCH; scripts/gpu_stage.sh puts it in .gpu/bin) and
# cuFINUFFT prepared into .cufinufft (../shared/tools/cufinufft/prepare.sh .cufinufft; about
# 40 MB). Both together with the working tree exceed what one device call carries with the
# whole staged tree: carry .cufinufft and the benchmark alone (strip --strip-debug, xz).
#   N=256 REPS=5 BENCH=.gpu/bin/bench_usfft scripts/gpu_usfft_peers.sh
# Writes $OUT/usfft_peers.md (out/gpu elsewhere).
set -euo pipefail
OUT=${OUT:-out/gpu}
N=${N:-256}
REPS=${REPS:-5}
BENCH=${BENCH:-.gpu/bin/bench_usfft}
mkdir -p "$OUT"
rows=$(mktemp -d)
export SEISGPU_REQUIRE_CUDA=1
for tol in 1e-6 1e-5 1e-4 1e-3; do
    "$BENCH" --dim 3 --n "$N" --frac 1 --prec f32 --tol32 "$tol" --modes device \
        --reps "$REPS" --json "$rows/f32_$tol.json" >"$rows/f32_$tol.log" 2>&1
done
for tol in 1e-9 1e-8 1e-7 1e-6; do
    "$BENCH" --dim 3 --n "$N" --frac 1 --prec f64 --tol64 "$tol" --modes device \
        --reps "$REPS" --json "$rows/f64_$tol.json" >"$rows/f64_$tol.log" 2>&1
done
bash .cufinufft/run.sh "$N" "$REPS" >"$rows/cufinufft.md" 2>&1
{
    echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%F)"
    echo
    python3 bench/usfft/peers.py "$rows"/*.json --cufinufft "$rows/cufinufft.md"
} | tee "$OUT/usfft_peers.md"
