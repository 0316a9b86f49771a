"""The package itself: which library it loads (and SEISGPU_LIB's role), describe(), the
option structs' layout against the C header, the GIL and four threads on one context,
plans freed by the garbage collector without leaking, closed plans, GPU arrays."""

from __future__ import annotations

import ctypes
import gc
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import seisgpu
from seisgpu import _lib


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("SEISGPU_LIB", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e,
                          capture_output=True, text=True, cwd=Path.home(), timeout=120)


def test_the_bundled_library_is_loaded_and_described(source):
    path = Path(seisgpu.library_path())
    if os.environ.get("SEISGPU_EXPECT_WHEEL"):
        # tests/python/run.sh: the installed wheel, not the source tree, and its own library.
        assert _lib.info.source == "bundled"
        assert source.resolve() not in Path(seisgpu.__file__).resolve().parents
    if _lib.info.source == "bundled":
        assert path.parent == Path(seisgpu.__file__).parent
    text = seisgpu.describe(seisgpu.Context("cpu"))
    assert str(path) in text and "context backend: cpu" in text
    assert seisgpu.version() == seisgpu.__version__
    assert (Path(seisgpu.__file__).parent / "py.typed").exists()
    auto = seisgpu.describe()
    assert "context backend: " in auto and "  (" in auto


