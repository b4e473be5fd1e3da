"""kill -9 at hundreds of evaluations a second, with group commit: at random moments, then resumed from the
archive alone. Every resume keeps what was committed as it was, measures again only what was not, counts
nothing twice, and the run ends on its budget exactly (tests/engine/loop/instant_search.py is the run)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO

BUDGET = 600
KILLS = 3


def start(folder: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.engine.loop.instant_search", str(folder), str(BUDGET), "5"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stored(folder: Path) -> dict[tuple[int, str, int], float]:
    """(node, instance, repeat) -> score of every committed dev evaluation; the archive must open and each
    evaluation must have come with its `evaluate` event (a group is committed whole or not at all)."""
    con = duckdb.connect(str(folder / "archive.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT node_id, instance_id, \"repeat\", score FROM evaluations WHERE split = 'dev'")
        found = {(n, i, r): s for n, i, r, s in rows.fetchall()}
        events = con.execute("SELECT count(*) FROM events WHERE kind = 'evaluate'").fetchone()[0]
        orphans = con.execute(
            "SELECT count(*) FROM evaluations e LEFT JOIN nodes n ON n.id = e.node_id WHERE n.id IS NULL"
        ).fetchone()[0]
    finally:
        con.close()
    assert events == len(found) and orphans == 0
    return found


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_spends_the_budget_exactly(tmp_path):
    moments = [round(random.uniform(0.02, 0.35), 3) for _ in range(KILLS)]
    seen: dict[tuple[int, str, int], float] = {}
    killed_mid_run = 0
    for moment in moments:
        proc = start(tmp_path)
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            assert line.startswith("started"), line + proc.stdout.read()  # type: ignore[union-attr]
            time.sleep(moment)
            os.kill(proc.pid, signal.SIGKILL)  # no cleanup, no flush: a power cut
        finally:
            proc.kill()
            proc.wait()
        now = stored(tmp_path)
        assert len(now) <= BUDGET, moments
        assert all(now.get(key) == score for key, score in seen.items()), moments  # committed stays as it was
        killed_mid_run += len(now) < BUDGET
        seen = now
    proc = start(tmp_path)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    final = stored(tmp_path)
    assert len(final) == BUDGET, (moments, out)  # exact: no evaluation counted twice, none lost
    assert all(final[key] == score for key, score in seen.items())
    assert killed_mid_run >= 1, moments  # at least one kill came while the run was going on
    done = out.split()[-2:]
    print(f"kills at {moments} s after start; last session {done[1]} evaluations/s")
