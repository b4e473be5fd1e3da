"""scripts/bench_live.py runs end to end: each setting's search finishes, the readers it names really read
(requests counted, the page's too), and the table compares every setting with `alone`."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None,
        reason="the live page needs the live extra (starlette, uvicorn)",
    ),
]


def test_bench_live_measures_each_setting_against_alone():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "scripts/bench_live.py", "--budget", "24", "--rounds", "1", "--settings", "alone,page + show"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    made = re.search(r"round 1 page \+ show +([\d.]+) dev evaluations/s \((\d+) reader requests\)", out.stdout)
    assert made and float(made[1]) > 0 and int(made[2]) >= 2, out.stdout  # the page and `runs show` both read
    assert re.search(r"^alone +[\d.]+ +1\.000 ", out.stdout, re.MULTILINE), out.stdout
    assert re.search(r"^page \+ show +[\d.]+ +[\d.]+ ", out.stdout, re.MULTILINE), out.stdout
