"""scripts/bench_sandbox.py runs end to end with tiny settings and prints its figures (issue 4)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLOAT = r"(\d+(?:\.\d+)?)"


@pytest.mark.slow
def test_bench_sandbox_tiny_run_prints_ratios_and_utilization():
    from engine.sandbox.bwrap import bwrap_available

    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "scripts/bench_sandbox.py", "--repeats", "3", "--budget", "8"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert f"os.cpu_count() {os.cpu_count()}" in text
    backends = ["process"] + (["bwrap"] if bwrap_available()[0] else [])
    assert "docker: skipped (" in text or re.search(rf"docker +median +{FLOAT} ms", text)
    bare = re.search(rf"bare +median +{FLOAT} ms, p90 +{FLOAT} ms", text)
    assert bare and 0 < float(bare[1]) <= float(bare[2]), text
    for name in backends:
        line = re.search(
            rf"{name} +median +{FLOAT} ms, p90 +{FLOAT} ms, overhead +([+-]{FLOAT}) ms, "
            rf"ratio {FLOAT}x; goal < {FLOAT}x: (met|NOT met)",
            text,
        )
        assert line, f"no overhead line for {name}:\n{text}"
        median, p90, overhead, ratio = float(line[1]), float(line[2]), float(line[3]), float(line[5])
        assert 0 < median <= p90
        assert 0 < ratio < 50  # a few repeats on a loaded machine: the bare run may take longer than a sandboxed one
        assert abs(overhead - (median - float(bare[1]))) < 0.02
        if abs(ratio - float(line[6])) > 0.006:  # printed rounded: no verdict check at the edge
            assert (line[7] == "met") == (ratio < float(line[6]))

        util = re.search(
            rf"\[{name}\] utilization {FLOAT}% .*goal >= 95%: (met|NOT met); "
            rf"mean gap on a slot {FLOAT} ms",
            text,
        )
        assert util, f"no utilization line for {name}:\n{text}"
        assert 0 < float(util[1]) <= 100
        if abs(float(util[1]) - 95) > 0.06:
            assert (util[2] == "met") == (float(util[1]) >= 95)
        assert 0 <= float(util[3]) < 1000
        slept = re.search(rf"\[{name}\] .*: 8 dev evaluations \(8 ok\), 8/8 \(100%\) slept", text)
        assert slept, f"the sleepy seed should run (and sleep) on every dev instance:\n{text}"
    assert re.search(r"^summary: process \d+\.\d\dx .*process utilization \d+\.\d%", text, re.MULTILINE), text
