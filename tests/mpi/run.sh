#!/usr/bin/env bash
# The MPI example as `make test` checks it, on the CPU with oversubscribed ranks:
# xcorr_network's file from 3 ranks (and 2) equals the one from 1 rank byte for byte —
# stations made on each rank or exchanged, linear, phase-weighted and robust stacks,
# substacks, deconvolution, station-days read from a list — and xcorr_read accepts it; a
# bad station file on one rank ends every rank with its message and a non-zero status and
# leaves no output file (nor the partial one). Prints "mpi: N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
make --no-print-directory mpi-examples >/dev/null
# Root in CI containers; shared-memory transport without ptrace (containers forbid it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A machine whose MPI runtime cannot start two local ranks at all (no usable transport)
# says so and checks nothing more; every failure past this point is the example's.
if ! mpirun -np 2 --oversubscribe true >"$work/preflight.log" 2>&1; then
    echo "mpi: SKIPPED: mpirun cannot start 2 ranks on this machine:"
    sed 's/^/  /' "$work/preflight.log" | head -n 20
    exit 0
fi
passed=0 failed=0
verdict() { # verdict NAME STATUS
    if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "mpi: $1: ok"
    else failed=$((failed + 1)); echo "mpi: $1: FAILED"; fi
}
network() { # network RANKS ARGS…
    local n=$1; shift
    mpirun -np "$n" --oversubscribe target/mpi/xcorr_network --backend cpu --quiet "$@"
}
same_as_one_rank() { # same_as_one_rank NAME RANKS ARGS…: byte for byte, and readable
    local name=$1 n=$2; shift 2
    local status=0
    network 1 "$@" -o "$work/one.xc" && network "$n" "$@" -o "$work/many.xc" &&
        cmp "$work/one.xc" "$work/many.xc" && target/mpi/xcorr_read "$work/many.xc" --max 1 >/dev/null ||
        status=1
    verdict "$name ($n ranks = 1 rank)" $status
    rm -f "$work"/*.xc
}
day="--samples 21600"
same_as_one_rank "synthetic day" 3 --synthetic 40 $day
same_as_one_rank "spectra exchanged" 3 --synthetic 40 $day --exchange
same_as_one_rank "phase-weighted stack, hourly substacks" 3 --synthetic 24 $day --stack pws --substack-len 3600
same_as_one_rank "deconvolution, robust stack" 2 --synthetic 24 $day --cc-method deconv --stack robust

# Twelve station-days on disk, listed; then one listed file too short for a day.
python3 - "$work" <<'PY'
import math, random, struct, sys
random.seed(7)
n = 21600
field = [random.gauss(0, 1) for _ in range(n + 600)]
with open(f"{sys.argv[1]}/stations.txt", "w") as listing:
    for s in range(12):
        lag = (13 * s) % 41
        day = [field[i + 600 - lag] + 0.3 * random.gauss(0, 1) for i in range(n)]
        with open(f"{sys.argv[1]}/st{s:02d}.f32", "wb") as f:
            f.write(struct.pack(f"<{n}f", *day))
        listing.write(f"ST{s:02d} st{s:02d}.f32\n")
PY
same_as_one_rank "station list" 3 --list "$work/stations.txt" $day
head -c 4000 "$work/st05.f32" >"$work/short.f32"
sed 's/st05.f32/short.f32/' "$work/stations.txt" >"$work/bad.txt"
status=0
if network 3 --list "$work/bad.txt" $day -o "$work/bad.xc" 2>"$work/bad.err"; then status=1; fi
grep -q "short.f32" "$work/bad.err" || { status=1; cat "$work/bad.err"; }
[ ! -e "$work/bad.xc" ] && [ ! -e "$work/bad.xc.partial" ] || status=1
verdict "a short station file: every rank stops, its message, no file left" $status
echo "mpi: $passed passed, $failed failed"
[ "$failed" = 0 ]
