"""scripts/bench_binpack_cpp.py: one real search through the command line, its figures read back from the archive."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytest.importorskip("tree_sitter", reason="tree-sitter is not installed (the languages extra)")
if shutil.which("g++") is None:
    pytest.skip("g++ is not installed (Debian: g++)", allow_module_level=True)


@pytest.mark.slow
def test_one_policy_one_seed_prints_the_seed_row_the_policy_row_and_the_command():
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "bench_binpack_cpp.py"),
            "--policies",
            "greedy",
            "--seeds",
            "1",
            "--budget",
            "5",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    seed = re.search(r"^\| seed agent \| 0\.500 \| 0\.500 \| ([\d.]+) \| ([\d.]+) \| 0 \| 1 \| \|$", out.stdout, re.M)
    row = re.search(
        r"^\| `greedy` \| ([\d.]+) ± 0\.000 \| ([\d.]+) ± 0\.000 \| ([\d.]+) ± 0\.000 \| ([\d.]+) ± 0\.000 \|",
        out.stdout,
        re.M,
    )
    assert seed and row, out.stdout
    assert 0.0 < float(row.group(1)) <= 1.0 and 0.0 < float(row.group(2)) <= 1.0
    assert all(0.0 < float(excess) < 20.0 for excess in (*seed.groups(), row.group(3), row.group(4)))  # in %
    assert "python -m engine.search --task binpack_cpp --policy greedy --seed 0 --budget 5 --quiet" in out.stdout
    assert "1 searches in" in out.stdout


def test_an_unknown_policy_is_refused_in_one_line():
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_binpack_cpp.py"), "--policies", "nope"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2 and out.stderr.startswith("error: unknown policy nope")
