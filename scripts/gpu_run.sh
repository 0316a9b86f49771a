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
summary=()
# GPU_STEPS=REGEX runs only the steps whose names match (device time is scarce).
GPU_STEPS=${GPU_STEPS:-.}
step() { # step NAME COMMAND…: runs, logs to $LOGS/NAME.log, records pass/fail
    local name=$1; shift
    [[ $name =~ $GPU_STEPS ]] || return 0
    local t0=$SECONDS
    if "$@" >"$LOGS/$name.log" 2>&1; then r=pass; else r="FAIL($?)"; fi
    summary+=("$(printf '%-22s %-9s %4ss' "$name" "$r" $((SECONDS - t0)))")
}
modules() { # the modules of test executable $1 (none when it is one test file itself)
    "$1" --list 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\)::.*: test$/\1/p' | sort -u
}
module_tests() { # the full names of the tests of module $2 of executable $1, for --exact
    "$1" --list 2>/dev/null | sed -n "s/^\($2::.*\): test\$/\1/p"
}
# Each module in a process of its own, as a step of its own (test_cuda_dwt, test_limits, …):
# its own timing, and no other module's process-wide settings.
for t in .gpu/tests/*; do
    mods=$(modules "$t")
    [ -n "$mods" ] || step "test_$(basename "$t")" "$t" --test-threads=4
    for m in $mods; do
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
step demo .gpu/bin/demo_penobscot data/penobscot-xl1155/penobscot_xl1155.sgy data/f3-tiny-cube/f3.sgy "$LOGS/demo"
# One line per capability's benchmark; their Markdown tables are gathered into one file.
step bench_dwt .gpu/bin/bench_dwt --cases 16,20,22,24,26,65536x1024 --budget 1 --reps 7 --gpu-reps 51
step bench_fxdecon .gpu/bin/bench_fxdecon --bench --reps 3
step bench_usfft .gpu/bin/bench_usfft --quick
step bench_xcorr .gpu/bin/bench_xcorr --bench --pre 10000 --pre-cpu 200 --stations 674 --stations-cpu 100 --reps 3
step bench_emlog .gpu/bin/bench_emlog --bench --cpu-direct-max 5
step bench_wavepacket .gpu/bin/bench_wavepacket --bench --n 64,128 --cpu-max-n 64 --reps 3 --budget 10 --deadline 200
# The seed's largest case (689 M lattice points, 569 M coefficients): GPU only, no round trip.
step bench_wavepacket_256 .gpu/bin/bench_wavepacket --bench --n 256 --modes gpu --reps 3 --inverse-max-n 128
cat "$LOGS"/bench_*.log | sed -n '/^|/p' >"$OUT/bench_table.md"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
cp "$LOGS"/demo/*.png "$OUT/" 2>/dev/null
tar czf "$OUT/logs.tgz" -C "$LOGS" .
