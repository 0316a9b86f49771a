#!/usr/bin/env bash
# Installs seisgpu into a temporary prefix (through DESTDIR, as a packager does), then
# builds and runs a C program with pkg-config and a CMake project with find_package
# against that install only, and checks with readelf/ldd that nothing refers to the build
# tree; then moves the prefix elsewhere and does it all again (the install is
# relocatable). Expects `make lib` to have run. Prints "install: N passed, N failed".
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
major="${version%%.*}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The consumers must find nothing of the work tree through the environment.
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH LIBRARY_PATH CPATH C_INCLUDE_PATH
passed=0
failed=0

check() { # check NAME COMMAND...: runs the command, counts and reports it
    local name="$1"
    shift
    if out="$("$@" 2>&1)"; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        sed 's/^/     /' <<<"$out"
    fi
}

no_build_tree() { # no_build_tree EXE PREFIX: links and resolution stay inside PREFIX
    local exe="$1" prefix="$2"
    if readelf -d "$exe" | grep -F "$root"; then
        echo "$exe: dynamic section names the build tree"
        return 1
    fi
    if ldd "$exe" | grep -F "$root"; then
        echo "$exe: resolves a library from the build tree"
        return 1
    fi
    if ! readelf -d "$exe" | grep -q "NEEDED.*\[libseisgpu\.so\.$major\]"; then
        echo "$exe: does not need libseisgpu.so.$major"
        return 1
    fi
    ldd "$exe" | grep -F "libseisgpu.so.$major => $(cd "$prefix/lib" && pwd -P)/"
}

static_only() { # static_only EXE: the library is inside, not loaded
    ! readelf -d "$1" | grep -q 'NEEDED.*libseisgpu'
}

installed_files_clean() { # installed_files_clean PREFIX: no installed file names the build tree
    ! grep -rlF "$root" "$1"
}

layout() { # layout PREFIX: every file and link of the install, the SONAME inside
    local p="$1"
    for f in "lib/libseisgpu.so.$version" lib/libseisgpu.a include/seisgpu.h include/seisgpu.hpp \
        include/seisgpu.f90 lib/pkgconfig/seisgpu.pc lib/cmake/SeisGPU/SeisGPUConfig.cmake \
        lib/cmake/SeisGPU/SeisGPUConfigVersion.cmake; do
        [ -f "$p/$f" ] || { echo "missing $f"; return 1; }
    done
    [ "$(readlink "$p/lib/libseisgpu.so.$major")" = "libseisgpu.so.$version" ] || return 1
    [ "$(readlink "$p/lib/libseisgpu.so")" = "libseisgpu.so.$major" ] || return 1
    readelf -d "$p/lib/libseisgpu.so.$version" | grep -q "SONAME.*\[libseisgpu\.so\.$major\]"
}

pkg_config_consumer() { # pkg_config_consumer PREFIX BUILD_DIR
    local pc="$1/lib/pkgconfig" b="$2"
    mkdir -p "$b"
    [ "$(PKG_CONFIG_PATH="$pc" pkg-config --modversion seisgpu)" = "$version" ] || return 1
    local libdir
    libdir="$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir seisgpu)"
    # shellcheck disable=SC2046 # pkg-config's flags are meant to split
    cc -std=c11 -Wall -Wextra -pedantic -Werror "$root/tests/install/consumer.c" -o "$b/consumer" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs seisgpu) -lm -Wl,-rpath,"$libdir"
    no_build_tree "$b/consumer" "$1"
    "$b/consumer" "$version"
}

cmake_consumer() { # cmake_consumer PREFIX BUILD_DIR
    local b="$2"
    cmake -S "$root/tests/install/cmake" -B "$b" -DCMAKE_PREFIX_PATH="$1" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
    cmake --build "$b" >/dev/null
    no_build_tree "$b/consumer_shared" "$1"
    "$b/consumer_shared" "$version"
    static_only "$b/consumer_static"
    "$b/consumer_static" "$version"
}

suite() { # suite LABEL PREFIX
    check "$1: layout, links and SONAME" layout "$2"
    check "$1: no installed file names the build tree" installed_files_clean "$2"
    check "$1: C program with pkg-config builds and runs" pkg_config_consumer "$2" "$work/build-pc-$1"
    check "$1: CMake find_package, shared and static, build and run" cmake_consumer "$2" "$work/build-cmake-$1"
}

# A packager's install: PREFIX=/opt/seisgpu staged under DESTDIR.
make -C "$root" --no-print-directory install DESTDIR="$work/stage" PREFIX=/opt/seisgpu >/dev/null
suite installed "$work/stage/opt/seisgpu"

# The same tree moved elsewhere: nothing may still point at the first place.
mkdir -p "$work/elsewhere"
mv "$work/stage/opt/seisgpu" "$work/elsewhere/seisgpu-$version"
suite moved "$work/elsewhere/seisgpu-$version"

# make uninstall removes every file it installed, and the folders it made.
uninstalled_empty() {
    make -C "$root" --no-print-directory uninstall DESTDIR="$work/elsewhere" PREFIX="/seisgpu-$version" >/dev/null
    [ -z "$(find "$work/elsewhere" -mindepth 1 -not -name "seisgpu-$version")" ]
}
check "uninstall leaves nothing" uninstalled_empty

echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
