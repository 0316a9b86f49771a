#!/usr/bin/env bash
# Runs, on the device machine and from the repository root, the CUDA tests staged by
# scripts/gpu_stage.sh (the cuda_* modules of .gpu/tests/cuda and .gpu/tests/progress, and
# .gpu/tests/cuda_kernel_cache) under compute-sanitizer: memcheck (with leak
# checking), racecheck, initcheck and synccheck, the GPU required (SEISGPU_REQUIRE_CUDA=1).
# Writes to $OUT (out/gpu-sanitize elsewhere): summary.txt, one line per run as it ends, with
# the sanitizer's error count, then the kernels of kernels/*.cu each tool saw launched
# (SEISGPU_LAUNCH_LOG) and those no run of it launched; the log of each run that did not
# pass (the tests run with --nocapture, so it shows how far one got); sanitize_logs.tgz with every log.
#
#   TOOLS="memcheck racecheck"   the tools to run (default: all four)
#   TESTS="cuda_dwt cuda_usfft"  the test modules to run (default: every staged cuda_* one)
#   SANITIZE_TIMEOUT=900         seconds per run (the sanitizers are 10-100x slower)
#   PARALLEL=4                   runs at once (default 1; each is its own process)
#   MATCH='racecheck|dwt.*sync'  only the runs whose "test unit tool" line matches
# Each test runs in units so that the slow tools fit in a device call: one unit per test
# function (cuda_progress has five), cuda_dwt one per section (SEISGPU_DWT_SECTIONS).
# Exit status: 0 when every run passed with 0 errors, 1 otherwise.
set -uo pipefail
OUT=${OUT:-out/gpu-sanitize}
# What scripts/gpu_stage.sh packed, when only the pack was carried.
[ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
TOOLS=${TOOLS:-memcheck racecheck initcheck synccheck}
SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-900}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export SEISGPU_REQUIRE_CUDA=1
# Tests skip what is an API error by design (cuda_dwt's device-memory fill).
export SEISGPU_SANITIZING=1

modules() { # the modules of test executable $1 (none when it is one test file itself)
    "$1" --list 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\)::.*: test$/\1/p' | sort -u
}
module_tests() { # the full names of the tests of module $2 of executable $1 (all: no modules)
    if [ "$(basename "$1")" = "$2" ]; then
        "$1" --list 2>/dev/null | sed -n 's/: test$//p'
    else
        "$1" --list 2>/dev/null | sed -n "s/^\($2::.*\): test\$/\1/p"
    fi
}
# "module executable" for each module of each staged test executable; one without modules
# is a module of the same name.
declare -A exe_of
while read -r m e; do exe_of[$m]=$e; done < <(
    for e in .gpu/tests/*; do
        [ -x "$e" ] || continue
        mods=$(modules "$e")
        for m in ${mods:-$(basename "$e")}; do echo "$m $e"; done
    done)
TESTS=${TESTS:-$(printf '%s\n' "${!exe_of[@]}" | grep '^cuda_' | sort | tr '\n' ' ')}

if [ ! -x "$SANITIZER" ]; then
    echo "gpu_sanitize: $SANITIZER not found" | tee "$OUT/summary.txt"
    exit 1
fi
if [ -z "$TESTS" ]; then
    echo "gpu_sanitize: no cuda_* test modules in .gpu/tests (run scripts/gpu_stage.sh first)" | tee "$OUT/summary.txt"
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

# "test unit tool" lines: unit "S:x" is section x of cuda_dwt (all its tests), anything
# else one test function.
units() {
    case $1 in
        cuda_dwt) echo "S:A S:B S:C S:D S:E S:F S:G" ;; # H is the device-memory fill
        *) module_tests "${exe_of[$1]}" "$1" | tr '\n' ' ' ;;
    esac
}
jobs_list() {
    for t in $TESTS; do
        if [ -z "${exe_of[$t]:-}" ]; then
            echo "gpu_sanitize: no staged test module $t" >&2
            continue
        fi
        for tool in $TOOLS; do
            for u in $(units "$t"); do echo "$t $u $tool"; done
        done
    done | grep -E "${MATCH:-.}"
}

run_one() { # test unit tool: one sanitizer run, one summary line into $LOGS/NAME.line
    local t=$1 u=$2 tool=$3 name args=() envs=()
    case $u in
        S:*)
            envs=(SEISGPU_DWT_SECTIONS="${u#S:}")
            mapfile -t args < <(module_tests "${exe_of[$t]}" "$t")
            args=(--exact "${args[@]}")
            ;;
        *) args=("$u" --exact) ;;
    esac
    name="${t}_${u//[^A-Za-z0-9_]/_}_$tool"
    local log="$LOGS/$name.log" t0=$SECONDS
    # shellcheck disable=SC2046 # the options are words
    env "${envs[@]}" SEISGPU_LAUNCH_LOG="$LOGS/$name.kernels" timeout "$SANITIZE_TIMEOUT" "$SANITIZER" --tool "$tool" $(tool_options "$tool") \
        --error-exitcode 97 --print-limit 50 "${exe_of[$t]}" "${args[@]}" --test-threads=1 --nocapture \
        >"$log" 2>&1
    local rc=$? result errors
    # "ERROR SUMMARY: N errors" (memcheck, initcheck, synccheck) or "RACECHECK SUMMARY:
    # N hazards displayed (E errors, W warnings)" (racecheck).
    errors=$(grep -Eo '(ERROR SUMMARY: [0-9]+|\(([0-9]+) errors)' "$log" | grep -Eo '[0-9]+' | tail -n 1)
    case $rc in
        0) result=pass ;;
        97) result=ERRORS ;;
        124) result=TIMEOUT ;;
        *) result="FAIL($rc)" ;;
    esac
    printf '%-16s %-44s %-10s %-10s %8s %6s\n' "$t" "${u#S:}" "$tool" "$result" "${errors:-?}" \
        $((SECONDS - t0)) | tee "$LOGS/$name.line" >>"$OUT/summary.txt"
    # A run that did not pass comes back whole: its output shows how far it got.
    if [ "$result" != pass ]; then cp "$log" "$OUT/"; fi
}

{
    "$SANITIZER" --version | tail -n 1
    printf '%-16s %-44s %-10s %-10s %8s %6s\n' test unit tool result errors secs
} >"$OUT/summary.txt"
running=0
while read -r t u tool; do
    if [ "$running" -ge "${PARALLEL:-1}" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_one "$t" "$u" "$tool" &
    running=$((running + 1))
done < <(jobs_list)
wait
# Coverage: every kernel the sources define, and how many runs of each tool launched it.
{
    echo
    printf '%-34s' kernel; for tool in $TOOLS; do printf ' %10s' "$tool"; done; echo
    for k in $(sed -n 's/.*__global__.*\b\([a-z][a-z0-9_]*\)(.*/\1/p; /__global__/{n; s/^ *\([a-z][a-z0-9_]*\)(.*/\1/p}' kernels/*.cu | sort -u); do
        printf '%-34s' "$k"
        for tool in $TOOLS; do
            printf ' %10s' "$(cat "$LOGS"/*_"$tool".kernels 2>/dev/null | grep -cx "$k")"
        done
        echo
    done
} >"$LOGS/coverage.txt"
cat "$LOGS/coverage.txt" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
failed=0
grep -qv ' pass ' "$LOGS"/*.line && failed=1
tar czf "$OUT/sanitize_logs.tgz" -C "$LOGS" .
exit $failed
