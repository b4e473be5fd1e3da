"""scripts/bench_tasks.py: real searches through the command line, figures read back from their archives.

No test here reads the checkout's runs/ folder: a user who followed the README has runs there (the
README's example `clade search --task circle_packing ...` makes `runs/circle_packing-*`). Where a
test needs to see that the script leaves runs/ alone, it runs the script from a temporary copy of the
checkout whose runs/ already holds such a run, and looks at that copy only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.parallel import is_venv

SCRIPT = REPO / "scripts" / "bench_tasks.py"
# Top-level folders of a checkout that are not code: what users and tools leave there.
NOT_CODE = {
    ".git",
    "runs",
    "snapshots",
    "plots",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".benchmarks",
    "clade.egg-info",
}
USERS_RUN = "circle_packing-hgm-s0-20260101-120000"  # the folder the README's circle_packing command leaves


def checkout_copy(dest: Path) -> Path:
    """A copy of the checkout's code at `dest` (no runs/, caches or .git) in which a user has followed the
    README: runs/ holds a circle_packing run folder (a fake one: the scripts must not read it)."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = NOT_CODE if Path(folder) == REPO else set()
        return {n for n in names if n in skip or n == "__pycache__" or is_venv(Path(folder, n))}

    shutil.copytree(REPO, dest, ignore=ignore)
    run = dest / "runs" / USERS_RUN
    run.mkdir(parents=True)
    (run / "archive.duckdb").write_text("a user's run, not a real archive\n")
    return dest


def run_script(*args: str, checkout: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    return subprocess.run(
        [sys.executable, str(checkout / "scripts" / "bench_tasks.py"), *args],
        check=False,
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_a_small_run_prints_a_row_per_policy_with_real_figures(tmp_path):
    checkout = checkout_copy(tmp_path / "checkout")
    markdown = tmp_path / "tasks.md"
    out = run_script(
        "--tasks",
        "circle_packing",
        "--policies",
        "hgm",
        "best_of_n",
        "--seeds",
        "2",
        "--budget",
        "4",
        "--markdown",
        str(markdown),
        checkout=checkout,
    )
    assert out.returncode == 0, out.stderr
    rows = {
        m.group(1): m.groups()
        for m in re.finditer(
            r"^\| `(\w+)` \| ([\d.]+) \[([\d.]+), ([\d.]+)\] \| ([\d.]+) \| ([\d.]+) \|", out.stdout, re.MULTILINE
        )
    }
    assert set(rows) == {"hgm", "best_of_n"}
    for _, score, low, high, mean_sum, best_sum in rows.values():
        assert 0.0 < float(low) <= float(score) <= float(high) <= 1.0
        assert 2.0 < float(mean_sum) <= float(best_sum) < 2.7  # 26 circles in the unit square: a real packing
    assert len(re.findall(r"^  circle_packing \w+ seed \d: node \d+", out.stdout, re.MULTILINE)) == 4  # per search
    (sweep,) = (checkout / "sweeps" / "bench_tasks").iterdir()  # through clade sweep, its folder kept
    assert f"clade sweep show {sweep}" in markdown.read_text()
    text = markdown.read_text()
    assert "## circle_packing: budget 4" in text and "| seed agent | 0." in text and "4 searches in" in text
    # The runs went to the sweep's folder: the checkout's runs/ holds the user's run and nothing new.
    assert [p.name for p in (checkout / "runs").iterdir()] == [USERS_RUN]
    assert (checkout / "runs" / USERS_RUN / "archive.duckdb").read_text().startswith("a user's run")


def test_an_unknown_policy_is_one_line_and_exit_2():
    out = run_script("--policies", "nope", "--no-markdown")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "unknown task or policy nope" in out.stderr


def test_no_test_reads_the_checkouts_runs_folder():
    """What a user has in runs/ is theirs: no test file joins the checkout's path (REPO) with runs/, by a
    slash, glob, rglob or joinpath."""
    pattern = re.compile(r"""REPO\s*/\s*["']runs\b|REPO\.(r?glob|joinpath)\(\s*["']runs\b""")
    offenders = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
