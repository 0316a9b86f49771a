#!/usr/bin/env bash
# The GPU soak on the device machine, longer than one command may run (600 s): started
# detached, collected by a later command. From the repository root, after
# scripts/gpu_stage.sh.
#
#   scripts/gpu_soak.sh start     starts, in SOAK_DIR (/tmp/seisgpu-soak): the soak
#                                 (tests/abi/soak.rs) on a CUDA context for SOAK_SECONDS
#                                 (600) on SEISGPU_SOAK_THREADS (8) threads, its allocator
#                                 set by SOAK_MALLOC (see job below); beside it, unless
#                                 SOAK_FUZZ=0, the ABI fuzzers (scripts/gpu_fuzz.sh:
#                                 FUZZ_CUDA_CALLS, 10⁶, in FUZZ_PROCS processes, for
#                                 SOAK_SECONDS − 60 s). On a machine of
#                                 several GPUs, SOAK_GPU and FUZZ_GPU (indices) put them on
#                                 GPUs of their own: the soak is then alone on its device.
#   scripts/gpu_soak.sh status    one line: running for how long, or ended
#   scripts/gpu_soak.sh run       start and collect in one command (SOAK_SECONDS ≤ 500:
#                                 where a detached job does not outlive its command)
#   scripts/gpu_soak.sh collect   waits (COLLECT_WAIT, 540 s) for the end, copies the logs,
#                                 samples and reports to $OUT (out/gpu-soak elsewhere),
#                                 prints the memory curves' end points and the verdict;
#                                 status 3 while it still runs (collect again)
#
# The verdict (verdict.txt): the soak's own (tests/abi/soak.rs): its results, its bad
# inputs, and its memory samples, taken at quiet moments (every thread between calls, the
# plans it owns dropped): after the first SOAK_WARMUP (60) s, host RSS and device memory in
# use must each stay within ±1 % of their first sample after it. With the fuzzers beside
# it the device is shared, so device memory is this process's (nvidia-smi's per-process
# figure, SEISGPU_SOAK_DEVICE_MEMORY=process); without them (SOAK_FUZZ=0) the whole
# device's. The fuzzers must reach their calls with no crash or finding. The curves' end
# points are printed again here; SOAK_STRICT=0 prints them without failing on them.
# Exit status of collect: 0 when all of that holds, 1 when not, 3 while it still runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/gpu_background.sh
. scripts/gpu_background.sh
DIR=${SOAK_DIR:-/tmp/seisgpu-soak}
OUT=${OUT:-out/gpu-soak}
SOAK_SECONDS=${SOAK_SECONDS:-600}
WARMUP=${SOAK_WARMUP:-60}

