"""`--mutator human` end to end, as a person drives it: a subprocess whose stdin is the person's keyboard.

SEARCH/REPLACE blocks typed become a child booked as a call of model `human`, 0 tokens, cost 0; Ctrl-C
(SIGINT) while the second question waits stops the run as interrupted, without a traceback; `--resume` asks
that same expansion again, and a whole file typed without a fence becomes its child, booked under its key;
a replay of the run rebuilds the same tree from the recorded answers, asking no one, at no cost."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import duckdb

from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.conftest import REPO, small_instances
from tests.engine.test_search_e2e import only_run

DIFF = (
    "Change: best fit.\n\nagent.py\n<<<<<<< SEARCH\n    return np.zeros_like(bins)\n=======\n"
    "    return -(bins - item)\n>>>>>>> REPLACE\n.\n"
)


def whole_file(weight: float) -> str:
    return f"import numpy as np\n\n\ndef priority(item, bins):\n    return -(bins - item) * {weight}\n.\n"


def search(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "engine.search", *args],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def rows(run, sql: str) -> list[tuple]:
    with duckdb.connect(str(run / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


ASKS = re.compile(r"The human mutator asks \(mutate, (parent \d+ child \d+ attempt 0)\)")
AGENT_OF_NODE_2 = (
    "SELECT b.content FROM node_files f JOIN blobs b ON b.hash = f.hash WHERE f.node_id = 2 AND f.path = 'agent.py'"
)
CALLS = "SELECT model, purpose, tokens_in, tokens_out, cost_usd, request->>'key' FROM llm_calls ORDER BY id"


class Output:
    """A command's output, read as it comes (a daemon thread), to wait on what it says."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        self.reader.start()

    def asked(self, times: int, limit_s: float = 60) -> list[str]:
        """The keys of the first `times` questions, once the last is asked."""
        end = time.monotonic() + limit_s
        while len(keys := ASKS.findall(self.text())) < times:
            assert self.reader.is_alive(), self.text()[-3000:]
            assert time.monotonic() < end, f"fewer than {times} questions after {limit_s} s: {self.text()[-3000:]}"
            time.sleep(0.05)
        return keys[:times]

    def text(self) -> str:
        return "".join(self.lines)


def test_a_person_answers_at_the_terminal_is_cut_short_resumes_and_is_replayed(tmp_path, capsys):
    instances = small_instances(tmp_path / "instances.json", n_dev=2, n_holdout=1, n_items=30)
    runs = tmp_path / "runs"
    common = ["--budget", "5", "--workers", "1", "--sandbox", "process", "--quiet"]  # the resume, the replay: the same
    first = search("--mutator", "human", "--instances", str(instances), "--run-dir", str(runs), *common)
    first.stdin.write(DIFF)
    first.stdin.flush()  # kept open: the second question waits on the keyboard
    output = Output(first)
    answered, waiting = output.asked(2)
    first.send_signal(signal.SIGINT)
    first.wait(timeout=60)
    output.reader.join(timeout=10)
    out = output.text()
    assert first.returncode == 130, out[-3000:]
    assert "Traceback" not in out and "--resume" in out and "# Current code (the parent)" in out
    run = only_run(runs)
    assert rows(run, "SELECT status FROM runs") == [("interrupted",)]
    assert rows(run, CALLS) == [("human", "mutate", 0, 0, 0.0, answered)]
    assert rows(run, "SELECT id, status, mutator, model FROM nodes WHERE id > 0") == [(1, "valid", "human", "human")]

    again = search("--resume", str(run), "--quiet")
    out, _ = again.communicate("".join(whole_file(w) for w in (2.0, 3.0, 4.0, 5.0)), timeout=120)
    assert again.returncode == 0, out[-3000:]
    assert ASKS.findall(out)[0] == waiting  # the same expansion, asked again first
    assert rows(run, CALLS)[1] == ("human", "mutate", 0, 0, 0.0, waiting)
    assert rows(run, "SELECT status, mutator, model FROM nodes WHERE id = 2") == [("valid", "human", "human")]
    assert "return -(bins - item) * 2.0" in rows(run, AGENT_OF_NODE_2)[0][0]  # a whole file, without a fence
    assert not (run / "human" / "pending.json").exists()
    tree = rows(run, "SELECT id, parent_id, status, model FROM nodes ORDER BY id")

    replayed = build_parser().parse_args(["--replay", str(run), "--run-dir", str(tmp_path / "replays"), "--quiet"])
    assert run_from_args(replayed) == 0  # in this process: its stdin is pytest's, which no one is asked on
    assert "The human mutator asks" not in capsys.readouterr().out
    replay = only_run(tmp_path / "replays")
    assert rows(replay, "SELECT count(*) FROM llm_calls") == [(0,)]
    assert rows(replay, "SELECT id, parent_id, status, model FROM nodes ORDER BY id") == tree
