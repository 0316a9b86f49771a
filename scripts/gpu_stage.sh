#!/usr/bin/env bash
# Builds, here, everything the GPU check needs and copies it into .gpu/ (git-ignored):
# the library, every test executable, the benchmark, the examples, the demo and its data,
# and the GSL runtime the reference tests link to. The device machine has no cargo and
# no network; run scripts/gpu_run.sh there (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."

make lib examples demo-build >/dev/null
rm -rf .gpu
mkdir -p .gpu/lib .gpu/tests .gpu/bin
cp target/release/libseisgpu.so .gpu/lib/
ln -s libseisgpu.so .gpu/lib/libseisgpu.so.0
for so in libgsl.so.27 libgslcblas.so.0 libgfortran.so.5; do
    cp -L "$(ldconfig -p | awk -v n="$so" '$1 == n {print $NF; exit}')" .gpu/lib/
done

executables() { # cargo's JSON messages → "name path" of each executable built
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])'
}
cargo test --release --no-run --message-format=json 2>/dev/null | executables |
    while read -r name path; do
        # house: the CPU-only checks that CI runs (the header and Fortran module, the
        # import graph, compiling every kernel variant for sm_70/80/90: they read the source
        # tree, and the last takes minutes of NVRTC).
        case $name in house) ;; *) cp "$path" ".gpu/tests/$name" ;; esac
    done
cargo bench --no-run --message-format=json 2>/dev/null | executables |
    while read -r name path; do cp "$path" ".gpu/bin/bench_$name"; done
cp target/examples/* .gpu/bin/
# The Python package's wheel (make wheel), when built: the GPU run installs it and runs the
# Python suite on a CUDA context against it.
mkdir -p .gpu/wheel
cp target/wheels/seisgpu-*.whl .gpu/wheel/ 2>/dev/null || echo "no wheel in target/wheels (make wheel): the GPU run tests the package's source"
# Debug info makes each executable ~25 MB; the device tool carries 64 MiB in all.
strip --strip-debug .gpu/lib/libseisgpu.so .gpu/tests/* .gpu/bin/*
du -sh .gpu
# The device tool carries one ignored folder: the staged tree, xz-compressed (~15 MB).
mkdir -p .gpu-pack
tar cf - .gpu | xz -T0 -6 >.gpu-pack/gpu.tar.xz
du -sh .gpu-pack
