#!/usr/bin/env bash
# Runs, under valgrind memcheck, the C and Fortran examples and the CPU tests that reach
# every capability through the C ABI (argument errors, edge cases, concurrency, a short
# fuzzing batch). Any memcheck error, definite leak or failing program fails the run.
# Called by `make memcheck` (after `make examples`); prints one line per program as it ends.
#
#   MEMCHECK_TESTS="abi_errors usfft_abi"   the Rust test modules (default below), each in
#                                          a process of its own
#   MEMCHECK_FUZZ_CALLS=3000               calls of the fuzzing batch under valgrind
#   MEMCHECK_JOBS=2                        programs under valgrind at once (default: the
#                                          cores; valgrind runs one thread at a time)
# The suppressions file scripts/valgrind.supp lists known false positives, each justified.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
    echo "memcheck: valgrind is not installed (apt-get install valgrind)" >&2
    exit 1
fi
NVRTC_DIR=$PWD/.tools/nvrtc/nvidia/cuda_nvrtc/lib
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The CPU backend everywhere: the CUDA driver is not under test here.
export SEISGPU_BACKEND=cpu
# concurrency (8 threads, 2^16-sample traces) takes ~10 minutes under valgrind: run it
# with MEMCHECK_TESTS when needed; the stress module (tests/abi) covers threads outside
# the checker.
MEMCHECK_TESTS=${MEMCHECK_TESTS:-xcorr_cases abi_errors usfft_abi fxdecon_edge_cases}
LOGS=target/memcheck
mkdir -p "$LOGS"
VALGRIND=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --suppressions=scripts/valgrind.supp --num-callers=30)

rm -f "$LOGS"/*.failed
run() { # run NAME PROGRAM ARGS…: under valgrind, log in $LOGS/NAME.log
    local name=$1; shift
    local t0=$SECONDS
    "${VALGRIND[@]}" --log-file="$LOGS/$name.valgrind" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    local errors
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$LOGS/$name.valgrind" | grep -Eo '[0-9]+' | tail -n 1)
    local result=pass
    [ "$rc" = 0 ] || { result="FAIL($rc)"; touch "$LOGS/$name.failed"; }
    # One write per run: runs end in any order.
    {
        printf 'memcheck %-24s %-9s %s errors %4ss\n' "$name" "$result" "${errors:-?}" $((SECONDS - t0))
        if [ "$rc" != 0 ]; then
            tail -n 40 "$LOGS/$name.valgrind" "$LOGS/$name.log" | sed 's/^/    /'
        fi
    } >"$LOGS/$name.summary"
    cat "$LOGS/$name.summary"
}
running=0
start() { # start NAME PROGRAM ARGS…: `run` in the background, MEMCHECK_JOBS at once
    if [ "$running" -ge "${MEMCHECK_JOBS:-$(nproc)}" ]; then
        wait -n
        running=$((running - 1))
    fi
    run "$@" &
    running=$((running + 1))
}

# The Rust test programs (cargo builds them; their paths come from its JSON messages), and
# the module of each: "name::…" tests of an executable, or the executable itself.
declare -A exe module_exe
while read -r name path; do exe[$name]=$path; done < <(
    cargo test --release --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
module_tests() { # the full names of the tests of module $2 of executable $1, for --exact
    "$1" --list 2>/dev/null | sed -n "s/^\($2::.*\): test\$/\1/p"
}
for name in "${!exe[@]}"; do
    module_exe[$name]=${exe[$name]}
    while read -r m; do module_exe[$m]=${exe[$name]}; done < <(
        "${exe[$name]}" --list 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\)::.*: test$/\1/p' | sort -u)
done

# The longest runs start first, so that the last ones to end are short: the fuzzing batch,
# the wave-packet examples and the correlation cases take a minute or more under valgrind,
# the rest seconds.
# A fuzzing batch: thousands of wrong calls, every error path, under the checker.
SEISGPU_FUZZ_CHILD_SEED=7 SEISGPU_FUZZ_BATCH=${MEMCHECK_FUZZ_CALLS:-3000} SEISGPU_FUZZ_THREADS=2 \
    start fuzz_batch "${module_exe[fuzz_abi]}" --ignored --exact fuzz_abi::fuzz_child --nocapture
start_example() { start "$1" "target/examples/$1"; } # as a C or Fortran caller runs it
for e in wavepacket_f90 wavepacket_volume_f90 wavepacket_c; do start_example "$e"; done
for t in $MEMCHECK_TESTS; do
    e=${module_exe[$t]:-}
    if [ -z "$e" ]; then
        echo "memcheck: no test module or program named $t" >&2
        touch "$LOGS/test_$t.failed"
        continue
    fi
    if [ "$e" = "${exe[$t]:-}" ]; then
        start "test_$t" "$e" --test-threads=2
    else
        # shellcheck disable=SC2046 # one argument per test name
        start "test_$t" "$e" --exact $(module_tests "$e" "$t") --test-threads=2
    fi
done
for e in wavepacket_volume_c usfft_c fxdecon_3d_f90 progress_f90 usfft_f90 dwt_denoise_c dwt_denoise_f90 fxdecon_2d_c xcorr_c xcorr_f90 emlog_c emlog_f90; do
    start_example "$e"
done
wait
if ls "$LOGS"/*.failed >/dev/null 2>&1; then exit 1; fi
