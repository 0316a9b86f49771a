#!/usr/bin/env bash
# include/seisgpu.hpp must compile without a warning (-Wall -Wextra -pedantic -Werror)
# under g++ and clang++, in C++17 and C++20, and examples/cpp/denoise.cpp built each way
# must pass its checks against target/release (make lib first). A missing compiler fails
# the test (scripts/install_test_deps.sh installs both). Prints "cpp: N passed, N failed".
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/target/cpp"
mkdir -p "$out"
passed=0
failed=0
for cxx in g++ clang++; do
    for std in c++17 c++20; do
        if "$cxx" -std="$std" -Wall -Wextra -pedantic -Werror -I"$root/include" -c \
            "$root/tests/cpp/instantiate.cpp" -o "$out/instantiate-$cxx-$std.o"; then
            passed=$((passed + 1))
            echo "ok   $cxx -std=$std: every member template of seisgpu.hpp compiles"
        else
            failed=$((failed + 1))
            echo "FAIL $cxx -std=$std: seisgpu.hpp"
        fi
        exe="$out/denoise-$cxx-$std"
        if "$cxx" -std="$std" -Wall -Wextra -pedantic -Werror -O1 -I"$root/include" \
            "$root/examples/cpp/denoise.cpp" -o "$exe" -L"$root/target/release" -lseisgpu \
            -Wl,-rpath,"$root/target/release" && "$exe" >"$exe.log" 2>&1; then
            passed=$((passed + 1))
            echo "ok   $cxx -std=$std: examples/cpp/denoise.cpp builds and passes"
        else
            failed=$((failed + 1))
            echo "FAIL $cxx -std=$std: examples/cpp/denoise.cpp"
            [ -f "$exe.log" ] && sed 's/^/     /' "$exe.log"
        fi
    done
done
echo "cpp: $passed passed, $failed failed"
[ "$failed" = 0 ]
