"""Readers on a running search (issue 18): while a real search runs in a subprocess, `runs list`, `runs show`,
the SQL command and the lineage plot each exit 0 with the run's current figures and say how fresh they are;
the search then ends normally with the same archive as an identical search nobody read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from archive.live import LIVE_FILE
from tests.conftest import REPO, paused
from tests.engine.test_search_e2e import only_run, read

pytestmark = pytest.mark.slow
# One worker: the two searches compared must make the same choices (with two, which evaluation ends first
# depends on timing). The readers read the live copy, which is the same with any number of workers. A
# timeout far above any evaluation's: the engine's clock runs on while the test holds the search still.
SEARCH = ["--task", "binpack", "--budget", "32", "--workers", "1", "--seed", "3", "--quiet", "--timeout", "600"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def start_search(run_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "engine.search", *SEARCH, "--run-dir", str(run_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def live_count(run: Path) -> int:
    try:
        with duckdb.connect(str(run / LIVE_FILE), read_only=True) as con:
            return con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    except duckdb.Error:  # replaced while opened, or gone with the search
        return -1


def wait_for_more(run: Path, seen: int, search: subprocess.Popen) -> None:
    """Until the search's live copy holds more than `seen` evaluations, or the search has ended."""
    while search.poll() is None and live_count(run) <= seen:
        time.sleep(0.1)


def test_every_reader_works_on_a_running_search_and_changes_nothing(tmp_path):
    search = start_search(tmp_path / "read")
    try:
        deadline = time.monotonic() + 90
        while not list((tmp_path / "read").glob(f"*/{LIVE_FILE}")):
            assert search.poll() is None and time.monotonic() < deadline, "no live copy appeared"
            time.sleep(0.2)
        run = next((tmp_path / "read").iterdir())
        counts, rounds = [], 0
        while search.poll() is None and rounds < 3:  # two reads show the figures grow; a third for margin
            # the search holds still while they read (they yield the CPU to it: on a busy machine they would
            # otherwise read long after it ended), then goes on until its live copy shows more evaluations
            with paused(search) as running:
                if not running:
                    break  # it ended before we read: what we read is checked only while it runs
                listed = cli("-m", "engine.runs", "list", str(tmp_path / "read"))
                shown = cli("-m", "engine.runs", "show", str(run))
                sql = cli("-m", "engine.runs", "sql", str(run), "SELECT count(*) AS n FROM evaluations", "--csv")
                plot = cli("scripts/plot_lineage.py", str(run), "--out", str(tmp_path / "plots"), "--formats", "svg")
            for done in (listed, shown, sql, plot):
                assert done.returncode == 0, done.stderr
            assert re.search(r"running \(live, as of \d+ s ago\)", listed.stdout), listed.stdout
            assert re.search(r"running \(live, as of \d+ s ago\)", shown.stdout), shown.stdout
            assert "Resume" not in shown.stdout  # a running search is not one to resume
            assert re.search(r"is running: live, as of \d+ s ago", sql.stderr), sql.stderr
            assert "is running: drawn from its live, as of" in plot.stdout, plot.stdout
            counts.append(int(sql.stdout.split()[-1]))
            evals = int(re.search(r"dev evaluations\s*│\s*(\d+) of budget 32", shown.stdout).group(1))
            assert 0 <= evals <= 32
            rounds += 1
            wait_for_more(run, counts[-1], search)
        assert rounds >= 2, "the search ended before the readers could read it twice"
        assert counts == sorted(counts) and counts[-1] > 0  # current figures: they only grow
        unread = start_search(tmp_path / "unread")  # the same search nobody reads, beside the rest of this one
    finally:
        out = search.communicate(timeout=300)[0]
    assert search.returncode == 0, out
    assert not (run / LIVE_FILE).exists()  # the copy goes with the search
    assert unread.wait(timeout=300) == 0
    other = only_run(tmp_path / "unread")
    for query in (
        "SELECT id, parent_id, status, code_hash FROM nodes ORDER BY id",
        "SELECT node_id, instance_id, split, round(score, 9) FROM evaluations ORDER BY ALL",
        "SELECT kind, node_id FROM events WHERE kind NOT IN ('session', 'resume') ORDER BY seq",
    ):
        assert read(run, query) == read(other, query), query
    assert read(run, "SELECT status FROM runs")[0][0] == "finished"