# The detached job: the soak, the fuzzers beside it, and the device-memory sampler.
job() {
    [ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
    export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
    export SEISGPU_REQUIRE_CUDA=1
    local name fuzz=${SOAK_FUZZ:-1} device_memory=device
    name=$(.gpu/tests/abi --list 2>/dev/null | sed -n 's/^\(soak::[a-z_]*\): test$/\1/p')
    [ "$fuzz" = 0 ] || device_memory=process
    local soak_env=() fuzz_env=()
    # SOAK_MALLOC: settings of the soak process's allocator. Default: glibc's mmap and trim
    # thresholds fixed at 128 KiB. With glibc's dynamic thresholds (SOAK_MALLOC=glibc) a
    # thread's arena may keep up to 64 MiB free at its top, which malloc_trim does not
    # return (it trims the main arena's top only), so RSS wanders by tens of MiB while the
    # live bytes stay put; fixed thresholds return large blocks at free, as a long-running
    # service would configure glibc. Other settings: e.g. "GLIBC_TUNABLES=glibc.malloc.
    # tcache_count=0 MALLOC_ARENA_MAX=1" (no per-thread caches, one arena; several times slower).
    local malloc=${SOAK_MALLOC:-MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072}
    [ "$malloc" != glibc ] || malloc=
    read -r -a soak_env <<<"$malloc"
    echo "${malloc:-glibc defaults}" >"$DIR/malloc"
    if [ -n "${SOAK_GPU:-}" ] && [ -n "${FUZZ_GPU:-}" ] && [ "$SOAK_GPU" != "$FUZZ_GPU" ]; then
        soak_env+=(CUDA_VISIBLE_DEVICES="$SOAK_GPU") fuzz_env=(CUDA_VISIBLE_DEVICES="$FUZZ_GPU")
        device_memory=device
    fi
    # SOAK_DEVICE_MEMORY=process: other work shares the device (e.g. tests beside the soak).
    device_memory=${SOAK_DEVICE_MEMORY:-$device_memory}
    echo "$device_memory" >"$DIR/device_memory"
    env "${soak_env[@]}" SEISGPU_SOAK_SECONDS="$SOAK_SECONDS" SEISGPU_SOAK_WARMUP_SECONDS="$WARMUP" \
        SEISGPU_SOAK_DEVICE_MEMORY=$device_memory \
        .gpu/tests/abi --exact "$name" --nocapture >"$DIR/soak.log" 2>&1 &
    local soak=$!
    if [ "$fuzz" != 0 ]; then
        env "${fuzz_env[@]}" FUZZ_SECONDS=${FUZZ_SECONDS:-$((SOAK_SECONDS - 60))} bash scripts/gpu_fuzz.sh "$DIR/fuzz" >"$DIR/fuzz.log" 2>&1 &
    fi
    local fuzzers=$!
    wait "$soak"
    echo $? >"$DIR/soak.rc"
    if [ "$fuzz" != 0 ]; then
        wait "$fuzzers"
        echo $? >"$DIR/fuzz.rc"
    fi
}

# The verdict on a finished job, from its files; prints it, returns 0 when it passes.
verdict() {
    local pass=0 soak_rc strict=${SOAK_STRICT:-1}
    soak_rc=$(cat "$DIR/soak.rc" 2>/dev/null || echo missing)
    echo "soak: exit status $soak_rc (its results, bad inputs and its memory rule)"
    echo "soak's allocator: $(cat "$DIR/malloc" 2>/dev/null)"
    sed -n '/^| soak/,/^| result/p' "$DIR/soak.log"
    [ "$soak_rc" = 0 ] || pass=1
    # The soak's samples: "soak:   123.4 s  RSS   456.7 MiB  device used 890.1 MiB".
    sed -n 's/^soak: *\([0-9.]*\) s *RSS *\([0-9.]*\) MiB *device used \([0-9.-]*\) MiB.*$/\1 \2 \3/p' \
        "$DIR/soak.log" >"$DIR/soak_samples.txt"
    flat "host RSS (MiB)" 2 "$DIR/soak_samples.txt" || [ "$strict" = 0 ] || pass=1
    local what="device memory in use (MiB, whole device)"
    [ "$(cat "$DIR/device_memory" 2>/dev/null)" = process ] &&
        what="device memory of the soak process (MiB, nvidia-smi)"
    flat "$what" 3 "$DIR/soak_samples.txt" || [ "$strict" = 0 ] || pass=1
    if [ -f "$DIR/fuzz.rc" ]; then
        echo "fuzzers beside it: exit status $(cat "$DIR/fuzz.rc")"
        head -n 2 "$DIR/fuzz/summary.txt" 2>/dev/null
        grep -E '^(CRASH|FINDING|TIME LIMIT)|: (CRASH|FINDING|TIME LIMIT)' "$DIR/fuzz/summary.txt" 2>/dev/null | head -n 20
        [ "$(cat "$DIR/fuzz.rc")" = 0 ] || pass=1
    fi
    [ $pass = 0 ] && echo "VERDICT: pass" || echo "VERDICT: FAIL"
    return $pass
}

# flat WHAT COLUMN FILE: the samples (seconds in column 1) after the warm-up must stay
# within ±1 % of the first of them; prints the first, last, min and max.
flat() {
    awk -v what="$1" -v col="$2" -v warmup="$WARMUP" '
        $1 + 0 >= warmup && $col != "-" && $col != "" {
            v = $col + 0; n++
            if (n == 1) { first = v; t0 = $1; min = v; max = v }
            last = v; t1 = $1
            if (v < min) min = v
            if (v > max) max = v
        }
        END {
            if (n == 0) { printf "%s: no sample after %d s: UNJUDGED\n", what, warmup; exit 1 }
            dev = (max - first > first - min ? max - first : first - min) / first * 100
            printf "%s: %d samples after %d s; first %.1f at %d s, last %.1f at %d s, min %.1f, max %.1f: at most %.2f %% from the first: %s\n",
                what, n, warmup, first, t0, last, t1, min, max, dev, (dev <= 1 ? "flat (±1 %)" : "NOT flat (±1 %)")
            exit (dev <= 1 ? 0 : 1)
        }' "$3"
}

case ${1:-} in
    start)
        bg_start "$DIR" bash scripts/gpu_soak.sh _job
        ;;
    _job) job ;;
    run)
        bg_start "$DIR" bash scripts/gpu_soak.sh _job || exit 1
        COLLECT_WAIT=$((SOAK_SECONDS + 90)) bash scripts/gpu_soak.sh collect
        ;;
    status) bg_status "$DIR" ;;
    collect)
        bg_wait "$DIR" "${COLLECT_WAIT:-540}"
        state=$?
        echo "gpu_soak: $(bg_status "$DIR")"
        [ $state -ne 2 ] || exit 1
        mkdir -p "$OUT"
        if [ $state -eq 1 ]; then
            tail -n 3 "$DIR/soak.log"
            exit 3
        fi
        verdict | tee "$DIR/verdict.txt"
        rc=${PIPESTATUS[0]}
        cp "$DIR"/*.txt "$DIR"/*.log "$OUT"/ 2>/dev/null
        [ ! -d "$DIR/fuzz" ] || cp "$DIR/fuzz/summary.txt" "$OUT/fuzz_summary.txt"
        # A fuzzer that met a crash: its report and log (the crashed batch's stderr, with
        # the faulting thread's stack), packed into one file.
        crashed=$(grep -l CRASH "$DIR"/fuzz/fuzz_*.txt 2>/dev/null | sed 's/\.txt$//')
        if [ -n "$crashed" ]; then
            # shellcheck disable=SC2086 # one name per crashed fuzzer
            tar czf "$OUT/fuzz_crashes.tgz" -C "$DIR/fuzz" $(for c in $crashed; do
                basename "$c".txt
                [ ! -f "$c.log" ] || basename "$c".log
            done)
        fi
        exit "$rc"
        ;;
    *)
        echo "usage: $0 start|status|collect|run" >&2
        exit 1
        ;;
esac
