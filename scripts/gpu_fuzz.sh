#!/usr/bin/env bash
# The ABI fuzzer (tests/abi/fuzz_abi.rs) at scale on the device machine: FUZZ_PROCS fuzzers
# at once, each on a CUDA context of its own, with distinct seeds, a share of the calls and
# a time limit; their figures summed into one report.
#
#   scripts/gpu_fuzz.sh DIR     (from the repository root, after scripts/gpu_stage.sh)
#
#   FUZZ_CUDA_CALLS=1000000  calls in all
#   FUZZ_PROCS=16            fuzzers at once (each runs its batches, 4 threads each, in
#                            child processes one after another)
#   FUZZ_SECONDS=450         no batch starts after this; a batch of FUZZ_BATCH calls takes
#                            ~15 s on CUDA, so the run ends within FUZZ_SECONDS + ~30 s
#   FUZZ_BATCH=3000          calls per batch (per child process)
#   FUZZ_BACKEND=cuda        the fuzzed context's backend (cpu: the same run on the CPU)
# Fuzzer p's batches take seeds FUZZ_SEED_BASE + p·10⁶ + 0, 1, …: distinct over fuzzers,
# and each crash's replay line names its seed.
# Writes DIR/fuzz_P.txt (each fuzzer's report), DIR/fuzz_P.log and DIR/summary.txt: the
# calls summed per function and in all, the crashed or hung batches and the findings.
# Exit status 0 when there were no crashes or findings and the calls reached
# FUZZ_CUDA_CALLS; 1 otherwise.
set -uo pipefail
dir=${1:?usage: scripts/gpu_fuzz.sh DIR}
mkdir -p "$dir"
[ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export SEISGPU_REQUIRE_CUDA=1
total=${FUZZ_CUDA_CALLS:-1000000}
procs=${FUZZ_PROCS:-16}
share=$(((total + procs - 1) / procs))
abi=.gpu/tests/abi
test_name=$("$abi" --list 2>/dev/null | sed -n 's/^\(fuzz_abi::fuzz_abi_batches\): test$/\1/p')
if [ -z "$test_name" ]; then
    echo "gpu_fuzz: no fuzz_abi::fuzz_abi_batches in $abi (run scripts/gpu_stage.sh)" | tee "$dir/summary.txt"
    exit 1
fi
t0=$SECONDS
for p in $(seq 0 $((procs - 1))); do
    SEISGPU_FUZZ_BACKEND=${FUZZ_BACKEND:-cuda} SEISGPU_FUZZ_CALLS=$share \
        SEISGPU_FUZZ_SEED=$((${FUZZ_SEED_BASE:-1} + p * 1000000)) \
        SEISGPU_FUZZ_SECONDS=${FUZZ_SECONDS:-450} SEISGPU_FUZZ_BATCH=${FUZZ_BATCH:-3000} \
        SEISGPU_FUZZ_REPORT="$dir/fuzz_$p.txt" \
        "$abi" --exact "$test_name" >"$dir/fuzz_$p.log" 2>&1 &
done
failed=0
for job in $(jobs -p); do wait "$job" || failed=$((failed + 1)); done
secs=$((SECONDS - t0))
# Each report: "ABI fuzzer: N calls in B batches (S s), C crashed/hung batches, F findings",
# then "function calls statuses…" rows, then CRASH / FINDING / TIME LIMIT lines.
{
    awk -v procs="$procs" -v total="$total" -v secs="$secs" -v failed="$failed" '
        /^ABI fuzzer:/ { calls += $3; batches += $6; crashes += $(NF - 4); findings += $(NF - 1); reports++; next }
        /^(function|all) / { next }
        /^(CRASH|FINDING|TIME LIMIT)/ { notes[++nn] = FILENAME ": " $0; next }
        $1 ~ /^sg_/ && $2 ~ /^[0-9]+$/ { if (!($1 in per)) order[++nf] = $1; per[$1] += $2 }
        END {
            printf "ABI fuzzer, %d processes (%d reports): %d calls in %d batches, %d s, %.0f calls/s; %d crashed/hung batches, %d findings; %d fuzzers failed\n",
                procs, reports, calls, batches, secs, calls / (secs > 0 ? secs : 1), crashes, findings, failed
            printf "target %d calls: %s\n", total, (calls >= total ? "reached" : "NOT reached")
            for (i = 1; i <= nf; i++) printf "%-44s %10d\n", order[i], per[order[i]]
            for (i = 1; i <= nn; i++) print notes[i]
            exit ((calls >= total && crashes == 0 && findings == 0 && failed == 0 && reports == procs) ? 0 : 1)
        }' "$dir"/fuzz_*.txt
} >"$dir/summary.txt"
ok=$?
cat "$dir/summary.txt"
exit $ok