@pytest.mark.skipif(_lib.info.source != "bundled", reason="needs the installed package")
def test_seisgpu_lib_is_never_skipped_silently(tmp_path):
    # Beside the bundled library a different SEISGPU_LIB is reported, not used silently.
    r = run_python("import seisgpu; print(seisgpu.library_path())",
                   {"SEISGPU_LIB": "/nonexistent/libseisgpu.so"})
    assert r.returncode == 0, r.stderr
    assert "SEISGPU_LIB='/nonexistent/libseisgpu.so' is not used" in r.stderr
    # A copy of the package without its library: SEISGPU_LIB is then what is loaded, and a
    # wrong one is an ImportError that names it.
    pkg = tmp_path / "seisgpu"
    shutil.copytree(Path(seisgpu.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("libseisgpu.so", "__pycache__"))
    lib = seisgpu.library_path()
    env = {"PYTHONPATH": str(tmp_path)}
    r = run_python("import seisgpu; print(seisgpu.library_path())", {**env, "SEISGPU_LIB": lib})
    assert r.returncode == 0 and r.stdout.strip() == lib, r.stderr
    for wrong, words in (("/nonexistent/libseisgpu.so", "does not exist"),
                         (str(tmp_path / "seisgpu" / "__init__.py"), "could not be loaded"),
                         (ctypes.util.find_library("m") or "libm.so.6", "lacks sg_")):
        r = run_python("import seisgpu", {**env, "SEISGPU_LIB": wrong})
        assert r.returncode != 0
        assert "SEISGPU_LIB" in r.stderr or "lacks sg_" in r.stderr
        assert words in r.stderr, r.stderr


def test_option_structs_match_the_header(tmp_path, source):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "seisgpu.h"',
             "int main(void) {"]
    for cname, struct in _lib.STRUCTS.items():
        lines.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        for field, _ in struct._fields_:
            lines.append(f'printf("{cname}.{field} %zu\\n", offsetof({cname}, {field}));')
    lines += ["return 0;", "}"]
    (tmp_path / "layout.c").write_text("\n".join(lines))
    subprocess.run([cc, "-I", str(source / "include"), str(tmp_path / "layout.c"), "-o",
                    str(tmp_path / "layout")], check=True)
    got = dict(line.split() for line in subprocess.run(
        [str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout.split("\n")
        if line)
    for cname, struct in _lib.STRUCTS.items():
        assert int(got[cname]) == ctypes.sizeof(struct), cname
        for field, _ in struct._fields_:
            assert int(got[f"{cname}.{field}"]) == getattr(struct, field).offset, (cname, field)


def test_the_gil_is_released_during_calls(ctx):
    data = np.random.default_rng(0).standard_normal((400, 1000)).astype(np.float32)
    plan = seisgpu.FxDecon(ctx, data.shape)
    plan.filter(data)
    ticks, done = [0], threading.Event()

    def call():
        for _ in range(3):
            plan.filter(data)
        done.set()

    t = threading.Thread(target=call)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks[0] += 1
    t.join()
    elapsed = time.perf_counter() - start
    # Held, the GIL would let this loop run only at the switch interval (every 5 ms).
    print(f"{ticks[0]} loop turns during {elapsed:.2f} s of library calls")
    assert ticks[0] > 20 * elapsed / sys.getswitchinterval()


def test_four_threads_on_one_context(ctx):
    rng = np.random.default_rng(1)
    traces = rng.standard_normal((64, 1024))
    section = rng.standard_normal((48, 300)).astype(np.float32)
    dwt = seisgpu.Dwt(ctx, 1024)
    fx = seisgpu.FxDecon(ctx, section.shape)
    want = (dwt.denoise(traces), fx.filter(section))
    results, errors = [], []

    def work(k):
        try:
            own = seisgpu.Dwt(ctx, 1024)  # plans made on the shared context, concurrently
            for _ in range(5):
                results.append((k, (dwt if k % 2 else own).denoise(traces), fx.filter(section)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 20
    for _, d, f in results:
        np.testing.assert_array_equal(d, want[0])
        np.testing.assert_array_equal(f, want[1])


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_ten_thousand_plans_leave_memory_flat(ctx):
    x = np.ones(64, np.float32)
    kinds = [
        lambda: seisgpu.Dwt(ctx, 64),
        lambda: seisgpu.Usfft(ctx, 1, (16,), tolerance=1e-6),
        lambda: seisgpu.FxDecon(ctx, (8, 64)),
        lambda: seisgpu.Xcorr(ctx, sampling_rate=1.0, freqmin=0.05, freqmax=0.4),
    ]

    def churn(count):
        for i in range(count):
            plan = kinds[i % len(kinds)]()
            if i % 3 == 0:
                with plan:  # closed explicitly
                    pass
            elif i % 3 == 1:
                plan.cycle = plan  # only the cycle collector frees these
            del plan  # the others: freed when their last reference goes
        seisgpu.Dwt(ctx, 64).denoise(x)

    churn(2000)  # warm-up: allocator pools, caches
    gc.collect()
    before = rss_bytes()
    churn(10_000)
    gc.collect()
    after = rss_bytes()
    print(f"resident memory {before / 2**20:.1f} MiB before, {after / 2**20:.1f} MiB after "
          f"10,000 plans ({100 * (after - before) / before:+.2f} %)")
    assert abs(after - before) <= 0.05 * before


def test_closed_plans_and_contexts(ctx):
    dwt = seisgpu.Dwt(ctx, 64)
    with dwt as d:
        assert d is dwt
    assert dwt.closed
    with pytest.raises(seisgpu.ClosedError, match="Dwt is closed"):
        dwt.forward(np.zeros(64))
    dwt.close()  # idempotent
    own = seisgpu.Context("cpu")
    plan = seisgpu.Dwt(own, 64)
    own.close()  # plans keep the library's context alive
    assert own.closed
    np.testing.assert_allclose(plan.inverse(plan.forward(np.ones(64))), np.ones(64))
    with pytest.raises(seisgpu.ClosedError):
        seisgpu.Dwt(own, 64)
    with pytest.raises(seisgpu.ClosedError):
        own.description  # noqa: B018
    plan.close()


class FakeCupy:
    """Duck-types a CuPy array: __cuda_array_interface__ and .get()."""

    def __init__(self, a):
        self._a = a
        self.__cuda_array_interface__ = {"shape": a.shape}

    def get(self):
        return self._a.copy()


class FakeDeviceArray:
    def __init__(self):
        self.__cuda_array_interface__ = {"shape": (4,)}


def test_gpu_arrays_are_copied_through_host_memory(ctx):
    # Small host-side arguments given as GPU arrays (a POCS call's trace mask here) are
    # copied through host memory; bulk arrays go to the device calls (test_device.py).
    wp = seisgpu.WavepacketLayout(ctx, (16, 32))
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    live = np.ones(16, dtype=bool)
    live[5:8] = False
    got = wp.pocs(x, FakeCupy(live), iterations=3)
    np.testing.assert_array_equal(got, wp.pocs(x, live, iterations=3))
    with pytest.raises(seisgpu.ArgumentTypeError, match="host arrays"):
        wp.pocs(x, FakeDeviceArray(), iterations=3)
