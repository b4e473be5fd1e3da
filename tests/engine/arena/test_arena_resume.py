"""An arena run killed with SIGKILL mid-round, then resumed (issue 15): the grown instance set is kept exactly,
rounds go on from the last finished one, nothing is evaluated twice and the budget is exact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from archive import Archive
from engine.arena import ledger
from tests.conftest import REPO, run_cli
from tests.engine.test_search_e2e import only_run, read

INSTANCES = "SELECT id, split, data, origin, tester_id, arena_round FROM instances ORDER BY rowid"


@pytest.mark.slow
def test_kill_9_mid_arena_then_resume_keeps_the_grown_set(tmp_path):
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"holdout": 2}))
    argv = [
        "--task",
        "email_validation",
        "--arena",
        "tournament",
        "--arena-population",
        "2",
        "--arena-round",
        "2",
        "--budget",
        "70",
        "--workers",
        "2",
        "--instances",
        str(subset),
        "--run-dir",
        str(tmp_path / "runs"),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.search", *argv],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = ""
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            seen += line
            if line.startswith("Round 2:") or time.monotonic() > deadline:
                break
        assert "Round 2:" in seen, seen
        time.sleep(0.3)  # into round 3: testers' runs, evaluations in flight
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    run = only_run(tmp_path / "runs")
    before = read(run, INSTANCES)
    assert any(origin == "arena" for *_, origin, _, _ in before)
    with Archive.open(run, read_only=True) as archive:
        rounds_before = len(ledger.rounds(archive))
        assert ledger.spent(archive) < 70
    out = run_cli("--resume", str(run), "--quiet")
    assert out.returncode == 0, out.stderr + out.stdout
    after = read(run, INSTANCES)
    assert after[: len(before)] == before  # every instance, its data and provenance, as it was
    assert all(origin == "arena" for _, _, _, origin, _, _ in after[len(before) :])
    with Archive.open(run, read_only=True) as archive:
        played = ledger.rounds(archive)
        assert [r["round"] for r in played] == list(range(1, len(played) + 1)) and len(played) > rounds_before
        assert ledger.spent(archive) == 70
    assert (
        read(
            run,
            'SELECT count(*) FROM (SELECT node_id, instance_id, "repeat" FROM evaluations '
            "GROUP BY ALL HAVING count(*) > 1)",
        )[0][0]
        == 0
    )
    # one instance at most per tester and round; every confirmed proposal points at an instance that exists
    assert (
        read(
            run,
            "SELECT count(*) FROM (SELECT tester_id, arena_round FROM instances WHERE origin = 'arena' "
            "GROUP BY ALL HAVING count(*) > 1)",
        )[0][0]
        == 0
    )
    assert (
        read(
            run,
            "SELECT count(*) FROM arena_proposals p LEFT JOIN instances i ON i.id = p.instance_id "
            "WHERE p.accepted AND i.id IS NULL",
        )[0][0]
        == 0
    )
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
