"""Every script of python/examples/ runs against the installed package and prints its
result (the scripts read the repository's data)."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
