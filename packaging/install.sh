#!/usr/bin/env bash
# Installs (or, with `uninstall`, removes) the built library under a prefix:
#   install.sh install|uninstall PREFIX_DIR
# PREFIX_DIR is $(DESTDIR)$(PREFIX) as the Makefile passes it. Layout:
#   lib/libseisgpu.so.X.Y.Z, lib/libseisgpu.so.X -> .so.X.Y.Z, lib/libseisgpu.so -> .so.X,
#   lib/libseisgpu.a, include/seisgpu.{h,hpp,f90}, lib/pkgconfig/seisgpu.pc,
#   lib/cmake/SeisGPU/SeisGPUConfig{,Version}.cmake.
# Nothing installed names the build tree or the prefix: pkg-config and CMake files compute
# the prefix from their own location, and the libraries lose their debug sections (which
# hold build paths; the build tree keeps them).
set -euo pipefail

mode="$1"
dest="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$root/packaging"
release="$root/target/release"

version="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
major="${version%%.*}"
# The system libraries of Rust's standard library for a static link, as
# `cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs`
# prints them on Linux (tests/install/run.sh links a program against the .a with them).
static_libs="-ldl -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

files=(
    "lib/libseisgpu.so.$version" "lib/libseisgpu.so.$major" lib/libseisgpu.so lib/libseisgpu.a
    include/seisgpu.h include/seisgpu.hpp include/seisgpu.f90
    lib/pkgconfig/seisgpu.pc
    lib/cmake/SeisGPU/SeisGPUConfig.cmake lib/cmake/SeisGPU/SeisGPUConfigVersion.cmake
)

fill() { # template → destination, with @VERSION@, @MAJOR@ and the static libraries filled in
    sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
        -e "s|@STATIC_LIBS@|$static_libs|g" \
        -e "s|@STATIC_LIBS_CMAKE@|$(sed -e 's/-l//g' -e 's/ /;/g' <<<"$static_libs")|g" \
        "$1" >"$2"
    chmod 644 "$2"
}

case "$mode" in
install)
    for f in "$release/libseisgpu.so" "$release/libseisgpu.a"; do
        [ -f "$f" ] || { echo "install.sh: $f is missing: run make lib first" >&2; exit 1; }
    done
    mkdir -p "$dest/lib/pkgconfig" "$dest/lib/cmake/SeisGPU" "$dest/include"
    install -m 755 "$release/libseisgpu.so" "$dest/lib/libseisgpu.so.$version"
    strip --strip-debug "$dest/lib/libseisgpu.so.$version"
    ln -sfn "libseisgpu.so.$version" "$dest/lib/libseisgpu.so.$major"
    ln -sfn "libseisgpu.so.$major" "$dest/lib/libseisgpu.so"
    install -m 644 "$release/libseisgpu.a" "$dest/lib/libseisgpu.a"
    strip --strip-debug "$dest/lib/libseisgpu.a"
    install -m 644 "$root/include/seisgpu.h" "$root/include/seisgpu.hpp" \
        "$root/include/seisgpu.f90" "$dest/include/"
    fill "$here/seisgpu.pc.in" "$dest/lib/pkgconfig/seisgpu.pc"
    fill "$here/SeisGPUConfig.cmake.in" "$dest/lib/cmake/SeisGPU/SeisGPUConfig.cmake"
    fill "$here/SeisGPUConfigVersion.cmake.in" "$dest/lib/cmake/SeisGPU/SeisGPUConfigVersion.cmake"
    echo "installed seisgpu $version into $dest"
    ;;
uninstall)
    for f in "${files[@]}"; do rm -f "$dest/$f"; done
    # Only the folders this package made, and only when nothing else is left in them.
    rmdir "$dest/lib/cmake/SeisGPU" 2>/dev/null || true
    for d in lib/cmake lib/pkgconfig include lib; do rmdir "$dest/$d" 2>/dev/null || true; done
    echo "removed seisgpu $version from $dest"
    ;;
*)
    echo "usage: install.sh install|uninstall PREFIX_DIR" >&2
    exit 2
    ;;
esac
