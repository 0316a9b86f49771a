#!/usr/bin/env bash
# Installs what `make test` needs, only where it is missing:
#   * gcc, gfortran, libgsl-dev, zlib1g-dev, and for the install, C++ and Qt tests g++,
#     clang, cmake, pkg-config, qt6-base-dev, valgrind, and for the MPI examples Open MPI
#     (libopenmpi-dev, openmpi-bin) (Debian packages; `apt-get update` first,
#     quietly, and only when something has to be installed);
#   * NVRTC 12 from PyPI (the nvidia-cuda-nvrtc-cu12 wheel, no dependencies), unpacked
#     under .tools/nvrtc so that libnvrtc.so.12 is at
#     .tools/nvrtc/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (the Makefile's NVRTC_DIR);
#   * optionally (SEISGPU_WITH_FINUFFT=1) FINUFFT 2.5 in a venv at .tools/finufft, for the
#     USFFT bench's side-by-side rows;
#   * for the Python package (python3-venv from Debian when ensurepip is missing): the
#     build venv .tools/python-build (python/tools/build_env.sh) and, in .tools/python-wheels,
#     the wheels of the Python tests' dependencies (NumPy, pytest, PyWavelets, FINUFFT, ObsPy),
#     from which tests/python/run.sh fills a fresh venv without the network;
#   * for the Python MPI example's test (tests/mpi/run.sh), a venv .tools/mpi4py with NumPy
#     and mpi4py (its binary wheel runs on the system's Open MPI); where pip cannot install
#     them, it says so and the test is skipped.
# Idempotent: a second run installs nothing. Run from anywhere; paths are relative to
# the repository root.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
nvrtc_root="$tools/nvrtc"
nvrtc_lib="$nvrtc_root/nvidia/cuda_nvrtc/lib"
# The NVRTC generation seisgpu's CUDA backend loads (libnvrtc.so.12); any 12.x works.
nvrtc_package="${SEISGPU_NVRTC_PACKAGE:-nvidia-cuda-nvrtc-cu12}"

say() { printf 'install_test_deps: %s\n' "$*"; }

# ---- Debian packages -------------------------------------------------------------------
missing=()
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v gfortran >/dev/null 2>&1 || missing+=(gfortran)
[ -f /usr/include/gsl/gsl_wavelet.h ] || missing+=(libgsl-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v clang++ >/dev/null 2>&1 || missing+=(clang)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
dpkg-query -W -f='${Status}' qt6-base-dev 2>/dev/null | grep -q 'ok installed' ||
    missing+=(qt6-base-dev)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
python_ok=1
python3 -m pip --version >/dev/null 2>&1 || python_ok=0

if [ "${#missing[@]}" -gt 0 ] || { [ "$python_ok" = 0 ] && [ ! -e "$nvrtc_lib/libnvrtc.so.12" ]; }; then
    [ "$python_ok" = 0 ] && [ ! -e "$nvrtc_lib/libnvrtc.so.12" ] && missing+=(python3-pip)
    sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            say "missing ${missing[*]}, and not root (no sudo): install them and run again" >&2
            exit 1
        fi
    fi
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    say "gcc, gfortran, libgsl-dev, zlib1g-dev, g++, clang, cmake, pkg-config, qt6-base-dev, valgrind, Open MPI: present"
fi

# ---- NVRTC from PyPI ---------------------------------------------------------------------
if [ -e "$nvrtc_lib/libnvrtc.so.12" ]; then
    say "NVRTC: present in ${nvrtc_lib#"$root"/}"
else
    say "NVRTC: downloading $nvrtc_package (pip download --no-deps)"
    wheels="$tools/wheels"
    mkdir -p "$wheels"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --dest "$wheels" "$nvrtc_package"
    wheel="$(ls -t "$wheels"/nvidia_cuda_nvrtc_cu12-*.whl 2>/dev/null | head -n 1)"
    if [ -z "$wheel" ]; then
        say "no nvidia_cuda_nvrtc_cu12 wheel in ${wheels#"$root"/} after pip download" >&2
        exit 1
    fi
    # Unpack into a fresh folder, then move it into place, so a broken run leaves nothing
    # that looks installed.
    rm -rf "$nvrtc_root.partial"
    python3 -m zipfile -e "$wheel" "$nvrtc_root.partial"
    rm -rf "$nvrtc_root"
    mv "$nvrtc_root.partial" "$nvrtc_root"
    if [ ! -e "$nvrtc_lib/libnvrtc.so.12" ]; then
        say "the wheel $(basename "$wheel") has no nvidia/cuda_nvrtc/lib/libnvrtc.so.12" >&2
        exit 1
    fi
    rm -f "$wheel"
    say "NVRTC: installed $(basename "$wheel") into ${nvrtc_lib#"$root"/}"
fi

# ---- FINUFFT (optional: the USFFT bench's side-by-side rows) -----------------------------
# Only with SEISGPU_WITH_FINUFFT=1: a venv at .tools/finufft with the finufft package from
# PyPI (or the wheel FINUFFT_WHEEL names). The bench prints "finufft not installed" without it.
if [ "${SEISGPU_WITH_FINUFFT:-0}" = 1 ]; then
    fin_venv="$tools/finufft"
    if "$fin_venv/bin/python" -c "import finufft" >/dev/null 2>&1; then
        say "FINUFFT: present in ${fin_venv#"$root"/}"
    else
        python3 -m venv "$fin_venv"
        "$fin_venv/bin/pip" install --quiet --disable-pip-version-check \
            "${FINUFFT_WHEEL:-finufft>=2.5,<2.6}"
        say "FINUFFT: installed $("$fin_venv/bin/python" -c 'import finufft; print(finufft.__version__)') into ${fin_venv#"$root"/}"
    fi
fi

# ---- The Python package: build venv and the test dependencies' wheels ---------------------
bash "$root/python/tools/build_env.sh"
py_wheels="$tools/python-wheels"
py_requirements=("numpy>=1.22" "pytest>=7" "pywavelets>=1.4" "finufft>=2.2" "obspy>=1.4")
if [ -f "$py_wheels/.complete" ] && [ "$(cat "$py_wheels/.complete")" = "${py_requirements[*]}" ]; then
    say "Python test wheels: present in ${py_wheels#"$root"/}"
else
    rm -rf "$py_wheels"
    mkdir -p "$py_wheels"
    python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
        --dest "$py_wheels" "${py_requirements[@]}"
    echo "${py_requirements[*]}" > "$py_wheels/.complete"
    say "Python test wheels: downloaded $(ls "$py_wheels"/*.whl | wc -l) wheels into ${py_wheels#"$root"/}"
fi

# ---- mpi4py (optional: the Python MPI example's test) --------------------------------------
mpi_venv="$tools/mpi4py"
if "$mpi_venv/bin/python" -c 'import mpi4py, numpy' >/dev/null 2>&1; then
    say "mpi4py: present in ${mpi_venv#"$root"/}"
elif { rm -rf "$mpi_venv" && python3 -m venv "$mpi_venv" &&
    "$mpi_venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
        "mpi4py>=4" "numpy>=1.22"; } >"$tools/mpi4py.log" 2>&1; then
    say "mpi4py: installed $("$mpi_venv/bin/python" -c 'import mpi4py; print(mpi4py.__version__)') into ${mpi_venv#"$root"/}"
else
    rm -rf "$mpi_venv"
    say "mpi4py: could not be installed (see ${tools#"$root"/}/mpi4py.log); the Python MPI example's test will be skipped"
fi
