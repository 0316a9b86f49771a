#!/usr/bin/env bash
# The MPI example as `make test` checks it, on the CPU with oversubscribed ranks:
# xcorr_network's file from 3 ranks (and 2) equals the one from 1 rank byte for byte —
# stations made on each rank or exchanged, linear, phase-weighted and robust stacks,
# substacks, deconvolution, station-days read from a list — and xcorr_read accepts it; a
# bad station file on one rank ends every rank with its message and a non-zero status and
# leaves no output file (nor the partial one). wavepacket_volume's file (2 × 2 × 1 tiles of
# 32³) from 3 ranks, tiles in blocks or in turn, equals the one from 1 rank byte for byte;
# its tiles added in tile order and its adjoint gathered from the ranks equal one context's
# volume calls bit for bit; a NaN in one rank's tile ends every rank likewise. The Python
# example (python/examples/xcorr_mpi.py, mpi4py) writes xcorr_network's file byte for byte
# (skipped, saying why, where mpi4py is missing). Prints "mpi: N passed, N failed".
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
# The wave packets of a 64 × 64 × 32 volume in 2 × 2 × 1 tiles of 32³.
wavepacket() { # wavepacket RANKS ARGS…
    local n=$1; shift
    mpirun -np "$n" --oversubscribe target/mpi/wavepacket_volume --backend cpu --quiet \
        --volume 64x64x32 --tile 32x32x32 --directions 6 --levels 1 --cutoff 0.2 "$@"
}
status=0
wavepacket 1 -o "$work/one.wp" && wavepacket 3 -o "$work/blocks.wp" --check >"$work/wp.log" &&
    wavepacket 3 -o "$work/turn.wp" --round-robin && cmp "$work/one.wp" "$work/blocks.wp" &&
    cmp "$work/one.wp" "$work/turn.wp" || status=1
for what in "tile order vs one context's forward: bit for bit" "one context's adjoint: bit for bit"; do
    grep -q "$what" "$work/wp.log" || { status=1; cat "$work/wp.log"; }
done
verdict "wave-packet volume (3 ranks = 1 rank; = one context bit for bit)" $status
status=0
if wavepacket 3 --bad-rank 1 -o "$work/bad.wp" 2>"$work/wp_bad.err"; then status=1; fi
grep -qi "rank 1: tile 2 forward: .*non.finite" "$work/wp_bad.err" ||
    { status=1; cat "$work/wp_bad.err"; }
[ ! -e "$work/bad.wp" ] && [ ! -e "$work/bad.wp.partial" ] || status=1
verdict "wave-packet volume, a NaN on rank 1: every rank stops, its message, no file left" $status
rm -f "$work"/*.wp

# The Python example with mpi4py: the .tools/mpi4py venv (scripts/install_test_deps.sh), or
# a python3 that has mpi4py and NumPy.
py=.tools/mpi4py/bin/python
"$py" -c 'import mpi4py, numpy' 2>/dev/null || py=python3
if "$py" -c 'import mpi4py, numpy' 2>/dev/null; then
    python_network() { # python_network RANKS ARGS…
        local n=$1; shift
        PYTHONPATH="$PWD/python" SEISGPU_LIB="$PWD/target/release/libseisgpu.so" \
            mpirun -np "$n" --oversubscribe "$py" python/examples/xcorr_mpi.py --backend cpu --quiet "$@"
    }
    same_as_c() { # same_as_c NAME RANKS ARGS…: the Python file equals the C one, and reads
        local name=$1 n=$2; shift 2
        local status=0
        network 1 "$@" -o "$work/c.xc" && python_network "$n" "$@" -o "$work/py.xc" &&
            cmp "$work/c.xc" "$work/py.xc" && target/mpi/xcorr_read "$work/py.xc" --max 1 >/dev/null &&
            PYTHONPATH="$PWD/python" SEISGPU_LIB="$PWD/target/release/libseisgpu.so" "$py" -c \
                'import sys, seisgpu; f = seisgpu.read_xcorr_file(sys.argv[1]); assert f.stacks.any()' \
                "$work/py.xc" || status=1
        verdict "python: $name ($n ranks = C, 1 rank)" $status
        rm -f "$work"/*.xc
    }
    same_as_c "synthetic day" 3 --synthetic 40 $day
    same_as_c "phase-weighted stack, station list" 2 --list "$work/stations.txt" $day --stack pws
    status=0
    if python_network 3 --list "$work/bad.txt" $day -o "$work/bad.xc" 2>"$work/bad.err"; then status=1; fi
    grep -q "short.f32" "$work/bad.err" || { status=1; cat "$work/bad.err"; }
    [ ! -e "$work/bad.xc" ] && [ ! -e "$work/bad.xc.partial" ] || status=1
    verdict "python: a short station file: every rank stops, its message, no file left" $status
else
    echo "mpi: python example: SKIPPED: no mpi4py and NumPy for $py (scripts/install_test_deps.sh installs them into .tools/mpi4py)"
fi
echo "mpi: $passed passed, $failed failed"
[ "$failed" = 0 ]
