#!/usr/bin/env bash
# Runs, on the device machine and from the repository root, the CUDA tests staged by
# scripts/gpu_stage.sh under compute-sanitizer: memcheck (with leak checking), racecheck,
# initcheck and synccheck, the GPU required (SEISGPU_REQUIRE_CUDA=1), one process per
# (unit, tool). A unit is one test function of a CUDA test module (the modules of
# .gpu/tests/cuda, cuda_progress of .gpu/tests/progress, .gpu/tests/cuda_kernel_cache), or
# one section of cuda_dwt (SEISGPU_DWT_SECTIONS).
#
#   scripts/gpu_sanitize.sh            runs the selected (unit, tool) pairs now
#   scripts/gpu_sanitize.sh start      the same, detached, in /tmp/seisgpu-sanitize (for
#                                      more than one command's 600 s; default limit 1800 s)
#   scripts/gpu_sanitize.sh collect    waits (COLLECT_WAIT, 540 s) for it, copies its results
#                                      to $OUT; status 3 while it still runs (collect again)
#   scripts/gpu_sanitize.sh list       prints the (unit, tool) pairs a run would take
#   scripts/gpu_sanitize.sh table F…   merges results.tsv files of several runs (anywhere)
#                                      into one Markdown table on stdout
#   scripts/gpu_sanitize.sh coverage D…  the coverage (coverage.md) of several runs' $OUT
#                                      folders together (anywhere): e.g. racecheck's
#                                      reduced runs against the full-size runs of the others
#
#   SANITIZE_TOOLS="memcheck racecheck"  tools (default all four; TOOLS also read)
#   SANITIZE_UNITS=REGEX         only the units whose name matches (e.g. 'usfft|wavepacket')
#   SANITIZE_MODULES=REGEX       only these test modules (default '^(cuda_|device_calls$)')
#   SANITIZE_SHARD=K/N           the K-th of N equal shares of the pairs (K = 1…N): one
#                                device call each
#   SANITIZE_TIME_LIMIT=540      seconds for the whole run: no run starts after it, and each
#                                is stopped at it (TIMEOUT); pairs left are listed "not run"
#   SANITIZE_TIMEOUT=SECONDS     seconds per run at most (default: the time limit)
#   SANITIZE_PARALLEL=4          runs at once (PARALLEL also read); they share the GPU
#   SANITIZE_GPUS="2 3"          the GPUs the runs are dealt over in turn (each run sees one,
#                                CUDA_VISIBLE_DEVICES); default: every run sees all of them
#   SANITIZE_SMALL_TOOLS=racecheck  tools whose runs set SEISGPU_SANITIZE_SMALL=1, the
#                                tests' reduced mode (smaller sizes, no timing loops, every
#                                kernel still launched); "" for none
#   MATCH=REGEX                  only the pairs whose "module unit tool" line matches
#   SANITIZE_FILTER_UNITS=REGEX  units whose runs take compute-sanitizer's kernel filter
#   SANITIZE_FILTER="…"          options SANITIZE_FILTER (e.g. `--kernel-name-exclude
#   SANITIZE_FILTER_LABEL=own    regex=^_Z`: the library's own kernels only, which are
#                                extern "C" and so unmangled, not cuFFT's; `--kernel-name
#                                kns=usfft_ --launch-count 60`: the first 60 launches of
#                                the USFFT's kernels), for units whose 3D cases take a
#                                sanitizer longer than its limit; their mode gains the label
#
# Writes to $OUT (out/gpu-sanitize elsewhere): summary.txt (one line per run as it ends,
# then the coverage), results.tsv (module, unit, tool, mode, result, errors, seconds),
# table.md (a row per unit, a column per tool), coverage.md (each kernel of kernels/*.cu and
# how many runs of each tool launched it; the kernels a full-size run of a unit launched
# that its reduced-mode run did not), kernels_by_run.txt, the log of each run that did not
# pass, and sanitize_logs.tgz with every log. Every run sets SEISGPU_SANITIZING=1 (tests skip
# what is an API error by design) and SEISGPU_LAUNCH_LOG (the kernels it launched).
# Exit status: 0 when every selected run passed with 0 errors, 2 when all that ran passed but
# the time limit left some not run, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/gpu_background.sh
. scripts/gpu_background.sh
OUT=${OUT:-out/gpu-sanitize}
BG=/tmp/seisgpu-sanitize

