#!/usr/bin/env bash
# The Qt example as a user builds it: seisgpu installed into a temporary prefix, then
# examples/qt configured with find_package(SeisGPU) against that prefix only, built, and
# run headless (QT_QPA_PLATFORM=offscreen) in its scripted mode on the Penobscot
# crossline, once with DWT denoising and once with F-X decon, then with F-X decon whose
# first run Cancel stops (--cancel: that run must be reported cancelled, and a second run
# in the same window succeed); each must exit 0 and leave a screenshot that is not blank
# (tests/qt/not_blank.py). The screenshots are kept
# in target/qt/. Expects `make lib` to have run. Prints "qt: N passed, N failed".
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
keep="$root/target/qt"
mkdir -p "$keep"
unset CMAKE_PREFIX_PATH LD_LIBRARY_PATH

make -C "$root" --no-print-directory install PREFIX="$work/prefix" >/dev/null
cmake -S "$root/examples/qt" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-Werror >/dev/null
cmake --build "$work/build" -j 2 >/dev/null

passed=0
failed=0
for run in "dwt" "fx" "fx --cancel"; do
    shot="$keep/seisgpu_qt_${run// --/_}.png"
    rm -f "$shot"
    # shellcheck disable=SC2086 # "$run" is the method and its flags
    if (cd "$root" && QT_QPA_PLATFORM=offscreen "$work/build/seisgpu_qt" --run $run \
        --screenshot "$shot" data/penobscot-xl1155/penobscot_xl1155.sgy) &&
        python3 "$root/tests/qt/not_blank.py" "$shot"; then
        passed=$((passed + 1))
        echo "ok   seisgpu_qt --run $run: screenshot ${shot#"$root"/}"
    else
        failed=$((failed + 1))
        echo "FAIL seisgpu_qt --run $run"
    fi
done
echo "qt: $passed passed, $failed failed"
[ "$failed" = 0 ]
