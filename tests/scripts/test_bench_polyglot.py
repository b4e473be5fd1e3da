"""scripts/bench_polyglot.py on a small part of the benchmark: its table, the failures it names, its last line."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from engine.sandbox.bwrap import bwrap_available
from tests.conftest import REPO
from tests.tasks.polyglot_support import needs_exercises, polyglot_env

BWRAP_OK, BWRAP_WHY = bwrap_available()


@needs_exercises
@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not BWRAP_OK, reason=BWRAP_WHY)
def test_the_bench_grades_references_and_stubs_and_says_so_in_its_last_line():
    exercises = "python/affine-cipher,go/ledger,rust/pig-latin"  # a stub that passes, a reference that cannot
    argv = [sys.executable, "scripts/bench_polyglot.py", "--sandbox", "bwrap", "--exercises", exercises]
    done = subprocess.run(argv, cwd=REPO, env=polyglot_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"polyglot: reference 2 of 3 pass, stubs 1 of 3 pass, in \d+ s", lines[-1]), lines[-1]
    rows = {line.split()[0]: line.split()[1:4] for line in lines if re.match(r"^(Go|Python|Rust) ", line)}
    assert rows == {"Go": ["1", "1", "1"], "Python": ["1", "1", "0"], "Rust": ["1", "0", "0"]}
    assert any(line.startswith("  stub passes: go/ledger: ") for line in lines)
    assert any(line.startswith("  reference fails: rust/pig-latin: ") and "regex" in line for line in lines)