table() { # table RESULTS.TSV…: a row per unit, a column per tool; later files win
    awk -F'\t' '
        BEGIN { nt = split("memcheck racecheck initcheck synccheck", tools, " ") }
        $1 == "module" { next }
        {
            u = index($2, "::") ? $2 : $1 "::" $2
            if (!(u in seen)) { seen[u] = 1; units[++nu] = u }
            cell[u, $3] = ($5 == "pass" ? "pass" : $5) ", " $6 " errors, " $7 " s" ($4 != "full" ? ", " $4 : "")
            if ($5 == "not-run") cell[u, $3] = "not run"
        }
        END {
            line = "| unit |"; sep = "|---|"
            for (t = 1; t <= nt; t++) { line = line " " tools[t] " |"; sep = sep "---|" }
            print line; print sep
            for (i = 1; i <= nu; i++) {
                line = "| `" units[i] "` |"
                for (t = 1; t <= nt; t++) {
                    c = cell[units[i], tools[t]]
                    line = line " " (c == "" ? "—" : c) " |"
                }
                print line
            }
        }' "$@"
}

case ${1:-run} in
    table)
        shift
        table "$@"
        exit
        ;;
    coverage)
        shift
        all=$(mktemp -d)
        for d in "$@"; do tar xzf "$d/sanitize_logs.tgz" -C "$all"; done
        tools=$(cut -f3 "$all"/*.tsv | sort -u | tr '\n' ' ')
        bash scripts/gpu_sanitize_coverage.sh "$all" "$tools"
        rm -rf "$all"
        exit
        ;;
    start)
        # Detached, for longer than one command: the limit is the job's own.
        export SANITIZE_TIME_LIMIT=${SANITIZE_TIME_LIMIT:-1800}
        bg_start "$BG" env OUT="$BG/out" bash scripts/gpu_sanitize.sh run
        exit
        ;;
    collect)
        bg_wait "$BG" "${COLLECT_WAIT:-540}"
        state=$?
        mkdir -p "$OUT"
        echo "gpu_sanitize (detached): $(bg_status "$BG")"
        [ $state -ne 2 ] || exit 1
        cp -r "$BG"/out/. "$OUT"/ 2>/dev/null
        cp "$BG/log" "$OUT/detached.log"
        if [ $state -eq 1 ]; then
            # Still running: what has ended so far.
            cat "$OUT/summary.txt" 2>/dev/null
            exit 3
        fi
        tail -n 60 "$BG/log"
        exit "$(cat "$BG/rc")"
        ;;
    run | list) ;;
    *)
        echo "usage: $0 [run|start|collect|list|table FILES…|coverage DIRS…]" >&2
        exit 1
        ;;
esac
MODE=${1:-run}

# What scripts/gpu_stage.sh packed, when only the pack was carried.
[ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
SANITIZER=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
TOOLS=${SANITIZE_TOOLS:-${TOOLS:-memcheck racecheck initcheck synccheck}}
SMALL_TOOLS=${SANITIZE_SMALL_TOOLS-racecheck}
LIMIT=${SANITIZE_TIME_LIMIT:-540}
PER_RUN=${SANITIZE_TIMEOUT:-$LIMIT}
PARALLEL=${SANITIZE_PARALLEL:-${PARALLEL:-4}}
# TESTS="cuda_dwt cuda_usfft" (a list of modules) is read too.
MODULES=${SANITIZE_MODULES:-${TESTS:+^(${TESTS// /|})$}}
MODULES=${MODULES:-^(cuda_|device_calls$)}
EXES=".gpu/tests/cuda .gpu/tests/progress .gpu/tests/cuda_kernel_cache"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export SEISGPU_REQUIRE_CUDA=1
export SEISGPU_SANITIZING=1

modules() { # the modules of test executable $1 (none when it is one test file itself)
    "$1" --list 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\)::.*: test$/\1/p' | sort -u
}
module_tests() { # the full names of the tests of module $2 of executable $1 (all: no modules),
    # less the ignored ones (run alone by hand: e.g. one that takes the device's memory)
    local ignored
    ignored=$("$1" --list --ignored 2>/dev/null | sed -n 's/: test$//p')
    if [ "$(basename "$1")" = "$2" ]; then
        "$1" --list 2>/dev/null | sed -n 's/: test$//p'
    else
        "$1" --list 2>/dev/null | sed -n "s/^\($2::.*\): test\$/\1/p"
    fi | grep -vxF -e "${ignored:-/}"
}
# "executable module unit" for each unit of each selected module: a test function, or for
# cuda_dwt a section ("section_A"; H, the device-memory fill, is an API error by design).
units() {
    local e m t
    for e in $EXES; do
        [ -x "$e" ] || continue
        local mods
        mods=$(modules "$e")
        for m in ${mods:-$(basename "$e")}; do
            [[ $m =~ $MODULES ]] || continue
            if [ "$m" = cuda_dwt ]; then
                for s in A B C D E F G; do echo "$e $m section_$s"; done
            else
                for t in $(module_tests "$e" "$m"); do echo "$e $m $t"; done
            fi
        done
    done
}
# "executable module unit tool" pairs, selected, then this shard's share.
pairs() {
    local e m u tool
    units | while read -r e m u; do
        [[ $u =~ ${SANITIZE_UNITS:-.} ]] || continue
        for tool in $TOOLS; do echo "$e $m $u $tool"; done
    done | while read -r e m u tool; do
        [[ "$m $u $tool" =~ ${MATCH:-.} ]] && echo "$e $m $u $tool"
    done | awk -v shard="${SANITIZE_SHARD:-1/1}" '
        BEGIN { split(shard, s, "/"); k = s[1]; n = s[2] }
        (NR - 1) % n == k - 1' |
        # racecheck, the slowest, first: the long runs start while the others fill the slots.
        awk '$4 == "racecheck"; $4 != "racecheck" { rest[++n] = $0 } END { for (i = 1; i <= n; i++) print rest[i] }'
}

if [ "$MODE" = list ]; then
    pairs | awk '{ print $2, $3, $4 }'
    exit
fi
mkdir -p "$OUT"
if [ ! -x "$SANITIZER" ]; then
    echo "gpu_sanitize: $SANITIZER not found" | tee "$OUT/summary.txt"
    exit 1
fi
mapfile -t PAIRS < <(pairs)
if [ ${#PAIRS[@]} -eq 0 ]; then
    echo "gpu_sanitize: nothing selected (staged tests in .gpu/tests? run scripts/gpu_stage.sh first)" | tee "$OUT/summary.txt"
    exit 1
fi
LOGS=$(mktemp -d)

# Options per tool: memcheck also reports device leaks; racecheck/synccheck apply to
# shared memory and barriers, initcheck to reads of uninitialised device memory.
tool_options() {
    case $1 in
        memcheck) echo "--leak-check full" ;;
        racecheck) echo "--racecheck-report analysis" ;;
        *) echo "" ;;
    esac
}

run_name() { # MODULE UNIT TOOL: the file name of a run's logs
    local u=$2
    [[ $u == *::* ]] || u="$1::$u"
    echo "${u//[^A-Za-z0-9_]/_}__$3"
}

# One sanitizer run of one unit under one tool, stopped at the time limit; its line goes to
# summary.txt and results.tsv.
run_one() {
    local e=$1 m=$2 u=$3 tool=$4 timeout=$5 gpu=$6 args=() envs=(SEISGPU_SANITIZE_SMALL=0) mode=full
    case $u in
        section_*)
            envs+=(SEISGPU_DWT_SECTIONS="${u#section_}")
            mapfile -t args < <(module_tests "$e" "$m")
            args=(--exact "${args[@]}")
            ;;
        *) args=("$u" --exact) ;;
    esac
    if [[ " $SMALL_TOOLS " == *" $tool "* ]]; then
        envs=(SEISGPU_SANITIZE_SMALL=1 "${envs[@]:1}")
        mode=small
    fi
    [ "$gpu" = all ] || envs+=(CUDA_VISIBLE_DEVICES="$gpu")
    local only=()
    if [ -n "${SANITIZE_FILTER_UNITS:-}" ] && [[ $u =~ $SANITIZE_FILTER_UNITS ]]; then
        read -r -a only <<<"${SANITIZE_FILTER:-}"
        mode=$mode-${SANITIZE_FILTER_LABEL:-own}
    fi
    local name
    name=$(run_name "$m" "$u" "$tool")
    local log="$LOGS/$name.log" t0=$SECONDS
    # shellcheck disable=SC2046 # the options are words
    env "${envs[@]}" SEISGPU_LAUNCH_LOG="$LOGS/$name.kernels" timeout -k 10 "$timeout" \
        "$SANITIZER" --tool "$tool" $(tool_options "$tool") "${only[@]}" --error-exitcode 97 --print-limit 50 \
        "$e" "${args[@]}" --test-threads=1 --nocapture >"$log" 2>&1
    local rc=$? result errors
    # "ERROR SUMMARY: N errors" (memcheck, initcheck, synccheck) or "RACECHECK SUMMARY:
    # N hazards displayed (E errors, W warnings)" (racecheck).
    errors=$(grep -Eo '(ERROR SUMMARY: [0-9]+|\(([0-9]+) errors)' "$log" | grep -Eo '[0-9]+' | tail -n 1)
    case $rc in
        0) result=pass ;;
        97) result=ERRORS ;;
        124 | 137) result=TIMEOUT ;;
        *) result="FAIL($rc)" ;;
    esac
    printf '%-14s %-70s %-10s %-5s %-10s %6s %6s\n' "$m" "$u" "$tool" "$mode" "$result" \
        "${errors:-?}" $((SECONDS - t0)) >>"$OUT/summary.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$u" "$tool" "$mode" "$result" "${errors:-?}" \
        $((SECONDS - t0)) >"$LOGS/$name.tsv"
    # A run that did not pass comes back whole: its output shows how far it got.
    if [ "$result" != pass ]; then cp "$log" "$OUT/"; fi
}

{
    "$SANITIZER" --version | tail -n 1
    echo "${#PAIRS[@]} runs (shard ${SANITIZE_SHARD:-1/1}), $PARALLEL at once, ${LIMIT} s in all; reduced mode for: ${SMALL_TOOLS:-none}"
    printf '%-14s %-70s %-10s %-5s %-10s %6s %6s\n' module unit tool mode result errors secs
} >"$OUT/summary.txt"
start=$SECONDS
running=0
not_run=()
read -ra GPUS <<<"${SANITIZE_GPUS:-all}"
k=0
for p in "${PAIRS[@]}"; do
    if [ "$running" -ge "$PARALLEL" ]; then
        wait -n
        running=$((running - 1))
    fi
    left=$((LIMIT - (SECONDS - start)))
    # A run given less than 10 s would only time out.
    if [ "$left" -lt 10 ]; then
        not_run+=("$p")
        continue
    fi
    # shellcheck disable=SC2086 # the pair is four words
    run_one $p $((left < PER_RUN ? left : PER_RUN)) "${GPUS[k % ${#GPUS[@]}]}" &
    running=$((running + 1))
    k=$((k + 1))
done
wait
for p in "${not_run[@]}"; do
    read -r _ m u tool <<<"$p"
    printf '%s\t%s\t%s\t%s\tnot-run\t-\t-\n' "$m" "$u" "$tool" \
        "$([[ " $SMALL_TOOLS " == *" $tool "* ]] && echo small || echo full)" \
        >"$LOGS/$(run_name "$m" "$u" "$tool").tsv"
    printf '%-14s %-70s %-10s %-5s %-10s\n' "$m" "$u" "$tool" - "not-run" >>"$OUT/summary.txt"
done
{
    printf 'module\tunit\ttool\tmode\tresult\terrors\tseconds\n'
    cat "$LOGS"/*.tsv
} >"$OUT/results.tsv"
table "$OUT/results.tsv" >"$OUT/table.md"
bash scripts/gpu_sanitize_coverage.sh "$LOGS" "$TOOLS" >"$OUT/coverage.md"
for k in "$LOGS"/*.kernels; do
    [ -e "$k" ] || continue
    echo "$(basename "$k" .kernels): $(sort "$k" | tr '\n' ' ')"
done >"$OUT/kernels_by_run.txt"
cat "$OUT/coverage.md" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
tar czf "$OUT/sanitize_logs.tgz" -C "$LOGS" .
if awk -F'\t' 'NR > 1 && $5 != "pass" && $5 != "not-run" { bad = 1 } END { exit (bad ? 0 : 1) }' "$OUT/results.tsv"; then
    exit 1
fi
[ ${#not_run[@]} -eq 0 ] || exit 2
exit 0
