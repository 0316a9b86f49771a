#!/usr/bin/env bash
# The Python package's tests as `make test` runs them: the wheel of target/wheels (make
# wheel) installed into a fresh virtual environment, with the test dependencies from the
# local wheel cache scripts/install_test_deps.sh fills (.tools/python-wheels), and pytest
# run from outside the source tree, so that the suite imports the installed package and a
# packaging mistake cannot hide behind python/seisgpu. Extra arguments go to pytest.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
wheels="$root/.tools/python-wheels"
python="${SEISGPU_TEST_PYTHON:-python3}"

shopt -s nullglob
built=("$root"/target/wheels/seisgpu-*-py3-none-manylinux_*_x86_64.whl)
if [ "${#built[@]}" -ne 1 ]; then
    echo "tests/python/run.sh: expected one wheel in target/wheels (run make wheel)" >&2
    exit 1
fi
if [ ! -f "$wheels/.complete" ]; then
    echo "tests/python/run.sh: no test wheels in ${wheels#"$root"/} (run scripts/install_test_deps.sh)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check --quiet)
"${pip[@]}" install --no-compile --no-index --find-links "$wheels" "${built[0]}[test]"

cd "$work"
# Nothing is written into the source tree (no __pycache__, no .pytest_cache).
PYTHONDONTWRITEBYTECODE=1 SEISGPU_SOURCE="$root" SEISGPU_EXPECT_WHEEL=1 \
    "$work/venv/bin/python" -m pytest -p no:cacheprovider -q --durations=5 \
    --rootdir "$root/tests/python" "$root/tests/python" "$@"
