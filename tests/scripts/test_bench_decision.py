"""scripts/bench_decision.py: a checkout compared with itself decides the same (equal digests, exit 0), a
path that is no checkout is one line on stderr and exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = ["scripts/bench_decision.py", "--sizes", "300", "--decisions", "60"]


def test_against_itself_the_same_decisions():
    out = subprocess.run(
        [sys.executable, *SCRIPT, "--against", str(REPO)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    rows = re.findall(r"^\s+300 \| .*\| +([\d.]+) \| +(\d+) +(\d+) \| ([0-9a-f]{16})$", out.stdout, re.M)
    assert len(rows) == 2 and rows[0][3] == rows[1][3]
    assert all(float(ms) > 0 and int(ev) + int(ex) == 60 for ms, ev, ex, _ in rows)
    assert "same decisions in both checkouts: yes" in out.stdout


def test_not_a_checkout_is_one_line_and_exit_2(tmp_path):
    out = subprocess.run(
        [sys.executable, *SCRIPT, "--against", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "not a Clade checkout" in out.stderr
