#!/usr/bin/env bash
# Runs on the device machine, from the repository root, what scripts/gpu_stage.sh staged:
# every test with the GPU required, the examples, the demo and the benchmark. Leaves in
# $OUT (the device tool's output folder, which returns few files; out/gpu elsewhere): the
# summary, the benchmark table, the demo images and one archive of all the logs.
set -uo pipefail
OUT=${OUT:-out/gpu}
LOGS=$(mktemp -d)
# What scripts/gpu_stage.sh packed, when only the pack was carried.
[ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export SEISGPU_REQUIRE_CUDA=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv >"$LOGS/device.txt" 2>&1
# GPU_STEPS=REGEX runs only the steps whose names match (device time is scarce).
GPU_STEPS=${GPU_STEPS:-.}
# Tests, examples and the demo run GPU_JOBS at a time (they check results, not speed, and
# the machine has cores to spare); the benchmarks run after them, one at a time.
GPU_JOBS=${GPU_JOBS:-6}
# A step still running after STEP_TIMEOUT seconds is stopped and recorded as failed.
STEP_TIMEOUT=${STEP_TIMEOUT:-480}
steps=0
run_step() { # run_step NUMBER NAME COMMAND…: runs, logs to $LOGS/NAME.log, records pass/fail
    local n=$1 name=$2; shift 2
    local t0=$SECONDS r=pass
    timeout -k 10 "$STEP_TIMEOUT" "$@" >"$LOGS/$name.log" 2>&1 || r="FAIL($?)"
    printf '%-28s %-9s %4ss\n' "$name" "$r" $((SECONDS - t0)) >"$LOGS/result.$n"
}
step() { # step NAME COMMAND…: runs at most GPU_JOBS steps at once
    [[ $1 =~ $GPU_STEPS ]] || return 0
    steps=$((steps + 1))
    run_step "$(printf %03d $steps)" "$@" &
    while [ "$(jobs -rp | wc -l)" -ge "$GPU_JOBS" ]; do wait -n; done
}
modules() { # the modules of test executable $1 (none when it is one test file itself)
    "$1" --list 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\)::.*: test$/\1/p' | sort -u
}
module_tests() { # the full names of the tests of module $2 of executable $1, for --exact
    "$1" --list 2>/dev/null | sed -n "s/^\($2::.*\): test\$/\1/p"
}
# Each module in a process of its own, as a step of its own (test_cuda_dwt, test_limits, …):
# its own timing, and no other module's process-wide settings.
# Modules that read the whole device's free memory (a leak check) run alone, at the end.
ALONE=${ALONE:-^cuda_fxdecon$}
alone=()
for t in .gpu/tests/*; do
    mods=$(modules "$t")
    [ -n "$mods" ] || step "test_$(basename "$t")" "$t" --test-threads=4
    for m in $mods; do
        if [[ $m =~ $ALONE ]]; then alone+=("$t:$m"); continue; fi
        if [[ $m == cuda_dwt ]]; then
            # Its section H fills the device's memory (out-of-memory handling): that one
            # runs alone, at the end, so that no other step meets a full device.
            dwt_fill=$t
            # shellcheck disable=SC2046
            step "test_$m" env SEISGPU_DWT_SECTIONS=ABCDEFG "$t" --exact $(module_tests "$t" "$m") --test-threads=4
            continue
        fi
        # shellcheck disable=SC2046 # one argument per test name
        step "test_$m" "$t" --exact $(module_tests "$t" "$m") --test-threads=4
    done
done
# The 16-thread stress and the ABI fuzzer on a CUDA context (CI runs them on the CPU).
# shellcheck disable=SC2046
step stress_cuda env SEISGPU_STRESS_BACKEND=cuda .gpu/tests/abi --exact $(module_tests .gpu/tests/abi stress)
# shellcheck disable=SC2046
step fuzz_cuda env SEISGPU_FUZZ_BACKEND=cuda SEISGPU_FUZZ_CALLS=${FUZZ_CUDA_CALLS:-24000} SEISGPU_FUZZ_REPORT="$LOGS/fuzz_cuda.txt" .gpu/tests/abi --exact $(module_tests .gpu/tests/abi fuzz_abi)
step example_c .gpu/bin/dwt_denoise_c
step example_fortran .gpu/bin/dwt_denoise_f90
step example_usfft_c .gpu/bin/usfft_c
step example_usfft_fortran .gpu/bin/usfft_f90
step example_fxdecon_c .gpu/bin/fxdecon_2d_c
step example_fxdecon_fortran .gpu/bin/fxdecon_3d_f90
step example_xcorr_c .gpu/bin/xcorr_c
step example_xcorr_fortran .gpu/bin/xcorr_f90
step example_emlog_c .gpu/bin/emlog_c
step example_emlog_fortran .gpu/bin/emlog_f90
step example_progress_fortran .gpu/bin/progress_f90
step example_wavepacket_c .gpu/bin/wavepacket_c
step example_wavepacket_fortran .gpu/bin/wavepacket_f90
step example_wavepacket_volume_c .gpu/bin/wavepacket_volume_c
step example_wavepacket_volume_fortran .gpu/bin/wavepacket_volume_f90
# The CUDA runtime example: built here with the machine's nvcc against the staged library
# and the work tree's headers (the staging machine has no CUDA toolkit), then run.
pipeline_cuda() {
    local nvcc=${NVCC:-nvcc}
    command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
    "$nvcc" -std=c++17 -O2 -Werror all-warnings -Iinclude examples/cuda/pipeline.cu -o "$1" -L.gpu/lib -lseisgpu &&
        "$1"
}
export -f pipeline_cuda
step example_pipeline_cuda bash -c 'pipeline_cuda "$0"' "$LOGS/pipeline_cuda"
step demo .gpu/bin/demo_penobscot data/penobscot-xl1155/penobscot_xl1155.sgy data/f3-tiny-cube/f3.sgy "$LOGS/demo"
# The Python package's suite on a CUDA context: the staged wheel installed (as pip would)
# and imported from outside the source tree, or else the package's source with the staged
# library. pytest, numpy and scipy are on the machine; PyWavelets and FINUFFT come from the
# wheels in PY_WHEELS when that folder holds them, else their comparisons are skipped.
python_suite() {
    local site root=$PWD
    site=$(mktemp -d)
    if compgen -G "${PY_WHEELS:-.whl}/*.whl" >/dev/null; then
        python3 -m pip install -q --no-deps --no-index --target "$site" "${PY_WHEELS:-.whl}"/*.whl
    fi
    if compgen -G ".gpu/wheel/seisgpu-*.whl" >/dev/null; then
        python3 -m pip install -q --no-deps --no-index --target "$site" .gpu/wheel/seisgpu-*.whl
        export PYTHONPATH="$site"
    else
        export PYTHONPATH="$root/python:$site" SEISGPU_LIB="$root/.gpu/lib/libseisgpu.so"
    fi
    cd "$site" || return 1
    SEISGPU_SOURCE="$root" SEISGPU_TEST_BACKEND=cuda PYTHONDONTWRITEBYTECODE=1 \
        python3 -m pytest -p no:cacheprovider -q -rs --durations=10 -o faulthandler_timeout=${PY_TEST_TIMEOUT:-120} --rootdir "$root/tests/python" "$root/tests/python"
}
export -f python_suite
step python_cuda bash -c python_suite
wait
GPU_JOBS=1
# shellcheck disable=SC2046
[ -z "${dwt_fill:-}" ] || step test_cuda_dwt_fill env SEISGPU_DWT_SECTIONS=H "$dwt_fill" --exact $(module_tests "$dwt_fill" cuda_dwt) --test-threads=4
for tm in "${alone[@]}"; do
    # shellcheck disable=SC2046
    step "test_${tm#*:}" "${tm%%:*}" --exact $(module_tests "${tm%%:*}" "${tm#*:}") --test-threads=4
done
# The soak (tests/abi/soak.rs) on a CUDA context for SOAK_SECONDS, checked against a CPU
# context, with bad inputs and memory watched: alone too, as it judges the device's free memory.
# shellcheck disable=SC2046
STEP_TIMEOUT=$((${SOAK_SECONDS:-600} + 120)) step soak_cuda env SEISGPU_SOAK_SECONDS=${SOAK_SECONDS:-600} .gpu/tests/abi --exact $(module_tests .gpu/tests/abi soak) --nocapture
# The ABI fuzzer at scale (scripts/gpu_fuzz.sh): FUZZ_PROCS fuzzers on CUDA contexts at once,
# FUZZ_CUDA_CALLS (10⁶) calls in all within FUZZ_SECONDS (450). Alone, and only when
# GPU_STEPS asks for it by name (GPU_STEPS=fuzz_cuda_million): it fills the machine.
if [ "$GPU_STEPS" != . ] && [[ fuzz_cuda_million =~ $GPU_STEPS ]]; then
    STEP_TIMEOUT=$((${FUZZ_SECONDS:-450} + 120)) step fuzz_cuda_million bash scripts/gpu_fuzz.sh "$LOGS/fuzz_million"
    wait
    cp "$LOGS/fuzz_million/summary.txt" "$OUT/fuzz_cuda_million.txt" 2>/dev/null
fi
# BASE_BENCH=DIR also runs DIR's benchmark executables (an earlier build), each just before
# the new one, as steps named base_bench_*: before and after in one run, on one card.
bench() { # bench NAME ARGS…: the benchmark executable bench_NAME of .gpu/bin (and BASE_BENCH)
    local name=$1; shift
    [ -z "${BASE_BENCH:-}" ] || step "base_bench_$name" "$BASE_BENCH/bench_${name%%_[0-9]*}" "$@"
    step "bench_$name" ".gpu/bin/bench_${name%%_[0-9]*}" "$@"
}
bench dwt --cases 16,20,22,24,26,65536x1024 --budget 1 --reps 7 --gpu-reps 51
bench fxdecon --bench --reps 3
bench usfft --quick
bench xcorr --bench --pre 10000 --pre-cpu 200 --stations 674 --stations-cpu 100 --reps 3
bench emlog --bench --cpu-direct-max 5
bench pipeline --bench --reps 3
bench wavepacket --bench --n 64,128 --cpu-max-n 64 --reps 3 --budget 10 --deadline 200
# The seed's largest case (689 M lattice points, 569 M coefficients): GPU only, no round trip.
bench wavepacket_256 --bench --n 256 --modes gpu --reps 3 --inverse-max-n 128
wait
cat "$LOGS"/bench_*.log | sed -n '/^|/p' >"$OUT/bench_table.md"
[ -z "${BASE_BENCH:-}" ] || cat "$LOGS"/base_bench_*.log | sed -n '/^|/p' >"$OUT/base_bench_table.md"
cat "$LOGS"/result.* | tee "$OUT/summary.txt"
cp "$LOGS"/demo/*.png "$OUT/" 2>/dev/null
tar czf "$OUT/logs.tgz" -C "$LOGS" .
