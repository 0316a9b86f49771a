#!/usr/bin/env bash
# Runs, under valgrind memcheck, the C and Fortran examples and the CPU tests that reach
# every capability through the C ABI (argument errors, edge cases, concurrency, a short
# fuzzing batch). Any memcheck error, definite leak or failing program fails the run.
# Called by `make memcheck` (after `make examples`); prints one line per program.
#
#   MEMCHECK_TESTS="abi_errors usfft_abi"   the Rust test programs (default below)
#   MEMCHECK_FUZZ_CALLS=3000               calls of the fuzzing batch under valgrind
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
# with MEMCHECK_TESTS when needed; tests/stress.rs covers threads outside the checker.
MEMCHECK_TESTS=${MEMCHECK_TESTS:-abi_errors usfft_abi fxdecon_edge_cases xcorr_cases}
LOGS=target/memcheck
mkdir -p "$LOGS"
VALGRIND=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --suppressions=scripts/valgrind.supp --num-callers=30)

failed=0
run() { # run NAME PROGRAM ARGS…: under valgrind, log in $LOGS/NAME.log
    local name=$1; shift
    local t0=$SECONDS
    "${VALGRIND[@]}" --log-file="$LOGS/$name.valgrind" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    local errors
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$LOGS/$name.valgrind" | grep -Eo '[0-9]+' | tail -n 1)
    local result=pass
    [ "$rc" = 0 ] || { result="FAIL($rc)"; failed=1; }
    printf 'memcheck %-24s %-9s %s errors %4ss\n' "$name" "$result" "${errors:-?}" $((SECONDS - t0))
    if [ "$rc" != 0 ]; then
        tail -n 40 "$LOGS/$name.valgrind" "$LOGS/$name.log" | sed 's/^/    /'
    fi
}

# The examples, as a C or Fortran caller runs them.
for e in dwt_denoise_c dwt_denoise_f90 usfft_c usfft_f90 fxdecon_2d_c fxdecon_3d_f90 xcorr_c xcorr_f90 emlog_c emlog_f90 progress_f90 wavepacket_c wavepacket_f90 wavepacket_volume_c wavepacket_volume_f90; do
    run "$e" "target/examples/$e"
done

# The Rust test programs (cargo builds them; their paths come from its JSON messages).
declare -A exe
while read -r name path; do exe[$name]=$path; done < <(
    cargo test --release --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
for t in $MEMCHECK_TESTS; do
    if [ -z "${exe[$t]:-}" ]; then
        echo "memcheck: no test program named $t" >&2
        failed=1
        continue
    fi
    run "test_$t" "${exe[$t]}" --test-threads=2
done
# A fuzzing batch: thousands of wrong calls, every error path, under the checker.
SEISGPU_FUZZ_CHILD_SEED=7 SEISGPU_FUZZ_BATCH=${MEMCHECK_FUZZ_CALLS:-3000} SEISGPU_FUZZ_THREADS=2 \
    run fuzz_batch "${exe[fuzz_abi]}" --ignored --exact fuzz_child --nocapture
exit $failed
