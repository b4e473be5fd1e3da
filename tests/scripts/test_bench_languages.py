"""scripts/bench_languages.py with a tiny budget on C++ alone: one search, read back into its table row."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (Debian: g++)")
PERCENT = r"(\d+\.\d) %"


@pytest.mark.slow
def test_bench_languages_prints_a_row_per_language_and_how_it_was_measured():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "scripts/bench_languages.py", "--budget", "6", "--languages", "cpp,julia", "--draws", "20"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    row = re.search(
        rf"^cpp +\| +1 \| +(\d+) \| +{PERCENT} \| +{PERCENT} \| +(\d+) \| +(\d+) \| +(\d+) \| +{PERCENT} \| "
        rf"+([\d.]+) \| +([\d.]+) \| +([\d.]+) \| +{PERCENT} \| +([\d.]+)$",
        text,
        re.M,
    )
    assert row, text
    children, parse, compiled, dups, failed, evals, ok, seed, best, holdout, one_try, wall = row.groups()
    assert int(children) >= 1 and float(parse) == 100.0  # the offline mutator's children all parse
    assert 0 <= float(compiled) <= 100 and 0 <= float(ok) <= 100 and float(one_try) > 0
    assert 1 <= int(evals) <= 4  # the budget's 6 less the seed's two runs
    assert abs(float(seed) - 1 / (1 + 1.62)) < 1e-3  # 0.1 x + 3 against 0.7 x + 1: mean error 1.62
    assert float(best) >= float(seed) and float(holdout) > 0 and float(wall) > 0
    assert "skipped julia" in text and "How it was measured" in text
