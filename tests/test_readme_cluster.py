"""The cluster block of docs/guide/clusters.md runs as written: Ray started by hand, a search on it, Ray stopped.

tests/test_readme.py runs the documentation's plain blocks; this block is a ```console block (it starts and
stops Ray daemons, which that test must not), so it is run here, whole, as one bash script, in a fresh folder,
with `clade` this checkout's (a shim first on PATH)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from archive import Archive
from engine.sandbox.ray_executor import ray_available
from tests.conftest import REPO

RAY_OK, RAY_WHY = ray_available()
pytestmark = [
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.skipif(not RAY_OK, reason=RAY_WHY),
    pytest.mark.skipif(shutil.which("ray") is None, reason="the ray command is not on PATH"),
]


PAGE = REPO / "docs" / "guide" / "clusters.md"


def cluster_block() -> list[str]:
    """The first ```console block of the page's first section (a cluster by hand)."""
    text = PAGE.read_text()
    section = text[: text.index("\n## ")]
    block = re.search(r"```console\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_the_documented_cluster_commands_work_as_written(tmp_path):
    lines = cluster_block()
    assert lines[0] == "export RAY_AUTH_MODE=token" and lines[-1] == "ray stop"
    assert any(line.startswith("clade search --executor ray --ray-address") for line in lines)
    script = "set -e\ntrap 'ray stop >/dev/null 2>&1 || true' EXIT\n" + "\n".join(lines[:-1]) + "\n"
    bin_dir = tmp_path / ".bin"  # `clade` is this checkout's, run by this interpreter
    bin_dir.mkdir()
    (bin_dir / "clade").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m clade "$@"\n')
    (bin_dir / "clade").chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200", LITELLM_LOCAL_MODEL_COST_MAP="True", PATH=path)
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    (run,) = (tmp_path / "runs").iterdir()
    with Archive.open(run, read_only=True) as archive:
        assert archive.query("SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] == 40
        workers = {w for (w,) in archive.query("SELECT DISTINCT worker FROM evaluations")}
        said = archive.query("SELECT detail->>'said' FROM events WHERE kind = 'session'")[0][0]
    assert len(workers) == 1 and next(iter(workers)).startswith("ray:"), workers  # the worker node, not the head
    assert "a Ray cluster of 2 nodes (2 CPUs for evaluations)" in said
