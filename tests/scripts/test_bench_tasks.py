"""scripts/bench_tasks.py: real searches through the command line, figures read back from their archives."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "bench_tasks.py"


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_a_small_run_prints_a_row_per_policy_with_real_figures(tmp_path):
    markdown = tmp_path / "tasks.md"
    out = run_script("--tasks", "circle_packing", "--policies", "hgm", "best_of_n", "--seeds", "2",
                     "--budget", "4", "--markdown", str(markdown))
    assert out.returncode == 0, out.stderr
    rows = {m.group(1): m.groups() for m in re.finditer(
        r"^\| `(\w+)` \| ([\d.]+) \[([\d.]+), ([\d.]+)\] \| ([\d.]+) \| ([\d.]+) \|", out.stdout, re.M)}
    assert set(rows) == {"hgm", "best_of_n"}
    for _, score, low, high, mean_sum, best_sum in rows.values():
        assert 0.0 < float(low) <= float(score) <= float(high) <= 1.0
        assert 2.0 < float(mean_sum) <= float(best_sum) < 2.7  # 26 circles in the unit square: a real packing
    assert len(re.findall(r"^  \[\d/4\] circle_packing", out.stdout, re.M)) == 4  # a line per search
    text = markdown.read_text()
    assert "## circle_packing: budget 4" in text and "| seed agent | 0." in text and "4 searches in" in text
    assert not list(REPO.glob("runs/circle_packing-*"))  # the runs went to a temporary folder


def test_an_unknown_policy_is_one_line_and_exit_2():
    out = run_script("--policies", "nope", "--no-markdown")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "unknown task or policy nope" in out.stderr
