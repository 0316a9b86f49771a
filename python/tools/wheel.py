#!/usr/bin/env python3
"""Builds the seisgpu wheel for any CPython 3 on manylinux x86_64 (`make wheel`).

1. `pip wheel` the repository (scikit-build-core: cargo builds libseisgpu.so, which goes
   into the package, debug info stripped): a py3-none-linux_x86_64 wheel;
2. checks the bundled library's dependencies (DT_NEEDED) are glibc's and the GCC runtime's
   only, and asks `auditwheel show` which manylinux tag its symbol versions allow;
3. retags the wheel with that tag (`wheel tags`; the library itself is not modified) and
   runs `auditwheel show` on the result, which must agree.

Usage: python python/tools/wheel.py OUT_DIR   (run with a Python that has pip,
scikit-build-core, auditwheel and wheel; scripts/install_test_deps.sh makes one).
Prints the wheel's path last.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parents[2]
# glibc's libraries and the GCC runtime (Rust's unwinder): all on the manylinux allow list.
ALLOWED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
           "ld-linux-x86-64.so.2", "libgcc_s.so.1"}


def run(*args: str) -> str:
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"wheel.py: {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout + r.stderr


def needed(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryFile() as f:
        f.write(z.read("seisgpu/libseisgpu.so"))
        f.seek(0)
        dyn = next(s for s in ELFFile(f).iter_sections() if isinstance(s, DynamicSection))
        return [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]


def platform_tag(wheel: Path) -> str:
    text = run(sys.executable, "-m", "auditwheel", "show", str(wheel))
    m = re.search(r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s+"([^"]+)"', text)
    if not m:
        sys.exit(f"wheel.py: auditwheel show gave no platform tag:\n{text}")
    return m.group(1)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "--disable-pip-version-check", "-w", tmp, str(ROOT))
        built = next(Path(tmp).glob("seisgpu-*.whl"))
        deps = needed(built)
        extra = sorted(set(deps) - ALLOWED)
        if extra:
            sys.exit(f"wheel.py: libseisgpu.so needs {extra}: only glibc's libraries and "
                     "libgcc_s may be linked")
        tag = platform_tag(built)
        if not tag.startswith("manylinux_"):
            sys.exit(f"wheel.py: auditwheel allows only {tag!r}")
        for old in out.glob("seisgpu-*.whl"):
            old.unlink()
        run(sys.executable, "-m", "wheel", "tags", "--python-tag", "py3", "--abi-tag", "none",
            "--platform-tag", tag, str(built))
        retagged = next(p for p in Path(tmp).glob("seisgpu-*.whl") if tag in p.name)
        final = out / retagged.name
        retagged.replace(final)
    if platform_tag(final) != tag:
        sys.exit(f"wheel.py: auditwheel show disagrees with the tag of {final.name}")
    print(f"libseisgpu.so needs {', '.join(deps)} (glibc and the GCC runtime only)")
    print(run(sys.executable, "-m", "auditwheel", "show", str(final)).strip())
    print(final)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]).resolve())
