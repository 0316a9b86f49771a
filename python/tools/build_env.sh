#!/usr/bin/env bash
# The Python environment `make wheel` builds with: a venv at .tools/python-build holding
# scikit-build-core (the build backend), auditwheel (manylinux checks) and wheel (retagging).
# CMake and cargo come from the system. Idempotent: a second run installs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/.tools/python-build"
requirements=("scikit-build-core>=0.11" "auditwheel>=6" "wheel>=0.40")
stamp="$venv/.requirements"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${requirements[*]}" ]; then
    echo "build_env: ${venv#"$root"/} present"
    exit 0
fi
rm -rf "$venv"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
echo "${requirements[*]}" > "$stamp"
echo "build_env: installed ${requirements[*]} into ${venv#"$root"/}"
