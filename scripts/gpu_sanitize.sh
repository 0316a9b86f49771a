#!/usr/bin/env bash
# Runs, on the device machine and from the repository root, the CUDA tests staged by
# scripts/gpu_stage.sh (.gpu/tests/cuda_*) under compute-sanitizer: memcheck (with leak
# checking), racecheck, initcheck and synccheck, the GPU required (SEISGPU_REQUIRE_CUDA=1).
# Writes to $OUT (out/gpu-sanitize elsewhere): summary.txt, one line per test and tool with
# the sanitizer's error count, and sanitize_logs.tgz with every log.
#
#   TOOLS="memcheck racecheck"   the tools to run (default: all four)
#   TESTS="cuda_dwt cuda_usfft"  the tests to run (default: every staged cuda_* test)
#   SANITIZE_TIMEOUT=900         seconds per test and tool (the sanitizers are 10-100x slower)
# Exit status: 0 when every run passed with 0 errors, 1 otherwise.
set -uo pipefail
OUT=${OUT:-out/gpu-sanitize}
# What scripts/gpu_stage.sh packed, when only the pack was carried.
[ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
TOOLS=${TOOLS:-memcheck racecheck initcheck synccheck}
TESTS=${TESTS:-$(cd .gpu/tests && ls -d cuda_* 2>/dev/null | tr '\n' ' ')}
SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-900}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export SEISGPU_REQUIRE_CUDA=1
# Tests skip what is an API error by design (cuda_dwt's device-memory fill).
export SEISGPU_SANITIZING=1

if [ ! -x "$SANITIZER" ]; then
    echo "gpu_sanitize: $SANITIZER not found" | tee "$OUT/summary.txt"
    exit 1
fi
if [ -z "$TESTS" ]; then
    echo "gpu_sanitize: no .gpu/tests/cuda_* (run scripts/gpu_stage.sh first)" | tee "$OUT/summary.txt"
    exit 1
fi

# Options per tool: memcheck also reports device leaks; racecheck/synccheck apply to
# shared memory and barriers, initcheck to reads of uninitialised device memory.
tool_options() {
    case $1 in
        memcheck) echo "--leak-check full" ;;
        racecheck) echo "--racecheck-report analysis" ;;
        *) echo "" ;;
    esac
}

failed=0
{
    "$SANITIZER" --version | tail -n 1
    printf '%-16s %-10s %-10s %8s %6s\n' test tool result errors secs
} >"$OUT/summary.txt"
for t in $TESTS; do
    for tool in $TOOLS; do
        log="$LOGS/${t}_$tool.log"
        t0=$SECONDS
        # shellcheck disable=SC2046 # the options are words
        timeout "$SANITIZE_TIMEOUT" "$SANITIZER" --tool "$tool" $(tool_options "$tool") \
            --error-exitcode 97 --print-limit 50 ".gpu/tests/$t" --test-threads=1 >"$log" 2>&1
        rc=$?
        # "ERROR SUMMARY: N errors" (memcheck, initcheck, synccheck) or "RACECHECK SUMMARY:
        # N hazards displayed (E errors, W warnings)" (racecheck).
        errors=$(grep -Eo '(ERROR SUMMARY: [0-9]+|\(([0-9]+) errors)' "$log" | grep -Eo '[0-9]+' | tail -n 1)
        case $rc in
            0) result=pass ;;
            97) result=ERRORS ;;
            124) result=TIMEOUT ;;
            *) result="FAIL($rc)" ;;
        esac
        [ "$rc" = 0 ] || failed=1
        printf '%-16s %-10s %-10s %8s %6s\n' "$t" "$tool" "$result" "${errors:-?}" $((SECONDS - t0)) |
            tee -a "$OUT/summary.txt"
    done
done
tar czf "$OUT/sanitize_logs.tgz" -C "$LOGS" .
exit $failed
