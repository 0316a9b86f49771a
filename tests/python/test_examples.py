"""Every script of python/examples/ runs against the installed package and prints its
result (the scripts read the repository's data). The GPU-array scripts (CuPy, PyTorch)
print "skipped: …" where their library or a CUDA backend is missing; on a CUDA test run
(SEISGPU_TEST_BACKEND=cuda) with the library installed they must run their check."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import BACKEND

EXAMPLES = {
    "dwt_denoise.py": "levels [1]",
    "usfft.py": "type 2 at the grid nodes",
    "fxdecon.py": "sufxdecon's",
    "xcorr.py": "robust UV06–UV10",
    "wavepacket.py": "round trip",
    "emlog.py": "models within the errors",
}


@pytest.mark.parametrize("script", list(EXAMPLES))
def test_example_runs(source, script):
    r = subprocess.run([sys.executable, str(source / "python/examples" / script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert EXAMPLES[script] in r.stdout, r.stdout


GPU_EXAMPLES = {  # script: (the array library it needs, what it prints when its check passes)
    "device_cupy.py": ("cupy", "pipeline: the denoise equals the host call bit for bit"),
    "device_torch.py": ("torch", "pipeline: the denoise equals the host call bit for bit"),
}


@pytest.mark.parametrize("script", list(GPU_EXAMPLES))
def test_gpu_array_example_runs_or_skips(source, script):
    library, passed = GPU_EXAMPLES[script]
    r = subprocess.run([sys.executable, str(source / "python/examples" / script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    if BACKEND == "cuda" and importlib.util.find_spec(library) is not None:
        assert passed in r.stdout, r.stdout
    else:
        assert r.stdout.startswith("skipped: ") or passed in r.stdout, r.stdout
